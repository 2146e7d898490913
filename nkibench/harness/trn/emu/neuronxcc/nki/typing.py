"""neuronxcc.nki.typing on the host: annotations only."""


class _Any:
    def __getitem__(self, _):
        return self


tensor = _Any()
mutable_tensor = _Any()
scalar = _Any()
