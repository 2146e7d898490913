# A tiled matmul on the ISA calls, in the style of the NKI matmul tutorial:
# lhsT given with K first, nisa.nc_matmul accumulating in PSUM, nl.ds slices.
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul_tiled(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    TM, TK, TN = nl.tile_size.gemm_stationary_fmax, nl.tile_size.pmax, nl.tile_size.gemm_moving_fmax
    for m in nl.affine_range(M // TM):
        for n in nl.affine_range(N // TN):
            res_psum = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                lhsT_tile = nl.ndarray((TK, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
                rhs_tile = nl.ndarray((TK, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                lhsT_tile[...] = nl.load(lhsT[nl.ds(k * TK, TK), nl.ds(m * TM, TM)])
                rhs_tile[...] = nl.load(rhs[nl.ds(k * TK, TK), nl.ds(n * TN, TN)])
                res_psum += nisa.nc_matmul(lhsT_tile[...], rhs_tile[...])
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nl.store(result[nl.ds(m * TM, TM), nl.ds(n * TN, TN)], value=res_sb)
    return result


def run(rng):
    lhsT = rng.standard_normal((256, 256), dtype=np.float32)
    rhs = rng.standard_normal((256, 1024), dtype=np.float32)
    return matmul_tiled(lhsT, rhs), lhsT.T.astype(np.float64) @ rhs
