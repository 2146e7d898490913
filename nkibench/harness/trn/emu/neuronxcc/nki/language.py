"""neuronxcc.nki.language on the host: accelopt's emulation (see _core.py).
The calls NKIBench kernels use, with the documented rules checked."""
import numpy as np

from . import _core
from ._core import (NKIError, PMAX, STATE, Access, LoopIndex, Tensor, Value, hbm_store,
                    is_hbm, new_tile, operand, par_dim, result, same_partitions)

# memories
hbm, shared_hbm, private_hbm, sbuf, psum = "hbm", "shared_hbm", "private_hbm", "sbuf", "psum"

# types
float32, int32, uint32, int8, uint8, int16, uint16 = (np.float32, np.int32, np.uint32, np.int8,
                                                      np.uint8, np.int16, np.uint16)
bool_ = np.bool_


class _Unsupported:
    """A type the emulation has no NumPy form for (bf16, fp8): a kernel that
    uses one is told so instead of computing in another precision."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, a):
        raise NKIError("err_unsupported_dtype", "%s is not emulated (NKIBench kernels are float32)"
                       % self.name)


bfloat16, float16, tfloat32 = _Unsupported("bfloat16"), np.float16, _Unsupported("tfloat32")
float8_e4m3, float8_e5m2 = _Unsupported("float8_e4m3"), _Unsupported("float8_e5m2")


class tile_size:
    pmax = PMAX
    psum_fmax = _core.PSUM_FMAX
    gemm_stationary_fmax = _core.STATIONARY_FMAX
    gemm_moving_fmax = _core.MOVING_FMAX


# --- buffers ---------------------------------------------------------------
def ndarray(shape, dtype=np.float32, buffer=sbuf, name=""):
    return new_tile(shape, dtype, buffer, "ndarray", name=name or None)


def zeros(shape, dtype=np.float32, buffer=sbuf, name=""):
    return new_tile(shape, dtype, buffer, "zeros", fill=0, name=name or None)


def ones(shape, dtype=np.float32, buffer=sbuf, name=""):
    return new_tile(shape, dtype, buffer, "ones", fill=1, name=name or None)


def full(shape, fill_value, dtype=np.float32, buffer=sbuf, name=""):
    return new_tile(shape, dtype, buffer, "full", fill=fill_value, name=name or None)


def zeros_like(a, dtype=None, buffer=None, name=""):
    return zeros(a.shape, dtype or a.dtype, buffer or a.buffer, name)


def ndarray_like(a, dtype=None, buffer=None, name=""):
    return ndarray(a.shape, dtype or a.dtype, buffer or a.buffer, name)


empty_like = ndarray_like


def broadcast_to(src, shape):
    return Value(src, None, "broadcast_to", "src").broadcast_to(shape)


# --- indices and loops -----------------------------------------------------
def arange(*args):
    return np.arange(*[int(_core._val(a)) for a in args])


class _Grid:
    def __init__(self, arrays):
        self.arrays = arrays
        self.p = arrays[0]
        self.x = arrays[1] if len(arrays) > 1 else None
        self.y = arrays[2] if len(arrays) > 2 else None

    def __iter__(self):
        return iter(self.arrays)


class _MGrid:
    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        return _Grid(np.mgrid[key])


mgrid = _MGrid()


def ds(start, size):
    """A dynamic slice: size elements from start."""
    return slice(start, start + size)


def _range(args, kind):
    r = range(*[int(_core._val(a)) if not isinstance(a, LoopIndex) else a.v for a in args])
    if kind == "affine":
        lid = STATE.next_loop
        STATE.next_loop += 1
        entry = [lid, 0]
        STATE.loops.append(entry)
        try:
            for n, i in enumerate(r):
                entry[1] = n
                yield LoopIndex(i)
        finally:
            STATE.loops.remove(entry)
            for t in STATE.touched.pop(lid, []):
                t.deps.pop(lid, None)
    elif kind == "sequential":
        for i in r:
            yield LoopIndex(i)
    else:
        yield from r


def affine_range(*args, **_):
    """Iterations with no dependency between them but a reduction: checked."""
    return _range(args, "affine")


def sequential_range(*args, **_):
    return _range(args, "sequential")


def static_range(*args, **_):
    """Unrolled by Python: the index is an int."""
    return _range(args, "static")


def program_id(axis=0):
    return STATE.program[axis] if axis < len(STATE.program) else 0


def num_programs(axis=None):
    if axis is None:
        return int(np.prod(STATE.grid)) if STATE.grid else 1
    return STATE.grid[axis] if axis < len(STATE.grid) else 1


def program_ndim():
    return len(STATE.grid)


def device_print(prefix, x, **_):
    v = Value(x, None, "device_print")
    print(prefix, v.a)


# --- data movement ---------------------------------------------------------
def load(src, mask=None, dtype=None, **_):
    if not isinstance(src, Access):
        src = Access(src, Ellipsis)
    if not is_hbm(src.buffer):
        raise NKIError("err_unsupported_memory", "Expected operand 'src' of 'load' to be in address "
                       "space 'hbm', but got a tile in '%s'" % src.buffer)
    if len(src.shape) and src.shape[0] > PMAX:
        raise NKIError("err_num_partition_exceed_arch_limit",
                       "number of partitions %d exceed architecture limitation of %d (load of `%s`)"
                       % (src.shape[0], PMAX, src.tensor.name))
    v = Value(src, mask, "load", "src")
    return result(v.a, v.valid, sbuf, "load", dtype)


def store(dst, value, mask=None, **_):
    hbm_store(dst, value, mask)


def copy(x, dtype=None, mask=None, **_):
    v = operand(x, "copy", mask=mask)
    return result(v.a, v.valid, sbuf, "copy", dtype)


def load_transpose2d(src, mask=None, dtype=None, **_):
    t = load(src, mask, dtype)
    return result(t.data.T.copy(), None if t.valid is None else t.valid.T, sbuf, "load_transpose2d")


# --- compute ---------------------------------------------------------------
def _dt(dtype):
    return np.float32 if dtype is None else np.dtype(dtype)


def _unary(name, fn):
    def op(x, dtype=None, mask=None, **_):
        v = operand(x, name, mask=mask)
        with np.errstate(all="ignore"):
            a = fn(v.a.astype(np.float32))
        return result(a, v.valid, sbuf, name, _dt(dtype))
    op.__name__ = name
    op.np = fn
    return op


def _binary(name, fn):
    def op(x, y, dtype=None, mask=None, **_):
        a, b = operand(x, name, "x", mask), operand(y, name, "y")
        same_partitions(name, a, b)
        try:
            with np.errstate(all="ignore"):
                r = fn(a.a.astype(np.float32), b.a.astype(np.float32))
        except ValueError:
            raise NKIError("err_shape_mismatch", "'%s' of shapes %s and %s" % (name, a.shape, b.shape))
        valid = a.valid
        if b.valid is not None:
            bv = np.broadcast_to(b.valid, r.shape)
            valid = bv if valid is None else np.broadcast_to(valid, r.shape) & bv
        return result(r, None if valid is None else np.broadcast_to(valid, r.shape), sbuf, name,
                      _dt(dtype))
    op.__name__ = name
    op.np = fn
    return op


def _sigmoid(a):
    return (1.0 / (1.0 + np.exp(-a.astype(np.float64)))).astype(np.float32)


def _silu(a):
    return (a.astype(np.float64) / (1.0 + np.exp(-a.astype(np.float64)))).astype(np.float32)


def _gelu(a):
    a = a.astype(np.float64)
    return (0.5 * a * (1 + np.tanh(0.7978845608028654 * (a + 0.044715 * a ** 3)))).astype(np.float32)


exp = _unary("exp", np.exp)
log = _unary("log", np.log)
sqrt = _unary("sqrt", np.sqrt)
rsqrt = _unary("rsqrt", lambda a: (1.0 / np.sqrt(a.astype(np.float64))).astype(np.float32))
reciprocal = _unary("reciprocal", lambda a: (1.0 / a.astype(np.float64)).astype(np.float32))
sin = _unary("sin", np.sin)
cos = _unary("cos", np.cos)
tanh = _unary("tanh", np.tanh)
sigmoid = _unary("sigmoid", _sigmoid)
silu = _unary("silu", _silu)
gelu = _unary("gelu", _gelu)
relu = _unary("relu", lambda a: np.maximum(a, 0))
abs = _unary("abs", np.abs)  # noqa: A001 - NKI's name
negative = _unary("negative", np.negative)
square = _unary("square", np.square)
sign = _unary("sign", np.sign)
erf = _unary("erf", lambda a: np.vectorize(__import__("math").erf, otypes=[np.float32])(a))

add = _binary("add", np.add)
subtract = _binary("subtract", np.subtract)
multiply = _binary("multiply", np.multiply)
divide = _binary("divide", np.divide)
maximum = _binary("maximum", np.maximum)
minimum = _binary("minimum", np.minimum)
power = _binary("power", np.power)
equal = _binary("equal", lambda a, b: (a == b).astype(np.float32))
not_equal = _binary("not_equal", lambda a, b: (a != b).astype(np.float32))
greater = _binary("greater", lambda a, b: (a > b).astype(np.float32))
greater_equal = _binary("greater_equal", lambda a, b: (a >= b).astype(np.float32))
less = _binary("less", lambda a, b: (a < b).astype(np.float32))
less_equal = _binary("less_equal", lambda a, b: (a <= b).astype(np.float32))


def where(condition, x, y, dtype=None, mask=None, **_):
    c, a, b = operand(condition, "where", "condition", mask), operand(x, "where", "x"), operand(y, "where", "y")
    same_partitions("where", c, a, b)
    return result(np.where(c.a != 0, a.a, b.a), c.valid, sbuf, "where", _dt(dtype))


def _reduce(name, fn):
    def op(x, axis, dtype=None, keepdims=False, mask=None, **_):
        v = operand(x, name, mask=mask)
        axes = tuple(a % v.a.ndim for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
        if 0 in axes:
            raise NKIError("err_reduce_partition_axis", "'%s' over axis 0, the partition dimension: "
                           "reduce along the free dimensions (transpose or matmul to reduce "
                           "across partitions)" % name)
        with np.errstate(all="ignore"):
            r = fn(v.a.astype(np.float64), axis=axes, keepdims=True).astype(np.float32)
        valid = None if v.valid is None else v.valid.all(axis=axes, keepdims=True)
        if not keepdims:
            r = r.reshape([s for i, s in enumerate(r.shape) if i not in axes])
            valid = None if valid is None else valid.reshape(r.shape)
        return result(r, valid, sbuf, name, _dt(dtype))
    op.__name__ = name
    op.np = fn
    return op


sum = _reduce("sum", np.sum)  # noqa: A001
max = _reduce("max", np.max)  # noqa: A001
min = _reduce("min", np.min)  # noqa: A001
mean = _reduce("mean", np.mean)
prod = _reduce("prod", np.prod)
add.reduce_np = np.sum
maximum.reduce_np = np.max
minimum.reduce_np = np.min
multiply.reduce_np = np.prod


def softmax(x, axis, dtype=None, mask=None, **_):
    v = operand(x, "softmax", mask=mask)
    a = v.a.astype(np.float64)
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return result((e / e.sum(axis=axis, keepdims=True)).astype(np.float32), v.valid, sbuf, "softmax",
                  _dt(dtype))


def _matmul_sizes(op, k, m, n):
    if k > PMAX:
        raise NKIError("err_num_partition_exceed_arch_limit",
                       "number of partitions %d exceed architecture limitation of %d (the "
                       "contraction dimension of '%s')" % (k, PMAX, op))
    if m > _core.STATIONARY_FMAX:
        raise NKIError("err_size_of_dimension_exceed_arch_limit",
                       "size of dimension 1 of the stationary operand of '%s' (%d) exceed "
                       "architecture limitation of %d" % (op, m, _core.STATIONARY_FMAX))
    if n > _core.MOVING_FMAX:
        raise NKIError("err_size_of_dimension_exceed_arch_limit",
                       "size of dimension 1 of the moving operand of '%s' (%d) exceed "
                       "architecture limitation of %d" % (op, n, _core.MOVING_FMAX))


def _mm_operand(x, op, name, mask=None):
    v = operand(x, op, name, mask)
    if v.buffer != "sbuf":
        raise NKIError("err_unsupported_memory", "Expected operand '%s' of '%s' to be in address "
                       "space 'sbuf', but got a tile in '%s'" % (name, op, v.buffer))
    if v.a.ndim != 2:
        raise NKIError("err_shape_mismatch", "operand '%s' of '%s' must be 2-D, got %s"
                       % (name, op, v.shape))
    return v


def matmul(x, y, transpose_x=False, mask=None, **_):
    """x @ y (x: [M, K] on M partitions), or x.T @ y with transpose_x (x: [K, M]
    on K partitions, as the TensorE takes it): a tile in PSUM."""
    a, b = _mm_operand(x, "matmul", "x"), _mm_operand(y, "matmul", "y")
    xa = a.a if transpose_x else a.a.T
    k, m = xa.shape
    if b.a.shape[0] != k:
        raise NKIError("err_shape_mismatch", "'matmul' contracts %d with %d: x is %s%s, y is %s"
                       % (k, b.a.shape[0], a.shape, " (transpose_x)" if transpose_x else "", b.shape))
    _matmul_sizes("matmul", k, m, b.a.shape[1])
    r = np.matmul(xa.T.astype(np.float32), b.a.astype(np.float32))
    return result(r, None, psum, "matmul", np.float32)


def transpose(x, dtype=None, mask=None, **_):
    v = operand(x, "transpose", mask=mask)
    if v.a.ndim != 2 or v.a.shape[1] > PMAX:
        raise NKIError("err_size_of_dimension_exceed_arch_limit",
                       "size of dimension 1 of 'transpose' (%s) exceed architecture limitation of %d"
                       % (v.shape, PMAX))
    return result(v.a.T.copy(), None if v.valid is None else v.valid.T.copy(), psum, "transpose",
                  _dt(dtype))


_core.OPERATORS.update(add=add, subtract=subtract, multiply=multiply, divide=divide, power=power,
                       negative=negative)
