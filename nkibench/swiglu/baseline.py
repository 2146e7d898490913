"""swiglu for the trn target: out = (silu(x @ w_gate) * (x @ w_up)) @ w_down,
silu(t) = t / (1 + exp(-t)).  Naive: for a block of rows, the hidden row
h = silu(gate) * up is built tile by tile in SBUF (each tile's D products
accumulated in PSUM), then each output tile accumulates h @ w_down over F;
weights loaded per tile.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128  # knob: 32 64 128 (rows per block: the stationary free size)
TILE_K = 128  # knob: 32 64 128 (contraction per matmul: SBUF partitions)
TILE_N = 512  # knob: 128 256 512 (columns per PSUM tile: the moving free size)


@nki.jit
def kernel(x, w_up, w_gate, w_down):
    M, D = x.shape
    F = w_up.shape[1]
    DT, FK = (D + TILE_K - 1) // TILE_K, (F + TILE_K - 1) // TILE_K
    FN = (F + TILE_N - 1) // TILE_N
    out = nl.ndarray((M, D), dtype=nl.float32, buffer=nl.shared_hbm)
    ip, ik = nl.arange(TILE_M)[:, None], nl.arange(TILE_K)[None, :]
    kp, jn = nl.arange(TILE_K)[:, None], nl.arange(TILE_N)[None, :]
    for m in nl.affine_range((M + TILE_M - 1) // TILE_M):
        rows = m * TILE_M + ip < M
        # zero past F, so the second product sees nothing there
        h = nl.zeros((TILE_M, FN * TILE_N), dtype=nl.float32, buffer=nl.sbuf)
        for f in nl.affine_range(FN):
            cols = f * TILE_N + jn < F
            gate = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            up = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(DT):
                xt = nl.zeros((TILE_M, TILE_K), dtype=nl.float32, buffer=nl.sbuf)
                xt[ip, ik] = nl.load(x[m * TILE_M + ip, k * TILE_K + ik],
                                     mask=rows & (k * TILE_K + ik < D))
                wg = nl.zeros((TILE_K, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                wg[kp, jn] = nl.load(w_gate[k * TILE_K + kp, f * TILE_N + jn],
                                     mask=(k * TILE_K + kp < D) & cols)
                wu = nl.zeros((TILE_K, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                wu[kp, jn] = nl.load(w_up[k * TILE_K + kp, f * TILE_N + jn],
                                     mask=(k * TILE_K + kp < D) & cols)
                gate += nl.matmul(xt, wg)
                up += nl.matmul(xt, wu)
            g = nl.copy(gate)
            act = nl.divide(g, nl.add(nl.exp(nl.negative(g)), 1.0))
            h[ip, f * TILE_N + jn] = nl.multiply(act, nl.copy(up))
        for n in nl.affine_range((D + TILE_N - 1) // TILE_N):
            cols = n * TILE_N + jn < D
            acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(FK):
                wd = nl.zeros((TILE_K, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                wd[kp, jn] = nl.load(w_down[k * TILE_K + kp, n * TILE_N + jn],
                                     mask=(k * TILE_K + kp < F) & cols)
                acc += nl.matmul(h[ip, k * TILE_K + ik], wd)
            res = nl.copy(acc)
            nl.store(out[m * TILE_M + ip, n * TILE_N + jn], value=res, mask=rows & cols)
    return out
