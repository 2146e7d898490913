"""add_rmsnorm_matmul for the trn target: y = x + z,
y = y / sqrt(mean(y^2, -1) + 1e-5) * g, out = y @ w.  Naive: a block of rows
normalised in SBUF, then each output tile accumulates its K tiles in PSUM,
w loaded per tile.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128  # knob: 32 64 128 (rows per block: the stationary free size)
TILE_K = 128  # knob: 32 64 128 (contraction per matmul: SBUF partitions)
TILE_N = 512  # knob: 128 256 512 (columns of out per tile: the moving free size)
EPS = 1e-5


@nki.jit
def kernel(x, w, z, g):
    M, K = x.shape
    N = w.shape[1]
    KT = (K + TILE_K - 1) // TILE_K
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ip, ik, iK = nl.arange(TILE_M)[:, None], nl.arange(TILE_K)[None, :], nl.arange(K)[None, :]
    kp, jn, i0 = nl.arange(TILE_K)[:, None], nl.arange(TILE_N)[None, :], nl.arange(1)[:, None]
    gt = nl.zeros((1, KT * TILE_K), dtype=nl.float32, buffer=nl.sbuf)
    gt[i0, iK] = nl.load(g.reshape((1, K))[i0, iK])
    gb = gt.broadcast_to((TILE_M, KT * TILE_K))
    for m in nl.affine_range((M + TILE_M - 1) // TILE_M):
        rows = m * TILE_M + ip < M
        xt = nl.zeros((TILE_M, KT * TILE_K), dtype=nl.float32, buffer=nl.sbuf)
        xt[ip, iK] = nl.load(x[m * TILE_M + ip, iK], mask=rows)
        zt = nl.zeros((TILE_M, KT * TILE_K), dtype=nl.float32, buffer=nl.sbuf)
        zt[ip, iK] = nl.load(z[m * TILE_M + ip, iK], mask=rows)
        y = nl.add(xt, zt)
        ss = nl.sum(nl.multiply(y, y), axis=1, keepdims=True)
        inv = nl.rsqrt(nl.add(nl.multiply(ss, 1.0 / K), EPS))
        yn = nl.multiply(nl.multiply(y, inv), gb)
        for n in nl.affine_range((N + TILE_N - 1) // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                b = nl.zeros((TILE_K, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                b[kp, jn] = nl.load(w[k * TILE_K + kp, n * TILE_N + jn],
                                    mask=(k * TILE_K + kp < K) & (n * TILE_N + jn < N))
                acc += nl.matmul(yn[ip, k * TILE_K + ik], b)
            res = nl.copy(acc)
            nl.store(out[m * TILE_M + ip, n * TILE_N + jn], value=res,
                     mask=rows & (n * TILE_N + jn < N))
    return out
