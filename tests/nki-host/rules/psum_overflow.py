# expect: GCA035
# PSUM holds 16 KiB a partition: nine full banks do not fit
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    keep = [nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum) for _ in range(9)]
    nl.store(out[0:128, 0:1024], value=nl.load(x[0:128, 0:1024]))
    return out
