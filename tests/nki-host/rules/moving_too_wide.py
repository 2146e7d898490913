# expect: err_size_of_dimension_exceed_arch_limit
# the matmul's moving operand is at most 512 wide
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(x[0:128, 0:128])
    b = nl.load(x[0:128, 0:1024])
    r = nl.copy(nl.matmul(a, b, transpose_x=True))
    nl.store(out[0:128, 0:1024], value=r)
    return out
