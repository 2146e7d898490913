# expect: err_tensor_output_not_written_to
# the output is returned but nothing is stored to it
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((1024, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:1024])
    return out
