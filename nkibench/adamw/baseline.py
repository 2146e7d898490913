"""adamw for the trn target, one step: theta' = theta - 1e-5 theta,
m' = 0.9 m + 0.1 g, v' = 0.999 v + 0.001 g^2,
out = theta' - 0.01 m' / (sqrt(1000 v') + 1e-8).  One tile at a time, each
step its own instruction.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_P = 128  # knob: 32 64 128 (rows per tile: SBUF partitions)
TILE_F = 512  # knob: 256 512 1024 2048 (columns per tile)


@nki.jit
def kernel(theta, grad, m, v):
    R, C = theta.shape
    out = nl.ndarray((R, C), dtype=nl.float32, buffer=nl.shared_hbm)
    ip, jf = nl.arange(TILE_P)[:, None], nl.arange(TILE_F)[None, :]
    for i in nl.affine_range((R + TILE_P - 1) // TILE_P):
        for j in nl.affine_range((C + TILE_F - 1) // TILE_F):
            inside = (i * TILE_P + ip < R) & (j * TILE_F + jf < C)
            th = nl.load(theta[i * TILE_P + ip, j * TILE_F + jf], mask=inside)
            g = nl.load(grad[i * TILE_P + ip, j * TILE_F + jf], mask=inside)
            mt = nl.load(m[i * TILE_P + ip, j * TILE_F + jf], mask=inside)
            vt = nl.load(v[i * TILE_P + ip, j * TILE_F + jf], mask=inside)
            th2 = nl.subtract(th, nl.multiply(th, 1e-5))
            m2 = nl.add(nl.multiply(mt, 0.9), nl.multiply(g, 0.1))
            v2 = nl.add(nl.multiply(vt, 0.999), nl.multiply(nl.multiply(g, g), 0.001))
            den = nl.add(nl.sqrt(nl.multiply(v2, 1000.0)), 1e-8)
            r = nl.subtract(th2, nl.divide(nl.multiply(m2, 0.01), den))
            nl.store(out[i * TILE_P + ip, j * TILE_F + jf], value=r, mask=inside)
    return out
