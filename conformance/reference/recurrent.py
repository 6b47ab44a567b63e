"""Oracles, error bounds and legitimate kernels of the recurrent operators LSTM (1, 7, 14, 22),
GRU (1, 3, 7, 14, 22) and RNN (1, 7, 14, 22).

One recurrence (:func:`recurrence`) is written once against a small *arithmetic* interface and
evaluated three ways:

* :class:`Float64` -- the oracle: every operation in float64 (the values the backend is fed
  are exact; the oracle's own rounding is below 1e-15 relative per operation, and the
  tolerance of a ``double`` output counts it, :func:`tolerance_of`);
* :class:`Bound` -- a running forward-error bound: each value carries its float64 value ``v``
  and a per-element bound ``e`` on ``|computed - v|`` for *any* kernel that follows the text at
  the mandated precision (module section "Tolerance");
* :class:`Kernel` -- legitimate numpy kernels at a given precision (float32 state for 16-bit
  types or rounded to T at every step, fused or separate gate GEMMs, a libm a few ulp off),
  used by the tests to show that the tolerance accepts them.

Operator text (onnx ``LSTM``/``GRU``/``RNN``; layout 0 shapes, ``D`` = num_directions):
X ``(S, B, I)``, W ``(D, G*H, I)``, R ``(D, G*H, H)``, B ``(D, 2*G*H)`` (``[Wb, Rb]``),
sequence_lens ``(B,)`` int32, initial_h / initial_c ``(D, B, H)``, P ``(D, 3*H)``;
Y ``(S, D, B, H)``, Y_h / Y_c ``(D, B, H)``; ``G`` = 4 (LSTM, gates ``i, o, f, c``), 3 (GRU,
``z, r, h``), 1 (RNN).  Layout 1: X ``(B, S, I)``, Y ``(B, S, D, H)``, the states ``(B, D, H)``.
With sequence_lens, batch ``b`` runs its first ``L_b`` steps only: the reverse direction runs
``t = L_b - 1 .. 0`` (the valid part reversed), Y is zero for ``t >= L_b`` and Y_h / Y_c hold
each batch's last computed state.

**Tolerance** (:class:`Bound`): at the mandated precision ``P`` (float32 for float16 and
bfloat16, as MatMul's rule :data:`conformance.reference.linalg.ACC`; the type for float and
double) each gate pre-activation is a dot product of ``n = I + H + 2 (+1 peephole)`` terms
accumulated in any order (Higham: ``gamma_n * sum |terms|``), plus the error the inputs already
carry propagated through ``|W|``, ``|R|`` and ``|P|`` (the recurrence's Jacobian, elementwise in
absolute value); an activation adds its Lipschitz constant times its argument's error, plus its
library budget (the budget table's functions at ``P``: Sigmoid exp+divide+add, Tanh tanh, Elu
expm1, Softplus exp+log, Softsign divide) relative to ``|f| + max(1, |alpha|)`` (a formula
evaluated another way, ``(1 - e^-2x) / (1 + e^-2x)`` or ``log(1 + e^x)``, errs absolutely, not
relatively); ThresholdedRelu's jump is granted where its argument lies within its error of
``alpha``; products and sums add a half ulp of ``P``.  For 16-bit types every intermediate (gate
pre-activation, activation, cell and hidden state) may also be rounded to T (a kernel that keeps
its state in T: Y holds each intermediate state as T anyway): half an ulp of T each.  The bound
is carried through every step, so it grows with the sequence length as the recurrence
amplifies it; sequences are kept to 1-5 steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .. import tolerance as tol
from .linalg import gamma
from . import libm

#: Gates per operator, in the order the text stacks them in W, R and B.
GATES = {"LSTM": "iofc", "GRU": "zrh", "RNN": "i"}
#: Default activations (one direction).
DEFAULT_ACTS = {"LSTM": ("Sigmoid", "Tanh", "Tanh"), "GRU": ("Sigmoid", "Tanh"), "RNN": ("Tanh",)}
#: The activation names the operator text lists.
ACTIVATIONS = ("Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh", "HardSigmoid",
               "Elu", "Softsign", "Softplus")
#: Activations that take alpha / alpha and beta (in the order they consume them).
TAKES_ALPHA = ("Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu")
TAKES_BETA = ("Affine", "ScaledTanh", "HardSigmoid")
#: Defaults "the same as of corresponding ONNX operators" (Affine and ScaledTanh have none: the
#: suite always gives them alpha and beta).
DEFAULT_ALPHA = {"LeakyRelu": 0.01, "ThresholdedRelu": 1.0, "HardSigmoid": 0.2, "Elu": 1.0}
DEFAULT_BETA = {"HardSigmoid": 0.5}
#: Library functions each activation evaluates (budget table names) and its products/sums.
_LIB = {"Sigmoid": ("exp", "divide"), "Tanh": ("tanh",), "ScaledTanh": ("tanh",), "Elu": ("expm1",),
        "Softplus": ("exp", "log"), "Softsign": ("divide",)}
_OPS = {"Sigmoid": 1, "ScaledTanh": 2, "Elu": 2, "Softplus": 1, "Softsign": 1, "Affine": 2, "HardSigmoid": 2,
        "LeakyRelu": 1}

U = {"double": 2.0 ** -53, "float": 2.0 ** -24, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}
PRECISION = {"double": "double", "float": "float", "float16": "float", "bfloat16": "float"}
NP = {"double": np.float64, "float": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}


# ----------------------------------------------------------------------------- activations
@dataclass(frozen=True)
class Act:
    """One activation with its alpha and beta (None where it takes none)."""

    name: str
    alpha: float | None = None
    beta: float | None = None


def resolve_activations(op: str, attrs, num_directions: int) -> list[list[Act]]:
    """The activations of each direction: ``activations`` (default per operator, the list repeated
    for the reverse direction), alpha and beta consumed in the order of the activations that take
    them (the text's "consumed in the order of activation functions"; the suite only generates
    lists where that and reading them by position agree), else the ONNX operators' defaults.

    Raises:
        ValueError: an unknown activation name, a list of the wrong length, Affine or
            ScaledTanh without alpha/beta.
    """
    per = len(DEFAULT_ACTS[op])
    names = attrs.get("activations")
    names = list(names) if names else list(DEFAULT_ACTS[op]) * num_directions
    if op == "RNN" and len(names) == 2 and num_directions == 1 and names == ["Tanh", "Tanh"]:
        names = names[:1]  # the schema's default ["Tanh", "Tanh"] written for one direction
    if len(names) != per * num_directions:
        raise ValueError(f"{op}: {len(names)} activations for {num_directions} direction(s)")
    alphas = list(attrs.get("activation_alpha") or [])
    betas = list(attrs.get("activation_beta") or [])
    out = []
    for n in names:
        if n not in ACTIVATIONS:
            raise ValueError(f"unknown activation {n!r}")
        a = b = None
        if n in TAKES_ALPHA:
            a = _f32(alphas.pop(0)) if alphas else _f32(DEFAULT_ALPHA.get(n))
            if a is None:
                raise ValueError(f"{n} needs activation_alpha")
        if n in TAKES_BETA:
            b = _f32(betas.pop(0)) if betas else _f32(DEFAULT_BETA.get(n))
            if b is None:
                raise ValueError(f"{n} needs activation_beta")
        out.append(Act(n, a, b))
    return [out[d * per:(d + 1) * per] for d in range(num_directions)]


def _f32(v):
    """A float attribute's value as the model stores it (float32)."""
    return None if v is None else float(np.float32(v))


def act_f64(act: Act, x: np.ndarray, dtype=np.float64) -> np.ndarray:
    """The activation of the operator text, evaluated in ``dtype``."""
    x = np.asarray(x, dtype=dtype)
    a = None if act.alpha is None else dtype(act.alpha)
    b = None if act.beta is None else dtype(act.beta)
    one = dtype(1)
    zero = dtype(0)
    with np.errstate(all="ignore"):
        n = act.name
        if n == "Relu":
            return np.maximum(x, zero)
        if n == "Tanh":
            return libm.tanh(x)
        if n == "Sigmoid":
            return one / (one + libm.exp(-x))
        if n == "Affine":
            return a * x + b
        if n == "LeakyRelu":
            return np.where(x >= zero, x, a * x)
        if n == "ThresholdedRelu":
            return np.where(x >= a, x, zero)
        if n == "ScaledTanh":
            return a * libm.tanh(b * x)
        if n == "HardSigmoid":
            return np.minimum(np.maximum(a * x + b, zero), one)
        if n == "Elu":
            return np.where(x >= zero, x, a * libm.expm1(x))
        if n == "Softsign":
            return x / (one + np.abs(x))
        if n == "Softplus":
            return libm.log1p(libm.exp(x))
    raise ValueError(f"unknown activation {act.name!r}")


def lipschitz(act: Act) -> float:
    """A Lipschitz constant of the activation (ThresholdedRelu: of its continuous pieces)."""
    n, a, b = act.name, act.alpha, act.beta
    return {"Relu": 1.0, "Tanh": 1.0, "Sigmoid": 0.25, "Softsign": 1.0, "Softplus": 1.0, "ThresholdedRelu": 1.0,
            "Affine": abs(a or 0), "LeakyRelu": max(1.0, abs(a or 0)), "ScaledTanh": abs((a or 0) * (b or 0)),
            "HardSigmoid": abs(a or 0), "Elu": max(1.0, abs(a or 0))}[n]


# ----------------------------------------------------------------------------- arithmetics
class Float64:
    """The oracle's arithmetic: float64 numpy.  The interface every arithmetic implements:
    ``lift`` (an exact input array to a value), ``value`` (a value to a float64 array),
    ``affine``, ``mul``, ``add``, ``one_minus``, ``act`` and ``clip`` (values in, a value out;
    arrays broadcast as numpy's)."""

    def lift(self, a):
        """An input array (or None) as a value."""
        return None if a is None else np.asarray(a, dtype=np.float64)

    def value(self, a):
        """The float64 array of a value."""
        return a

    def affine(self, terms, biases, diag=()):
        """``sum x @ M.T + sum biases + sum p * c`` (``terms``: ``(x, M)`` pairs)."""
        v = 0.0
        for x, m in terms:
            v = v + x @ m.T
        for p, c in diag:
            v = v + p * c
        for b in biases:
            v = v + b
        return v

    def mul(self, a, b):
        """Elementwise ``a * b``."""
        return a * b

    def add(self, a, b):
        """Elementwise ``a + b``."""
        return a + b

    def one_minus(self, a):
        """Elementwise ``1 - a``."""
        return 1.0 - a

    def act(self, act: Act, a):
        """The activation ``act`` of ``a``."""
        return act_f64(act, a)

    def clip(self, a, c):
        """``a`` clipped to ``[-c, c]``."""
        return np.clip(a, -c, c)


class Bound:
    """Values ``(v, e)``: the float64 value and a bound on a legitimate kernel's error (module
    docstring, "Tolerance").

    Args:
        t: the element type of the operator's T.
    """

    def __init__(self, t: str):
        self.t = t
        self.p = PRECISION[t]
        self.u = U[self.p]
        self.ut = U[t] if t in ("float16", "bfloat16") else 0.0
        self._f = Float64()

    def _round(self, v, e):
        # the operation's own rounding in P, and for 16-bit types a rounding to T
        return v, e + (self.u + self.ut) * (np.abs(v) + e)

    def lift(self, a):
        return None if a is None else (np.asarray(a, dtype=np.float64), np.zeros(np.shape(a)))

    def value(self, a):
        return a[0]

    def affine(self, terms, biases, diag=()):
        v = 0.0
        e = 0.0
        mag = 0.0
        n = 0
        for (xv, xe), m in terms:
            v = v + xv @ m.T
            e = e + xe @ np.abs(m).T
            mag = mag + (np.abs(xv) + xe) @ np.abs(m).T
            n += m.shape[1]
        for p, (cv, ce) in diag:
            v = v + p * cv
            e = e + np.abs(p) * ce
            mag = mag + np.abs(p) * (np.abs(cv) + ce)
            n += 1
        for b in biases:
            v = v + b
            mag = mag + np.abs(b)
            n += 1
        e = e + gamma(n, self.u) * mag
        return v, e + self.ut * (np.abs(v) + e)

    def mul(self, a, b):
        (av, ae), (bv, be) = a, b
        return self._round(av * bv, np.abs(av) * be + np.abs(bv) * ae + ae * be)

    def add(self, a, b):
        # the rounding counted on |a| + |b|, not |a + b|: a kernel may associate the sums of a
        # gate differently (GRU's x Wh + Wbh + r (.) (h Rh + Rbh) in any order: gamma_2 of the terms)
        v, e = a[0] + b[0], a[1] + b[1]
        mag = np.abs(a[0]) + np.abs(b[0]) + e
        return v, e + self.u * mag + self.ut * (np.abs(v) + e)

    def one_minus(self, a):
        return self._round(1.0 - a[0], a[1])

    def act(self, act: Act, a):
        av, ae = a
        v = act_f64(act, av)
        lip = lipschitz(act)
        e = lip * ae
        if act.name == "ThresholdedRelu":  # the jump where the argument may cross alpha
            e = e + np.where(np.abs(av - act.alpha) <= ae, abs(act.alpha) + ae, 0.0)
        r = sum(tol.budget_rel(f, self.p) for f in _LIB.get(act.name, ())) + _OPS.get(act.name, 0) * self.u
        if r:
            e = e + r * (np.abs(v) + e + max(1.0, abs(act.alpha or 0.0)))
        return v, e + self.ut * (np.abs(v) + e)

    def clip(self, a, c):
        return np.clip(a[0], -c, c), a[1]


class Kernel:
    """A legitimate numpy kernel's arithmetic (tests): operations in ``precision`` (a numpy
    dtype), every result optionally rounded to ``round_to`` (T: the state kept in T),
    ``fused``: the gate pre-activation as one GEMM of ``[x, h, 1, 1]`` against ``[W, R, Wb, Rb]``
    (else x W^T, then h R^T, then the biases, added in the reverse order), ``libm_ulps``: the result
    of every activation that calls a library function (exp, tanh, log, expm1, a division) moved
    that many ulps of ``precision`` away from zero (negative: towards zero)."""

    def __init__(self, precision=np.float32, round_to=None, fused=False, libm_ulps=0.0):
        self.dt = np.dtype(precision).type
        self.rt = round_to
        self.fused = fused
        self.libm = libm_ulps

    def _r(self, v):
        v = np.asarray(v, dtype=self.dt)
        return v.astype(self.rt).astype(self.dt) if self.rt is not None else v

    def lift(self, a):
        return None if a is None else np.asarray(a, dtype=self.dt)

    def value(self, a):
        return np.asarray(a, dtype=np.float64)

    def affine(self, terms, biases, diag=()):
        dt = self.dt
        if self.fused:
            xs = np.concatenate([x for x, _ in terms] + [np.ones((terms[0][0].shape[0], len(biases)), dt)], axis=1)
            ms = np.concatenate([m for _, m in terms] + [np.asarray(b, dt).reshape(-1, 1) for b in biases], axis=1)
            v = (xs @ ms.T).astype(dt)
            for p, c in diag:
                v = (v + p.astype(dt) * c).astype(dt)
            return self._r(v)
        v = None
        for b in reversed(biases):
            v = b.astype(dt) if v is None else (v + b.astype(dt)).astype(dt)
        for p, c in diag:
            v = p.astype(dt) * c if v is None else (v + (p.astype(dt) * c).astype(dt)).astype(dt)
        for x, m in reversed(terms):
            y = (x @ m.astype(dt).T).astype(dt)
            v = y if v is None else (v + y).astype(dt)
        return self._r(v)

    def mul(self, a, b):
        return self._r(a * b)

    def add(self, a, b):
        return self._r(a + b)

    def one_minus(self, a):
        return self._r(self.dt(1) - a)

    def act(self, act: Act, a):
        v = act_f64(act, a, self.dt)
        if self.libm and act.name in _LIB:  # only activations that call a library function
            v = (v * (1 + self.libm * float(np.finfo(self.dt).eps))).astype(self.dt)
        return self._r(v)

    def clip(self, a, c):
        return np.clip(a, self.dt(-c), self.dt(c))


# ----------------------------------------------------------------------------- the recurrence
def num_directions(attrs) -> int:
    """2 for ``bidirectional``, else 1.

    Raises:
        ValueError: a direction the text does not list (GRU-1's schema default ``"foward"`` is
            read as ``"forward"``, the text's word).
    """
    d = attrs.get("direction") or "forward"
    if d == "foward":
        d = "forward"
    if d not in ("forward", "reverse", "bidirectional"):
        raise ValueError(f"unknown direction {d!r}")
    return 2 if d == "bidirectional" else 1


def _step(op, ar, acts, x, h, c, wd, rd, wb, rb, pd, hs, attrs):
    """One time step of one direction for one batch row; returns ``(h, c)`` (``c`` None but LSTM)."""
    clip = _f32(attrs.get("clip"))

    def pre(k, extra=(), use_h=True, with_rb=True):
        sl = slice(k * hs, (k + 1) * hs)
        terms = [(x, wd[sl])] + ([(h, rd[sl])] if use_h else [])
        biases = [] if wb is None else ([wb[sl], rb[sl]] if with_rb else [wb[sl]])
        v = ar.affine(terms, biases, extra)
        return v if clip is None else ar.clip(v, float(clip))

    if op == "RNN":
        return ar.act(acts[0], pre(0)), None
    if op == "GRU":
        f, g = acts
        z = ar.act(f, pre(0))
        r = ar.act(f, pre(1))
        sl = slice(2 * hs, 3 * hs)
        if attrs.get("linear_before_reset", 0):
            lin = ar.affine([(h, rd[sl])], [] if rb is None else [rb[sl]])
            v = ar.affine([(x, wd[sl])], [] if wb is None else [wb[sl]])
            v = ar.add(v, ar.mul(r, lin))
            if clip is not None:
                v = ar.clip(v, float(clip))
        else:
            rh = ar.mul(r, h)
            v = ar.affine([(x, wd[sl]), (rh, rd[sl])], [] if wb is None else [wb[sl], rb[sl]])
            if clip is not None:
                v = ar.clip(v, float(clip))
        hh = ar.act(g, v)
        return ar.add(ar.mul(ar.one_minus(z), hh), ar.mul(z, h)), None
    f, g, hact = acts
    peep = pd is not None
    i = ar.act(f, pre(0, [(pd[0:hs], c)] if peep else []))
    if attrs.get("input_forget", 0):
        fg = ar.one_minus(i)
    else:
        fg = ar.act(f, pre(2, [(pd[2 * hs:3 * hs], c)] if peep else []))
    cc = ar.act(g, pre(3))
    c_new = ar.add(ar.mul(fg, c), ar.mul(i, cc))
    o = ar.act(f, pre(1, [(pd[hs:2 * hs], c_new)] if peep else []))
    carg = c_new if clip is None else ar.clip(c_new, clip)
    return ar.mul(o, ar.act(hact, carg)), c_new


def recurrence(op: str, ar, x, w, r, b=None, sequence_lens=None, initial_h=None, initial_c=None, p=None,
               attrs=None, outputs=("Y", "Y_h", "Y_c")):
    """LSTM, GRU or RNN (module docstring) in the arithmetic ``ar``.

    Args:
        op: ``"LSTM"``, ``"GRU"`` or ``"RNN"``.
        ar: :class:`Float64`, :class:`Bound` or :class:`Kernel`.
        x, w, r, b, sequence_lens, initial_h, initial_c, p: the operator's inputs (``None``
            when absent), float arrays in the case's layout; sequence_lens integers.
        attrs: the node's attributes (defaults filled in or not).
        outputs: the outputs wanted.

    Returns:
        ``{name: value}`` for Y, Y_h (and Y_c for LSTM), in the case's layout; values of ``ar``'s
        kind (``(v, e)`` pairs for :class:`Bound`).  Y is zero (and carries no error) past each
        batch's length.

    Raises:
        ValueError: shapes that disagree with hidden_size or num_directions, an unknown
            direction or activation.
    """
    attrs = dict(attrs or {})
    nd = num_directions(attrs)
    layout = int(attrs.get("layout", 0) or 0)
    x = np.asarray(x, dtype=np.float64)
    if layout:
        x = np.swapaxes(x, 0, 1)
        initial_h = None if initial_h is None else np.swapaxes(np.asarray(initial_h), 0, 1)
        initial_c = None if initial_c is None else np.swapaxes(np.asarray(initial_c), 0, 1)
    seq, batch, _ = x.shape
    ng = len(GATES[op])
    hs = int(attrs["hidden_size"]) if attrs.get("hidden_size") is not None else r.shape[-1]
    if w.shape[0] != nd or w.shape[1] != ng * hs or r.shape != (nd, ng * hs, hs):
        raise ValueError(f"W {w.shape} / R {r.shape} disagree with hidden_size {hs} and {nd} direction(s)")
    acts = resolve_activations(op, attrs, nd)
    lens = [seq] * batch if sequence_lens is None else [int(v) for v in np.asarray(sequence_lens).ravel()]
    reverse_dirs = [attrs.get("direction") == "reverse"] if nd == 1 else [False, True]
    zeros = np.zeros((1, hs))
    ys = [[[None] * batch for _ in range(nd)] for _ in range(seq)]
    yh = [[None] * batch for _ in range(nd)]
    yc = [[None] * batch for _ in range(nd)]
    for d in range(nd):
        wd, rd = np.asarray(w[d], dtype=_dt(ar)), np.asarray(r[d], dtype=_dt(ar))
        wb = None if b is None else np.asarray(b[d][: ng * hs], dtype=_dt(ar))
        rb = None if b is None else np.asarray(b[d][ng * hs:], dtype=_dt(ar))
        pd = None if p is None or op != "LSTM" else np.asarray(p[d], dtype=_dt(ar))
        for bi in range(batch):
            h = ar.lift(zeros if initial_h is None else np.asarray(initial_h[d, bi:bi + 1], dtype=np.float64))
            c = ar.lift(zeros if initial_c is None or op != "LSTM" else
                        np.asarray(initial_c[d, bi:bi + 1], dtype=np.float64))
            steps = range(lens[bi] - 1, -1, -1) if reverse_dirs[d] else range(lens[bi])
            for t in steps:
                h, c = _step(op, ar, acts[d], ar.lift(x[t, bi:bi + 1]), h, c, wd, rd, wb, rb, pd, hs, attrs)
                ys[t][d][bi] = h
            yh[d][bi] = h
            yc[d][bi] = c
    zero = ar.lift(zeros)
    out = {}
    if "Y" in outputs:
        out["Y"] = _stack(ar, [[[ys[t][d][bi] if ys[t][d][bi] is not None else zero for bi in range(batch)]
                                for d in range(nd)] for t in range(seq)], (seq, nd, batch, hs),
                          (2, 0, 1, 3) if layout else None)
    if "Y_h" in outputs:
        out["Y_h"] = _stack(ar, yh, (nd, batch, hs), (1, 0, 2) if layout else None)
    if "Y_c" in outputs and op == "LSTM":
        out["Y_c"] = _stack(ar, yc, (nd, batch, hs), (1, 0, 2) if layout else None)
    return out


def _dt(ar):
    return ar.dt if isinstance(ar, Kernel) else np.float64


def _stack(ar, nested, shape, perm):
    def flat(n):
        return [v for sub in n for v in (flat(sub) if isinstance(sub, list) else [sub])]

    vals = flat(nested)
    if not vals:  # an empty batch (or hidden size): nothing computed
        z = np.zeros(shape, dtype=_dt(ar))
        z = z if perm is None else np.transpose(z, perm)
        return (z, np.zeros(z.shape)) if isinstance(ar, Bound) else z
    if isinstance(ar, Bound):
        v = np.concatenate([a[0] for a in vals], axis=0).reshape(shape)
        e = np.concatenate([np.broadcast_to(a[1], a[0].shape) for a in vals], axis=0).reshape(shape)
        return (v, e) if perm is None else (np.transpose(v, perm), np.transpose(e, perm))
    v = np.concatenate([np.asarray(a) for a in vals], axis=0).reshape(shape)
    return v if perm is None else np.transpose(v, perm)


def oracle(op: str, inputs, attrs, outputs=("Y", "Y_h", "Y_c")):
    """The float64 oracle: ``{name: float64 array}`` (:func:`recurrence` with :class:`Float64`)."""
    return recurrence(op, Float64(), *inputs, attrs=attrs, outputs=outputs)


def bounds(op: str, t: str, inputs, attrs, outputs=("Y", "Y_h", "Y_c")):
    """``{name: (float64 value, per-element error bound)}`` of a legitimate kernel for element
    type ``t`` (:class:`Bound`)."""
    return recurrence(op, Bound(t), *inputs, attrs=attrs, outputs=outputs)


def tolerance_of(t: str, v: np.ndarray, e: np.ndarray) -> tol.Tolerance:
    """The tolerance of one output: the largest bound (twice for ``double``: the float64 oracle
    is itself one such kernel), then the rounding to T on both sides
    (:func:`conformance.reference.linalg.final_tolerance`)."""
    from .linalg import final_tolerance

    bmax = float(np.max(e)) if np.size(e) else 0.0  # an empty output: nothing to compare
    if t == "double":
        bmax *= 2
    import ml_dtypes as _m

    fi = _m.finfo(NP[t])
    atol, rtol = final_tolerance(bmax, float(fi.eps) / 2, float(fi.smallest_subnormal))
    return tol.Tolerance(atol, rtol, variants=("running-error-bound",))


def kernel(op: str, inputs, attrs, outputs, t: str, **kw):
    """A legitimate kernel (:class:`Kernel`) for element type ``t``: float32 for the 16-bit types
    and float, float64 for double; results cast to T."""
    prec = np.float64 if t == "double" else np.float32
    out = recurrence(op, Kernel(prec, **kw), *inputs, attrs=attrs, outputs=outputs)
    return {k: np.asarray(v).astype(NP[t]) for k, v in out.items()}


__all__ = ["recurrence", "oracle", "bounds", "tolerance_of", "kernel", "Float64", "Bound", "Kernel", "Act",
           "resolve_activations", "act_f64", "lipschitz", "num_directions", "GATES", "DEFAULT_ACTS", "ACTIVATIONS"]
