"""Errors and argument parsing shared by the command line and the library, free of the CLI.

:class:`UsageError` is the exception for bad input from the user (the command line prints
it without a traceback and exits with status 2); :func:`parse_ops` reads an ``--ops`` list.
Library modules raise and use these; :mod:`conformance.cli` imports them, never the reverse.
"""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: printed without a traceback, exit status 2."""


def parse_ops(text: str | None) -> list[str]:
    """The operators a comma-separated ``--ops`` value names (``all``: every generated operator).

    Args:
        text: e.g. ``"LayerNormalization, BatchNormalization"`` or ``"all"``.

    Returns:
        The operator names in the given order (blanks dropped), or all of
        :func:`conformance.registry.available_ops` for ``all``.

    Raises:
        UsageError: ``text`` names no operator, or names an operator that has no generator.
    """
    from . import registry

    ops = [o.strip() for o in (text or "").split(",") if o.strip()]
    if not ops:
        raise UsageError("--ops needs a comma-separated list of operators, e.g. LayerNormalization,BatchNormalization")
    known = registry.available_ops()
    if ops == ["all"]:
        return known
    unknown = [o for o in ops if o not in known]
    if unknown:
        raise UsageError(f"unknown operator(s): {', '.join(unknown)}; available: {', '.join(known)}")
    return ops
