"""_core.py - the tensors, tiles and rules of accelopt's NKI host emulation.

It runs an NKI kernel's Python with NumPy so that what the kernel computes
can be checked where no NeuronCore is.  It checks semantics, not speed, and
it is not AWS's simulator: it enforces the documented rules an NKIBench
kernel meets (a tile's partition dimension at most 128, matmul and
transpose sizes, SBUF and PSUM capacity per partition, which memory each
operand must be in, bounds, affine_range iterations that write the same
place) and raises them with the compiler's own error names and wording
(docs/TARGETS.md, "Device facts") so the failure classes are the same.  Every new buffer
starts as NaN, as on the new simulator, so a kernel that reads what it
never wrote is caught.

Capacity is counted over the tiles alive in Python at once; the compiler's
allocator can need more (buffering) or less (reuse), so a kernel near the
limit can pass here and fail there, or the other way round.
"""
import os
import weakref

import numpy as np

PMAX = 128                # partitions of SBUF and PSUM
PSUM_FMAX = 512           # fp32 elements of one PSUM bank, the matmul's moving free size
STATIONARY_FMAX = 128     # the matmul's stationary free size
MOVING_FMAX = 512
PSUM_PARTITION_BYTES = 16 * 1024
SBUF_PARTITION_BYTES = {"trn1": 192 * 1024, "trn2": 224 * 1024}


class NKIError(Exception):
    """A kernel broke a rule of NKI.  code: the compiler's error name."""

    def __init__(self, code, message):
        super().__init__("[%s] %s" % (code, message))
        self.code = code


def platform():
    p = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    return p if p in SBUF_PARTITION_BYTES else "trn1"


class _State:
    """What one kernel call keeps: live bytes per partition of SBUF and PSUM,
    the affine loops open now, the HBM tensors written in them."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.live = {"sbuf": 0, "psum": 0}
        self.loops = []       # [loop id, iteration] of each affine_range open, outermost first
        self.next_loop = 0
        self.program = ()     # the SPMD program ids
        self.grid = ()
        self.touched = {}     # affine loop id -> the tensors it wrote (their deps go with it)
        self.shared_pos = 0   # the next shared_hbm allocation of this program


STATE = _State()
SHARED = []  # the shared_hbm tensors of one launch: every SPMD program gets the same ones


def _limit(buf):
    return SBUF_PARTITION_BYTES[platform()] if buf == "sbuf" else PSUM_PARTITION_BYTES


def _charge(obj, buf, nbytes, what):
    """Count a new tile's bytes per partition against its memory, freed when the
    tile is."""
    if STATE.live[buf] + nbytes > _limit(buf):
        if buf == "sbuf":
            raise NKIError("GCA035", "Instruction: %s couldn't be allocated in SB: %d bytes per "
                           "partition are in use and it needs %d more. Total SB Partition Size: %d"
                           % (what, STATE.live[buf], nbytes, _limit(buf)))
        raise NKIError("GCA035", "Instruction: %s couldn't be allocated in PSUM: %d bytes per "
                       "partition are in use and it needs %d more. Total PSUM Partition Size: %d"
                       % (what, STATE.live[buf], nbytes, _limit(buf)))
    STATE.live[buf] += nbytes
    weakref.finalize(obj, _release, buf, nbytes, id(STATE))


def _release(buf, nbytes, owner):
    if owner == id(STATE):
        STATE.live[buf] = max(0, STATE.live[buf] - nbytes)


def _nan_fill(shape, dtype):
    a = np.empty(shape, dtype=dtype)
    if np.issubdtype(a.dtype, np.floating):
        a.fill(np.nan)
    elif np.issubdtype(a.dtype, np.integer):
        a.fill(np.iinfo(a.dtype).min)
    else:
        a.fill(True)
    return a


class par_dim:
    """Marks the partition dimension in a tile's shape."""

    def __init__(self, n):
        self.n = int(n)


class LoopIndex:
    """An affine_range or sequential_range index: the compiler knows it only as
    a symbol, so it takes part in index arithmetic and masks but cannot steer
    Python (no bool, no int)."""
    __array_ufunc__ = None  # numpy defers to the reflected operators below

    def __init__(self, v):
        self.v = int(v)

    def _o(self, x):
        return x.v if isinstance(x, LoopIndex) else x

    def _w(self, r):
        return LoopIndex(r) if isinstance(r, (int, np.integer)) else r

    def __add__(self, x): return self._w(self.v + self._o(x))
    def __radd__(self, x): return self._w(self._o(x) + self.v)
    def __sub__(self, x): return self._w(self.v - self._o(x))
    def __rsub__(self, x): return self._w(self._o(x) - self.v)
    def __mul__(self, x): return self._w(self.v * self._o(x))
    def __rmul__(self, x): return self._w(self._o(x) * self.v)
    def __floordiv__(self, x): return self._w(self.v // self._o(x))
    def __rfloordiv__(self, x): return self._w(self._o(x) // self.v)
    def __mod__(self, x): return self._w(self.v % self._o(x))
    def __rmod__(self, x): return self._w(self._o(x) % self.v)
    def __neg__(self): return LoopIndex(-self.v)
    def __lt__(self, x): return _cond(self.v < self._o(x))
    def __le__(self, x): return _cond(self.v <= self._o(x))
    def __gt__(self, x): return _cond(self.v > self._o(x))
    def __ge__(self, x): return _cond(self.v >= self._o(x))

    def __bool__(self):
        raise NKIError("err_loop_index_in_control_flow",
                       "a loop index of affine_range or sequential_range is not known until the "
                       "kernel runs: it cannot decide Python control flow (use nl.static_range "
                       "for a loop Python unrolls, or a mask)")

    def __index__(self):
        raise NKIError("err_loop_index_in_control_flow",
                       "a loop index of affine_range or sequential_range cannot be used as a "
                       "Python integer (use it in an index expression, or nl.static_range)")

    def __repr__(self):
        return "LoopIndex(%d)" % self.v


class Condition(np.ndarray):
    """A comparison of a loop index: a mask, not a Python bool."""

    def __bool__(self):
        raise NKIError("err_loop_index_in_control_flow",
                       "a comparison of a loop index of affine_range or sequential_range is known "
                       "only when the kernel runs: use it as a mask, not in Python control flow "
                       "(min, max, if)")


def _cond(v):
    return np.asarray(v).view(Condition)


def _mask(m):
    """A mask as a plain bool array."""
    return None if m is None else np.asarray(m, dtype=bool)


def _val(x):
    """An index value as numpy: a loop index's value, arrays as they are."""
    if isinstance(x, LoopIndex):
        return x.v
    if isinstance(x, np.ndarray):
        return x
    return x


def _index_arrays(shape, key, name):
    """The integer index arrays (broadcastable, one per dimension) that key
    selects in a tensor of that shape; bounds are checked later, with the
    mask.  Slices are not clipped: past the end is out of bounds, as there."""
    if not isinstance(key, tuple):
        key = (key,)
    if any(k is Ellipsis for k in key):
        i = [j for j, k in enumerate(key) if k is Ellipsis][0]
        key = key[:i] + (slice(None),) * (len(shape) - len(key) + 1) + key[i + 1:]
    if len(key) > len(shape):
        raise NKIError("err_index_rank", "tensor `%s` has %d dimensions, indexed with %d"
                       % (name, len(shape), len(key)))
    key = key + (slice(None),) * (len(shape) - len(key))
    kinds = []
    for d, k in zip(shape, key):
        if isinstance(k, slice):
            start = 0 if k.start is None else _val(k.start)
            stop = d if k.stop is None else _val(k.stop)
            step = 1 if k.step is None else _val(k.step)
            kinds.append(("s", np.arange(int(start), int(stop), int(step))))
        else:
            v = np.asarray(_val(k))
            if not np.issubdtype(v.dtype, np.integer):
                raise NKIError("err_index_type", "tensor `%s` indexed with %s values"
                               % (name, v.dtype))
            kinds.append(("a" if v.ndim else "i", v))
    if all(kd != "a" for kd, _ in kinds):
        free = [v for kd, v in kinds if kd == "s"]
        n, out, j = len(free), [], 0
        for kd, v in kinds:
            if kd == "s":
                out.append(v.reshape([1] * j + [len(v)] + [1] * (n - j - 1)))
                j += 1
            else:
                out.append(v)
        return out
    # arrays (nl.arange / mgrid) carry their own axes; a slice among them takes
    # the axis of its position among the indices that are not integers
    rank = max(v.ndim for kd, v in kinds if kd == "a")
    pos = [j for j, (kd, _) in enumerate(kinds) if kd != "i"]
    rank = max(rank, len(pos))
    out = []
    for j, (kd, v) in enumerate(kinds):
        if kd == "s":
            p = pos.index(j)
            out.append(v.reshape([1] * p + [len(v)] + [1] * (rank - p - 1)))
        else:
            out.append(v)
    return out


# nl's operations that Python's operators on tiles stand for, filled in by
# language.py as it loads (it builds on this module, not the other way)
OPERATORS = {}


class _Arith:
    """Python's operators on tiles (a_tile + b_tile), as nl's calls."""

    def _op(self, name, other, swap=False):
        f = OPERATORS[name]
        return f(other, self) if swap else f(self, other)

    def __add__(self, o): return self._op("add", o)
    def __radd__(self, o): return self._op("add", o, True)
    def __sub__(self, o): return self._op("subtract", o)
    def __rsub__(self, o): return self._op("subtract", o, True)
    def __mul__(self, o): return self._op("multiply", o)
    def __rmul__(self, o): return self._op("multiply", o, True)
    def __truediv__(self, o): return self._op("divide", o)
    def __rtruediv__(self, o): return self._op("divide", o, True)
    def __pow__(self, o): return self._op("power", o)

    def __neg__(self):
        return OPERATORS["negative"](self)


class Access(_Arith):
    """tensor[key]: a tensor and the elements selected, read when used."""

    def __init__(self, tensor, key):
        self.tensor = tensor
        self.idx = _index_arrays(tensor.shape, key, tensor.name)
        self.shape = np.broadcast_shapes(*[np.shape(i) for i in self.idx]) if self.idx else ()

    @property
    def buffer(self):
        return self.tensor.buffer

    @property
    def dtype(self):
        return self.tensor.data.dtype

    def check_bounds(self, mask, op):
        for d, (n, ix) in enumerate(zip(self.tensor.shape, self.idx)):
            ix = np.broadcast_to(ix, self.shape)
            if mask is not None:
                ix = ix[np.broadcast_to(mask, self.shape)]
            if ix.size and (ix.min() < 0 or ix.max() >= n):
                raise NKIError("err_out_of_bound_access",
                               "Out-of-bound access for tensor `%s` on dimension %d: index range "
                               "[%d, %d] exceed dimension size of %d (in %s)"
                               % (self.tensor.name, d, ix.min(), ix.max(), n, op))

    def _safe(self, mask):
        """The index arrays with masked-off positions pointed at element 0."""
        if mask is None:
            return tuple(self.idx)
        m = np.broadcast_to(mask, self.shape)
        return tuple(np.where(m, np.broadcast_to(i, self.shape), 0) for i in self.idx)

    def read(self, mask=None, op="read"):
        self.check_bounds(mask, op)
        v = self.tensor.data[self._safe(mask)]
        return np.broadcast_to(v, self.shape).copy()

    def write(self, values, valid, op):
        """Write values where valid (a bool array or None: everywhere)."""
        self.check_bounds(valid, op)
        vals = np.broadcast_to(values, self.shape)
        if valid is None:
            self.tensor.data[tuple(np.broadcast_to(i, self.shape) for i in self.idx)] = vals
        else:
            m = np.broadcast_to(valid, self.shape)
            self.tensor.data[tuple(np.broadcast_to(i, self.shape)[m] for i in self.idx)] = vals[m]
        self.tensor.written = True

    def where(self, valid):
        """Each selected element's flat position in the tensor (for the
        dependency check)."""
        ix = [np.broadcast_to(i, self.shape) for i in self.idx]
        if valid is not None:
            m = np.broadcast_to(valid, self.shape)
            ix = [i[m] for i in ix]
        return np.ravel_multi_index([np.asarray(i).ravel() for i in ix], self.tensor.shape)

    # an access of a tile can be an operand and a destination
    def __iadd__(self, other):
        _inplace(self, other, np.add)
        self.done = True  # Python assigns it back: nothing more to write
        return self

    def broadcast_to(self, shape):
        return Value(self).broadcast_to(shape)


class Tensor(_Arith):
    """A tensor in HBM (a kernel's argument or output) or a tile in SBUF or PSUM."""

    def __init__(self, data, buffer, name="tensor", par_axis=0):
        self.data = data
        self.buffer = buffer
        self.name = name
        self.par_axis = par_axis
        self.written = False
        self.deps = {}  # affine loop id -> iteration+1 that wrote each element (HBM)

    @property
    def shape(self):
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self):
        return self.data.ndim

    def __getitem__(self, key):
        return Access(self, key)

    def __setitem__(self, key, value):
        if isinstance(value, Access) and value.tensor is self and getattr(value, "done", False):
            return  # t[...] += x already wrote
        _assign(Access(self, key), value)

    def __iadd__(self, other):
        _inplace(Access(self, Ellipsis), other, np.add)
        return self

    def reshape(self, shape):
        if self.buffer not in ("hbm", "shared_hbm", "private_hbm"):
            raise NKIError("err_unsupported_memory", "reshape is for tensors in HBM; `%s` is in "
                           "'%s'" % (self.name, self.buffer))
        t = Tensor(self.data.reshape(tuple(int(s) for s in shape)), self.buffer, self.name)
        t.deps = self.deps
        return t

    def broadcast_to(self, shape):
        return Value(Access(self, Ellipsis)).broadcast_to(shape)

    def __repr__(self):
        return "<%s tensor %s %s>" % (self.buffer, self.name, self.shape)


def is_hbm(buf):
    return buf in ("hbm", "shared_hbm", "private_hbm")


class Value:
    """An operand's values: its elements, which of them are valid (a masked
    load leaves the rest undefined), where it lives and, for a matmul's result,
    that it may only go to PSUM."""

    def __init__(self, x, mask=None, op="operand", name="x"):
        mask = _mask(mask)
        self.from_matmul = False
        if isinstance(x, Value):
            self.a, self.valid, self.buffer = x.a, x.valid, x.buffer
            self.from_matmul = x.from_matmul
        elif isinstance(x, Access):
            self.buffer = x.buffer
            if is_hbm(x.buffer) and op not in ("load", "dma_copy"):
                raise NKIError("err_unsupported_memory",
                               "Expected operand '%s' of '%s' to be in address space 'sbuf' or "
                               "'psum', but got a tile in 'hbm' (`%s`: nl.load it first)"
                               % (name, op, x.tensor.name))
            self.a = x.read(mask, op)
            self.valid = None if mask is None else np.broadcast_to(mask, x.shape).copy()
            if getattr(x.tensor, "valid", None) is not None:
                v = x.tensor.valid[x._safe(mask)]
                self.valid = v if self.valid is None else self.valid & v
        elif isinstance(x, Tensor):
            self.__init__(Access(x, Ellipsis), mask, op, name)
            return
        else:
            self.a = np.asarray(x, dtype=np.float32)
            self.valid = None
            self.buffer = "const"
        if mask is not None and not isinstance(x, Access):
            m = np.broadcast_to(mask, self.a.shape)
            self.valid = m.copy() if self.valid is None else self.valid & m

    @property
    def shape(self):
        return self.a.shape

    def broadcast_to(self, shape):
        shape = tuple(int(s) for s in shape)
        v = Value(self)
        v.a = np.broadcast_to(self.a, shape).copy()
        v.valid = None if self.valid is None else np.broadcast_to(self.valid, shape).copy()
        return v


def operand(x, op, name="x", mask=None):
    v = Value(x, mask, op, name)
    if v.buffer != "const" and v.a.ndim and v.a.shape[0] > PMAX:
        raise NKIError("err_num_partition_exceed_arch_limit",
                       "number of partitions %d exceed architecture limitation of %d (operand "
                       "'%s' of '%s')" % (v.a.shape[0], PMAX, name, op))
    return v


def same_partitions(op, *vals):
    ps = {v.a.shape[0] for v in vals if v.buffer != "const" and v.a.ndim}
    if len(ps) > 1:
        raise NKIError("err_num_partition_mismatch",
                       "number of partitions mismatch in '%s': %s (broadcast one with "
                       ".broadcast_to first)" % (op, " vs ".join(str(p) for p in sorted(ps))))


def new_tile(shape, dtype, buffer, what, fill=None, name=None):
    """A new tile of SBUF or PSUM (NaN unless fill), charged to its memory; or a
    new tensor in HBM."""
    dims, par = [], None
    for i, s in enumerate(shape if isinstance(shape, (tuple, list)) else (shape,)):
        if isinstance(s, par_dim):
            par, s = i, s.n
        dims.append(int(_val(s)))
    dtype = np.dtype(dtype or np.float32)
    if buffer == "shared_hbm" and STATE.shared_pos < len(SHARED):
        STATE.shared_pos += 1  # a later program of the grid: the first one's tensor
        return SHARED[STATE.shared_pos - 1]
    a = _nan_fill(tuple(dims), dtype) if fill is None else np.full(tuple(dims), fill, dtype)
    buffer = {"shared_hbm": "shared_hbm", "private_hbm": "private_hbm", "hbm": "hbm",
              "sbuf": "sbuf", "psum": "psum"}[buffer]
    t = Tensor(a, buffer, name or what, par or 0)
    if buffer in ("sbuf", "psum"):
        pax = par or 0
        if dims and dims[pax] > PMAX:
            raise NKIError("err_num_partition_exceed_arch_limit",
                           "number of partitions %d exceed architecture limitation of %d (%s)"
                           % (dims[pax], PMAX, what))
        per = dtype.itemsize * int(np.prod([d for i, d in enumerate(dims) if i != pax] or [1]))
        if buffer == "psum" and dtype.itemsize * (dims[-1] if len(dims) > 1 else 1) > 2048:
            raise NKIError("err_size_of_dimension_exceed_arch_limit",
                           "size of dimension %d of a PSUM tile (%d) exceed architecture limitation "
                           "of %d fp32 elements (one 2 KiB bank) (%s)"
                           % (len(dims) - 1, dims[-1], PSUM_FMAX, what))
        _charge(t, buffer, per, what)
    elif buffer == "shared_hbm":
        SHARED.append(t)
        STATE.shared_pos += 1
    return t


def result(a, valid, buffer, op, dtype=None):
    """An op's result: a new tile of its shape in that memory."""
    a = np.asarray(a)
    t = new_tile(a.shape, dtype or (a.dtype if a.dtype != np.float64 else np.float32), buffer, op)
    t.data[...] = a
    if valid is not None and not valid.all():
        t.valid = np.broadcast_to(valid, a.shape).copy()
    else:
        t.valid = None
    t.from_matmul = op in ("matmul", "nc_matmul")
    return t


def _assign(dst, value, op="assign", mask=None):
    """dst[...] = value: only the valid elements are written."""
    if is_hbm(dst.buffer):
        raise NKIError("err_unsupported_memory", "a tensor in HBM (`%s`) is written with nl.store, "
                       "not by assignment" % dst.tensor.name)
    src_matmul = getattr(value, "from_matmul", False) or (
        isinstance(value, Access) and getattr(value.tensor, "from_matmul", False))
    v = Value(value, None, op, "value")
    if src_matmul and dst.buffer != "psum":
        raise NKIError("err_matmul_dst_not_psum", "Internal compiler error: kernel failed verifier "
                       "check: Matmult dst tensor is not psum (`%s` is in '%s')"
                       % (dst.tensor.name, dst.buffer))
    try:
        vals = np.broadcast_to(v.a, dst.shape)
    except ValueError:
        raise NKIError("err_shape_mismatch", "cannot assign a tile of shape %s to `%s`%s"
                       % (v.a.shape, dst.tensor.name, list(dst.shape)))
    valid = None if v.valid is None else np.broadcast_to(v.valid, dst.shape)
    if mask is not None:
        m = np.broadcast_to(_mask(mask), dst.shape)
        valid = m if valid is None else valid & m
    dst.write(vals.astype(dst.dtype), valid, op)
    tv = getattr(dst.tensor, "valid", None)
    if tv is not None:  # what is written now is defined
        tv[tuple(np.broadcast_to(i, dst.shape) for i in dst.idx)] |= (
            True if valid is None else valid)


def _inplace(dst, other, fn):
    if is_hbm(dst.buffer):
        raise NKIError("err_unsupported_memory", "a tensor in HBM (`%s`) cannot be accumulated "
                       "into; accumulate in PSUM or SBUF and nl.store the result" % dst.tensor.name)
    o = Value(other, None, "+=", "value")
    if getattr(other, "from_matmul", False) and dst.buffer != "psum":
        raise NKIError("err_matmul_dst_not_psum", "Internal compiler error: kernel failed verifier "
                       "check: Matmult dst tensor is not psum (`%s` is in '%s')"
                       % (dst.tensor.name, dst.buffer))
    cur = dst.read(None, "+=")
    dst.write(fn(cur, np.broadcast_to(o.a, dst.shape)).astype(dst.dtype), None, "+=")
    return dst


def hbm_store(dst, value, mask, op="store"):
    """nl.store: the value (in SBUF) into HBM, with the affine loops' check."""
    if not isinstance(dst, Access):
        dst = Access(dst, Ellipsis)
    if not is_hbm(dst.buffer):
        raise NKIError("err_unsupported_memory", "Expected operand 'dst' of '%s' to be in address "
                       "space 'hbm', but got a tile in '%s'" % (op, dst.buffer))
    v = Value(value, None, op, "value")
    if op == "store" and v.buffer not in ("sbuf", "const"):
        raise NKIError("err_unsupported_memory", "Expected operand 'value' of 'store' to be in "
                       "address space 'sbuf', but got a tile in '%s' (copy it to SBUF first)"
                       % v.buffer)
    if v.a.ndim and v.a.shape[0] > PMAX:
        raise NKIError("err_num_partition_exceed_arch_limit",
                       "number of partitions %d exceed architecture limitation of %d (operand "
                       "'value' of '%s')" % (v.a.shape[0], PMAX, op))
    try:
        vals = np.broadcast_to(v.a, dst.shape)
    except ValueError:
        raise NKIError("err_shape_mismatch", "'%s' of a tile of shape %s to `%s`%s"
                       % (op, v.a.shape, dst.tensor.name, list(dst.shape)))
    valid = None if v.valid is None else np.broadcast_to(v.valid, dst.shape)
    if mask is not None:
        m = np.broadcast_to(_mask(mask), dst.shape)
        valid = m if valid is None else valid & m
    dst.check_bounds(valid, op)
    _check_dependencies(dst, valid)
    dst.write(vals.astype(dst.dtype), valid, op)


def _check_dependencies(dst, valid):
    """Iterations of an affine_range may run in any order or at once: two of
    them writing the same element of a tensor in HBM is the compiler's
    "Unexpected output dependencies"."""
    if not STATE.loops:
        return
    pos = dst.where(valid)
    t = dst.tensor
    for loop_id, it in STATE.loops:
        w = t.deps.get(loop_id)
        if w is None:
            w = t.deps[loop_id] = np.zeros(int(np.prod(t.shape)), dtype=np.int64)
            STATE.touched.setdefault(loop_id, []).append(t)
        prev = w[pos]
        clash = (prev != 0) & (prev != it + 1)
        if clash.any():
            raise NKIError("err_unexpected_output_dependencies",
                           "Unexpected output dependencies: iterations %d and %d of an affine_range "
                           "write the same elements of `%s` (use nl.sequential_range if the order "
                           "matters)" % (prev[clash][0] - 1, it, t.name))
        w[pos] = it + 1
