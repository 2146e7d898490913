"""transpose_matmul for the trn target: out = lhs.T @ rhs, lhs [K, M].  lhs
already has K first, as the TensorE takes its stationary operand, so each
tile goes in as loaded (transpose_x).  Naive: operands loaded per tile.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128  # knob: 32 64 128 (rows of out per tile: the stationary free size)
TILE_K = 128  # knob: 32 64 128 (contraction per matmul: SBUF partitions)
TILE_N = 512  # knob: 128 256 512 (columns of out per tile: the moving free size)


@nki.jit
def kernel(lhs, rhs):
    K, M = lhs.shape
    N = rhs.shape[1]
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    kp, im = nl.arange(TILE_K)[:, None], nl.arange(TILE_M)[None, :]
    jn, op = nl.arange(TILE_N)[None, :], nl.arange(TILE_M)[:, None]
    for m in nl.affine_range((M + TILE_M - 1) // TILE_M):
        for n in nl.affine_range((N + TILE_N - 1) // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range((K + TILE_K - 1) // TILE_K):
                a = nl.zeros((TILE_K, TILE_M), dtype=nl.float32, buffer=nl.sbuf)
                a[kp, im] = nl.load(lhs[k * TILE_K + kp, m * TILE_M + im],
                                    mask=(k * TILE_K + kp < K) & (m * TILE_M + im < M))
                b = nl.zeros((TILE_K, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                b[kp, jn] = nl.load(rhs[k * TILE_K + kp, n * TILE_N + jn],
                                    mask=(k * TILE_K + kp < K) & (n * TILE_N + jn < N))
                acc += nl.matmul(a, b, transpose_x=True)
            res = nl.copy(acc)
            nl.store(out[m * TILE_M + op, n * TILE_N + jn], value=res,
                     mask=(m * TILE_M + op < M) & (n * TILE_N + jn < N))
    return out
