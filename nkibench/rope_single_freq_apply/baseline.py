"""rope_single_freq_apply for the trn target: with x0 the first H rows of x
and x1 the next H, out = [x0 cos - x1 sin ; x0 sin + x1 cos].  H rows on the
partitions, the sequence in tiles, each product its own instruction.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_F = 512  # knob: 256 512 1024 2048 (columns per tile)


@nki.jit
def kernel(x, cos, sin):
    R, L = x.shape
    H = cos.shape[0]  # R = 2 H, H at most 128
    out = nl.ndarray((R, L), dtype=nl.float32, buffer=nl.shared_hbm)
    ih, jf = nl.arange(H)[:, None], nl.arange(TILE_F)[None, :]
    for j in nl.affine_range((L + TILE_F - 1) // TILE_F):
        cols = j * TILE_F + jf < L
        x0 = nl.load(x[ih, j * TILE_F + jf], mask=cols)
        x1 = nl.load(x[H + ih, j * TILE_F + jf], mask=cols)
        c = nl.load(cos[ih, j * TILE_F + jf], mask=cols)
        s = nl.load(sin[ih, j * TILE_F + jf], mask=cols)
        top = nl.subtract(nl.multiply(x0, c), nl.multiply(x1, s))
        bot = nl.add(nl.multiply(x0, s), nl.multiply(x1, c))
        nl.store(out[ih, j * TILE_F + jf], value=top, mask=cols)
        nl.store(out[H + ih, j * TILE_F + jf], value=bot, mask=cols)
    return out
