"""neuronxcc.nki on the host: accelopt's emulation of the NKI semantics
NKIBench kernels use, with NumPy.  It checks what a kernel computes and the
documented rules it must keep, never its speed, and it is not AWS's
simulator (nki.simulate_kernel, which needs the neuronx-cc wheel): see
_core.py for what it checks and docs/TARGETS.md."""
import numpy as np

from . import isa, language  # noqa: F401 - nki.language, nki.isa
from ._core import SHARED, STATE, NKIError, Tensor, is_hbm

EMULATION = "accelopt NKI host emulation (NumPy; semantics only, not the AWS simulator)"


class Kernel:
    """An @nki.jit function: called with NumPy arrays, it runs here and
    returns its outputs as NumPy arrays; kernel[grid](...) runs an SPMD grid."""

    def __init__(self, fn, grid=()):
        self.fn = fn
        self.grid = grid
        self.__name__ = getattr(fn, "__name__", "kernel")
        self.__wrapped__ = fn

    def __getitem__(self, grid):
        return Kernel(self.fn, grid if isinstance(grid, tuple) else (grid,))

    def __call__(self, *args, **kwargs):
        hbm_args = [Tensor(a, "hbm", "arg%d" % i) if isinstance(a, np.ndarray) else a
                    for i, a in enumerate(args)]
        names = getattr(self.fn, "__code__", None)
        if names is not None:  # the tensors carry their parameter names into errors
            for t, n in zip(hbm_args, names.co_varnames[:names.co_argcount]):
                if isinstance(t, Tensor):
                    t.name = n
        grid = [int(g) for g in self.grid] or [1]
        out = None
        del SHARED[:]
        for pid in np.ndindex(*grid):
            STATE.reset()
            STATE.grid, STATE.program = tuple(grid), tuple(int(p) for p in pid)
            out = self.fn(*hbm_args, **kwargs)
        STATE.reset()
        del SHARED[:]
        return _outputs(out)


def _outputs(out):
    if out is None:
        return None
    if isinstance(out, (tuple, list)):
        return type(out)(_outputs(o) for o in out)
    if isinstance(out, Tensor):
        if not is_hbm(out.buffer):
            raise NKIError("err_unsupported_memory", "a kernel returns tensors in HBM "
                           "(nl.ndarray(..., buffer=nl.shared_hbm)); `%s` is in '%s'"
                           % (out.name, out.buffer))
        if not out.written:
            raise NKIError("err_tensor_output_not_written_to",
                           "tensor `%s` is returned but nothing was ever stored to it" % out.name)
        return out.data
    return out


def jit(fn=None, mode="auto", **_):
    if fn is None:
        return lambda f: Kernel(f)
    return fn if isinstance(fn, Kernel) else Kernel(fn)


def baremetal(kernel=None, **_):
    """Here the same as calling the kernel: nothing is compiled, no NEFF or
    trace is written (save_neff_name and save_trace_name are ignored)."""
    if kernel is None:
        return lambda k: jit(k)
    return jit(kernel)


def simulate_kernel(kernel, *args, **kwargs):
    return jit(kernel)(*args, **kwargs)


def _device_only(name):
    def f(*_, **__):
        raise NKIError("err_needs_device", "nki.%s measures on a NeuronCore; the host emulation "
                       "checks semantics only" % name)
    return f


benchmark = _device_only("benchmark")
profile = _device_only("profile")
