"""Bounded JSON: every JSON or JSON Lines input is parsed here, its values counted against the load's
:class:`~evalcore.data.limits.Budget` before ``json`` builds one of them.

Byte limits bound bytes, not the objects ``json.loads`` builds from them: ``{}`` is two bytes and a 64-byte dict,
so 190 MB of ``[{},{},...]`` (18 KB zstd-compressed in an Inspect ``.eval``) became 5 GB of dicts (issue 38). The
count is of the characters that open a value or separate values outside strings (``{``, ``[``, ``,``, ``:``):
about one per object, list, key and item. It is taken on the bytes, by C loops (``bytes.count`` and one regular
expression), in two steps: the four characters counted anywhere, strings included, is an upper bound, cheap (about
0.25 s for 100 MB, a tenth of parsing it) and enough for every file within the limit; only a file past it is
counted again without its strings, exactly, before it is refused. The regular expression matches each string in
one pass (possessive quantifiers, an unclosed string running to the end), so no input makes it backtrack.
"""

from __future__ import annotations

import json
import re
from typing import Any

from evalcore.data.limits import Budget, ReadLimits

__all__ = ["count_values", "loads", "loads_alone"]

#: one JSON string, or an unclosed one to the end of the data
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)


def _structural(data: bytes) -> int:
    return data.count(b"{") + data.count(b"[") + data.count(b",") + data.count(b":")


def count_values(data: bytes | str, at_most: int) -> int:
    """The JSON values of ``data`` (objects, lists, keys and items, counted by the characters opening or separating
    them outside strings): an upper bound when that is at most ``at_most``, exact otherwise."""
    data = _utf8(data)
    upper = _structural(data)
    return upper if upper <= at_most else _structural(_STRING.sub(b"", data))


def loads(data: bytes | str, name: str, budget: Budget) -> Any:
    """``json.loads(data)`` once its values are counted against ``budget`` (refused with an
    :class:`~evalcore.errors.EvalDataError` naming ``name``, the limit and how to raise it, before any is built).
    JSON Lines are counted whole with :func:`spend` before their first line is parsed."""
    spend(data, name, budget)
    return json.loads(data)


def spend(data: bytes | str, name: str, budget: Budget) -> None:
    """Count the JSON values of ``data`` (a document, or all the lines of JSON Lines) against ``budget``."""
    budget.spend_json_values(count_values(data, budget.json_room), name)


def loads_alone(data: bytes | str, name: str, limits: ReadLimits) -> Any:
    """:func:`loads` within a budget of its own: for a value parsed to look at and dropped (a format's first line,
    a text field that may hold JSON), which the load does not keep."""
    return loads(data, name, Budget(limits))


def _utf8(data: bytes | str) -> bytes:
    """``data`` as UTF-8 bytes (``json`` also reads UTF-16 and UTF-32, whose quotes and backslashes are not single
    bytes)."""
    if isinstance(data, str):
        return data.encode("utf-8", "surrogatepass")
    encoding = json.detect_encoding(data)
    return data if encoding in ("utf-8", "utf-8-sig") else data.decode(encoding, "replace").encode("utf-8", "surrogatepass")
