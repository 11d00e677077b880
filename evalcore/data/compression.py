"""Bounded decompression: gzip, bzip2 and xz, streamed so that a small file cannot expand without limit.

A compressed file is recognised by its magic bytes and expanded piece by piece (``max_length`` of the standard
library's decompressors); expansion stops with an :class:`~evalcore.data.reading.EvalDataError` as soon as the output
passes the room left in the load's :class:`~evalcore.data.limits.Budget`, so a 200 KB "gzip bomb" costs at most that
many bytes of memory, and so do a hundred of them in one upload. Several concatenated members (``cat a.gz b.gz``)
are one stream, as for ``gunzip``. Compression inside compression (a file gzipped twice) is expanded again, at most
:data:`MAX_DEPTH` layers deep, every layer within the same room.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from typing import Callable

from evalcore.errors import EvalDataError
from evalcore.data.limits import Budget, size_text

#: name, magic bytes, and a factory of a fresh decompressor for one member
FORMATS: tuple[tuple[str, bytes, Callable[[], object]], ...] = (
    ("gzip", b"\x1f\x8b", lambda: zlib.decompressobj(wbits=31)),
    ("bzip2", b"BZh", bz2.BZ2Decompressor),
    ("xz", b"\xfd7zXZ\x00", lzma.LZMADecompressor),
)
#: formats recognised only to be refused with a clear message
UNSUPPORTED = ((b"\x28\xb5\x2f\xfd", "zstd"), (b"7z\xbc\xaf\x27\x1c", "7-Zip"), (b"Rar!\x1a\x07", "RAR"))
MAX_DEPTH = 3
_CHUNK = 4 * 2**20


def compression_of(data: bytes) -> str | None:
    """The name of the compression ``data`` starts with, or None."""
    for name, magic, _ in FORMATS:
        if data.startswith(magic):
            return name
    return None


def refuse_unsupported(data: bytes) -> None:
    """Raise for compressed formats evalcore does not expand (zstd, 7-Zip, RAR)."""
    for magic, name in UNSUPPORTED:
        if data.startswith(magic):
            raise EvalDataError(
                f"The file is {name}-compressed, which evalcore does not read: decompress it, or compress it with "
                "gzip instead.")


def decompress(data: bytes, budget: Budget) -> bytes:
    """``data`` with every layer of gzip / bzip2 / xz compression removed, each layer's output at most
    ``budget.room`` bytes (the caller spends what it keeps)."""
    depth = 0
    while (name := compression_of(data)) is not None:
        depth += 1
        if depth > MAX_DEPTH:
            raise EvalDataError(
                f"The file is compressed more than {MAX_DEPTH} times over (compression inside compression): "
                "decompress it and compress it once.")
        data = _expand(data, name, budget)
        if not data[:4096].strip() and not data.strip():
            raise EvalDataError(f"The {name}-compressed file is empty: expected a header row and data rows inside.")
    refuse_unsupported(data)
    return data


def _expand(data: bytes, name: str, budget: Budget) -> bytes:
    """One layer of ``name`` compression removed, stopping as soon as the output passes ``budget.room``."""
    magic, factory = next((m, f) for n, m, f in FORMATS if n == name)
    limits, limit = budget.limits, budget.room
    bound = (f"{size_text(limit)}, what is left of the {size_text(limits.max_bytes)} evalcore reads for one load "
             "after the other files" if budget.used else f"{size_text(limit)}, the largest table evalcore reads")
    out = bytearray()
    rest = data
    try:
        while rest:
            decompressor = factory()
            pending = rest
            while True:
                room = limit + 1 - len(out)
                out += decompressor.decompress(pending, min(room, _CHUNK))
                if len(out) > limit:
                    raise EvalDataError(
                        f"The {name}-compressed file expands beyond {bound} (the limit applies after "
                        f"decompression). Upload a smaller file or a sample. "
                        f"{limits.raise_hint('bytes')}")
                if decompressor.eof:
                    rest = decompressor.unused_data
                    break
                if _exhausted(decompressor) and hasattr(decompressor, "flush"):
                    out += decompressor.flush()  # zlib may hold the end of a match after its last input byte
                    if decompressor.eof:
                        rest = decompressor.unused_data
                        break
                if _exhausted(decompressor):
                    raise EvalDataError(
                        f"The {name}-compressed file is truncated (it ends before the compressed data does): "
                        "compress it again.")
                pending = getattr(decompressor, "unconsumed_tail", b"")
            if rest and not rest.startswith(magic):
                if rest.strip(b"\x00"):
                    raise EvalDataError(
                        f"The {name}-compressed file has {len(rest):,} bytes of other data after its end: compress "
                        "it again.")
                rest = b""  # zero padding after the last member, as tape archives write it
    except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError) as exc:
        if isinstance(exc, EvalDataError):
            raise
        raise EvalDataError(f"The file is {name}-compressed but damaged ({exc}): compress it again.") from exc
    return bytes(out)


def _exhausted(decompressor) -> bool:
    """Whether a decompressor that has not reached its end has no input left, i.e. the stream is truncated.

    zlib hands back unread input in ``unconsumed_tail``; bz2 and lzma keep it and say ``needs_input`` when
    they have none left and no output is pending.
    """
    if hasattr(decompressor, "unconsumed_tail"):
        return not decompressor.unconsumed_tail
    return decompressor.needs_input
