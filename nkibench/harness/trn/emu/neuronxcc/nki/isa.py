"""neuronxcc.nki.isa on the host: accelopt's emulation (see _core.py).
The engine instructions NKIBench kernels use, with their documented limits."""
import numpy as np

from . import language as nl
from ._core import PMAX, NKIError, hbm_store, is_hbm, new_tile, operand, result, same_partitions

# engines (accepted, not modelled)
tensor_engine, vector_engine, scalar_engine, gpsimd_engine, unknown_engine = (
    "tensor", "vector", "scalar", "gpsimd", "unknown")


def _np(op, what):
    fn = getattr(op, "np", None)
    if fn is None:
        raise NKIError("err_unsupported_op", "'%s' takes an nl operator (nl.add, nl.exp, ...), got %r"
                       % (what, op))
    return fn


def nc_matmul(stationary, moving, is_stationary_onezero=False, is_moving_onezero=False,
              is_transpose=False, mask=None, **_):
    """stationary.T @ moving on the TensorE: stationary [K, M], moving [K, N],
    K on the partitions; the result [M, N] in PSUM."""
    s, m = nl._mm_operand(stationary, "nc_matmul", "stationary", mask), nl._mm_operand(moving, "nc_matmul", "moving")
    k, mm = s.a.shape
    if m.a.shape[0] != k:
        raise NKIError("err_num_partition_mismatch", "number of partitions mismatch in 'nc_matmul': "
                       "stationary %s, moving %s" % (s.shape, m.shape))
    nl._matmul_sizes("nc_matmul", k, mm, m.a.shape[1])
    return result(np.matmul(s.a.T.astype(np.float32), m.a.astype(np.float32)), None, nl.psum,
                  "nc_matmul", np.float32)


def nc_transpose(data, mask=None, dtype=None, engine=None, **_):
    v = operand(data, "nc_transpose", "data", mask)
    if v.a.ndim != 2 or v.a.shape[1] > PMAX:
        raise NKIError("err_size_of_dimension_exceed_arch_limit",
                       "size of dimension 1 of 'nc_transpose' (%s) exceed architecture limitation "
                       "of %d" % (v.shape, PMAX))
    buf = nl.sbuf if engine == vector_engine else nl.psum
    return result(v.a.T.copy(), None if v.valid is None else v.valid.T.copy(), buf, "nc_transpose",
                  dtype)


def _per_partition(x, what, p):
    """A scalar, or a [P, 1] vector of one value per partition."""
    if x is None or np.isscalar(x):
        return x
    v = operand(x, what, "operand")
    if v.a.ndim != 2 or v.a.shape[1] != 1 or v.a.shape[0] != p:
        raise NKIError("err_shape_mismatch", "'%s' takes a scalar or a [%d, 1] vector, got %s"
                       % (what, p, v.shape))
    return v.a


def activation(op, data, bias=None, scale=1.0, mask=None, dtype=None, **_):
    """op(data * scale + bias) on the ScalarE."""
    v = operand(data, "activation", "data", mask)
    p = v.a.shape[0]
    a = v.a.astype(np.float32) * (_per_partition(scale, "activation", p))
    if bias is not None:
        a = a + _per_partition(bias, "activation", p)
    with np.errstate(all="ignore"):
        r = _np(op, "activation")(a.astype(np.float32))
    return result(r, v.valid, nl.sbuf, "activation", dtype)


def tensor_tensor(data1, data2, op, dtype=None, mask=None, **_):
    a, b = operand(data1, "tensor_tensor", "data1", mask), operand(data2, "tensor_tensor", "data2")
    same_partitions("tensor_tensor", a, b)
    if a.shape != b.shape:
        raise NKIError("err_shape_mismatch", "'tensor_tensor' of shapes %s and %s" % (a.shape, b.shape))
    with np.errstate(all="ignore"):
        r = _np(op, "tensor_tensor")(a.a.astype(np.float32), b.a.astype(np.float32))
    valid = a.valid if b.valid is None else (b.valid if a.valid is None else a.valid & b.valid)
    return result(r, valid, nl.sbuf, "tensor_tensor", dtype)


def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False,
                  dtype=None, mask=None, **_):
    v = operand(data, "tensor_scalar", "data", mask)
    p = v.a.shape[0]
    a = v.a.astype(np.float32)
    with np.errstate(all="ignore"):
        o = _per_partition(operand0, "tensor_scalar", p)
        a = _np(op0, "tensor_scalar")(o, a) if reverse0 else _np(op0, "tensor_scalar")(a, o)
        if op1 is not None:
            o = _per_partition(operand1, "tensor_scalar", p)
            a = _np(op1, "tensor_scalar")(o, a) if reverse1 else _np(op1, "tensor_scalar")(a, o)
    return result(np.asarray(a, np.float32), v.valid, nl.sbuf, "tensor_scalar", dtype)


def tensor_reduce(op, data, axis, negate=False, keepdims=False, dtype=None, mask=None, **_):
    v = operand(data, "tensor_reduce", "data", mask)
    axes = tuple(a % v.a.ndim for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if 0 in axes:
        raise NKIError("err_reduce_partition_axis", "'tensor_reduce' over axis 0, the partition "
                       "dimension")
    fn = getattr(op, "reduce_np", None)
    if fn is None:
        raise NKIError("err_unsupported_op", "'tensor_reduce' takes nl.add, nl.maximum, nl.minimum "
                       "or nl.multiply, got %r" % (op,))
    r = fn(v.a.astype(np.float64), axis=axes, keepdims=keepdims).astype(np.float32)
    if negate:
        r = -r
    valid = None if v.valid is None else v.valid.all(axis=axes, keepdims=keepdims)
    return result(r, valid, nl.sbuf, "tensor_reduce", dtype)


def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False,
                       dtype=None, mask=None, **_):
    """Along the free dimension: r[:, i] = op1(op0(data0[:, i], r[:, i-1]), data1[:, i]),
    r[:, -1] = initial (a scalar or one value per partition)."""
    a, b = operand(data0, "tensor_tensor_scan", "data0", mask), operand(data1, "tensor_tensor_scan", "data1")
    same_partitions("tensor_tensor_scan", a, b)
    if a.shape != b.shape or a.a.ndim != 2:
        raise NKIError("err_shape_mismatch", "'tensor_tensor_scan' of shapes %s and %s"
                       % (a.shape, b.shape))
    f0, f1 = _np(op0, "tensor_tensor_scan"), _np(op1, "tensor_tensor_scan")
    init = _per_partition(initial, "tensor_tensor_scan", a.a.shape[0])
    prev = np.broadcast_to(np.asarray(init, np.float32).reshape(-1, 1) if np.ndim(init) else init,
                           (a.a.shape[0], 1)).astype(np.float32)
    out = np.empty(a.a.shape, np.float32)
    for i in range(a.a.shape[1]):
        x = a.a[:, i:i + 1]
        t = f0(prev, x) if reverse0 else f0(x, prev)
        y = b.a[:, i:i + 1]
        prev = (f1(y, t) if reverse1 else f1(t, y)).astype(np.float32)
        out[:, i:i + 1] = prev
    return result(out, a.valid, nl.sbuf, "tensor_tensor_scan", dtype)


def tensor_copy(src, dtype=None, mask=None, engine=None, **_):
    v = operand(src, "tensor_copy", "src", mask)
    return result(v.a, v.valid, nl.sbuf, "tensor_copy", dtype)


def memset(shape, value, dtype=np.float32, mask=None, **_):
    return new_tile(shape, dtype, nl.sbuf, "memset", fill=value)


def iota(expr, dtype=np.int32, mask=None, **_):
    a = np.asarray(expr)
    if a.ndim and a.shape[0] > PMAX:
        raise NKIError("err_num_partition_exceed_arch_limit",
                       "number of partitions %d exceed architecture limitation of %d (iota)"
                       % (a.shape[0], PMAX))
    return result(a.astype(dtype), None, nl.sbuf, "iota", dtype)


def dma_copy(dst, src, mask=None, **_):
    """A copy between memories: into HBM it is a store, into SBUF a load."""
    from ._core import Access, Value, _assign
    d = dst if isinstance(dst, Access) else dst[...]
    if is_hbm(d.buffer):
        s = src if isinstance(src, Access) else src[...]
        if is_hbm(s.buffer):
            hbm_store(d, Value(s, None, "dma_copy"), mask, "dma_copy")
        else:
            hbm_store(d, src, mask, "dma_copy")
    else:
        _assign(d, Value(src, None, "dma_copy"), "dma_copy", mask)
