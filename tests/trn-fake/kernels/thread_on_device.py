"""expect: not ok - silu's baseline whose module starts a thread on the
stand-in device, as the kernel that rewrote every trace to 6 us did (issue
46, part 6): the stand-in's device runs the kernel locked down as every
kernel is, so the thread is never made."""
import threading
import time


def _linger():
    while True:
        time.sleep(0.001)


threading.Thread(target=_linger, daemon=True).start()

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
