# expect: err_reduce_partition_axis
# a reduction runs along the free dimensions, not across partitions
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((1, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:128, 0:1024])
    nl.store(out[0:1, 0:1024], value=nl.sum(t, axis=0, keepdims=True))
    return out
