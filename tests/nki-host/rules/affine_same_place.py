# expect: err_unexpected_output_dependencies
# every iteration of an affine_range writes the same rows of out
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((1024, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(8):
        t = nl.load(x[i * 128:(i + 1) * 128, 0:1024])
        nl.store(out[0:128, 0:1024], value=t)
    return out
