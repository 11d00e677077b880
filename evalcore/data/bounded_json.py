"""Bounded JSON: every JSON or JSON Lines input is parsed here, its values counted against the load's
:class:`~evalcore.data.limits.Budget` before ``json`` builds one of them.

Byte limits bound bytes, not the objects ``json.loads`` builds from them: ``{}`` is two bytes and a 64-byte dict,
so 190 MB of ``[{},{},...]`` (18 KB zstd-compressed in an Inspect ``.eval``) became 5 GB of dicts (issue 38). The
count is of the characters that open a value or separate values outside strings (``{``, ``[``, ``,``, ``:``):
about one per object, list, key and item. It is taken on the bytes, by C loops (``bytes.count`` and one regular
expression), in two steps: the four characters counted anywhere, strings included, is an upper bound, cheap (about
0.25 s for 100 MB, a tenth of parsing it) and enough for every file within the limit; only a file past it is
counted again without its strings, exactly, before it is refused (:func:`_outside_strings`: block by block, each
block's escapes dropped and its text split at its quotes, so that memory stays bounded by a block whatever the
number of strings; removing the strings with one regular expression built a piece per string, 2.3 GB for the
12.8 million strings of a 93 KB ``.json.gz``, issue 51).
"""

from __future__ import annotations

import json
from typing import Any

from evalcore.data.limits import Budget, ReadLimits

__all__ = ["count_values", "loads", "loads_alone"]

#: bytes of one block of :func:`_outside_strings`
_BLOCK = 1 << 22


def _structural(data: bytes) -> int:
    return data.count(b"{") + data.count(b"[") + data.count(b",") + data.count(b":")


def count_values(data: bytes | str, at_most: int) -> int:
    """The JSON values of ``data`` (objects, lists, keys and items, counted by the characters opening or separating
    them outside strings): an upper bound when that is at most ``at_most``, exact otherwise."""
    data = _utf8(data)
    upper = _structural(data)
    return upper if upper <= at_most else _outside_strings(data)


def _outside_strings(data: bytes) -> int:
    """The characters of :func:`_structural` outside JSON strings, exactly (an unclosed string runs to the end).
    Block by block (:data:`_BLOCK` bytes, never cut inside an escape): the escapes that hide a quote (``\\\\``,
    then ``\\"``) dropped, the rest split at its quotes, whose pieces alternate between outside and inside a
    string from the state the block starts in."""
    total, inside, at = 0, False, 0
    while at < len(data):
        end = min(at + _BLOCK, len(data))
        while end < len(data) and data[end - 1] == 0x5C:  # a backslash ends no block: its escape stays whole
            end += 1
        pieces = data[at:end].replace(b"\\\\", b"").replace(b'\\"', b"").split(b'"')
        total += _structural(b"".join(pieces[1 if inside else 0::2]))
        inside ^= len(pieces) % 2 == 0  # an odd number of quotes: the block ends on the other side
        at = end
    return total


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
