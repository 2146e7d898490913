# expect: err_matmul_dst_not_psum
# the TensorE writes PSUM only
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(x[0:128, 0:128])
    r = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    r[...] = nl.matmul(a, a)
    nl.store(out[0:128, 0:128], value=r)
    return out
