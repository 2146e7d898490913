"""mamba (the selective scan) for the trn target: for each channel c, state s
and position m, h[c,s,m] = exp(delta[c,m] a[c,s]) h[c,s,m-1]
+ delta[c,m] b[s,m] u[c,m] (h before the first position 0), and
out[c,m] = sum over s of c[s,m] h[c,s,m].  Channels on the partitions; for
each block of positions and each state, the scan runs along the free
dimension on the VectorE (tensor_tensor_scan), each state's last h carried
to the next block.

Knobs: `NAME = value  # knob: values`; a tool may change the value only."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

TILE_C = 128  # knob: 32 64 128 (channels per block: SBUF partitions)
TILE_M = 512  # knob: 256 512 1024 2048 (positions per block)


@nki.jit
def kernel(delta, u, a, b, c):
    C, M = delta.shape
    S = a.shape[1]
    out = nl.ndarray((C, M), dtype=nl.float32, buffer=nl.shared_hbm)
    ip, jm, i0 = nl.arange(TILE_C)[:, None], nl.arange(TILE_M)[None, :], nl.arange(1)[:, None]
    iS, last = nl.arange(S)[None, :], nl.arange(1)[None, :]
    for ci in nl.affine_range((C + TILE_C - 1) // TILE_C):
        chans = ci * TILE_C + ip < C
        at = nl.zeros((TILE_C, S), dtype=nl.float32, buffer=nl.sbuf)
        at[ip, iS] = nl.load(a[ci * TILE_C + ip, iS], mask=chans)
        carry = nl.zeros((TILE_C, S), dtype=nl.float32, buffer=nl.sbuf)
        for mi in nl.sequential_range((M + TILE_M - 1) // TILE_M):
            pos = mi * TILE_M + jm < M
            inside = chans & pos
            # zero past the edges: exp(0) h + 0 keeps h finite there
            dt = nl.zeros((TILE_C, TILE_M), dtype=nl.float32, buffer=nl.sbuf)
            dt[ip, jm] = nl.load(delta[ci * TILE_C + ip, mi * TILE_M + jm], mask=inside)
            ut = nl.zeros((TILE_C, TILE_M), dtype=nl.float32, buffer=nl.sbuf)
            ut[ip, jm] = nl.load(u[ci * TILE_C + ip, mi * TILE_M + jm], mask=inside)
            du = nl.multiply(dt, ut)
            acc = nl.zeros((TILE_C, TILE_M), dtype=nl.float32, buffer=nl.sbuf)
            for s in nl.sequential_range(S):
                brow = nl.zeros((1, TILE_M), dtype=nl.float32, buffer=nl.sbuf)
                brow[i0, jm] = nl.load(b[s + i0, mi * TILE_M + jm], mask=pos)
                crow = nl.zeros((1, TILE_M), dtype=nl.float32, buffer=nl.sbuf)
                crow[i0, jm] = nl.load(c[s + i0, mi * TILE_M + jm], mask=pos)
                dA = nl.exp(nl.multiply(dt, at[ip, s + last]))
                dBu = nl.multiply(du, brow.broadcast_to((TILE_C, TILE_M)))
                h = nisa.tensor_tensor_scan(dA, dBu, initial=carry[ip, s + last],
                                            op0=nl.multiply, op1=nl.add)
                carry[ip, s + last] = nl.copy(h[ip, TILE_M - 1 + last])
                acc[...] = nl.add(acc, nl.multiply(h, crow.broadcast_to((TILE_C, TILE_M))))
            nl.store(out[ci * TILE_C + ip, mi * TILE_M + jm], value=acc, mask=inside)
    return out
