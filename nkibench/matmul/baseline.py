"""matmul for the trn target: out = lhs @ rhs.  Naive: each output tile
accumulates its K tiles in PSUM, both operands loaded from HBM each time.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_M = 128  # knob: 32 64 128 (rows of out per tile: the matmul's stationary free size)
TILE_K = 128  # knob: 32 64 128 (contraction per matmul: SBUF partitions)
TILE_N = 512  # knob: 128 256 512 (columns of out per tile: the moving free size)


@nki.jit
def kernel(lhs, rhs):
    M, K = lhs.shape
    N = rhs.shape[1]
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ip, ik = nl.arange(TILE_M)[:, None], nl.arange(TILE_K)[None, :]
    kp, jn = nl.arange(TILE_K)[:, None], nl.arange(TILE_N)[None, :]
    for m in nl.affine_range((M + TILE_M - 1) // TILE_M):
        for n in nl.affine_range((N + TILE_N - 1) // TILE_N):
            acc = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range((K + TILE_K - 1) // TILE_K):
                # zeros first: what lies past an edge adds nothing
                a = nl.zeros((TILE_M, TILE_K), dtype=nl.float32, buffer=nl.sbuf)
                a[ip, ik] = nl.load(lhs[m * TILE_M + ip, k * TILE_K + ik],
                                    mask=(m * TILE_M + ip < M) & (k * TILE_K + ik < K))
                b = nl.zeros((TILE_K, TILE_N), dtype=nl.float32, buffer=nl.sbuf)
                b[kp, jn] = nl.load(rhs[k * TILE_K + kp, n * TILE_N + jn],
                                    mask=(k * TILE_K + kp < K) & (n * TILE_N + jn < N))
                acc += nl.matmul(a, b)
            res = nl.copy(acc)
            nl.store(out[m * TILE_M + ip, n * TILE_N + jn], value=res,
                     mask=(m * TILE_M + ip < M) & (n * TILE_N + jn < N))
    return out
