"""silu for the trn target: out = x / (1 + exp(-x)), one tile at a time,
each step its own instruction.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128  # knob: 32 64 128 (rows per tile: SBUF partitions)
TILE_F = 512  # knob: 256 512 1024 2048 (columns per tile)


@nki.jit
def kernel(x):
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ip, jf = nl.arange(TILE_P)[:, None], nl.arange(TILE_F)[None, :]
    for i in nl.affine_range((M + TILE_P - 1) // TILE_P):
        for j in nl.affine_range((N + TILE_F - 1) // TILE_F):
            inside = (i * TILE_P + ip < M) & (j * TILE_F + jf < N)
            t = nl.load(x[i * TILE_P + ip, j * TILE_F + jf], mask=inside)
            e = nl.exp(nl.negative(t))
            r = nl.divide(t, nl.add(e, 1.0))
            nl.store(out[i * TILE_P + ip, j * TILE_F + jf], value=r, mask=inside)
    return out
