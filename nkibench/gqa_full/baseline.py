"""gqa_full for the trn target: q [B, N, H, D], k and v [B, N, KH, D]; query
head h reads kv head h // (H / KH); out [B, H, N, D] =
softmax(q k^T / sqrt(D)) v over all N keys (not causal), the row's maximum
subtracted first.  Naive: for a block of queries, the whole row of scores
in SBUF (D on the partitions for q k^T, K tiles of keys in PSUM), the
softmax pass by pass, then p v with the key tiles of p transposed on the
TensorE; k and v loaded per tile.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE_Q = 128  # knob: 32 64 128 (queries per block: the stationary free size)
TILE_S = 512  # knob: 128 256 512 (keys per score tile: the moving free size)
TILE_V = 128  # keys per p v matmul (SBUF partitions, at most 128)


@nki.jit
def kernel(q, k, v):
    B, N, H, D = q.shape
    KH = k.shape[2]
    G = H // KH
    NV = (N + TILE_V - 1) // TILE_V
    out = nl.ndarray((B, H, N, D), dtype=nl.float32, buffer=nl.shared_hbm)
    dp, iq, js = nl.arange(D)[:, None], nl.arange(TILE_Q)[None, :], nl.arange(TILE_S)[None, :]
    qp, iN, id_ = nl.arange(TILE_Q)[:, None], nl.arange(N)[None, :], nl.arange(D)[None, :]
    vp, iv = nl.arange(TILE_V)[:, None], nl.arange(TILE_V)[None, :]
    for b in nl.affine_range(B):
        for kh in nl.affine_range(KH):
            for g in nl.affine_range(G):
                h = kh * G + g
                for i in nl.affine_range((N + TILE_Q - 1) // TILE_Q):
                    rows = i * TILE_Q + qp < N
                    # q^T for this block: D on the partitions, as the contraction wants
                    qt = nl.zeros((D, TILE_Q), dtype=nl.float32, buffer=nl.sbuf)
                    qt[dp, iq] = nl.load(q[b, i * TILE_Q + iq, h, dp], mask=(i * TILE_Q + iq < N))
                    s = nl.ndarray((TILE_Q, N), dtype=nl.float32, buffer=nl.sbuf)
                    for j in nl.affine_range((N + TILE_S - 1) // TILE_S):
                        keys = j * TILE_S + js < N
                        kt = nl.zeros((D, TILE_S), dtype=nl.float32, buffer=nl.sbuf)
                        kt[dp, js] = nl.load(k[b, j * TILE_S + js, kh, dp], mask=keys)
                        ps = nl.matmul(qt, kt, transpose_x=True)
                        s[qp, j * TILE_S + js] = nl.multiply(ps, 1.0 / D ** 0.5, mask=keys)
                    mx = nl.max(s, axis=1, keepdims=True)
                    e = nl.exp(nl.subtract(s, mx))
                    total = nl.sum(e, axis=1, keepdims=True)
                    # p, zero past the last key, so the p v tiles see nothing there
                    p = nl.zeros((TILE_Q, NV * TILE_V), dtype=nl.float32, buffer=nl.sbuf)
                    p[qp, iN] = nl.divide(e, total)
                    acc = nl.zeros((TILE_Q, D), dtype=nl.float32, buffer=nl.psum)
                    for j in nl.affine_range(NV):
                        pt = nl.copy(nl.transpose(p[qp, j * TILE_V + iv]))
                        vt = nl.zeros((TILE_V, D), dtype=nl.float32, buffer=nl.sbuf)
                        vt[vp, id_] = nl.load(v[b, j * TILE_V + vp, kh, id_],
                                              mask=(j * TILE_V + vp < N))
                        acc += nl.matmul(pt, vt, transpose_x=True)
                    res = nl.copy(acc)
                    nl.store(out[b, h, i * TILE_Q + qp, id_], value=res, mask=rows)
    return out
