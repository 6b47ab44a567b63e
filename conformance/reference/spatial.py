"""The spatial arithmetic that convolution and pooling share: output sizes and the pads that
``auto_pad`` (NOTSET, SAME_UPPER, SAME_LOWER, VALID), ``strides``, ``dilations`` and the kernel
shape give.  Pure integer arithmetic on Python ints, no tensors.

Every function follows the ONNX operator text (Conv-22, ConvTranspose-22, MaxPool-22 and
AveragePool-22 as of onnx 1.23.2); each docstring quotes the formula it implements.  Conventions:

* ``spatial``: the input's spatial dimensions ``(D1, ..., Dn)`` (the shape without N and C);
* ``kernel_shape``: the kernel's spatial dimensions ``(k1, ..., kn)``;
* ``pads``: the ONNX layout ``[x1_begin, x2_begin, ..., x1_end, x2_end, ...]`` (length ``2n``);
  functions return pads as two tuples ``(begin, end)`` of length ``n``;
* ``strides`` / ``dilations`` default to 1 per axis when ``None``;
* ``auto_pad`` is the attribute's string (``"NOTSET"`` when absent; bytes are accepted).

Nothing here rounds differently from the text: the outputs of these functions are what a
conforming runtime's output shape must be.  Invalid geometry raises :class:`ValueError` with
the rule it breaks (the error cases of the families reuse those messages).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: The auto_pad values the texts define.
AUTO_PADS = ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID")


@dataclass(frozen=True)
class Geometry:
    """The geometry of one convolution or pooling along every spatial axis.

    Attributes:
        out: output spatial dimensions (Python ints, ``>= 0``).
        begin: padding added before each axis (may be negative only for ConvTranspose's
            ``output_shape`` / SAME cases, where it crops the full transposed output).
        end: padding added after each axis (same remark).
        strides, dilations, kernel_shape: the per-axis values used (defaults filled in).
    """

    out: tuple[int, ...]
    begin: tuple[int, ...]
    end: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    kernel_shape: tuple[int, ...]

    @property
    def pads(self) -> tuple[int, ...]:
        """The pads in ONNX layout ``begin + end``."""
        return self.begin + self.end


def auto_pad_name(auto_pad) -> str:
    """The auto_pad attribute as a ``str`` (``None`` -> ``"NOTSET"``; bytes decoded).

    Raises:
        ValueError: a value outside :data:`AUTO_PADS`.
    """
    if auto_pad is None:
        return "NOTSET"
    if isinstance(auto_pad, bytes):
        auto_pad = auto_pad.decode()
    if auto_pad not in AUTO_PADS:
        raise ValueError(f"auto_pad must be one of {AUTO_PADS}, got {auto_pad!r}")
    return auto_pad


def per_axis(values: Sequence[int] | None, rank: int, name: str, default: int = 1) -> tuple[int, ...]:
    """``values`` as a tuple of ``rank`` ints (``None``: ``default`` on every axis).

    Raises:
        ValueError: a length other than ``rank``.
    """
    if values is None:
        return (default,) * rank
    values = tuple(int(v) for v in values)
    if len(values) != rank:
        raise ValueError(f"{name} has {len(values)} values for {rank} spatial axes")
    return values


def split_pads(pads: Sequence[int] | None, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ONNX ``pads`` ``[x1_begin, ..., xn_begin, x1_end, ..., xn_end]`` as ``(begin, end)``
    (``None``: zeros; "If not present, the padding defaults to 0 along start and end of each
    spatial axis").

    Raises:
        ValueError: a length other than ``2 * rank``.
    """
    if pads is None:
        return (0,) * rank, (0,) * rank
    pads = tuple(int(p) for p in pads)
    if len(pads) != 2 * rank:
        raise ValueError(f"pads has {len(pads)} values for {rank} spatial axes (2 per axis)")
    return pads[:rank], pads[rank:]


def dilated_extent(kernel: int, dilation: int) -> int:
    """The extent of a dilated kernel along one axis: ``(kernel - 1) * dilation + 1``."""
    return (int(kernel) - 1) * int(dilation) + 1


def same_split(total: int, auto_pad: str) -> tuple[int, int]:
    """``(begin, end)`` of a total padding ``total`` split by SAME_UPPER / SAME_LOWER: "The
    padding is split between the two sides equally or almost equally ... In case the padding is
    an odd number, the extra padding is added at the end for SAME_UPPER and at the beginning for
    SAME_LOWER."  (Python floor division: a negative ``total``, only met by ConvTranspose,
    follows the same formulas.)

    Raises:
        ValueError: ``auto_pad`` is not SAME_UPPER or SAME_LOWER.
    """
    if auto_pad == "SAME_UPPER":
        return total // 2, total - total // 2
    if auto_pad == "SAME_LOWER":
        return total - total // 2, total // 2
    raise ValueError(f"same_split needs SAME_UPPER or SAME_LOWER, not {auto_pad!r}")


def conv_geometry(spatial: Sequence[int], kernel_shape: Sequence[int], strides=None, dilations=None, pads=None,
                  auto_pad="NOTSET") -> Geometry:
    """Output size and pads of Conv (and of DeformConv, FusedConv; the same as pooling without
    ``ceil_mode``).

    * NOTSET (explicit pads): ``out = floor((D + begin + end - ((k - 1) d + 1)) / s) + 1``;
    * VALID: no padding, ``out = floor((D - ((k - 1) d + 1)) / s) + 1`` (equal to the text's
      ``ceil((D - ((k - 1) d + 1) + 1) / s)``);
    * SAME_UPPER / SAME_LOWER: ``out = ceil(D / s)``, total padding
      ``max(0, (out - 1) s + ((k - 1) d + 1) - D)`` split by :func:`same_split`: the *dilated*
      kernel's extent decides the padding (MaxPool-22's ``pad_shape`` formula; the Conv text
      states only the output size).

    ``pads`` is ignored unless auto_pad is NOTSET (the texts: "This attribute cannot be used
    simultaneously with auto_pad attribute"; callers that want to reject the combination check
    it themselves).

    Raises:
        ValueError: lengths that do not match the rank, a kernel, stride or dilation below 1,
            negative pads, or a dilated kernel larger than the padded input (no output window:
            ``D + begin + end < (k - 1) d + 1``).
    """
    spatial = tuple(int(v) for v in spatial)
    rank = len(spatial)
    kernel_shape = per_axis(kernel_shape, rank, "kernel_shape")
    strides = per_axis(strides, rank, "strides")
    dilations = per_axis(dilations, rank, "dilations")
    if min(kernel_shape + strides + dilations, default=1) < 1:
        raise ValueError("kernel_shape, strides and dilations must be >= 1")
    mode = auto_pad_name(auto_pad)
    ext = tuple(dilated_extent(k, d) for k, d in zip(kernel_shape, dilations))
    if mode == "NOTSET":
        begin, end = split_pads(pads, rank)
        if min(begin + end, default=0) < 0:
            raise ValueError("pads must be >= 0")
    elif mode == "VALID":
        begin, end = (0,) * rank, (0,) * rank
    else:
        out = tuple(-(-d // s) for d, s in zip(spatial, strides))
        totals = [max(0, (o - 1) * s + e - d) for o, s, e, d in zip(out, strides, ext, spatial)]
        splits = [same_split(t, mode) for t in totals]
        begin, end = tuple(b for b, _ in splits), tuple(e for _, e in splits)
    out = []
    for d, b, e_, x, s in zip(spatial, begin, end, ext, strides):
        span = d + b + e_ - x
        if span < 0:
            raise ValueError(f"the dilated kernel ({x}) is larger than the padded input ({d + b + e_})")
        out.append(span // s + 1)
    return Geometry(tuple(out), tuple(begin), tuple(end), strides, dilations, kernel_shape)


def pool_geometry(spatial: Sequence[int], kernel_shape: Sequence[int], strides=None, dilations=None, pads=None,
                  auto_pad="NOTSET", ceil_mode: int = 0) -> Geometry:
    """Output size and pads of the windowed pooling operators (MaxPool, AveragePool, LpPool).

    As :func:`conv_geometry`, except with ``ceil_mode`` and explicit pads (MaxPool-22's text):
    ``out = ceil((D + pad_shape - ((k - 1) d + 1)) / s + 1)``, and "Sliding windows that would
    start in the right padded region are ignored": the last window's start ``(out - 1) s`` must
    be ``< D + begin`` (else ``out`` drops by one).  With VALID or SAME the text's ceil and
    floor formulas give the same sizes (``ceil((D - x + 1) / s) = floor((D - x) / s) + 1`` and
    ``ceil(D / s) = floor((D - 1) / s) + 1``), so ``ceil_mode`` changes nothing there.

    Raises:
        ValueError: as :func:`conv_geometry`.
    """
    g = conv_geometry(spatial, kernel_shape, strides, dilations, pads, auto_pad)
    if not ceil_mode or auto_pad_name(auto_pad) != "NOTSET":
        return g
    out = []
    for d, b, e_, k, dil, s in zip(spatial, g.begin, g.end, g.kernel_shape, g.dilations, g.strides):
        span = int(d) + b + e_ - dilated_extent(k, dil)
        o = -(-span // s) + 1
        if (o - 1) * s >= int(d) + b:
            o -= 1
        out.append(o)
    return Geometry(tuple(out), g.begin, g.end, g.strides, g.dilations, g.kernel_shape)


def conv_transpose_geometry(spatial: Sequence[int], kernel_shape: Sequence[int], strides=None, dilations=None,
                            pads=None, auto_pad="NOTSET", output_padding=None, output_shape=None) -> Geometry:
    """Output size and pads of ConvTranspose (ConvTranspose-22's text).

    * ``output_shape`` given (spatial dimensions only): "pads values are auto generated":
      ``total = s (D - 1) + output_padding + ((k - 1) d + 1) - output_shape``; SAME_UPPER:
      ``begin = total / 2``, ``end = total - total / 2``; otherwise (NOTSET, SAME_LOWER, VALID):
      ``begin = total - total / 2``, ``end = total / 2`` (``/`` integer division; "If
      output_shape is specified pads values are ignored").
    * else SAME_UPPER / SAME_LOWER: ``out = D s`` ("pad the input so that output_shape[i] =
      input_shape[i] * strides[i]"), the total padding as above with that ``out``, split by
      :func:`same_split`.
    * else VALID: no padding; NOTSET: the given pads.  ``out = s (D - 1) + output_padding +
      ((k - 1) d + 1) - begin - end``.

    The pads crop the *full* transposed output ``s (D - 1) + ((k - 1) d + 1) + output_padding``
    (whose last ``output_padding`` positions receive no term): output position ``o`` is full
    position ``o + begin``.  A negative ``begin``/``end`` (only from a total padding below 0,
    e.g. SAME with ``k < s``) means positions outside the full output, which receive no term.

    Raises:
        ValueError: lengths that do not match the rank, a kernel, stride or dilation below 1,
            negative explicit pads or output_padding, or an output size below 0.
    """
    spatial = tuple(int(v) for v in spatial)
    rank = len(spatial)
    kernel_shape = per_axis(kernel_shape, rank, "kernel_shape")
    strides = per_axis(strides, rank, "strides")
    dilations = per_axis(dilations, rank, "dilations")
    opad = per_axis(output_padding, rank, "output_padding", default=0)
    if min(kernel_shape + strides + dilations, default=1) < 1:
        raise ValueError("kernel_shape, strides and dilations must be >= 1")
    if min(opad, default=0) < 0:
        raise ValueError("output_padding must be >= 0")
    mode = auto_pad_name(auto_pad)
    ext = tuple(dilated_extent(k, d) for k, d in zip(kernel_shape, dilations))
    full = tuple(s * (d - 1) + x + p for s, d, x, p in zip(strides, spatial, ext, opad))
    if output_shape is not None or mode in ("SAME_UPPER", "SAME_LOWER"):
        if output_shape is not None:
            out = per_axis(output_shape, rank, "output_shape")
            split = "SAME_UPPER" if mode == "SAME_UPPER" else "SAME_LOWER"
        else:
            out = tuple(d * s for d, s in zip(spatial, strides))
            split = mode
        splits = [same_split(f - o, split) for f, o in zip(full, out)]
        begin, end = tuple(b for b, _ in splits), tuple(e for _, e in splits)
    else:
        if mode == "VALID":
            begin, end = (0,) * rank, (0,) * rank
        else:
            begin, end = split_pads(pads, rank)
            if min(begin + end, default=0) < 0:
                raise ValueError("pads must be >= 0")
        out = tuple(f - b - e for f, b, e in zip(full, begin, end))
    if min(out, default=0) < 0:
        raise ValueError(f"ConvTranspose output size {out} is negative")
    return Geometry(tuple(out), tuple(begin), tuple(end), strides, dilations, kernel_shape)
