"""bmm_softmax for the trn target: out[b] = softmax(lhs[b] @ rhs[b]) over the
last axis, the row's maximum subtracted first.  Naive: a block of rows of
scores built tile by tile (K accumulated in PSUM) and held in SBUF until the
row is whole, then the maximum, the exponentials, their sum and the
quotient, each its own pass.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128  # knob: 32 64 128 (rows per block: the stationary free size)
TILE_K = 128  # knob: 32 64 128 (contraction per matmul: SBUF partitions)
TILE_N = 512  # knob: 128 256 512 (columns per PSUM tile: the moving free size)


@nki.jit
def kernel(lhs, rhs):
    B, M, K = lhs.shape
    N = rhs.shape[2]
    out = nl.ndarray((B, M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ip, ik, iN = nl.arange(TILE_M)[:, None], nl.arange(TILE_K)[None, :], nl.arange(N)[None, :]
    kp, jn = nl.arange(TILE_K)[:, None], nl.arange(TILE_N)[None, :]
    for b in nl.affine_range(B):
        for m in nl.affine_range((M + TILE_M - 1) // TILE_M):
            rows = m * TILE_M + ip < M
            s = nl.ndarray((TILE_M, N), dtype=nl.float32, buffer=nl.sbuf)
            for n in nl.affine_range((N + TILE_N - 1) // TILE_N):
                cols = n * TILE_N + jn < N
                acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range((K + TILE_K - 1) // TILE_K):
                    x = nl.zeros((TILE_M, TILE_K), dtype=nl.float32, buffer=nl.sbuf)
                    x[ip, ik] = nl.load(lhs[b, m * TILE_M + ip, k * TILE_K + ik],
                                        mask=rows & (k * TILE_K + ik < K))
                    y = nl.zeros((TILE_K, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                    y[kp, jn] = nl.load(rhs[b, k * TILE_K + kp, n * TILE_N + jn],
                                        mask=(k * TILE_K + kp < K) & cols)
                    acc += nl.matmul(x, y)
                s[ip, n * TILE_N + jn] = nl.copy(acc, mask=cols)
            mx = nl.max(s, axis=1, keepdims=True)
            e = nl.exp(nl.subtract(s, mx))
            total = nl.sum(e, axis=1, keepdims=True)
            p = nl.divide(e, total)
            nl.store(out[b, m * TILE_M + ip, iN], value=p, mask=rows)
    return out
