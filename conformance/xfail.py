"""Expected-failure lists: per-backend declarations of known failures, with a reason each.

File format (TOML)::

    # expected failures of onnxruntime 1.31 on the CPU provider
    [[expected_failure]]
    id = "BatchNormalization-*/float16/train/*"    # fnmatch pattern over case ids (default "*")
    reason = "writes running statistics back into the input_mean/input_var initializers"
    backends = ["onnxruntime"]                      # optional: only for these backend names
    tags = { ambiguous = "saved_var" }             # optional: every tag given must equal the case's

A case that matches an entry (for the running backend) and ends in ``fail``,
``error``, ``crash`` or ``timeout`` becomes ``xfail``; one that passes becomes
``xpass`` (reported: the entry may be stale or the runtime fixed).  ``unsupported``
and ``skip`` are left alone.  Entries that match no case of the run are returned so
the caller can warn about them (like array-api-tests' stale expected failures).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from .runner import CaseResult

FAILING = ("fail", "error", "crash", "timeout")


class ExpectedFailureError(Exception):
    """An expected-failure file is missing or malformed."""


@dataclass
class ExpectedFailure:
    """One entry of an expected-failure file."""

    id: str = "*"
    reason: str = ""
    backends: list[str] = field(default_factory=list)
    tags: dict = field(default_factory=dict)
    source: str = ""

    def matches(self, result: CaseResult, backend: str) -> bool:
        if self.backends and backend not in self.backends:
            return False
        if not fnmatch.fnmatchcase(result.id, self.id):
            return False
        return all(str(result.tags.get(k)) == str(v) for k, v in self.tags.items())


def load_expected_failures(path: str | os.PathLike) -> list[ExpectedFailure]:
    """Read an expected-failure TOML file (see module docstring).

    Raises:
        ExpectedFailureError: missing file, invalid TOML, an entry without a reason,
            or a field of the wrong type.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExpectedFailureError(f"{path}: no such file") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ExpectedFailureError(f"{path}: not valid TOML: {exc}") from exc
    unknown = set(data) - {"expected_failure"}
    if unknown:
        raise ExpectedFailureError(f"{path}: unknown table(s) {sorted(unknown)}; expected [[expected_failure]] entries")
    entries = []
    for n, e in enumerate(data.get("expected_failure", []), 1):
        where = f"{path}: entry {n}"
        if not isinstance(e, dict):
            raise ExpectedFailureError(f"{where}: not a table")
        bad = set(e) - {"id", "reason", "backends", "tags"}
        if bad:
            raise ExpectedFailureError(f"{where}: unknown field(s) {sorted(bad)}")
        if not isinstance(e.get("reason"), str) or not e["reason"].strip():
            raise ExpectedFailureError(f"{where}: every expected failure needs a non-empty reason")
        if not isinstance(e.get("id", "*"), str):
            raise ExpectedFailureError(f"{where}: id must be a string pattern")
        backends = e.get("backends", [])
        if isinstance(backends, str):
            backends = [backends]
        if not isinstance(backends, list) or not all(isinstance(b, str) for b in backends):
            raise ExpectedFailureError(f"{where}: backends must be a list of names")
        if not isinstance(e.get("tags", {}), dict):
            raise ExpectedFailureError(f"{where}: tags must be a table")
        entries.append(ExpectedFailure(e.get("id", "*"), e["reason"].strip(), backends, dict(e.get("tags", {})),
                                       f"{path.name}#{n}"))
    return entries


def apply_expected_failures(results: list[CaseResult], entries: list[ExpectedFailure],
                            backend: str) -> list[ExpectedFailure]:
    """Turn matching failures into ``xfail`` and matching passes into ``xpass``, in place.

    Args:
        results: the run's results.
        entries: the expected failures.
        backend: the backend's name (``Backend.name``), matched against ``backends``.

    Returns:
        the entries (for this backend) that matched no case: stale or mistyped.
    """
    used = [False] * len(entries)
    for r in results:
        for k, e in enumerate(entries):
            if not e.matches(r, backend):
                continue
            used[k] = True
            if r.outcome in FAILING:
                r.message = f"expected failure ({e.reason}) [{e.source}]: was {r.outcome}: {r.message}"
                r.outcome = "xfail"
            elif r.outcome == "pass":
                r.message = f"passed, but declared an expected failure ({e.reason}) [{e.source}]"
                r.outcome = "xpass"
            break
    return [e for k, e in enumerate(entries) if not used[k] and (not e.backends or backend in e.backends)]
