# expect: err_num_partition_mismatch
# a one-row tile against 128 rows must be broadcast first
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:1024])
    r = nl.load(x[0:1, 0:1024])
    nl.store(out[0:128, 0:1024], value=nl.add(t, r))
    return out
