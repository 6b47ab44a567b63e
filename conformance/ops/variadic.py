"""Entries of the element-wise variadic operators (filled in by the family's author)."""

from __future__ import annotations

from .elementwise import register_entries
from .entry import Entry

ENTRIES: list[Entry] = []

register_entries(ENTRIES)
