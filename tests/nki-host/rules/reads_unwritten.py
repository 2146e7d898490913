# expect: wrong
# reads a tile it never wrote: new buffers are NaN here, so the result is
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    out = nl.ndarray((1024, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(8):
        t = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
        nl.store(out[i * 128:(i + 1) * 128, 0:1024], value=nl.add(t, 0.0))
    return out
