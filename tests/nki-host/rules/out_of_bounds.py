# expect: err_out_of_bound_access
# the last tile runs past the tensor's 1024 rows (no mask)
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((1024, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(9):
        t = nl.load(x[i * 128:(i + 1) * 128, 0:1024])
        nl.store(out[i * 128:(i + 1) * 128, 0:1024], value=t)
    return out
