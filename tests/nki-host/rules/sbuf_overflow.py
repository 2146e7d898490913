# expect: GCA035
# eight tiles of 128 x 8192 fp32 alive at once: 256 KiB a partition, over SBUF's 192
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    keep = [nl.zeros((128, 8192), dtype=nl.float32, buffer=nl.sbuf) for _ in range(8)]
    nl.store(out[0:128, 0:1024], value=nl.load(x[0:128, 0:1024]))
    return out
