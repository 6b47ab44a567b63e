"""Old import path of the report commands' entry point, kept for callers of
``conformance.reports.commands.main``: it is :func:`conformance.cli.main`.

The commands themselves are in :mod:`conformance.cli.report_commands`.  This module belongs
to the command line (tests/test_structure.py counts it there): no library module imports it.
"""

from conformance.cli import main

__all__ = ["main"]
