"""lora for the trn target: out = x @ w + (x @ a) @ b.  Naive: for a block
of rows, x @ a is accumulated in PSUM and kept in SBUF; then each output
tile accumulates x @ w over K and (x @ a) @ b over R in one PSUM tile,
operands loaded per tile.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128  # knob: 32 64 128 (rows per block: the stationary free size)
TILE_K = 128  # knob: 32 64 128 (contraction per matmul: SBUF partitions)
TILE_N = 512  # knob: 128 256 512 (columns of out per tile: the moving free size)
TILE_R = 128  # the rank per matmul (at most 128 partitions)


@nki.jit
def kernel(x, w, a, b):
    M, K = x.shape
    N, R = w.shape[1], a.shape[1]
    RT = (R + TILE_R - 1) // TILE_R
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ip, ik, ir = nl.arange(TILE_M)[:, None], nl.arange(TILE_K)[None, :], nl.arange(TILE_R)[None, :]
    kp, rp, jn = nl.arange(TILE_K)[:, None], nl.arange(TILE_R)[:, None], nl.arange(TILE_N)[None, :]
    for m in nl.affine_range((M + TILE_M - 1) // TILE_M):
        rows = m * TILE_M + ip < M
        # x @ a for these rows, zero past R so the second product sees nothing there
        xa = nl.zeros((TILE_M, RT * TILE_R), dtype=nl.float32, buffer=nl.sbuf)
        for r in nl.affine_range(RT):
            pa = nl.zeros((TILE_M, TILE_R), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range((K + TILE_K - 1) // TILE_K):
                xt = nl.zeros((TILE_M, TILE_K), dtype=nl.float32, buffer=nl.sbuf)
                xt[ip, ik] = nl.load(x[m * TILE_M + ip, k * TILE_K + ik],
                                     mask=rows & (k * TILE_K + ik < K))
                at = nl.zeros((TILE_K, TILE_R), dtype=nl.float32, buffer=nl.sbuf)
                at[kp, ir] = nl.load(a[k * TILE_K + kp, r * TILE_R + ir],
                                     mask=(k * TILE_K + kp < K) & (r * TILE_R + ir < R))
                pa += nl.matmul(xt, at)
            xa[ip, r * TILE_R + ir] = nl.copy(pa)
        for n in nl.affine_range((N + TILE_N - 1) // TILE_N):
            cols = n * TILE_N + jn < N
            acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range((K + TILE_K - 1) // TILE_K):
                xt = nl.zeros((TILE_M, TILE_K), dtype=nl.float32, buffer=nl.sbuf)
                xt[ip, ik] = nl.load(x[m * TILE_M + ip, k * TILE_K + ik],
                                     mask=rows & (k * TILE_K + ik < K))
                wt = nl.zeros((TILE_K, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                wt[kp, jn] = nl.load(w[k * TILE_K + kp, n * TILE_N + jn],
                                     mask=(k * TILE_K + kp < K) & cols)
                acc += nl.matmul(xt, wt)
            for r in nl.affine_range(RT):
                bt = nl.zeros((TILE_R, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                bt[rp, jn] = nl.load(b[r * TILE_R + rp, n * TILE_N + jn],
                                     mask=(r * TILE_R + rp < R) & cols)
                acc += nl.matmul(xa[ip, r * TILE_R + ir], bt)
            res = nl.copy(acc)
            nl.store(out[m * TILE_M + ip, n * TILE_N + jn], value=res, mask=rows & cols)
    return out
