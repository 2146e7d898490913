# expect: err_loop_index_in_control_flow
# an affine_range index is a symbol: Python cannot branch on it
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((1024, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(8):
        rows = min(128, 1024 - i * 128)
        t = nl.load(x[i * 128:i * 128 + rows, 0:1024])
        nl.store(out[i * 128:i * 128 + rows, 0:1024], value=t)
    return out
