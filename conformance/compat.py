"""The supported range of the libraries onnx-conformance builds on, and checks of it.

The floors are pyproject.toml's lower bounds for onnx, onnxruntime, numpy, ml_dtypes and pillow (read
from the checkout's ``pyproject.toml`` when the package runs from one, else from the installed
distribution's metadata: one source).  docs/compat.md says how they were measured: the oldest releases with which
``pip install``, ``generate``, ``run`` and ``run --suite onnx-node`` work.  Below them:

* onnx < 1.19 has no ``TensorProto.FLOAT8E8M0`` (``conformance.dtypes`` knows every element
  type onnx defines; importing it fails with ``AttributeError: FLOAT8E8M0``);
* ml_dtypes < 0.5 has no ``float4_e2m1fn`` / ``float8_e8m0fnu`` / ``int2``;
* onnxruntime < 1.15 has no wheel for the Python versions the project supports;
* pillow < 10 is untested (ImageDecoder's encoders; 10.0.0 cannot write 16-bit PGM, so the
  project writes Netpbm itself; BMP, PNG and JPEG 2000 bytes differ between 10.0 and 13.0).

One incompatibility is not a floor, so pip cannot see it: onnxruntime wheels before
:data:`ORT_NUMPY2` were built against numpy 1 and do not import under numpy 2 ("A module that
was compiled using NumPy 1.x cannot be run in NumPy 2..." / "_ARRAY_API not found").
:func:`problems` reports it with the command that fixes it.

:func:`check_versions` raises :class:`VersionError` naming each installed release that is out
of range; :func:`version_refusal_passes` is the compatibility job's check (``.ci/compat``):
the error cases of a results document that score ``pass`` on a message that only says the
model's IR version or opset is too new for the runtime (the ``version`` refusals of
:data:`conformance.backends.base.REFUSALS`), which must be none.

Command line (``python -m conformance.compat``):

* ``check``: exit 1 with the problems if the installed releases are out of range;
* ``pins [PYPROJECT]``: print ``name==floor`` for onnx, onnxruntime, numpy, ml_dtypes, pillow (the
  oldest supported set, as pip constraints);
* ``no-version-pass RESULTS.json...``: exit 1 listing the error cases that pass on a version
  refusal, else print the outcome counts of each results file.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import sys
from pathlib import Path

#: The distribution whose requirements hold the floors.
DIST = "onnx-conformance"
#: The libraries whose floors are measured and checked.
CHECKED = ("onnx", "onnxruntime", "numpy", "ml_dtypes", "pillow")
#: The first onnxruntime release whose wheels import under numpy 2 (1.19.0, built on numpy 2.0).
ORT_NUMPY2 = "1.19"


class VersionError(RuntimeError):
    """An installed library's release is outside the supported range (the message names it)."""


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _release(version: str) -> tuple[int, ...]:
    """The numeric release of a version string (``"1.24.2"`` -> (1, 24, 2); ``"2.0.0rc1"`` -> (2, 0, 0))."""
    out = []
    for part in version.split("."):
        m = re.match(r"\d+", part)
        if not m:
            break
        out.append(int(m.group(0)))
        if m.end() != len(part):
            break
    return tuple(out)


def _floor_of(requirement: str) -> tuple[str, str] | None:
    """``(canonical name, floor)`` of a requirement string with a ``>=`` bound, else ``None``."""
    req = requirement.split(";", 1)[0].strip()
    m = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)$", req)
    if not m:
        return None
    lo = re.search(r">=\s*([0-9][0-9A-Za-z.]*)", m.group(2))
    return (_canon(m.group(1)), lo.group(1)) if lo else None


def _source_pyproject() -> Path | None:
    """``pyproject.toml`` beside the ``conformance`` package when it is onnx-conformance's own."""
    path = Path(__file__).resolve().parents[1] / "pyproject.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    return path if re.search(r'^name\s*=\s*"onnx-conformance"', text, re.MULTILINE) else None


def floors(requirements: list[str] | None = None, pyproject: str | Path | None = None) -> dict[str, str]:
    """The lower bounds of :data:`CHECKED`: ``{"onnx": "1.19", ...}``.

    Args:
        requirements: requirement strings (default: the ``pyproject.toml`` of the source checkout
            the package runs from, if it does (an editable install: metadata written at install
            time, or a stale ``*.egg-info`` in the checkout, may lag behind it), else the
            installed distribution's ``Requires-Dist``).
        pyproject: read ``[project].dependencies`` of this ``pyproject.toml`` instead.

    Returns:
        canonical name (``ml_dtypes``) -> floor; empty when the distribution is not installed.
    """
    if pyproject is not None:
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib
        requirements = tomllib.loads(Path(pyproject).read_text(encoding="utf-8"))["project"]["dependencies"]
    elif requirements is None:
        source = _source_pyproject()
        if source is not None:
            return floors(pyproject=source)
        try:
            requirements = importlib.metadata.requires(DIST) or []
        except importlib.metadata.PackageNotFoundError:
            requirements = []
    out = {}
    for r in requirements:
        if "extra ==" in r:
            continue
        found = _floor_of(r)
        if found and found[0] in CHECKED:
            out[found[0]] = found[1]
    return out


def installed_versions(names=CHECKED) -> dict[str, str | None]:
    """Installed release of each name (``None`` when it is not installed), read from the
    package metadata without importing the package (an onnxruntime that fails to import
    under numpy 2 still has a version)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def problems(installed: dict[str, str | None] | None = None, floor: dict[str, str] | None = None) -> list[str]:
    """What is wrong with the installed releases, one sentence each (empty when nothing is).

    Args:
        installed: name -> installed release (default :func:`installed_versions`).
        floor: name -> lower bound (default :func:`floors` of the installed distribution).
    """
    installed = installed_versions() if installed is None else installed
    floor = floors() if floor is None else floor
    out = []
    for name in CHECKED:
        have, need = installed.get(name), floor.get(name)
        if have is not None and need is not None and _release(have) < _release(need):
            out.append(f"{name} {have} is older than the oldest supported release, {name} {need} "
                       f"(pip install '{name}>={need}'; docs/compat.md)")
    ort, numpy = installed.get("onnxruntime"), installed.get("numpy")
    if ort is not None and numpy is not None and _release(ort) < _release(ORT_NUMPY2) and _release(numpy) >= (2,):
        out.append(f"onnxruntime {ort} was built against numpy 1 and does not import under numpy {numpy} "
                   f"(pip install 'numpy<2', or onnxruntime>={ORT_NUMPY2}; docs/compat.md)")
    return out


def check_versions(installed: dict[str, str | None] | None = None, floor: dict[str, str] | None = None) -> None:
    """Raise if an installed library is outside the supported range.

    Raises:
        VersionError: the message lists every :func:`problems` item.
    """
    found = problems(installed, floor)
    if found:
        raise VersionError("unsupported library release(s): " + "; ".join(found))


def version_refusal_passes(doc: dict) -> list[dict]:
    """The error cases of results document ``doc`` that score ``pass`` on a message stating a
    ``version`` refusal of the document's backend (:func:`conformance.backends.base.match_refusal`):
    an invalid model "rejected" only because the runtime is too old for its IR version or opset.

    Returns:
        the offending case records (empty when the scoring is honest).
    """
    from .backends.base import match_refusal

    backend = str((doc.get("backend") or {}).get("backend") or "*")
    out = []
    for c in doc.get("cases") or []:
        if c.get("expect_error") and c.get("outcome") == "pass":
            found = match_refusal(backend, str(c.get("message") or ""))
            if found is not None and found.kind == "version":
                out.append(c)
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m conformance.compat check | pins [PYPROJECT] | no-version-pass RESULTS...``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = argv.pop(0) if argv else ""
    if cmd == "check":
        found = problems()
        for p in found:
            print(f"error: {p}", file=sys.stderr)
        if not found:
            print("supported: " + ", ".join(f"{k} {v}" for k, v in installed_versions().items()))
        return 1 if found else 0
    if cmd == "pins":
        fl = floors(pyproject=argv[0]) if argv else floors()
        missing = [n for n in CHECKED if n not in fl]
        if missing:
            print(f"error: no lower bound for {', '.join(missing)}", file=sys.stderr)
            return 1
        print("\n".join(f"{n}=={fl[n]}" for n in CHECKED))
        return 0
    if cmd == "no-version-pass" and argv:
        bad = 0
        for path in argv:
            doc = json.loads(Path(path).read_text(encoding="utf-8"))
            env = doc.get("backend") or {}
            errors = [c for c in doc.get("cases") or [] if c.get("expect_error")]
            counts: dict[str, int] = {}
            for c in errors:
                counts[c["outcome"]] = counts.get(c["outcome"], 0) + 1
            offending = version_refusal_passes(doc)
            bad += len(offending)
            print(f"{path}: {env.get('backend')} {env.get(str(env.get('backend')), '')} (onnx {env.get('onnx', '?')}): "
                  f"summary {doc.get('summary')}; error cases {counts}; passing on a version refusal: {len(offending)}")
            for c in offending[:20]:
                print(f"  {c['id']}: {str(c.get('message'))[:300]}")
        return 1 if bad else 0
    print(main.__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
