# expect: err_num_partition_exceed_arch_limit
# a tile of 256 rows: SBUF has 128 partitions
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x[0:256, 0:64])
    nl.store(out[0:256, 0:64], value=nl.exp(t))
    return out
