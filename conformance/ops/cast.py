"""Placeholder: the entries of this family are being written (issue 11)."""

from .engine import register_entries

ENTRIES: tuple = ()
register_entries(ENTRIES)
