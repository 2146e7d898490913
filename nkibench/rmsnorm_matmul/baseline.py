"""rmsnorm_matmul for the trn target: out = (x / sqrt(mean(x^2, -1))) @ w (no
eps, no gain).  Naive: a block of rows of x normalised in SBUF, then each
output tile accumulates its K tiles in PSUM, w loaded per tile.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128  # knob: 32 64 128 (rows per block: the stationary free size)
TILE_K = 128  # knob: 32 64 128 (contraction per matmul: SBUF partitions)
TILE_N = 512  # knob: 128 256 512 (columns of out per tile: the moving free size)


@nki.jit
def kernel(x, w):
    M, K = x.shape
    N = w.shape[1]
    KT = (K + TILE_K - 1) // TILE_K
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ip, ik, iK = nl.arange(TILE_M)[:, None], nl.arange(TILE_K)[None, :], nl.arange(K)[None, :]
    kp, jn = nl.arange(TILE_K)[:, None], nl.arange(TILE_N)[None, :]
    for m in nl.affine_range((M + TILE_M - 1) // TILE_M):
        # the rows, zero past the edges, so the sums and the matmul see nothing there
        xt = nl.zeros((TILE_M, KT * TILE_K), dtype=nl.float32, buffer=nl.sbuf)
        xt[ip, iK] = nl.load(x[m * TILE_M + ip, iK], mask=(m * TILE_M + ip < M))
        ss = nl.sum(nl.multiply(xt, xt), axis=1, keepdims=True)
        inv = nl.rsqrt(nl.multiply(ss, 1.0 / K))
        xn = nl.multiply(xt, inv)
        for n in nl.affine_range((N + TILE_N - 1) // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(KT):
                b = nl.zeros((TILE_K, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                b[kp, jn] = nl.load(w[k * TILE_K + kp, n * TILE_N + jn],
                                    mask=(k * TILE_K + kp < K) & (n * TILE_N + jn < N))
                acc += nl.matmul(xn[ip, k * TILE_K + ik], b)
            res = nl.copy(acc)
            nl.store(out[m * TILE_M + ip, n * TILE_N + jn], value=res,
                     mask=(m * TILE_M + ip < M) & (n * TILE_N + jn < N))
    return out
