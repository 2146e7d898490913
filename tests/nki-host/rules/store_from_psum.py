# expect: err_unsupported_memory
# a matmul's PSUM result is copied to SBUF before it can be stored
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(x[0:128, 0:128])
    nl.store(out[0:128, 0:128], value=nl.matmul(a, a))
    return out
