"""matmul_add_rmsnorm for the trn target: y = x @ w + z,
out = y * g / sqrt(mean(y^2, -1) + 1e-5).  Naive: a block of rows of y built
tile by tile (K tiles accumulated in PSUM, z added), held in SBUF until the
whole row is there, then normalised and stored.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128  # knob: 32 64 128 (rows per block: the stationary free size)
TILE_K = 128  # knob: 32 64 128 (contraction per matmul: SBUF partitions)
TILE_N = 512  # knob: 128 256 512 (columns per PSUM tile: the moving free size)
EPS = 1e-5


@nki.jit
def kernel(x, w, z, g):
    M, K = x.shape
    N = w.shape[1]
    NT = (N + TILE_N - 1) // TILE_N
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ip, ik, iN = nl.arange(TILE_M)[:, None], nl.arange(TILE_K)[None, :], nl.arange(N)[None, :]
    kp, jn, i0 = nl.arange(TILE_K)[:, None], nl.arange(TILE_N)[None, :], nl.arange(1)[:, None]
    gt = nl.load(g.reshape((1, N))[i0, iN])
    gb = gt.broadcast_to((TILE_M, N))
    for m in nl.affine_range((M + TILE_M - 1) // TILE_M):
        rows = m * TILE_M + ip < M
        y = nl.ndarray((TILE_M, N), dtype=nl.float32, buffer=nl.sbuf)
        for n in nl.affine_range(NT):
            cols = n * TILE_N + jn < N
            acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range((K + TILE_K - 1) // TILE_K):
                a = nl.zeros((TILE_M, TILE_K), dtype=nl.float32, buffer=nl.sbuf)
                a[ip, ik] = nl.load(x[m * TILE_M + ip, k * TILE_K + ik],
                                    mask=rows & (k * TILE_K + ik < K))
                b = nl.zeros((TILE_K, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                b[kp, jn] = nl.load(w[k * TILE_K + kp, n * TILE_N + jn],
                                    mask=(k * TILE_K + kp < K) & cols)
                acc += nl.matmul(a, b)
            zt = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
            zt[ip, jn] = nl.load(z[m * TILE_M + ip, n * TILE_N + jn], mask=rows & cols)
            y[ip, n * TILE_N + jn] = nl.add(nl.copy(acc), zt, mask=cols)
        ss = nl.sum(nl.multiply(y, y), axis=1, keepdims=True)
        inv = nl.rsqrt(nl.add(nl.multiply(ss, 1.0 / N), EPS))
        res = nl.multiply(nl.multiply(y, inv), gb)
        nl.store(out[m * TILE_M + ip, iN], value=res, mask=rows)
    return out
