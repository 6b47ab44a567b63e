"""Profiles: what a runtime claims, and a verdict of its results against the claim.

A conformance program that vendors trust separates what an implementation *claims* from
whether it does it right (Khronos' conformance test suites: required and optional features, a
pass/fail verdict per claim).  A :class:`Profile` is such a claim: the domains, operators,
opsets, element types and optional features a runtime says it implements.  :func:`judge` scores
a run against it:

* a case outside the claim is **not claimed**: neither pass nor fail, whatever its outcome;
* inside the claim every case must pass.  ``unsupported`` is then a finding (*claimed but
  refused*), as are ``fail``, ``error``, ``crash`` and ``timeout``; ``xfail`` is a *waived*
  case, listed with its reason (an expected-failure entry always has one) so that a verdict
  never hides a waiver; ``skip`` (the suite cannot run or compare the case) and the refusal of
  a *contested* model (one onnx's own checker rejects: ``unsupported`` with a message starting
  "contested model") are not held against the runtime;
* the runtime is **conformant** to the profile when no claimed case has a finding.

A profile comes from a TOML file (:func:`load_profile`; the project's own are in
``conformance/profiles/``, listed by :func:`shipped_profiles`)::

    [profile]
    name = "float32-opset21"            # required; letters, digits, '.', '_', '-'
    version = "1"                       # the profile's own version (a claim changes: say so)
    title = "..."                       # one line
    description = "..."                 # what the claim is for
    extends = "other-profile"           # optional: a shipped profile, or a path relative to this file
    domains = [""]                      # "" is ai.onnx; "com.microsoft", "ai.onnx.ml"
    operators = ["*"]                   # "*" or names (in any of the domains); replaces the base's
    exclude_operators = []              # names taken out of the claim (added to the base's)
    opsets = [7, 21]                    # the model's opset import of the operator's domain, inclusive
    types = ["float", "int64"]          # every type parameter a case binds must be one of these
    features = []                       # optional features: see FEATURES

A profile that ``extends`` another starts from it; ``types`` and ``features`` are added to the
base's, ``operators``, ``domains`` and ``opsets`` replace it when given.

A claim can also be read from the runtime itself (:func:`onnxruntime_claim`): onnxruntime's
kernel registry lists, per execution provider, each kernel's operator, domain, version range
and type constraints.  A case is then claimed when a registered kernel covers its operator
version and every type parameter the kernel constrains, so a case inside a registered kernel
that the runtime refuses is reported as claimed but refused, not as ``unsupported``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

#: The format of a profile's JSON record (results.json ``verdict.profile``).
PROFILE_FORMAT = "onnx-conformance-profile/1"
#: Outcomes that are findings inside a claim.
FINDINGS = ("fail", "error", "crash", "timeout", "unsupported")
#: How many case ids a finding lists (its count is always whole).
SHOW_IDS = 5


def _training(analysis: dict, tags: dict) -> bool:
    return str(tags.get("training_mode")) in ("1", "True", "true")


def _typed(prefix: str):
    return lambda analysis, tags: any(str(t).startswith(prefix) for t in (analysis.get("combo") or {}).values())


#: Optional features a case may need, with what a case needs each for.  A case that needs a
#: feature its profile does not list is not claimed.
FEATURES: dict[str, tuple[str, Any]] = {
    "training": ("training mode (training_mode = 1: Dropout, BatchNormalization)", _training),
    "sequences": ("sequence-typed inputs or outputs", _typed("seq(")),
    "optionals": ("optional-typed inputs or outputs", _typed("optional(")),
}


class ProfileError(Exception):
    """A profile cannot be found or is malformed (names the file and the field)."""


def _short(t: str) -> str:
    """``tensor(float)`` -> ``float``; ``seq(tensor(int64))`` -> ``int64`` (the element type)."""
    while "(" in t:
        t = t[t.index("(") + 1:t.rindex(")")]
    return t


@dataclass(frozen=True)
class Profile:
    """A claim (see the module docstring).

    Attributes:
        name, version, title, description: what the claim is called and is for.
        domains: the claimed domains (``""`` is ai.onnx).
        operators: claimed operator names, or ``None`` for every operator of the domains.
        exclude_operators: names taken out of the claim.
        opsets: ``(first, last)`` opset of the operator's domain a claimed model may import,
            inclusive, or ``None`` for any.
        types: element types (``float``, ``int64``...) every bound type parameter must have,
            or ``None`` for any.
        features: optional features claimed (keys of :data:`FEATURES`).
        kernels: for a claim read from a runtime (:func:`onnxruntime_claim`):
            ``{(domain, op): [(first version, last version, {param: [types]})]}``; ``None`` for
            a profile file.
        source: where the claim was read from (a file, or the runtime and its provider).
    """

    name: str
    version: str = "1"
    title: str = ""
    description: str = ""
    domains: tuple[str, ...] = ("",)
    operators: tuple[str, ...] | None = None
    exclude_operators: tuple[str, ...] = ()
    opsets: tuple[int, int] | None = None
    types: tuple[str, ...] | None = None
    features: tuple[str, ...] = ()
    kernels: dict | None = field(default=None, compare=False)
    source: str = ""

    def excludes(self, analysis: Mapping, tags: Mapping) -> str | None:
        """Why the case whose model ``analysis`` describes (:func:`conformance.analysis.analyse_case`)
        is outside this claim, or ``None`` when it is claimed."""
        op, domain = analysis.get("op"), analysis.get("domain") or ""
        combo = {p: _short(str(t)) for p, t in (analysis.get("combo") or {}).items()}
        for feature, (_, needs) in FEATURES.items():
            if feature not in self.features and needs(analysis, tags):
                return f"feature {feature} not claimed"
        if self.kernels is not None:
            return self._kernel_excludes(op, domain, int(analysis.get("version") or 0), combo)
        if domain not in self.domains:
            return f"domain {domain or 'ai.onnx'} not claimed"
        if (self.operators is not None and op not in self.operators) or op in self.exclude_operators:
            return "operator not claimed"
        opset = analysis.get("opset")
        if self.opsets is not None and opset is not None and not self.opsets[0] <= int(opset) <= self.opsets[1]:
            return f"opset {opset} not claimed"
        if self.types is not None:
            off = sorted({t for t in combo.values() if t not in self.types and t != "*"})
            if off:
                return f"type {', '.join(off)} not claimed"
        return None

    def _kernel_excludes(self, op: str, domain: str, version: int, combo: dict[str, str]) -> str | None:
        kernels = self.kernels.get((domain, op))
        if not kernels:
            return "no kernel registered"
        ranges = [k for k in kernels if k[0] <= version <= k[1]]
        if not ranges:
            return f"no kernel registered for version {version}"
        for _, _, constraints in ranges:
            if all(t in constraints[p] for p, t in combo.items() if p in constraints and t != "*"):
                return None
        return "no kernel registered for " + ", ".join(f"{p}={t}" for p, t in sorted(combo.items()))

    def to_json(self) -> dict:
        """The claim as JSON (results.json ``verdict.profile``): enough to judge again."""
        d = {"format": PROFILE_FORMAT, "name": self.name, "version": self.version, "title": self.title,
             "description": self.description, "source": self.source, "domains": list(self.domains),
             "operators": None if self.operators is None else list(self.operators),
             "exclude_operators": list(self.exclude_operators),
             "opsets": None if self.opsets is None else list(self.opsets),
             "types": None if self.types is None else list(self.types), "features": list(self.features)}
        if self.kernels is not None:
            d["kernels"] = [[dom, op, lo, hi, {p: list(ts) for p, ts in sorted(c.items())}]
                            for (dom, op), ks in sorted(self.kernels.items()) for lo, hi, c in ks]
        return d

    @classmethod
    def from_json(cls, d: Mapping) -> Profile:
        """Read :meth:`to_json`'s record.

        Raises:
            ProfileError: not a profile record.
        """
        if not isinstance(d, Mapping) or d.get("format") != PROFILE_FORMAT:
            raise ProfileError(f"not a profile record (format {PROFILE_FORMAT!r} expected)")
        kernels = None
        if d.get("kernels") is not None:
            kernels = defaultdict(list)
            for dom, op, lo, hi, c in d["kernels"]:
                kernels[(dom, op)].append((int(lo), int(hi), {p: frozenset(ts) for p, ts in c.items()}))
            kernels = dict(kernels)
        ops = d.get("operators")
        return cls(name=str(d["name"]), version=str(d.get("version", "")), title=str(d.get("title", "")),
                   description=str(d.get("description", "")), domains=tuple(d.get("domains") or ("",)),
                   operators=None if ops is None else tuple(ops),
                   exclude_operators=tuple(d.get("exclude_operators") or ()),
                   opsets=None if d.get("opsets") is None else (int(d["opsets"][0]), int(d["opsets"][1])),
                   types=None if d.get("types") is None else tuple(d["types"]),
                   features=tuple(d.get("features") or ()), kernels=kernels, source=str(d.get("source", "")))


# --------------------------------------------------------------------------- reading profiles

_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_FIELDS = {"name", "version", "title", "description", "extends", "domains", "operators", "exclude_operators",
           "opsets", "types", "features"}


def shipped_profiles() -> dict[str, str]:
    """``{name: title}`` of the profiles this project ships (``conformance/profiles/*.toml``)."""
    out = {}
    for f in sorted(resources.files("conformance.profiles").iterdir(), key=lambda p: p.name):
        if f.name.endswith(".toml"):
            out[f.name[:-5]] = str(tomllib.loads(f.read_text(encoding="utf-8")).get("profile", {}).get("title", ""))
    return out


def load_profile(spec: str, *, _seen: tuple[str, ...] = ()) -> Profile:
    """The profile ``spec`` names: a shipped profile's name (:func:`shipped_profiles`), a TOML
    file's path, or ``onnxruntime`` / ``onnxruntime:PROVIDER`` for the claim read from
    onnxruntime's kernel registry (:func:`onnxruntime_claim`).

    Raises:
        ProfileError: no such profile or file, invalid TOML, an unknown field, feature,
            operator or element type, a malformed value, or a cycle of ``extends``.
    """
    if spec == "onnxruntime" or spec.startswith("onnxruntime:"):
        return onnxruntime_claim(spec.partition(":")[2] or "CPUExecutionProvider")
    path = Path(spec)
    if path.suffix != ".toml" and _NAME.match(spec) and "/" not in spec:
        res = resources.files("conformance.profiles") / f"{spec}.toml"
        if not res.is_file():
            raise ProfileError(f"unknown profile {spec!r}; shipped profiles: {', '.join(shipped_profiles())} "
                               "(or give a TOML file's path, or 'onnxruntime[:PROVIDER]')")
        text, where, base_dir = res.read_text(encoding="utf-8"), f"profile {spec}", None
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ProfileError(f"{path}: no such file") from None
        except OSError as exc:
            raise ProfileError(f"{path}: {exc.strerror or exc}") from None
        where, base_dir = str(path), path.parent
    if where in _seen:
        raise ProfileError(f"profiles extend each other in a cycle: {' -> '.join((*_seen, where))}")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{where}: not valid TOML: {exc}") from None
    if set(data) != {"profile"} or not isinstance(data["profile"], dict):
        raise ProfileError(f"{where}: a profile file holds one [profile] table")
    p = data["profile"]
    bad = sorted(set(p) - _FIELDS)
    if bad:
        raise ProfileError(f"{where}: unknown field(s) {bad}; fields: {sorted(_FIELDS)}")
    base = None
    if "extends" in p:
        ext = _str(p, "extends", where)
        if base_dir is not None and (ext.endswith(".toml") or "/" in ext):
            ext = str(base_dir / ext)  # a file beside this one; else a shipped profile's name
        base = load_profile(ext, _seen=(*_seen, where))
    name = _str(p, "name", where)
    if not _NAME.match(name):
        raise ProfileError(f"{where}: name {name!r} must be letters, digits, '.', '_' or '-'")
    prof = Profile(name=name, source=where) if base is None else replace(base, name=name, source=where)
    prof = replace(prof, version=_str(p, "version", where, "1"), title=_str(p, "title", where, ""),
                   description=_str(p, "description", where, ""))
    if "domains" in p:
        prof = replace(prof, domains=tuple("" if d == "ai.onnx" else d for d in _strs(p, "domains", where)))
    if "operators" in p:
        ops = _strs(p, "operators", where)
        prof = replace(prof, operators=None if ops == ["*"] else tuple(ops))
    if "exclude_operators" in p:
        prof = replace(prof, exclude_operators=tuple(sorted({*prof.exclude_operators,
                                                             *_strs(p, "exclude_operators", where)})))
    if "opsets" in p:
        o = p["opsets"]
        if not (isinstance(o, list) and len(o) == 2 and all(isinstance(x, int) for x in o) and 1 <= o[0] <= o[1]):
            raise ProfileError(f"{where}: opsets must be [first, last], integers with 1 <= first <= last")
        prof = replace(prof, opsets=(o[0], o[1]))
    if "types" in p:
        prof = replace(prof, types=tuple(sorted({*(prof.types or ()), *_strs(p, "types", where)})))
    if "features" in p:
        feats = _strs(p, "features", where)
        unknown = sorted(set(feats) - set(FEATURES))
        if unknown:
            raise ProfileError(f"{where}: unknown feature(s) {unknown}; features: {sorted(FEATURES)}")
        prof = replace(prof, features=tuple(sorted({*prof.features, *feats})))
    _validate(prof, where)
    return prof


def _str(p: dict, key: str, where: str, default: str | None = None) -> str:
    if key not in p:
        if default is None:
            raise ProfileError(f"{where}: missing field {key!r}")
        return default
    if not isinstance(p[key], str):
        raise ProfileError(f"{where}: {key} must be a string")
    return p[key]


def _strs(p: dict, key: str, where: str) -> list[str]:
    v = p[key]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ProfileError(f"{where}: {key} must be a list of strings")
    return v


def _validate(prof: Profile, where: str) -> None:
    """Every operator named exists in a claimed domain; every type is an ONNX element type."""
    from onnx import TensorProto

    from .opspec import op_spec

    known_types = {n.lower() for n in TensorProto.DataType.keys() if n != "UNDEFINED"}
    bad = sorted(t for t in prof.types or () if t not in known_types)
    if bad:
        raise ProfileError(f"{where}: unknown element type(s) {bad} (ONNX's names in lower case: float, "
                           "float16, int64, ...)")
    for op in (*(prof.operators or ()), *prof.exclude_operators):
        for d in prof.domains:
            try:
                op_spec(op, d)
                break
            except KeyError:
                continue
        else:
            raise ProfileError(f"{where}: unknown operator {op!r} in the domains "
                               f"{', '.join(d or 'ai.onnx' for d in prof.domains)}")


def onnxruntime_claim(provider: str = "CPUExecutionProvider") -> Profile:
    """The claim onnxruntime makes for one execution provider: its registered kernels
    (``onnxruntime.capi.onnxruntime_pybind11_state.get_all_opkernel_def``: operator, domain,
    version range and type constraints of each kernel).

    Raises:
        ProfileError: onnxruntime is not installed, does not expose its kernel registry, or
            registers no kernel for ``provider``.
    """
    try:
        import onnxruntime
        from onnxruntime.capi import onnxruntime_pybind11_state as C
    except ImportError as exc:
        raise ProfileError(f"onnxruntime is not installed: {exc}") from None
    if not hasattr(C, "get_all_opkernel_def"):
        raise ProfileError(f"onnxruntime {onnxruntime.__version__} does not expose its kernel registry "
                           "(get_all_opkernel_def)")
    kernels: dict = defaultdict(list)
    providers = Counter()
    for k in C.get_all_opkernel_def():
        providers[k.provider] += 1
        if k.provider != provider:
            continue
        dom = "" if k.domain in ("", "ai.onnx") else k.domain
        lo, hi = k.version_range
        kernels[(dom, k.op_name)].append((int(lo), int(hi), {p: frozenset(_short(t) for t in ts)
                                                             for p, ts in k.type_constraints.items()}))
    if not kernels:
        raise ProfileError(f"onnxruntime {onnxruntime.__version__} registers no kernel for {provider!r}; "
                           f"providers with kernels: {', '.join(sorted(providers)) or 'none'}")
    return Profile(name=f"onnxruntime-{onnxruntime.__version__}-{provider}", version=onnxruntime.__version__,
                   title=f"what onnxruntime {onnxruntime.__version__} registers for {provider}",
                   description="Derived from the runtime's kernel registry: a case is claimed when a registered "
                               "kernel covers its operator version and the types it constrains.",
                   domains=tuple(sorted({d for d, _ in kernels})), kernels=dict(kernels),
                   features=tuple(FEATURES), source=f"onnxruntime {onnxruntime.__version__} kernel registry")


# --------------------------------------------------------------------------- the verdict


def judge(records: Iterable[Mapping], analyses: Mapping[str, Mapping], profile: Profile) -> dict:
    """The verdict of a run's case records against ``profile`` (see the module docstring).

    Args:
        records: results.json case records (``id``, ``op``, ``domain``, ``since_version``,
            ``tags``, ``outcome``, ``message``).
        analyses: case id -> :func:`conformance.analysis.analyse_case` of its model; a case
            without one is not claimed (``no analysis``).
        profile: the claim.

    Returns:
        ``{"profile", "conformant", "claimed", "not_claimed", "not_claimed_reasons", "outcomes",
        "findings", "waived"}``: ``findings`` are grouped by operator, version, types and
        kind (``claimed but refused`` or the outcome), each with its count, outcomes and first
        case ids; ``waived`` lists every claimed ``xfail`` with its reason.
    """
    claimed, outcomes, reasons = 0, Counter(), Counter()
    groups: dict = {}
    waived = []
    for r in records:
        a = analyses.get(r["id"])
        why = "no analysis of the case's model" if a is None else profile.excludes(a, r.get("tags") or {})
        if why is not None:
            reasons[why] += 1
            continue
        claimed += 1
        o = r.get("outcome")
        outcomes[o] += 1
        if o == "xfail":
            waived.append({"id": r["id"], "reason": str(r.get("message") or "")})
            continue
        if o not in FINDINGS or (o == "unsupported" and str(r.get("message") or "").startswith("contested model")):
            continue
        types = ", ".join(f"{p}={_short(str(t))}" for p, t in sorted((a.get("combo") or {}).items()))
        kind = "claimed but refused" if o == "unsupported" else ("invalid model accepted" if r.get("expect_error")
                                                                 and o == "fail" else o)
        key = (r.get("domain") or "", r["op"], int(r.get("since_version") or 0), types, kind)
        g = groups.setdefault(key, {"domain": key[0], "op": key[1], "since_version": key[2], "types": types,
                                    "kind": kind, "cases": 0, "ids": []})
        g["cases"] += 1
        if len(g["ids"]) < SHOW_IDS:
            g["ids"].append(r["id"])
    findings = [groups[k] for k in sorted(groups)]
    return {
        "profile": profile.to_json(),
        "conformant": claimed > 0 and not findings,
        "claimed": claimed,
        "not_claimed": sum(reasons.values()),
        "not_claimed_reasons": dict(reasons.most_common(20)),
        "outcomes": dict(sorted(outcomes.items())),
        "findings": findings,
        "waived": waived,
    }


def verdict_line(v: Mapping) -> str:
    """One line for a terminal or CI log: the profile, the verdict and its counts."""
    p = v["profile"]
    what = "CONFORMANT" if v["conformant"] else ("NOT CONFORMANT" if v["claimed"] else "NO CLAIMED CASE")
    n_find = sum(f["cases"] for f in v["findings"])
    return (f"profile {p['name']} (version {p['version']}): {what}: {v['claimed']} claimed case(s), "
            f"{n_find} with findings in {len(v['findings'])} claim(s), {len(v['waived'])} waived, "
            f"{v['not_claimed']} not claimed")
