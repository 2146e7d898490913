"""accelopt's host emulation of NKI (not the Neuron compiler): see nki/__init__.py."""
