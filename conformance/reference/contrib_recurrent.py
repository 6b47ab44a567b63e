"""Oracle, error bound and legitimate kernels of onnxruntime's com.microsoft ``AttnLSTM`` (1)
(onnxruntime-defined: its text is onnxruntime's ContribOperators.md / the schema's doc).

The operator is an LSTM (:mod:`conformance.reference.recurrent`, whose one-step cell
``_step`` is reused unchanged, in the same three arithmetics: :class:`~conformance.reference.recurrent.Float64`
oracle, :class:`~conformance.reference.recurrent.Bound` running error bound,
:class:`~conformance.reference.recurrent.Kernel` legitimate kernels) wrapped in an
*AttentionWrapper* with a *Bahdanau* attention mechanism.  Per direction ``d`` (the second
halves of QW, MW, V, AW for the reverse direction of a bidirectional op; M is shared) and
batch row ``b``, with ``ATTN_{-1} = 0``:

* ``KEYS = M[b] @ MW[d]``                        (``[T, A]``; MW ``[D, E, A]``)
* ``H_t, C_t = lstm(concat(X_t, ATTN_{t-1}), H_{t-1}, C_{t-1})`` (W ``[D, 4H, I + Z]``)
* ``PQ = H_t @ QW[d]``                           (``[1, A]``; QW ``[D, H, A]``)
* ``score_s = sum_a V[d, a] tanh(KEYS[s, a] + PQ[a])`` for ``s < memory_seq_lens[b]``
* ``ALIGN = softmax(score)`` over the valid memory steps; ``CONTEXT = ALIGN @ M[b, :len]``
  (``[1, E]``)
* ``ATTN_t = concat(H_t, CONTEXT) @ AW[d]`` (AW ``[D, H + E, Z]``) if AW is given, else
  ``ATTN_t = CONTEXT`` (``Z = E``).

Y / Y_h / Y_c are the LSTM's H / last valid H / last valid C, exactly as LSTM's (sequence_lens,
reverse over the valid part).  Readings chosen where the text is open are listed in
:mod:`conformance.ops.contrib_recurrent`.

**Tolerance**: the LSTM's running bound carried through the attention: products through
``|QW|``, ``|MW|``, ``|V|``, ``|AW|`` and the memory (dot products of ``n`` terms in any order,
``gamma_n``), tanh with its library budget, and the softmax: with input errors at most ``e``
the exact softmax moves by at most ``p (exp(2e) - 1)``, and its evaluation (exp, a sum of
``L`` terms, a division, with or without max subtraction) adds ``p (2 r_exp + gamma_L +
r_div + u)`` relatively.  T is float or double only (no 16-bit types).
"""

from __future__ import annotations

import numpy as np

from .. import tolerance as tol
from . import recurrent as rec
from .linalg import gamma
from . import libm

TANH = rec.Act("Tanh")
ATTN_INPUTS = ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P", "QW", "MW", "V", "M",
               "memory_seq_lens", "AW")


# ----------------------------------------------------------------------------- pair helpers
def _is_bound(ar) -> bool:
    return isinstance(ar, rec.Bound)


def _map(ar, f, a):
    """Apply a structural numpy function (slice, transpose, broadcast) to a value of ``ar``."""
    return (f(a[0]), f(a[1])) if _is_bound(ar) else f(a)


def _concat(ar, a, b):
    """``concat([a, b], axis=1)`` of two row values."""
    if _is_bound(ar):
        return np.concatenate([a[0], b[0]], axis=1), np.concatenate([a[1], b[1]], axis=1)
    return np.concatenate([a, b], axis=1)


def softmax(ar, a):
    """Softmax over axis 0 of a ``[L, 1]`` value of the arithmetic ``ar`` (module docstring,
    "Tolerance", for :class:`~conformance.reference.recurrent.Bound`).  A
    :class:`~conformance.reference.recurrent.Kernel` with ``max_sub`` set subtracts the maximum
    first."""
    if _is_bound(ar):
        v, e = a
        p = libm.exp(v - np.max(v))
        p = p / p.sum()
        n = v.shape[0]
        drift = libm.expm1(2.0 * float(np.max(e))) if e.size else 0.0
        r = 2 * tol.budget_rel("exp", ar.p) + gamma(n, ar.u) + tol.budget_rel("divide", ar.p) + ar.u
        return p, p * (drift + (1.0 + drift) * r)
    if isinstance(ar, rec.Kernel):
        dt = ar.dt
        x = np.asarray(a, dtype=dt)
        if getattr(ar, "max_sub", False):
            x = (x - x.max()).astype(dt)
        ex = libm.exp(x).astype(dt)
        s = dt(0)
        for val in ex.ravel():  # sequential sum in the kernel's precision
            s = dt(s + val)
        return (ex / s).astype(dt)
    x = np.asarray(a, dtype=np.float64)
    ex = libm.exp(x - x.max())
    return ex / ex.sum()


# ----------------------------------------------------------------------------- the recurrence
def attention_dims(w, mw, aw, hidden_size: int):
    """``(I, E, A, Z)``: input size, memory depth, attention (mechanism) size, attention-state
    size (AW's last dimension, else E), from W ``[D, 4H, I + Z]``, MW ``[D, E, A]``, AW
    ``[D, H + E, Z]``.

    Raises:
        ValueError: AW's second dimension is not ``H + E`` or W's last is smaller than ``Z``.
    """
    e, a = int(mw.shape[1]), int(mw.shape[2])
    z = e if aw is None else int(aw.shape[2])
    if aw is not None and aw.shape[1] != hidden_size + e:
        raise ValueError(f"AW {aw.shape} is not [D, hidden_size + memory_depth = {hidden_size + e}, Z]")
    i = int(w.shape[2]) - z
    if i < 1:
        raise ValueError(f"W {w.shape} has no room for the input and the attention state of {z}")
    return i, e, a, z


def recurrence(ar, x, w, r, b=None, sequence_lens=None, initial_h=None, initial_c=None, p=None, qw=None, mw=None,
               v=None, m=None, memory_seq_lens=None, aw=None, attrs=None, outputs=("Y", "Y_h", "Y_c"),
               flaw=None):
    """AttnLSTM (module docstring) in the arithmetic ``ar``.

    Args:
        ar: a :mod:`conformance.reference.recurrent` arithmetic.
        x..aw: the operator's 14 inputs in schema order (``None`` when absent), float arrays
            (sequence_lens, memory_seq_lens integers); QW, MW, V, M present together, or all
            absent (the contested reading: ATTN stays zero, W ``[D, 4H, I + Z]`` for any ``Z``).
        attrs: the node's attributes.
        outputs: the outputs wanted (Y, Y_h, Y_c).
        flaw: tests only, a deliberately wrong kernel: ``"no-feedback"`` (the LSTM input is
            ``concat(X_t, 0)``: the attention state never fed back), ``"memory-lens-ignored"``
            (every memory step attended), ``"aw-order"`` (AW read as ``concat(CONTEXT, H)``).

    Returns:
        ``{name: value}`` of ``ar``'s kind, layout 0 (``Y [S, D, N, H]``, ``Y_h/Y_c [D, N, H]``).

    Raises:
        ValueError: shapes that disagree (hidden_size, num_directions, AW, W), memory_seq_lens
            outside ``[1, T]``, an unknown direction or activation.
    """
    attrs = dict(attrs or {})
    mech = [q is not None for q in (qw, mw, v, m)]
    if any(mech) and not all(mech):
        raise ValueError("QW, MW, V and M (the attention mechanism) are present together or not at all")
    nd = rec.num_directions(attrs)
    x = np.asarray(x, dtype=np.float64)
    seq, batch, _ = x.shape
    hs = int(attrs["hidden_size"]) if attrs.get("hidden_size") is not None else r.shape[-1]
    if not all(mech):
        # the contested reading (conformance.ops.contrib_recurrent): no mechanism, no context:
        # ATTN keeps its initial zero, W's last columns multiply zeros
        if aw is not None or memory_seq_lens is not None:
            raise ValueError("AW / memory_seq_lens without the attention mechanism")
        z_dim = int(w.shape[2]) - int(x.shape[2])
        if z_dim < 0:
            raise ValueError(f"W {w.shape} narrower than X {x.shape}")
        qw = np.zeros((nd, hs, 1))
        mw = np.zeros((nd, 1, 1))
        v = np.zeros((nd, 1))
        m = np.zeros((batch, 1, 1))
        e_dim, a_dim = 1, 1
    else:
        _, e_dim, a_dim, z_dim = attention_dims(w, mw, aw, hs)
    if w.shape[0] != nd or w.shape[1] != 4 * hs or r.shape != (nd, 4 * hs, hs):
        raise ValueError(f"W {w.shape} / R {r.shape} disagree with hidden_size {hs} and {nd} direction(s)")
    if qw.shape != (nd, hs, a_dim) or v.shape != (nd, a_dim) or mw.shape[0] != nd:
        raise ValueError(f"QW {qw.shape} / V {v.shape} / MW {mw.shape} disagree with hidden_size {hs}, {nd} dir(s)")
    if m.shape[0] != batch or m.shape[2] != e_dim:
        raise ValueError(f"M {m.shape} is not [batch {batch}, T, memory_depth {e_dim}]")
    tmax = int(m.shape[1])
    mlens = [tmax] * batch if memory_seq_lens is None else [int(q) for q in np.asarray(memory_seq_lens).ravel()]
    if any(not 1 <= q <= tmax for q in mlens):
        raise ValueError(f"memory_seq_lens {mlens} outside [1, {tmax}]")
    if flaw == "memory-lens-ignored":
        mlens = [tmax] * batch
    acts = rec.resolve_activations("LSTM", attrs, nd)
    lens = [seq] * batch if sequence_lens is None else [int(q) for q in np.asarray(sequence_lens).ravel()]
    reverse_dirs = [attrs.get("direction") == "reverse"] if nd == 1 else [False, True]
    dt = rec._dt(ar)
    zeros = np.zeros((1, hs))
    ys = [[[None] * batch for _ in range(nd)] for _ in range(seq)]
    yh = [[None] * batch for _ in range(nd)]
    yc = [[None] * batch for _ in range(nd)]
    for d in range(nd):
        wd, rd = np.asarray(w[d], dtype=dt), np.asarray(r[d], dtype=dt)
        wb = None if b is None else np.asarray(b[d][: 4 * hs], dtype=dt)
        rb = None if b is None else np.asarray(b[d][4 * hs:], dtype=dt)
        pd = None if p is None else np.asarray(p[d], dtype=dt)
        qwt = np.asarray(qw[d], dtype=dt).T            # [A, H]
        mwt = np.asarray(mw[d], dtype=dt).T            # [A, E]
        vd = np.asarray(v[d], dtype=dt).reshape(1, -1)  # [1, A]
        if aw is not None:
            awd = np.asarray(aw[d], dtype=dt)
            aw_h, aw_c = awd[:hs].T, awd[hs:].T       # [Z, H], [Z, E]
            if flaw == "aw-order":
                aw_c, aw_h = awd[:e_dim].T, awd[e_dim:].T
        for bi in range(batch):
            mem = np.asarray(m[bi], dtype=np.float64)
            ml = mlens[bi]
            keys = ar.affine([(ar.lift(mem[:ml]), mwt)], [])            # [L, A]
            mem_t = np.asarray(mem[:ml].T, dtype=dt)                      # [E, L]
            h = ar.lift(zeros if initial_h is None else np.asarray(initial_h[d, bi:bi + 1], dtype=np.float64))
            c = ar.lift(zeros if initial_c is None else np.asarray(initial_c[d, bi:bi + 1], dtype=np.float64))
            attn = ar.lift(np.zeros((1, z_dim)))
            steps = list(range(lens[bi] - 1, -1, -1) if reverse_dirs[d] else range(lens[bi]))
            for k, t in enumerate(steps):
                fed = ar.lift(np.zeros((1, z_dim))) if flaw == "no-feedback" or not all(mech) else attn
                xin = _concat(ar, ar.lift(x[t, bi:bi + 1]), fed)
                h, c = rec._step("LSTM", ar, acts[d], xin, h, c, wd, rd, wb, rb, pd, hs, attrs)
                ys[t][d][bi] = h
                if k == len(steps) - 1:
                    break  # the last state's attention feeds nothing
                pq = ar.affine([(h, qwt)], [])                           # [1, A]
                pre = ar.add(keys, _map(ar, lambda q: np.broadcast_to(q, (ml, a_dim)), pq))
                score = ar.affine([(ar.act(TANH, pre), vd)], [])          # [L, 1]
                align = _map(ar, lambda q: q.T, softmax(ar, score))       # [1, L]
                context = ar.affine([(align, mem_t)], [])                 # [1, E]
                attn = context if aw is None else ar.affine([(h, aw_h), (context, aw_c)], [])
            yh[d][bi] = h
            yc[d][bi] = c
    zero = ar.lift(zeros)
    out = {}
    if "Y" in outputs:
        out["Y"] = rec._stack(ar, [[[ys[t][d][bi] if ys[t][d][bi] is not None else zero for bi in range(batch)]
                                    for d in range(nd)] for t in range(seq)], (seq, nd, batch, hs), None)
    if "Y_h" in outputs:
        out["Y_h"] = rec._stack(ar, yh, (nd, batch, hs), None)
    if "Y_c" in outputs:
        out["Y_c"] = rec._stack(ar, yc, (nd, batch, hs), None)
    return out


def oracle(inputs, attrs, outputs=("Y", "Y_h", "Y_c")):
    """The float64 oracle: ``{name: float64 array}`` (``inputs``: the 14 inputs, schema order)."""
    return recurrence(rec.Float64(), *inputs, attrs=attrs, outputs=outputs)


def bounds(t: str, inputs, attrs, outputs=("Y", "Y_h", "Y_c")):
    """``{name: (float64 value, per-element error bound)}`` of a legitimate kernel for ``t``."""
    return recurrence(rec.Bound(t), *inputs, attrs=attrs, outputs=outputs)


def kernel(inputs, attrs, outputs, t: str, flaw=None, max_sub=False, **kw):
    """A numpy kernel for element type ``t`` (float32 for float, float64 for double; ``kw``:
    :class:`~conformance.reference.recurrent.Kernel`'s ``fused``, ``libm_ulps``; ``max_sub``: the
    softmax subtracts its maximum), results cast to T; ``flaw`` as :func:`recurrence`."""
    prec = np.float64 if t == "double" else np.float32
    k = rec.Kernel(prec, **kw)
    k.max_sub = max_sub
    out = recurrence(k, *inputs, attrs=attrs, outputs=outputs, flaw=flaw)
    return {n: np.asarray(val).astype(rec.NP[t]) for n, val in out.items()}


__all__ = ["recurrence", "oracle", "bounds", "kernel", "softmax", "attention_dims", "ATTN_INPUTS"]


# ============================================================================ DynamicQuantizeLSTM
DQ_INPUTS = ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P", "W_scale", "W_zero_point",
             "R_scale", "R_zero_point")


def dequantize_weights(wq, scale, zero_point):
    """DynamicQuantizeLSTM's W ``[D, K, 4H]`` (or R ``[D, H, 4H]``) integers with scale and zero
    point ``[D]`` (per tensor) or ``[D, 4H]`` (per channel, the 4H axis) -> float64
    ``(wq - zero_point) * scale`` in LSTM's layout ``[D, 4H, K]`` (exact in float64)."""
    w = np.asarray(wq, dtype=np.float64)
    s = np.asarray(scale, dtype=np.float64)
    z = np.asarray(zero_point, dtype=np.float64)
    s, z = (s[:, None, None], z[:, None, None]) if s.ndim == 1 else (s[:, None, :], z[:, None, :])
    return np.swapaxes((w - z) * s, 1, 2)


def dq_lstm_inputs(inputs):
    """The 8 LSTM inputs (float64, W and R dequantized and in LSTM's layout) from
    DynamicQuantizeLSTM's 12 (schema order).

    Raises:
        ValueError: a scale or zero point neither ``[D]`` nor ``[D, 4H]``.
    """
    x, w, r, b, sl, h0, c0, p, ws, wz, rs, rz = (list(inputs) + [None] * 12)[:12]
    for name, q, wt in (("W_scale", ws, w), ("W_zero_point", wz, w), ("R_scale", rs, r), ("R_zero_point", rz, r)):
        sh = np.shape(q)
        if sh not in ((np.shape(wt)[0],), (np.shape(wt)[0], np.shape(wt)[2])):
            raise ValueError(f"{name} {sh} is neither [num_directions] nor [num_directions, 4*hidden_size]")
    return [x, dequantize_weights(w, ws, wz), dequantize_weights(r, rs, rz), b, sl, h0, c0, p]


class QBound(rec.Bound):
    """:class:`~conformance.reference.recurrent.Bound` of an LSTM whose gate GEMMs may quantize
    their left operands dynamically: the X row (first term) carries an extra error ``qx`` and
    the hidden state (second term) ``qh`` per element, and the integer GEMM's result is scaled
    by two more float roundings."""

    def __init__(self, t: str, qx: float, qh: float):
        super().__init__(t)
        self.q = (qx, qh)

    def affine(self, terms, biases, diag=()):
        widened = [((xv, xe + (self.q[k] if k < 2 else 0.0)), m) for k, ((xv, xe), m) in enumerate(terms)]
        v, e = super().affine(widened, biases, diag)
        mag = 0.0
        for (xv, xe), m in widened:
            mag = mag + (np.abs(xv) + xe) @ np.abs(m).T
        return v, e + 2 * self.u * mag


def quantize_uint8(a, dt=np.float32):
    """Dynamic uint8 quantization of ``a`` as DynamicQuantizeLinear (range widened to 0, scale
    ``range / 255``, zero point rounded half to even and saturated), returned dequantized in
    ``dt``."""
    a = np.asarray(a, dtype=dt)
    if a.size == 0:
        return a
    lo, hi = min(dt(0), a.min()), max(dt(0), a.max())
    scale = dt((hi - lo) / dt(255))
    if scale == 0:
        return a
    zp = np.clip(np.rint(-lo / scale), 0, 255)
    q = np.clip(np.rint(a / scale) + zp, 0, 255)
    return ((q - zp) * scale).astype(dt)


class QKernel(rec.Kernel):
    """A float32 LSTM kernel that quantizes the hidden state dynamically (uint8, per batch row
    and step) before its R GEMM (tests)."""

    def affine(self, terms, biases, diag=()):
        if len(terms) >= 2:
            terms = [terms[0], (quantize_uint8(terms[1][0], self.dt), terms[1][1])] + list(terms[2:])
        return super().affine(terms, biases, diag)


def dq_quantization_errors(lstm_inputs, attrs):
    """``(qx, qh)``: the largest error a dynamic 8-bit quantization of X and of the hidden
    state may add per element, at any granularity (per tensor or finer; asymmetric uint8 with
    the range widened to 0, as DynamicQuantizeLinear, or symmetric int8): half a step of the
    coarsest grid, ``range / 510 <= max|a| / 255`` (uint8: the rounded zero point keeps the
    saturated ends within half a step too) or ``max|a| / 254`` (int8): ``max|a| / 254``; for
    the hidden state ``max|a|`` is the oracle's largest ``|H|`` (or initial_h) widened by 5 %
    for the kernel's own error."""
    x = np.asarray(lstm_inputs[0], dtype=np.float64)
    qx = float(np.max(np.abs(x))) / 254 if x.size else 0.0
    o = rec.oracle("LSTM", lstm_inputs, attrs, ("Y", "Y_h"))
    hm = max([float(np.max(np.abs(a))) for a in (o["Y"], o["Y_h"]) if np.size(a)] + [0.0])
    if lstm_inputs[5] is not None and np.size(lstm_inputs[5]):
        hm = max(hm, float(np.max(np.abs(lstm_inputs[5]))))
    return qx, 1.05 * hm / 254


def dq_lstm_oracle(inputs, attrs, outputs=("Y", "Y_h", "Y_c")):
    """DynamicQuantizeLSTM's float64 oracle: LSTM with the dequantized W and R, X and H exact."""
    return rec.oracle("LSTM", dq_lstm_inputs(inputs), attrs, outputs)


def dq_lstm_bounds(inputs, attrs, outputs=("Y", "Y_h", "Y_c")):
    """``{name: (value, bound)}`` for float (:class:`QBound` with :func:`dq_quantization_errors`)."""
    li = dq_lstm_inputs(inputs)
    qx, qh = dq_quantization_errors(li, attrs)
    return rec.recurrence("LSTM", QBound("float", qx, qh), *li, attrs=attrs, outputs=outputs)


def dq_lstm_kernel(inputs, attrs, outputs, quantize=True, **kw):
    """A float32 kernel: dequantized W and R; ``quantize``: X quantized dynamically per tensor
    (uint8) and the hidden state per row and step (:class:`QKernel`), else float throughout."""
    li = dq_lstm_inputs(inputs)
    if quantize:
        li[0] = quantize_uint8(li[0]).astype(np.float64)
    k = QKernel(np.float32, **kw) if quantize else rec.Kernel(np.float32, **kw)
    out = rec.recurrence("LSTM", k, *li, attrs=attrs, outputs=outputs)
    return {n: np.asarray(val).astype(np.float32) for n, val in out.items()}


__all__ += ["DQ_INPUTS", "dequantize_weights", "dq_lstm_inputs", "QBound", "QKernel", "quantize_uint8",
            "dq_quantization_errors", "dq_lstm_oracle", "dq_lstm_bounds", "dq_lstm_kernel"]
