"""Shape and layout operators as entries of the operator table (family ``shaped``):
Reshape, Transpose, Concat, Squeeze, Unsqueeze, Flatten, Slice, Split, Expand, Tile, Pad.

Every one of them moves data without arithmetic, so every output is compared exactly, the
sign of zero included (``signed_zero=True``: a kernel must not round-trip values through
arithmetic), NaN as a class; every type each version's schema admits gets value cases
(strings, complex, bool, float8, 4-bit and 2-bit types included).  The ``special`` class
sprinkles the type's special values (NaN, +-inf, -0, subnormals, extremes) into the data,
``int-extremes`` the integer extremes (an int64 routed through double loses them); ``wide``
is kept for double only (values beyond float32 catch a copy routed through float).

Structural inputs (Reshape's ``shape``, Squeeze's ``axes``, Slice's ``starts``...) are
fixed per shape pattern (:attr:`Shape.values`) with literal dimensions, so every pattern is
one exact situation the text describes; an optional structural input is present exactly in
the patterns that give it (:attr:`Shape.optional`); as the engine does for every input after
the first, they are graph inputs in some cases and initializers in others.  An empty list
attribute (Reshape-1's ``shape=[]``, Transpose's ``perm=[]`` on a scalar) takes its type from
the schema (``case.py``).  Decisions, quoting
``onnx.defs.get_schema(op, version).doc``:

**Reshape** (1: ``shape`` attribute; 5: ``shape`` input; 14: ``allowzero``).  "A dimension
could also be 0, in which case the actual dimension value is unchanged (i.e. taken from the
input tensor)"; from 14 "If 'allowzero' is set, and the new shape includes 0, the dimension
will be set explicitly to zero".  Patterns: -1 inference at every position, 0 copying a
dimension (with ``allowzero`` absent/0; before 14 without it), an empty shape (to a scalar),
a scalar to ``[1, 1]``, rank 5, zero-size data with shapes valid under both readings, and
from 14 ``allowzero=1`` patterns where a 0 is honoured and copying would give another valid
shape (``(2, 0)`` reshaped to ``[0, 0]`` is ``(0, 0)``, not ``(2, 0)``).  A 0 at an index
beyond the input's rank (nothing to copy) is not defined by the text: not generated.
Errors: element counts differ, two ``-1``, ``allowzero=1`` with both 0 and -1 (the text:
"it is invalid for the specified shape to contain both a zero value and -1").

**Transpose**: every permutation of ranks 1-4, the omitted ``perm`` (reversed axes) on
ranks 0-5, pairwise distinct dims (a misplaced axis changes the shape) and square/cubic ones
(only the values tell); errors: a repeated, out-of-range or short ``perm``.

**Concat**: 1 to 3 inputs (``inputs_0``...), ranks 1-5, every axis kind (version 1's
default 1, negative from 11), equal-shape patterns where any axis would be valid (only the
right one passes), zero-size inputs.  Version 4's text says nothing of negative axes: not
generated there.  Errors: other dimensions or ranks differ, axis out of range, scalars (no
axis), ``axis`` missing from 4.

**Squeeze / Unsqueeze**: ``axes`` as attribute (1: "non-negative integers"; 11: negative)
then input (13; optional for Squeeze).  Squeeze: subsets, unsorted and mixed-sign axes, a
zero-size dimension kept when ``axes`` is omitted; an empty ``axes`` tensor is not
generated (the text defines only the omitted one; onnxruntime squeezes every 1,
onnx.reference none).  Unsqueeze: axes index the *output* ("as seen in the output tensor";
11: "the order of values in axes does not matter"), negative ones counted against the
output's rank.  Errors: a selected dimension not 1, out of range, negative at 1, duplicates
(Unsqueeze 11+), the attribute missing.  Squeeze-1 with unsorted axes is ``contested``:
onnx's own Squeeze-1 shape inference assumes sorted axes and onnx.checker rejects the model.

**Flatten**: every axis in ``[0, r]`` of ranks 0-4 (negative ``[-r, -1]`` from 11), the
default 1, zero-size inputs with every axis; errors: axis beyond the range, negative before
11, the default axis on a scalar ("a tensor of rank >= axis").

**Slice** (1: attributes; 10: inputs with Tind int32/int64, steps; 11: negative axes, steps
!= 0, INT_MIN for backward slicing; 13: the effective values spelled out).  The oracle follows
13's rules (:func:`slice_indices`); the rows that need them beyond what the earlier texts state
(values below ``-dim``, a start beyond the dimension with a negative step) are since 13.  Where
13's rule and numpy differ (a start below ``-dim`` with a negative step keeps index 0; numpy's
``x[-10::-1]`` is empty) the case follows the text.  INT_MAX/INT_MIN are the case's index
type's (:attr:`Shape.values` as a function of the types).  A repeated axis is undefined (13):
not generated.  Errors: step 0, lengths that differ, axis out of range, ``ends`` missing.

**Split** (outputs ``outputs_0``... as :attr:`Shape.variadic_outputs`): lengths as the
attribute (1-12), as version 1's T-typed input, as the int64 input (13, 18), equal parts
(only divisible lengths), ``num_outputs`` (18) with ``ceil(dim / n)`` chunks and the last one
smaller, a zero-length chunk from 11 ("Values should be >= 0").  Version 1's ``axis`` has no
default and is always written.  Errors: lengths not summing to the axis (13), both or neither
of ``split``/``num_outputs`` (18), axis out of range.

**Expand**: the multidirectional rule ("similar to numpy.array(input) * numpy.ones(shape)"):
a shorter or 1-holding ``shape`` (the output larger than ``shape``), an empty ``shape``,
scalars, zero-size, right alignment where left alignment would also be valid.

**Tile** (6, 13): ``output_dim[i] = input_dim[i] * repeats[i]``, zero repeats, scalars,
zero-size; errors: ``repeats`` shorter than the rank ("no broadcast").  Tile-1 ("Repeat the
elements of a tensor along an axis", yet "Output tensor of same shape and type as input",
``tiles``/``axis`` typed T) is generated with ``tiles = 1`` only, which every reading maps
to the input; its T1 is bound by no formal (:attr:`Entry.declared`).

**Pad** (1: ``paddings``; 2: ``pads`` attribute, negative pads remove; 11: inputs,
``constant_value``; 13: every type, default constant 0, '' or False; 18: ``axes``; 19:
``wrap``).  ``reflect`` pads stay below the dimension except the text's own example 2 (a pad
equal to the dimension, mirrored twice as numpy does); a larger reflect pad is not defined by
the text: not generated.  ``wrap`` may exceed the dimension ("as if the data tensor forms a
torus").  Negative pads are combined with ``reflect``/``wrap`` on other axes only.  Version
1's ``paddings`` format text and its example disagree on the layout: only rows where both
readings coincide.  From 18 the cycled rows give ``axes`` (so every T x Tind combination binds
Tind) and a few omit it (fill cases).  Int32 ``axes`` given as an initializer at 18+ are
``contested``: onnx's Pad shape inference reads a constant ``axes`` as int64 only
(onnx.checker and onnxruntime reject the model; as a graph input it runs).  Errors: pads of the wrong length, axes out of range,
``wrap`` before 19, an unknown mode.
"""

from __future__ import annotations

import itertools

import numpy as np

from . import values as V
from .engine import register_entries
from .entry import Attrs, Entry, Err, Shape

def pattern(name: str, shapes, attrs=None, since: int = 0, until: int = 10**6, values=None, **more) -> Shape:
    """A :class:`Shape` of fixed shapes: ``shapes`` maps a formal input to a shape tuple
    (a dimension above 9 becomes a letter drawn in ``[d, d]``); ``values`` fixes structural
    inputs (their template is their length); ``more``: other :class:`Shape` fields."""
    dims: dict[str, tuple[int, int]] = {}
    letters = iter("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    by_dim: dict[int, str] = {}

    def tpl(shape) -> str:
        out = ""
        for d in shape:
            if d <= 9:
                out += str(d)
            else:
                c = by_dim.setdefault(d, next(letters))
                dims[c] = (d, d)
                out += c
        return out

    inputs = {k: tpl(v) for k, v in shapes.items()}
    for k, v in (values or {}).items():
        inputs.setdefault(k, tpl(np.shape(v)))
    return Shape(name, inputs, dict(attrs or {}), since, until, dims, values=dict(values or {}), **more)


#: ``wide`` (log-uniform magnitudes) only where it can tell a kernel apart: double values
#: beyond float32's range catch a copy routed through float; elsewhere ``special`` (the
#: type's extremes, NaN, -0, subnormals) already covers what data movement can lose.
_WIDE = {"wide": ("double",)}


# ============================================================================ Reshape
def reshape_target(in_shape, shape, allowzero: int) -> tuple[int, ...]:
    """The output shape of Reshape (every version's text): ``-1`` inferred from the element
    count, ``0`` copies the input's dimension at that index unless ``allowzero`` is 1.

    Raises:
        ValueError: more than one -1, a 0 to copy beyond the input's rank, a negative
            dimension other than -1, or element counts that differ.
    """
    shape = [int(s) for s in shape]
    if shape.count(-1) > 1:
        raise ValueError("at most one dimension of the new shape can be -1")
    if allowzero and 0 in shape and -1 in shape:
        raise ValueError("allowzero=1: shape cannot contain both 0 and -1")
    out = []
    for i, s in enumerate(shape):
        if s == 0 and not allowzero:
            if i >= len(in_shape):
                raise ValueError("0 at an index beyond the input's rank")
            out.append(int(in_shape[i]))
        elif s < -1:
            raise ValueError(f"invalid dimension {s}")
        else:
            out.append(s)
    size = int(np.prod(in_shape, dtype=np.int64))
    if -1 in out:
        rest = int(np.prod([d for d in out if d != -1], dtype=np.int64))
        if rest == 0:
            raise ValueError("-1 cannot be inferred when the other dimensions have no element")
        if size % rest:
            raise ValueError("element count is not divisible")
        out[out.index(-1)] = size // rest
    if int(np.prod(out, dtype=np.int64)) != size:
        raise ValueError(f"cannot reshape {tuple(in_shape)} to {out}")
    return tuple(out)


def reshape_oracle(ctx, data, shape=None, allowzero=0, **_):
    """Reshape-1/5/13/14/19/21/23/24/25: ``data`` (any shape, exact values) laid out in the
    target shape (:func:`reshape_target`), row-major order unchanged.  ``shape`` is the input
    (from 5) or the attribute (1)."""
    target = reshape_target(data.shape, list(np.asarray(shape, dtype=object).ravel()), int(allowzero))
    return np.reshape(data, target)


#: (name, data shape, shape value, allowzero) -- allowzero None: valid under both readings
#: (the state's allowzero applies), 0: zeros copy (pattern fixes allowzero=0 from 14), 1: from 14 only.
_RESHAPES = (
    ("flatten", (2, 3, 4), [-1], None),
    ("explicit", (2, 3, 4), [4, 6], None),
    ("infer-first", (2, 3, 4), [-1, 2, 2], None),
    ("infer-middle", (2, 3, 4), [2, -1, 3], None),
    ("infer-last", (2, 3, 4), [3, 2, -1], None),
    ("split-dims", (6, 4), [2, 3, 2, 2], None),
    ("rank5", (2, 1, 3, 1, 2), [3, 4], None),
    ("to-rank5", (12,), [1, 2, 1, 3, 2], None),
    ("same", (3, 4), [3, 4], None),
    ("to-scalar", (1, 1), [], None),
    ("scalar-to-1x1", (), [1, 1], None),
    ("scalar-to-infer", (), [-1], None),
    ("zero-size", (2, 0, 3), [3, 0, 2], None),  # 0 copies dim 1 (0) or is 0: (3, 0, 2) either way
    ("zero-size-infer", (0, 3), [-1, 3], None),  # -1 inferred as 0 / 3
    ("copy0-first", (2, 3, 4), [0, 12], 0),
    ("copy0-infer", (2, 3, 4), [0, -1], 0),
    ("copy0-two", (2, 3, 4), [0, 0, -1], 0),
    ("copy0-after-infer", (2, 4, 3), [-1, 0], 0),
    ("copy0-middle", (2, 3, 4), [4, 0, 2], 0),
    ("allowzero/honoured", (2, 0), [0, 0], 1),  # copying gives (2, 0): valid, different
    ("allowzero/honoured-3d", (3, 0, 2), [0, 0, 5], 1),  # copying gives (3, 0, 5)
    ("allowzero/no-zero", (2, 3, 4), [6, -1], 1),
)


def _reshape_shapes() -> tuple[Shape, ...]:
    out = []
    for name, data, value, az in _RESHAPES:
        if az == 1:
            out.append(pattern(name, {"data": data}, {"allowzero": 1}, since=14, values={"shape": value}))
            continue
        # version 1: the shape is an attribute (an empty list takes its type from the schema: case.py)
        out.append(pattern(f"attr/{name}", {"data": data}, {"shape": list(value)}, until=4))
        if az == 0:  # a copying zero: allowzero must be 0 (absent before 14, written 0 from 14)
            out.append(pattern(name, {"data": data}, since=5, until=13, values={"shape": value}))
            out.append(pattern(f"{name}/allowzero=0", {"data": data}, {"allowzero": 0}, since=14,
                               values={"shape": value}))
        else:
            out.append(pattern(name, {"data": data}, since=5, values={"shape": value}))
    return tuple(out)


def _reshape_errors() -> tuple[Err, ...]:
    rules = (
        ("count", (2, 3), [4, 2], {}, "the input tensor's shape and the output tensor's shape are required to "
                                     "have the same number of elements"),
        ("two-infer", (2, 3, 4), [-1, -1], {}, "at most one dimension of the new shape can be -1"),
    )
    out = []
    for tag, data, value, attrs, why in rules:
        out.append(Err(why, f"{tag}/attr", {"shape": value, **attrs}, (data,), until=4))
        out.append(Err(why, tag, attrs, (data, (len(value),)), since=5, values={"shape": value}))
    out.append(Err("allowzero=1: it is invalid for the specified shape to contain both a zero value and -1",
                   "allowzero-zero-and-infer", {"allowzero": 1}, ((0, 3), (2,)), since=14, values={"shape": [0, -1]}))
    return tuple(out)


RESHAPE = Entry(
    "Reshape", reshape_oracle, family="shaped", shapes=_reshape_shapes(), signed_zero=True,
    attrs=(Attrs({"allowzero": 1}, since=14, tag="allowzero=1"),), errors=_reshape_errors(), numerics_types=_WIDE,
    notes={5: "shape moves from an attribute to an input", 14: "allowzero: a 0 in shape is honoured"},
)


# ============================================================================ Transpose
def transpose_oracle(ctx, data, perm=None, **_):
    """Transpose-1/13/21/23/24/25: output axis ``i`` is input axis ``perm[i]``; ``perm``
    omitted reverses the axes (``(n-1, ..., 0)``); 0-D and 1-D inputs are unchanged."""
    p = list(range(data.ndim))[::-1] if perm is None else [int(a) for a in perm]
    return np.transpose(data, p)


#: Literal dims per rank, pairwise distinct so a misplaced axis changes the shape.
_TDIMS = {0: (), 1: (5,), 2: (2, 3), 3: (2, 3, 4), 4: (2, 3, 4, 5), 5: (2, 1, 3, 2, 2)}


def _transpose_shapes() -> tuple[Shape, ...]:
    out = []
    for r in range(0, 6):
        out.append(pattern(f"r{r}/perm=default", {"data": _TDIMS[r]}))
    out.append(pattern("r0/perm=[]", {"data": _TDIMS[0]}, {"perm": []}))  # rank 0's one permutation
    for r in range(1, 5):  # every permutation of rank 1-4
        for perm in itertools.permutations(range(r)):
            out.append(pattern(f"r{r}/perm={''.join(map(str, perm))}", {"data": _TDIMS[r]}, {"perm": list(perm)}))
    out.append(pattern("r5/perm=31420", {"data": _TDIMS[5]}, {"perm": [3, 1, 4, 2, 0]}))
    out.append(pattern("square/perm=default", {"data": (3, 3)}))  # same shape: only the values tell
    out.append(pattern("cube/perm=201", {"data": (3, 3, 3)}, {"perm": [2, 0, 1]}))
    out.append(pattern("zero-size/perm=default", {"data": (2, 0, 3)}))
    out.append(pattern("zero-size/perm=021", {"data": (2, 0, 3)}, {"perm": [0, 2, 1]}))
    return tuple(out)


def _transpose_errors() -> tuple[Err, ...]:
    why = "perm must contain each axis index in [0, n-1] exactly once"
    return (Err(why, "perm-repeated", {"perm": [0, 0, 1]}, ((2, 3, 4),)),
            Err(why, "perm-out-of-range", {"perm": [0, 3, 1]}, ((2, 3, 4),)),
            Err(why + " (its length is the rank n)", "perm-short", {"perm": [1, 0]}, ((2, 3, 4),)))


TRANSPOSE = Entry("Transpose", transpose_oracle, family="shaped", shapes=_transpose_shapes(), signed_zero=True,
                  errors=_transpose_errors(), numerics_types=_WIDE)


# ============================================================================ Concat
def concat_oracle(ctx, *inputs, axis=1, **_):
    """Concat-1/4/11/13: the inputs (1 to 3 here, equal shapes except along ``axis``) joined
    along ``axis`` (negative from 11: counted from the back); version 1's default axis is 1."""
    return np.concatenate(inputs, axis=int(axis))


def _concat(name, shapes, axis, since=0, until=10**6) -> Shape:
    attrs = {} if axis is None else {"axis": axis}
    return pattern(name, {f"inputs_{i}": s for i, s in enumerate(shapes)}, attrs, since, until)


def _concat_shapes() -> tuple[Shape, ...]:
    return (
        _concat("n1/r2/axis=0", [(2, 3)], 0),
        _concat("n1/r1/axis=0", [(4,)], 0),
        _concat("n2/r1/axis=0", [(3,), (2,)], 0),
        _concat("n2/r2/axis=0", [(2, 3), (4, 3)], 0),
        _concat("n2/r2/axis=1", [(2, 3), (2, 4)], 1),
        _concat("n3/r2/axis=1", [(2, 1), (2, 3), (2, 2)], 1),
        _concat("n3/r3/axis=0", [(1, 2, 3), (2, 2, 3), (3, 2, 3)], 0),
        _concat("n3/r3/axis=2", [(2, 3, 1), (2, 3, 2), (2, 3, 3)], 2),
        _concat("n2/r4/axis=3", [(1, 2, 2, 3), (1, 2, 2, 1)], 3),
        _concat("n2/r5/axis=4", [(1, 2, 1, 2, 2), (1, 2, 1, 2, 1)], 4),
        _concat("n2/axis=default", [(2, 3), (2, 4)], None, until=3),  # version 1's default axis is 1
        _concat("zero-size/one-empty", [(2, 0), (2, 3)], 1),
        _concat("zero-size/all-empty", [(0, 3), (0, 3)], 0),
        _concat("zero-size/other-dim", [(0, 2), (0, 3)], 1),
        _concat("zero-size/n3-middle-empty", [(1, 2), (0, 2), (2, 2)], 0),
        _concat("n2/r2/axis=-1", [(2, 3), (2, 4)], -1, since=11),
        _concat("n2/r2/axis=-2", [(2, 3), (1, 3)], -2, since=11),
        _concat("n3/r3/axis=-1", [(2, 3, 1), (2, 3, 2), (2, 3, 1)], -1, since=11),
        _concat("n2/r3/axis=-2", [(2, 1, 3), (2, 2, 3)], -2, since=11),
        _concat("n2/r3/axis=-3", [(1, 2, 3), (2, 2, 3)], -3, since=11),
        _concat("n1/r3/axis=-1", [(2, 3, 2)], -1, since=11),
        # equal shapes: any axis gives a valid result, so only the right one passes
        _concat("n2/r3/equal/axis=1", [(2, 2, 2), (2, 2, 2)], 1),
        _concat("n2/r3/equal/axis=-1", [(2, 2, 2), (2, 2, 2)], -1, since=11),
        _concat("n3/r2/equal/axis=-1", [(2, 3), (2, 3), (2, 3)], -1, since=11),
    )


def _concat_errors() -> tuple[Err, ...]:
    why = "all input tensors must have the same shape, except for the dimension size of the axis to concatenate on"
    return (
        Err(why, "other-dim-differs", {"axis": 0}, ((2, 3), (2, 4))),
        Err(why + " (ranks differ)", "rank-differs", {"axis": 0}, ((2, 3), (2, 3, 1))),
        Err("axis outside [-r, r-1]", "axis=2/r2", {"axis": 2}, ((2, 3), (2, 3))),
        Err("axis outside [-r, r-1]", "axis=-3/r2", {"axis": -3}, ((2, 3), (2, 3)), since=11),
        Err("scalars have no axis to concatenate on ([-r, r-1] is empty for r = 0)", "rank0", {"axis": 0},
            ((), ())),
        Err("attribute axis is required from version 4", "axis-missing", {"axis": None}, ((2, 3), (2, 3)), since=4),
    )


CONCAT = Entry("Concat", concat_oracle, family="shaped", shapes=_concat_shapes(), signed_zero=True,
               attrs=(Attrs({"axis": 0}, since=4, tag="axis-given"),), errors=_concat_errors(),
               numerics_types=_WIDE,
               notes={4: "axis required", 11: "negative axis; same shape except the axis stated"})


# ============================================================================ Squeeze
def squeeze_oracle(ctx, data, axes=None, **_):
    """Squeeze-1/11/13/21/23/24/25: the size-1 dimensions listed in ``axes`` removed (negative
    from 11, counted from the back; attribute before 13, optional input from 13); ``axes``
    omitted removes every size-1 dimension (a zero-size dimension is not size 1).

    Raises:
        ValueError: a listed dimension is not 1, or an axis is outside ``[-r, r-1]``.
    """
    r = data.ndim
    if axes is None:
        drop = [i for i, d in enumerate(data.shape) if d == 1]
    elif np.size(axes) == 0:
        raise ValueError("an empty axes input: the text does not say whether nothing or every 1 is removed")
    else:
        drop = [int(a) + r if int(a) < 0 else int(a) for a in np.asarray(axes, dtype=object).ravel()]
        if any(not 0 <= a < r or data.shape[a] != 1 for a in drop):
            raise ValueError(f"cannot squeeze axes {list(axes)} of shape {data.shape}")
    return np.reshape(data, tuple(d for i, d in enumerate(data.shape) if i not in drop))


#: (name, data shape, axes or None (absent), since)
_SQUEEZES = (
    ("all-ones/r4", (1, 3, 1, 2), None, 0),
    ("all-ones/to-scalar", (1, 1), None, 0),
    ("all-ones/r1-to-scalar", (1,), None, 0),
    ("all-ones/none-to-remove", (3, 2), None, 0),
    ("all-ones/r0", (), None, 0),
    ("all-ones/zero-size", (0, 1, 3), None, 0),  # 0 is not 1: (0, 3)
    ("axes=0", (1, 3, 2), [0], 0),
    ("axes=0,2/every-one", (1, 3, 1, 2), [0, 2], 0),
    ("axes=2", (3, 2, 1), [2], 0),
    ("axes=0,2/subset", (1, 3, 1, 1), [0, 2], 0),  # the last 1 stays: (3, 1)
    ("axes=2,0/unsorted", (1, 3, 1, 1), [2, 0], 0),
    ("axes=1/r5", (2, 1, 2, 1, 3), [1], 0),
    ("axes=0/to-scalar", (1,), [0], 0),
    ("axes=1/zero-size", (0, 1, 3), [1], 0),
    ("axes=-1", (3, 2, 1), [-1], 11),
    ("axes=-4,2/mixed", (1, 3, 1, 1), [-4, 2], 11),
    ("axes=-2/subset", (1, 3, 1, 1), [-2], 11),
    ("axes=-1,-3/r3", (1, 2, 1), [-1, -3], 11),
)


def _squeeze_shapes() -> tuple[Shape, ...]:
    """Patterns with ``axes`` as the attribute (until 12) or the input's value (from 13,
    :attr:`Shape.optional`: always present); an ``all-ones`` pattern omits them.  An empty
    ``axes`` tensor is not generated: the text says what an omitted ``axes`` means, not an
    empty one (onnxruntime squeezes every 1, onnx.reference none)."""
    out = []
    for name, data, axes, since in _SQUEEZES:
        if axes is None:
            out.append(pattern(name, {"data": data}, optional=((),)))
            continue
        out.append(pattern(f"attr/{name}", {"data": data}, {"axes": axes}, since=since, until=12))
        out.append(pattern(name, {"data": data}, since=max(since, 13), values={"axes": axes}, optional=(("axes",),)))
    return tuple(out)


def _axes_errors(rules) -> tuple[Err, ...]:
    """``(tag, data shape, axes, since, until, why)`` -> the attribute form (until 12) and the
    input form (from 13) of each rule."""
    out = []
    for tag, data, axes, since, until, why in rules:
        if since <= 12:
            out.append(Err(why, f"attr/{tag}", {"axes": axes}, (data,), since, min(until, 12)))
        if until >= 13:
            out.append(Err(why, tag, {}, (data, (len(axes),)), max(since, 13), until, values={"axes": axes}))
    return tuple(out)


def _squeeze_contested(ctx, attrs):
    axes = attrs.get("axes")
    if ctx.version == 1 and axes is not None and list(axes) != sorted(axes):
        return ("Squeeze-1's text takes axes in any order; onnx's Squeeze-1 shape inference assumes them sorted "
                "(onnx.checker full_check: 'Inferred shape and existing shape differ in rank')")
    return None


SQUEEZE = Entry(
    "Squeeze", squeeze_oracle, family="shaped", shapes=_squeeze_shapes(), signed_zero=True, numerics_types=_WIDE,
    contested=_squeeze_contested,
    errors=_axes_errors((
        ("not-one", (2, 3), [0], 0, 10**6,
         "if an axis is selected with shape entry not equal to one, an error is raised"),
        ("zero-not-one", (0, 1), [0], 0, 10**6, "if an axis is selected with shape entry not equal to one, an error "
                                                 "is raised (a zero-size dimension)"),
        ("axis=2/r2", (1, 1), [2], 0, 10**6, "axes outside the rank (accepted range [-r, r-1])"),
        ("axis=-3/r2", (1, 1), [-3], 11, 10**6, "axes outside the accepted range [-r, r-1]"),
        ("negative", (3, 1), [-1], 0, 10, "version 1: axes is a list of non-negative integers"),
    )),
    notes={11: "negative axes", 13: "axes moves to an optional input"},
)


# ============================================================================ Unsqueeze
def unsqueeze_oracle(ctx, data, axes=None, **_):
    """Unsqueeze-1/11/13/21/23/24/25: a size-1 dimension inserted at each index of ``axes``
    "as seen in the output tensor" (output rank = input rank + len(axes); negative from 11,
    counted from the back of the output; any order).

    Raises:
        ValueError: an axis outside ``[-out_rank, out_rank-1]`` or a repeated axis.
    """
    ax = [int(a) for a in np.asarray(axes, dtype=object).ravel()]
    n = data.ndim + len(ax)
    pos = sorted(a + n if a < 0 else a for a in ax)
    if len(set(pos)) != len(pos) or any(not 0 <= a < n for a in pos):
        raise ValueError(f"invalid axes {ax} for output rank {n}")
    it = iter(data.shape)
    return np.reshape(data, tuple(1 if i in pos else next(it) for i in range(n)))


#: (name, data shape, axes, since)
_UNSQUEEZES = (
    ("axes=0", (3, 4), [0], 0),
    ("axes=2/append", (3, 4), [2], 0),
    ("axes=1/middle", (3, 4), [1], 0),
    ("axes=0,4/spec-example", (3, 4, 5), [0, 4], 0),
    ("axes=2,0/unsorted", (2, 3), [2, 0], 0),  # (1, 2, 1, 3): inserting in the given order would differ
    ("axes=1,2/consecutive", (2, 3), [1, 2], 0),
    ("axes=0,1,2/r1", (3,), [0, 1, 2], 0),
    ("axes=0/scalar", (), [0], 0),
    ("axes=1,0/scalar", (), [1, 0], 0),
    ("axes=1/zero-size", (0, 3), [1], 0),
    ("axes=3/r4", (2, 1, 3, 2), [3], 0),
    ("axes=-1", (2, 3), [-1], 11),  # output rank 3: (2, 3, 1); the input's rank would give (2, 1, 3)
    ("axes=-3", (2, 3), [-3], 11),
    ("axes=-1,0", (2, 3), [-1, 0], 11),
    ("axes=-2,1", (2, 3), [-2, 1], 11),  # output rank 4: -2 is 2
    ("axes=-1/scalar", (), [-1], 11),
)


def _unsqueeze_shapes() -> tuple[Shape, ...]:
    out = []
    for name, data, axes, since in _UNSQUEEZES:
        out.append(pattern(f"attr/{name}", {"data": data}, {"axes": axes}, since=since, until=12))
        out.append(pattern(name, {"data": data}, since=max(since, 13), values={"axes": axes}))
    return tuple(out)


UNSQUEEZE = Entry(
    "Unsqueeze", unsqueeze_oracle, family="shaped", shapes=_unsqueeze_shapes(), signed_zero=True, numerics_types=_WIDE,
    attrs=(Attrs({"axes": [0]}, until=12, tag="axes-given"),),  # required until 12 (each pattern writes its own)
    errors=_axes_errors((
        ("repeated", (2, 3), [0, 0], 11, 10**6, "axes should not contain any duplicate entries: it is an error if "
                                                 "it contains duplicates"),
        ("repeated-mixed", (2, 3), [3, -1], 11, 10**6, "duplicates after counting from the back (-1 is 3 for "
                                                        "output rank 4)"),
        ("axis=3/r2", (2, 3), [3], 0, 10**6, "each value in axes should be within [-output_rank, output_rank - 1]"),
        ("axis=-4/r2", (2, 3), [-4], 11, 10**6, "each value in axes should be within [-output_rank, "
                                                 "output_rank - 1]"),
        ("negative", (2, 3), [-1], 0, 10, "version 1: axes is a list of non-negative integers"),
    )) + (Err("attribute axes is required", "attr/axes-missing", {"axes": None}, ((2, 3),), until=12),),
    notes={11: "negative axes (of the output's rank); duplicates an error", 13: "axes moves to a required input"},
)


# ============================================================================ Flatten
def flatten_oracle(ctx, input, axis=1, **_):
    """Flatten-1/9/11/13/21/23/24/25: ``(d_0 X ... X d_(axis-1), d_axis X ... X d_n)``, axis in
    ``[0, r]`` (negative from 11: ``[-r, r]``, counted from the back); empty products are 1.

    Raises:
        ValueError: ``axis`` outside the range.
    """
    r = input.ndim
    a = int(axis)
    if not -r <= a <= r:
        raise ValueError(f"axis {a} outside [-{r}, {r}]")
    a = a + r if a < 0 else a
    outer = int(np.prod(input.shape[:a], dtype=np.int64))
    return np.reshape(input, (outer, int(np.prod(input.shape[a:], dtype=np.int64))))


_FDIMS = {0: (), 1: (5,), 2: (2, 3), 3: (2, 3, 4), 4: (2, 3, 4, 5)}


def _flatten_shapes() -> tuple[Shape, ...]:
    out = []
    for r, dims in _FDIMS.items():
        if r >= 1:
            out.append(pattern(f"r{r}/axis=default", {"input": dims}))
        out += [pattern(f"r{r}/axis={a}", {"input": dims}, {"axis": a}) for a in range(0, r + 1)]
        out += [pattern(f"r{r}/axis={a}", {"input": dims}, {"axis": a}, since=11) for a in range(-r, 0)]
    out.append(pattern("r5/axis=3", {"input": (2, 1, 3, 2, 2)}, {"axis": 3}))
    out.append(pattern("zero-size/axis=default", {"input": (2, 0, 3)}))
    out += [pattern(f"zero-size/axis={a}", {"input": (2, 0, 3)}, {"axis": a}) for a in range(0, 4)]
    out.append(pattern("zero-size/axis=-1", {"input": (2, 0, 3)}, {"axis": -1}, since=11))
    return tuple(out)


FLATTEN = Entry(
    "Flatten", flatten_oracle, family="shaped", shapes=_flatten_shapes(), signed_zero=True, numerics_types=_WIDE,
    errors=(Err("axis must be in [0, R] (rank R)", "axis=3/r2", {"axis": 3}, ((2, 3),)),
            Err("axis must be in [0, R] (negative values arrive at 11)", "axis=-1/r2", {"axis": -1}, ((2, 3),),
                until=10),
            Err("axis must be in [-r, r]", "axis=-3/r2", {"axis": -3}, ((2, 3),), since=11),
            Err("a tensor of rank >= axis (the default axis 1 on a scalar)", "r0/axis=default", {}, ((),))),
    notes={9: "every type", 11: "negative axis ([-r, r])"},
)


# ============================================================================ Split
def split_sizes(dim: int, n: int, split=None, num_outputs=None) -> list[int]:
    """The chunk lengths of Split along an axis of length ``dim`` into ``n`` outputs: the
    given ``split``; ``num_outputs`` (18): ``ceil(dim / num_outputs)`` each, the last chunk
    smaller when uneven; else equal parts.

    Raises:
        ValueError: lengths that do not sum to ``dim``, a count other than ``n``, or equal
            parts of an indivisible length.
    """
    if split is not None:
        sizes = [int(v) for v in split]
    elif num_outputs is not None:
        c = -(-dim // int(num_outputs))
        sizes = [c] * (int(num_outputs) - 1) + [dim - c * (int(num_outputs) - 1)]
    else:
        if dim % n:
            raise ValueError(f"{dim} does not split into {n} equal parts")
        sizes = [dim // n] * n
    if len(sizes) != n or sum(sizes) != dim or min(sizes) < 0:
        raise ValueError(f"chunks {sizes} for length {dim} and {n} outputs")
    return sizes


def split_oracle(ctx, input, *rest, **attrs):
    """Split-1/2/11/13/18: the outputs (``len(ctx.outputs)`` of them) are consecutive chunks of
    ``input`` along ``axis`` (negative from 11), of the lengths :func:`split_sizes` gives;
    ``split`` is the attribute (1, 2, 11) or the optional input (1, as type T; 13, 18)."""
    split_in = rest[0] if rest else None
    split = split_in if split_in is not None else attrs.get("split")
    r = input.ndim
    a = int(attrs["axis"])
    a = a + r if a < 0 else a
    if not 0 <= a < r:
        raise ValueError(f"axis {attrs['axis']} outside the rank {r}")
    sizes = split_sizes(input.shape[a], len(ctx.outputs), None if split is None else
                        [int(v) for v in np.asarray(split, dtype=object).ravel()], attrs.get("num_outputs"))
    starts = np.cumsum([0] + sizes)
    return tuple(np.take(input, np.arange(starts[i], starts[i + 1], dtype=np.int64), axis=a)
                 for i in range(len(sizes)))


#: (name, data shape, axis, split or None, num_outputs or None, outputs, since, until)
_SPLITS = (
    ("split=2,3/axis=0", (5, 2), 0, [2, 3], None, 2, 0, 10**6),
    ("split=1,2,1/axis=1", (2, 4), 1, [1, 2, 1], None, 3, 0, 10**6),
    ("split=3,1/axis=2/r3", (2, 2, 4), 2, [3, 1], None, 2, 0, 10**6),
    ("split=2,4/r1", (6,), 0, [2, 4], None, 2, 0, 10**6),
    ("split=4/one-output", (4, 2), 0, [4], None, 1, 0, 10**6),
    ("split=0,3/zero-chunk", (3, 2), 0, [0, 3], None, 2, 11, 10**6),  # lengths >= 0 from 11
    ("split=1,2/axis=-1", (2, 3), -1, [1, 2], None, 2, 11, 10**6),
    ("split=2,1/axis=-3/r3", (3, 2, 2), -3, [2, 1], None, 2, 11, 10**6),
    ("split=1,2/zero-size", (0, 3), 1, [1, 2], None, 2, 0, 10**6),
    ("equal/n=2/axis=0", (4, 3), 0, None, None, 2, 0, 17),
    ("equal/n=3/axis=1", (2, 6), 1, None, None, 3, 0, 17),
    ("equal/n=1", (3, 2), 0, None, None, 1, 0, 17),
    ("equal/n=2/axis=-1", (2, 4), -1, None, None, 2, 11, 17),
    ("equal/n=3/r1", (6,), 0, None, None, 3, 0, 17),
    ("num_outputs=2/even", (4, 3), 0, None, 2, 2, 18, 10**6),
    ("num_outputs=3/uneven", (7, 2), 0, None, 3, 3, 18, 10**6),  # 3, 3, 1
    ("num_outputs=2/uneven/axis=1", (2, 5), 1, None, 2, 2, 18, 10**6),  # 3, 2
    ("num_outputs=4/uneven/axis=-1", (2, 10), -1, None, 4, 4, 18, 10**6),  # 3, 3, 3, 1
    ("num_outputs=3/uneven/r3", (2, 5, 2), 1, None, 3, 3, 18, 10**6),  # 2, 2, 1
    ("num_outputs=1", (3, 2), 0, None, 1, 1, 18, 10**6),
)


def _split_shapes() -> tuple[Shape, ...]:
    """Version 1's patterns (``v1/...``: ``axis`` has no default there, so it is always
    written; the lengths as the attribute or the T-typed input) and the later ones (an axis 0
    left to the attribute state: absent or the explicit default)."""
    out = []
    for name, data, axis, split, num, n, since, until in _SPLITS:
        attrs = {"axis": axis} if axis != 0 else {}
        if since <= 1 and num is None:
            v1 = {"axis": axis}
            if split is None:
                out.append(pattern(f"v1/{name}", {"input": data}, v1, until=1, optional=((),), variadic_outputs=n))
            else:
                out.append(pattern(f"v1/attr/{name}", {"input": data}, {**v1, "split": split}, until=1,
                                   optional=((),), variadic_outputs=n))
                out.append(pattern(f"v1/input-T/{name}", {"input": data}, v1, until=1, values={"split": split},
                                   optional=(("split",),), variadic_outputs=n))
        since = max(since, 2)
        if since > until:
            continue
        if num is not None:
            out.append(pattern(name, {"input": data}, {**attrs, "num_outputs": num}, since, until,
                               optional=((),), variadic_outputs=n))
        elif split is None:  # equal parts: neither the attribute nor the input
            out.append(pattern(name, {"input": data}, attrs, since, until, optional=((),), variadic_outputs=n))
        else:
            if since <= 12:  # the attribute until 12, the input from 13
                out.append(pattern(f"attr/{name}", {"input": data}, {**attrs, "split": split}, since, 12,
                                   variadic_outputs=n))
            if until >= 13:
                out.append(pattern(name, {"input": data}, attrs, max(since, 13), until, values={"split": split},
                                   optional=(("split",),), variadic_outputs=n))
    return tuple(out)


SPLIT = Entry(
    "Split", split_oracle, family="shaped", shapes=_split_shapes(), signed_zero=True, numerics_types=_WIDE,
    errors=(
        Err("sum of the values must be equal to the dim value at 'axis' specified", "split-sum", {"axis": 0},
            ((5, 2), (1,)), since=13, values={"split": [4]}),
        Err("either input 'split' or the attribute 'num_outputs' should be specified, but not both",
            "split-and-num_outputs", {"axis": 0, "num_outputs": 1}, ((5, 2), (1,)), since=18, values={"split": [5]}),
        Err("either input 'split' or the attribute 'num_outputs' should be specified", "neither", {"axis": 0},
            ((4, 2),), since=18),
        Err("axis outside the rank", "axis=2/r2", {"axis": 2}, ((4, 2),)),
        Err("axis outside the accepted range [-rank, rank-1]", "axis=-3/r2", {"axis": -3}, ((4, 2),), since=11),
    ),
    notes={2: "split as an attribute only; default axis 0", 11: "negative axis; lengths >= 0",
           13: "split moves to an optional int64 input", 18: "num_outputs: ceil-sized chunks, the last smaller"},
)


# ============================================================================ Expand
def expand_oracle(ctx, input, shape, **_):
    """Expand-8/13: ``input`` broadcast with ``shape`` by the multidirectional rule (right
    aligned; equal dims or one of them 1), "similar to numpy.array(input) * numpy.ones(shape)":
    the output may be larger than ``shape`` (a 1 in ``shape``, a shorter ``shape``).

    Raises:
        ValueError: the shapes do not broadcast.
    """
    dims = [int(d) for d in np.asarray(shape, dtype=object).ravel()]
    out = np.broadcast_shapes(input.shape, tuple(dims))
    return np.array(np.broadcast_to(input, out))


#: (name, input shape, shape value)
_EXPANDS = (
    ("same-rank", (3, 1), [3, 4]),
    ("prepend", (3,), [2, 3]),
    ("prepend-square", (2,), [2, 2]),  # right alignment: rows repeat x (left alignment would repeat columns)
    ("both-ways", (3, 1), [2, 1, 4]),
    ("shape-shorter", (2, 3, 1), [4]),
    ("shape-has-ones", (2, 3), [1, 1]),
    ("shape-empty", (2, 3), []),
    ("scalar-input", (), [2, 3]),
    ("rank5", (1, 2, 1, 1, 3), [2, 1, 2, 3]),
    ("identity", (2, 3), [2, 3]),
    ("zero-size/input", (0, 1), [0, 3]),
    ("zero-size/shape", (2, 1), [2, 0]),
    ("zero-size/prepend", (3,), [0, 3]),
)


EXPAND = Entry(
    "Expand", expand_oracle, family="shaped", signed_zero=True, numerics_types=_WIDE,
    shapes=tuple(pattern(name, {"input": x}, values={"shape": v}) for name, x, v in _EXPANDS),
    errors=(Err("two corresponding dimensions must have the same value, or one of them is equal to 1",
                "incompatible", {}, ((2, 3), (1,)), values={"shape": [4]}),
            Err("two corresponding dimensions must have the same value, or one of them is equal to 1 (right "
                "alignment)", "misaligned", {}, ((2, 3), (3,)), values={"shape": [2, 3, 2]})),
)


# ============================================================================ Tile
def tile_oracle(ctx, input, *rest, **_):
    """Tile-6/13: "the same as function tile in Numpy, but no broadcast":
    ``output_dim[i] = input_dim[i] * repeats[i]``, ``output[j] = input[j mod input_dim]``.
    Tile-1 ("Repeat the elements of a tensor along an axis"; ``tiles`` copies along ``axis``,
    yet "Output tensor of same shape and type as input"): only ``tiles = 1``, where every
    reading gives the input, is generated.

    Raises:
        ValueError: ``repeats`` is not of the input's rank; Tile-1 with ``tiles != 1``.
    """
    if ctx.version == 1:
        tiles, axis = (float(np.asarray(v, dtype=np.float64).ravel()[0]) for v in rest)
        if tiles != 1 or not 0 <= axis < input.ndim:
            raise ValueError("Tile-1 is defined here for one copy along an existing axis only")
        return input.copy()
    reps = [int(v) for v in np.asarray(rest[0], dtype=object).ravel()]
    if len(reps) != input.ndim:
        raise ValueError(f"repeats {reps} for rank {input.ndim}")
    return np.tile(input, reps) if reps else input.copy()


#: (name, input shape, repeats)
_TILES = (
    ("r1/x2", (3,), [2]),
    ("r2/2x2", (2, 3), [2, 2]),
    ("r2/1x3", (2, 3), [1, 3]),
    ("r2/3x1", (2, 3), [3, 1]),
    ("r2/ones", (2, 3), [1, 1]),
    ("r3/1x2x2", (2, 1, 3), [1, 2, 2]),
    ("r4/2x1x3x1", (1, 2, 1, 2), [2, 1, 3, 1]),
    ("r0", (), []),
    ("zero-repeats", (2, 3), [0, 2]),
    ("zero-size", (0, 3), [2, 2]),
)


def _tile_declared(version, combo):
    if version == 1:
        return ("Tile-1 types its 'tiles' and 'axis' inputs T (a float type) and binds its T1 (int64) by no formal: "
                "its cases bind T only")
    return None


TILE = Entry(
    "Tile", tile_oracle, family="shaped", signed_zero=True, numerics_types=_WIDE, declared=_tile_declared,
    shapes=tuple(pattern(name, {"input": x}, since=6, values={"repeats": v}) for name, x, v in _TILES) +
    tuple(pattern(f"v1/tiles=1/axis={a}", {"input": x}, until=5, values={"tiles": [1.0], "axis": [float(a)]})
          for a, x in ((0, (2, 3)), (1, (2, 3)), (2, (2, 1, 3)))),
    errors=(Err("repeats has the same length as the input's dimension number", "repeats-short", {},
                ((2, 3), (1,)), since=6, values={"repeats": [2]}),),
)


# ============================================================================ Slice
def slice_indices(dim: int, start: int, end: int, step: int) -> list[int]:
    """The indices one axis of Slice keeps (Slice-13's effective values): a negative ``start``/``end`` has ``dim``
    added; then ``start`` is clamped to ``[0, dim]`` (positive step) or ``[0, dim-1]``
    (negative step) and ``end`` to ``[0, dim]`` or ``[-1, dim-1]``; the indices run from
    ``start`` by ``step`` while before ``end``.

    Raises:
        ValueError: ``step`` is 0.
    """
    if step == 0:
        raise ValueError("steps cannot be 0")
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start, end = min(max(start, 0), dim), min(max(end, 0), dim)
        return list(range(start, end, step))
    start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
    return [i for i in range(start, end, step) if i >= 0]


def slice_oracle(ctx, data, starts=None, ends=None, axes=None, steps=None, **_):
    """Slice-1/10/11/13: the sub-tensor keeping, along each listed axis, the indices of
    :func:`slice_indices` (inputs from 10, attributes at 1); ``axes`` omitted is
    ``[0, ..., len(starts)-1]``, ``steps`` omitted all 1; negative axes (11) count from the back.

    Raises:
        ValueError: lengths differ, an axis is out of range or repeated, a step is 0.
    """
    def ints(v):
        return [int(x) for x in np.asarray(v, dtype=object).ravel()]

    st, en = ints(starts), ints(ends)
    ax = list(range(len(st))) if axes is None else ints(axes)
    sp = [1] * len(st) if steps is None else ints(steps)
    r = data.ndim
    if not len(st) == len(en) == len(ax) == len(sp):
        raise ValueError("starts, ends, axes and steps have different lengths")
    ax = [a + r if a < 0 else a for a in ax]
    if any(not 0 <= a < r for a in ax) or len(set(ax)) != len(ax):
        raise ValueError(f"axes {ax} for rank {r}")
    out = data
    for a, b, e, k in zip(ax, st, en, sp):
        out = np.take(out, np.array(slice_indices(data.shape[a], b, e, k), dtype=np.int64), axis=a)
    return out


def _int_limit(name: str, type_name: str) -> int:
    info = V.iinfo(type_name)
    return int(info.max) if name == "MAX" else int(info.min)


def _resolve(values, type_name: str) -> list[int]:
    """A row's values with ``"MAX"``/``"MIN"`` the limits of ``type_name`` (INT_MAX, INT_MIN)."""
    return [_int_limit(v, type_name) if isinstance(v, str) else v for v in values]


#: (name, data shape, starts, ends, axes or None, steps or None, since): "MAX"/"MIN" are the index
#: type's INT_MAX/INT_MIN.  Versions before 13 state only in-range negatives and starts/ends
#: beyond the dimension ("it represents n"; from 11 INT_MIN for backward slicing) and refer
#: to numpy for the rest; rows that need 13's clamping (values below -dim, a start beyond
#: the dimension with a negative step) are since 13.  Where 13's rule and numpy differ -- a
#: start below -dim with a negative step is clamped to 0 (one element kept), numpy's
#: ``x[-10::-1]`` is empty -- the case follows 13's text.
_SLICES = (
    ("example1", (2, 4), [1, 0], [2, 3], [0, 1], [1, 2], 10),  # the text's example 1: [[5, 7]]
    ("example2", (2, 4), [0, 1], [-1, 1000], None, None, 0),  # the text's example 2: [[2, 3, 4]]
    ("axes", (4, 5), [1, 0], [3, 4], [0, 1], None, 0),
    ("one-axis/r3", (2, 3, 4), [1], [3], [1], None, 0),
    ("axes-unsorted", (4, 5), [0, 1], [3, 3], [1, 0], None, 0),
    ("negative-start-end", (5,), [-3], [-1], None, None, 0),
    ("end-beyond", (4, 5), [2], [1000], [1], None, 0),
    ("end-INT_MAX", (4, 5), [1], ["MAX"], [0], None, 0),
    ("start-beyond/empty", (4, 5), [10], [20], [1], None, 0),
    ("start-after-end/empty", (5,), [3], [1], None, None, 0),
    ("all-axes-omitted", (2, 3, 4), [0, 1, 1], [2, 3, 3], None, None, 0),
    ("zero-size", (0, 3), [1], [3], [1], None, 0),
    ("r4", (2, 3, 1, 4), [-3, 0], ["MAX", 2], [3, 1], [2, 1], 10),
    ("step2", (6,), [0], [6], [0], [2], 10),
    ("step3-uneven", (7,), [1], [7], None, [3], 10),
    ("step-beyond-dim", (4,), [0], [4], [0], [10], 10),
    ("axes-omitted/steps", (4, 5), [1, 0], [4, 5], None, [2, 2], 10),
    ("neg-step/in-range", (4, 5), [-1], [0], [1], [-2], 10),
    ("neg-step/empty", (5,), [1], [3], [0], [-1], 10),
    ("neg-step/reverse-INT_MIN", (5,), [-1], ["MIN"], [0], [-1], 11),
    ("neg-step/start-INT_MAX", (5,), ["MAX"], ["MIN"], [0], [-2], 13),
    ("neg-step/end-below-dim", (5,), [4], [-6], [0], [-1], 13),  # -6 + 5 = -1: index 0 included
    ("neg-step/end-far-below", (5,), [3], [-1000], [0], [-2], 13),
    ("neg-step/start-beyond", (5,), [100], [0], [0], [-1], 13),  # start clamped to 4
    ("neg-step/start-far-below", (5,), [-10], ["MIN"], [0], [-1], 13),  # start clamped to 0: [x0]
    ("start-far-below", (5,), [-10], [3], None, None, 13),  # -10 + 5 = -5, clamped to 0
    ("neg-axes", (2, 3, 4), [1, 0], [3, 1], [-1, -3], None, 11),
    ("neg-axes/steps", (2, 3, 4), [-1, 0], ["MIN", 3], [-1, 1], [-1, 2], 11),
)


def _slice_shapes() -> tuple[Shape, ...]:
    """Version 1: the rows without steps (or whose steps are all 1) and without negative axes,
    as attributes (INT64 sentinels); from 10 as inputs, the optional ``axes``/``steps``
    present exactly when the row gives them (:attr:`Shape.optional`), INT_MAX/INT_MIN in the
    case's index type."""
    out = []
    for name, data, starts, ends, axes, steps, since in _SLICES:
        if since <= 1 and steps is None:
            attrs = {"starts": _resolve(starts, "int64"), "ends": _resolve(ends, "int64")}
            if axes is not None:
                attrs["axes"] = list(axes)
            out.append(pattern(f"attr/{name}", {"data": data}, attrs, until=9))
        shapes = {"data": data, "starts": (len(starts),), "ends": (len(ends),)}
        values: dict = {}
        for k, v in (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps)):
            if v is None:
                continue
            shapes[k] = (len(v),)
            values[k] = (lambda types, v=v, k=k: _resolve(v, types[k])) if any(isinstance(x, str) for x in v) \
                else list(v)
        present = tuple(k for k in ("axes", "steps") if k in values)
        out.append(pattern(name, shapes, since=max(since, 10), values=values, optional=(present,)))
    return tuple(out)


def _slice_errors() -> tuple[Err, ...]:
    data = (4, 5)
    return (
        Err("'steps' cannot be 0", "step-0", {}, (data, (1,), (1,), (1,), (1,)), since=11,
            values={"starts": [0], "ends": [2], "axes": [0], "steps": [0]}),
        Err("starts and ends give the indices of the corresponding axis in axes (lengths differ)", "lengths",
            {}, (data, (2,), (1,)), since=10, values={"starts": [0, 1], "ends": [2]}),
        Err("axes outside the accepted range [-r, r-1]", "axis=2/r2", {}, (data, (1,), (1,), (1,)), since=11,
            values={"starts": [0], "ends": [1], "axes": [2]}),
        Err("starts and ends give the indices of the corresponding axis in axes (lengths differ)", "attr/lengths",
            {"starts": [0, 1], "ends": [2]}, (data,), until=9),
        Err("attribute ends is required", "attr/ends-missing", {"starts": [0], "ends": None}, (data,), until=9),
    )


SLICE = Entry(
    "Slice", slice_oracle, family="shaped", shapes=_slice_shapes(), signed_zero=True, numerics_types=_WIDE,
    attrs=(Attrs({"starts": [0], "ends": [1]}, until=9, tag="given"),),  # required at 1 (each pattern writes its own)
    errors=_slice_errors(),
    notes={10: "starts/ends/axes/steps as inputs (int32 or int64); negative steps", 11: "negative axes; "
           "INT_MIN for backward slicing; steps != 0", 13: "effective values and clamping spelled out"},
)


# ============================================================================ Pad
def pad_sources(dim: int, begin: int, end: int, mode: str) -> list[int | None]:
    """For each output position along one axis of Pad (length ``dim + begin + end``; negative
    pads remove), the input position it copies, or ``None`` for the constant: position ``p =
    j - begin``; inside ``[0, dim)`` the element itself; outside, ``constant`` -> ``None``,
    ``edge`` -> the nearest end, ``reflect`` -> mirrored on the first/last element
    (``-p``, ``2(dim-1) - p``; a pad equal to the dimension mirrors once more, as the text's
    example 2 and ``numpy.pad`` do), ``wrap`` -> ``p mod dim`` (the torus).

    Raises:
        ValueError: ``reflect`` with a pad above the dimension or on a dimension below 2
            (beyond what the text shows: not generated), an unknown mode.
    """
    out: list[int | None] = []
    for j in range(dim + begin + end):
        p = j - begin
        if 0 <= p < dim:
            out.append(p)
        elif mode == "constant":
            out.append(None)
        elif mode == "edge":
            out.append(0 if p < 0 else dim - 1)
        elif mode == "reflect":
            over = -p if p < 0 else p - (dim - 1)
            if dim < 2 or over > dim:
                raise ValueError("reflect beyond the text's examples (a pad above the dimension): not generated")
            period = 2 * (dim - 1)  # a pad equal to the dimension mirrors twice, as the text's example 2
            q = p % period
            out.append(q if q < dim else period - q)
        elif mode == "wrap":
            out.append(p % dim)
        else:
            raise ValueError(f"mode {mode!r}")
    return out


def _zero_of(type_name: str):
    """The default constant of Pad-13+: 0, the empty string or False by the data's type."""
    return {"string": "", "bool": False}.get(type_name, 0)


def pad_oracle(ctx, data, pads=None, constant_value=None, axes=None, mode="constant", value=0.0,
               paddings=None, **_):
    """Pad-1/2/11/13/18/19/21/23/24/25: each axis (``axes`` from 18, else all) padded by
    :func:`pad_sources` with ``pads = [x1_begin, x2_begin, ..., x1_end, x2_end, ...]`` (the
    attribute ``paddings`` at 1, ``pads`` at 2, the input from 11); the constant is ``value``
    (1, 2), ``constant_value`` (11+; default 0, '' or False).

    Raises:
        ValueError: pads of the wrong length, axes out of range, or a pad the text does not
            define (reflect beyond one mirror image).
    """
    if ctx.version == 1:
        pads, const = paddings, value
    elif ctx.version == 2:
        const = value
    else:
        const = _zero_of(ctx.types["data"]) if constant_value is None else np.asarray(constant_value).ravel()[0]
    p = [int(v) for v in np.asarray(pads, dtype=object).ravel()]
    r = data.ndim
    ax = list(range(r)) if axes is None else [int(a) for a in np.asarray(axes, dtype=object).ravel()]
    ax = [a + r if a < 0 else a for a in ax]
    if len(p) != 2 * len(ax) or any(not 0 <= a < r for a in ax) or len(set(ax)) != len(ax):
        raise ValueError(f"pads {p} / axes {ax} for rank {r}")
    out = data
    for i, a in enumerate(ax):
        src = pad_sources(out.shape[a], p[i], p[i + len(ax)], mode)
        idx = np.array([0 if q is None else q for q in src], dtype=np.int64)
        if out.shape[a] == 0:  # nothing to copy: every position is the constant
            shape = list(out.shape)
            shape[a] = len(src)
            res = np.empty(shape, dtype=out.dtype)
            res[...] = const
            out = res
            continue
        res = np.take(out, idx, axis=a)
        fill = [j for j, q in enumerate(src) if q is None]
        if fill:
            view = np.moveaxis(res, a, 0)
            view[fill] = const
        out = res
    return out


#: (name, data shape, pads, mode, axes or None, since): pads in the text's layout
#: [x1_begin, x2_begin, ..., x1_end, x2_end, ...].  Reflect pads stay below the dimension (the
#: text's own example 2, a pad equal to the dimension, as numpy mirrors it, is a row of its
#: own); negative pads (from 2) are combined with reflect or wrap on other axes only.
_PADS = (
    ("constant/spec-example", (3, 2), [0, 2, 0, 0], "constant", None, 2),
    ("constant/r1", (4,), [2, 3], "constant", None, 2),
    ("constant/r3", (2, 3, 2), [1, 0, 1, 0, 2, 1], "constant", None, 2),
    ("constant/zero-pads", (2, 3), [0, 0, 0, 0], "constant", None, 2),
    ("constant/zero-size", (0, 3), [1, 0, 1, 2], "constant", None, 2),
    ("constant/negative", (4, 5), [-1, 1, 0, -2], "constant", None, 2),
    ("constant/r0", (), [], "constant", None, 11),
    ("constant/default-value", (2, 3), [1, 0, 0, 2], "constant", None, 11),  # constant_value omitted: 0, '', False
    ("edge/spec-example", (3, 2), [0, 2, 0, 0], "edge", None, 2),
    ("edge/r3", (2, 3, 2), [1, 1, 0, 0, 2, 1], "edge", None, 2),
    ("edge/negative", (4, 5), [0, -1, 2, 1], "edge", None, 2),
    ("reflect/spec-example", (3, 2), [0, 2, 0, 0], "reflect", None, 2),  # pad == dim: [1.0, 1.2, 1.0, 1.2]
    ("reflect/r2", (3, 4), [2, 1, 1, 3], "reflect", None, 2),
    ("reflect/r3", (2, 3, 4), [1, 2, 0, 0, 0, 3], "reflect", None, 2),
    ("reflect/crop-other-axis", (4, 5), [-1, 1, 0, 2], "reflect", None, 2),
    ("wrap/r2", (3, 4), [1, 2, 2, 3], "wrap", None, 19),
    ("wrap/beyond-dim", (2, 3), [0, 4, 0, 1], "wrap", None, 19),  # the torus wraps more than once
    ("wrap/crop-other-axis", (4, 5), [1, -1, 2, 0], "wrap", None, 19),
    ("axes=1/constant", (2, 3, 4), [1, 2], "constant", [1], 18),
    ("axes=-1/edge", (2, 3, 4), [2, 1], "edge", [-1], 18),
    ("axes=2,0/reflect", (2, 3, 4), [1, 1, 2, 0], "reflect", [2, 0], 18),
    ("axes=0,-1/wrap", (2, 3, 4), [3, 1, 0, 5], "wrap", [0, -1], 19),
)

#: Version 1's ``paddings``: its format text ([x1_begin, x2_begin, ..., x1_end, ...]) and its
#: example (``[0, 0, 2, 0]`` inserting 2 at the beginning of the second dimension: per axis
#: begin/end pairs) disagree; rows where both readings coincide (rank 1, or rank 2 with
#: ``paddings[1] == paddings[2]``) only.
_PADS_V1 = (
    ("v1/constant/r2", (3, 2), [0, 2, 2, 1], "constant"),
    ("v1/constant/r1", (4,), [1, 2], "constant"),
    ("v1/edge/r2", (3, 2), [1, 1, 1, 0], "edge"),
    ("v1/reflect/r2", (3, 4), [1, 2, 2, 1], "reflect"),
)


#: Rows that also omit ``axes`` from 18 (fill cases only: the cycled patterns give ``axes``, so
#: every (T, Tind) combination binds Tind).
_PADS_AXES_OMITTED = ("constant/spec-example", "constant/r0", "edge/r3", "reflect/r2", "wrap/r2")
#: Constant-mode rows that give ``constant_value`` (from 11); the others omit it (the default
#: 0, '' or False).
_PADS_VALUE_GIVEN = ("constant/r1", "constant/zero-pads", "constant/negative", "constant/r0", "axes=1/constant")


def _pad_shapes() -> tuple[Shape, ...]:
    """Version 1's rows; the attribute form (2-10) of the rows with pads; the input form (11-17)
    of the rows without axes; from 18 every row with ``axes`` (the row's own, or every axis:
    ``axes=all``) in the cycle and a few without (:data:`_PADS_AXES_OMITTED`, fill cases).
    ``constant_value`` is given in the rows of :data:`_PADS_VALUE_GIVEN`, omitted elsewhere."""
    out = [pattern(name, {"data": data}, {"paddings": pads, **({"mode": mode} if mode != "constant" else {})},
                   until=1) for name, data, pads, mode in _PADS_V1]
    for name, data, pads, mode, axes, since in _PADS:
        attrs = {"mode": mode} if mode != "constant" else {}
        if since <= 2 and pads:
            out.append(pattern(f"attr/{name}", {"data": data}, {**attrs, "pads": pads}, since=2, until=10))
        shapes = {"data": data, "pads": (len(pads),), "constant_value": ()}

        def add(label, ax, since, until, cycle=True):
            values = {"pads": pads, **({"axes": ax} if ax is not None else {})}
            with_axes = ("axes",) if ax is not None else ()
            optional = (("constant_value",) + with_axes,) if name in _PADS_VALUE_GIVEN else (with_axes,)
            fill = ("string", "bool") if name == "constant/default-value" else ()
            out.append(pattern(label, shapes, attrs, since, until, values=values, optional=optional, cycle=cycle,
                               fill_types=fill))

        if axes is not None:
            add(name, axes, max(since, 18), 10**6)
            continue
        if since <= 17:
            add(name, None, max(since, 11), 17)
        if data:
            add(f"{name}/axes=all", list(range(len(data))), max(since, 18), 10**6)
        if name in _PADS_AXES_OMITTED:
            add(f"{name}/axes-omitted", None, max(since, 18), 10**6, cycle=False)
    return tuple(out)


def _pad_errors() -> tuple[Err, ...]:
    why = "pads has 2 * rank values (2 * the number of axes from 18)"
    return (
        Err(why, "attr/pads-length", {"pads": [1, 1]}, ((2, 3),), since=2, until=10),
        Err(why, "pads-length", {}, ((2, 3), (2,)), since=11, values={"pads": [1, 1]}),
        Err(why, "pads-length-axes", {}, ((2, 3), (4,), (), (1,)), since=18, values={"pads": [1, 1, 1, 1],
                                                                                       "axes": [0]},
            types={"axes": "int64"}),
        Err("axes outside the accepted range [-r, r-1]", "axis=2/r2", {}, ((2, 3), (2,), (), (1,)), since=18,
            values={"pads": [1, 1], "axes": [2]}, types={"axes": "int64"}),
        Err("mode 'wrap' is not one of the supported modes before 19 (constant, reflect, edge)", "mode=wrap",
            {"mode": "wrap", "pads": [1, 1, 1, 1]}, ((2, 3),), since=2, until=10),
        Err("mode 'wrap' is not one of the supported modes before 19 (constant, reflect, edge)", "mode=wrap",
            {"mode": "wrap"}, ((2, 3), (4,)), since=11, until=18, values={"pads": [1, 1, 1, 1]}),
        Err("supported modes: constant, reflect, edge, wrap", "mode=circular", {"mode": "circular"},
            ((2, 3), (4,)), since=19, values={"pads": [1, 1, 1, 1]}),
    )


def _pad_contested(ctx, attrs):
    if ctx.version >= 18 and ctx.types.get("axes") == "int32" and "axes" in ctx.initializers:
        return ("Tind admits int32 axes, but onnx's Pad-18+ shape inference reads a constant axes as int64 only "
                "('ParseData type mismatch for tensor: axes'): onnx.checker full_check and onnxruntime reject the "
                "model (as a graph input the same axes run)")
    return None


PAD = Entry(
    "Pad", pad_oracle, family="shaped", shapes=_pad_shapes(), signed_zero=True, numerics_types=_WIDE,
    contested=_pad_contested,
    # paddings (1) / pads (2) are required: every state gives them (each pattern writes its own over them)
    attrs=tuple(Attrs({**extra, name: [1, 1]}, since, until, tag) for name, since, until in
                (("paddings", 0, 1), ("pads", 2, 10))
                for extra, tag in (({}, "given"), ({"value": 1.5}, "value=1.5"), ({"value": -0.0}, "value=-0"))),
    errors=_pad_errors(),
    notes={2: "pads (negative: remove)", 11: "pads and constant_value as inputs", 13: "every type (default "
           "constant 0, '' or False)", 18: "axes input", 19: "wrap mode"},
)


ENTRIES = (RESHAPE, TRANSPOSE, CONCAT, SQUEEZE, UNSQUEEZE, FLATTEN, SPLIT, EXPAND, TILE, SLICE, PAD)
register_entries(ENTRIES, family="shape")
