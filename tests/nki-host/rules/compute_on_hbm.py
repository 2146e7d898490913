# expect: err_unsupported_memory
# an engine computes on SBUF or PSUM, never straight from HBM
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out[0:128, 0:64], value=nl.exp(x[0:128, 0:64]))
    return out
