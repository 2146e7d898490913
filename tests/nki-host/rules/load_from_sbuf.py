# expect: err_unsupported_memory
# nl.load reads HBM; this reads a tile already in SBUF
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:64])
    u = nl.load(t)
    nl.store(out[0:128, 0:64], value=u)
    return out
