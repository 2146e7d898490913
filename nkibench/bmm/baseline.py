"""bmm for the trn target: out[b] = lhs[b] @ rhs[b].  Naive: one matmul per
batch, each output tile accumulating its K tiles in PSUM.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128  # knob: 32 64 128 (rows of out per tile: the stationary free size)
TILE_K = 128  # knob: 32 64 128 (contraction per matmul: SBUF partitions)
TILE_N = 512  # knob: 128 256 512 (columns of out per tile: the moving free size)


@nki.jit
def kernel(lhs, rhs):
    B, M, K = lhs.shape
    N = rhs.shape[2]
    out = nl.ndarray((B, M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ip, ik = nl.arange(TILE_M)[:, None], nl.arange(TILE_K)[None, :]
    kp, jn = nl.arange(TILE_K)[:, None], nl.arange(TILE_N)[None, :]
    for b in nl.affine_range(B):
        for m in nl.affine_range((M + TILE_M - 1) // TILE_M):
            for n in nl.affine_range((N + TILE_N - 1) // TILE_N):
                acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                for k in nl.affine_range((K + TILE_K - 1) // TILE_K):
                    x = nl.zeros((TILE_M, TILE_K), dtype=nl.float32, buffer=nl.sbuf)
                    x[ip, ik] = nl.load(lhs[b, m * TILE_M + ip, k * TILE_K + ik],
                                        mask=(m * TILE_M + ip < M) & (k * TILE_K + ik < K))
                    y = nl.zeros((TILE_K, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                    y[kp, jn] = nl.load(rhs[b, k * TILE_K + kp, n * TILE_N + jn],
                                        mask=(k * TILE_K + kp < K) & (n * TILE_N + jn < N))
                    acc += nl.matmul(x, y)
                res = nl.copy(acc)
                nl.store(out[b, m * TILE_M + ip, n * TILE_N + jn], value=res,
                         mask=(m * TILE_M + ip < M) & (n * TILE_N + jn < N))
    return out
