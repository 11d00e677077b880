"""Bounded reading of zip archives (a zipped run folder, Inspect's ``.eval`` logs) and of folders.

A zip states its members' sizes in its directory; the members to read are refused together when those sizes add
up to more than ``limits.max_bytes``, and a hostile zip that lies about a size gains nothing: ``zipfile`` never
returns more than the declared size (the member fails its length or CRC check), so a small "zip bomb" costs at most
that much memory. At most :data:`MAX_MEMBERS` members are read; folders and macOS metadata are skipped.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from ..compression import decompress
from ..errors import EvalDataError
from ..limits import ReadLimits, size_text
from .base import LogFile

MAX_MEMBERS = 10_000
ZIP_MAGIC = b"PK\x03\x04"


def is_zip(data: bytes) -> bool:
    """Whether ``data`` is a zip archive (also an empty one)."""
    return data[:4] in (ZIP_MAGIC, b"PK\x05\x06")


def is_office_document(data: bytes) -> bool:
    """Whether the zip ``data`` is an Office document (an Excel workbook...), which the table reader refuses with
    advice of its own."""
    return has_member(data, ("[Content_Types].xml",))


def has_member(data: bytes, names: tuple[str, ...], prefixes: tuple[str, ...] = ()) -> bool:
    """Whether the zip ``data`` has a member called one of ``names`` or starting with one of ``prefixes``, looking
    at its first member's local header and at the entries in the last 64 KB of its central directory (where writers
    put the members they add last), so that a zip of 100,000 members is not parsed whole to tell what it is."""
    if data[:4] == ZIP_MAGIC and len(data) >= 30:
        first = data[30:30 + int.from_bytes(data[26:28], "little")].decode("utf-8", "replace")
        if first in names or first.startswith(prefixes):
            return True
    tail = data[-65536:]
    for wanted in (*names, *prefixes):
        needle = wanted.encode()
        at = tail.find(needle)
        while at >= 0:
            # a central-directory entry: its signature 46 bytes before the name, the name's length at +28
            if at >= 46 and tail[at - 46:at - 42] == b"PK\x01\x02" and (
                    wanted in prefixes or int.from_bytes(tail[at - 18:at - 16], "little") == len(needle)):
                return True
            at = tail.find(needle, at + 1)
    return False


def open_zip(data: bytes, name: str, max_members: int = MAX_MEMBERS) -> zipfile.ZipFile:
    """The zip ``data`` (called ``name`` in messages), or :class:`EvalDataError` when it is not readable or its
    directory lists more than ``max_members`` entries (counted from its end record, before the directory is
    parsed)."""
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - 65557))
    if end >= 0 and len(data) >= end + 12:
        entries = int.from_bytes(data[end + 10:end + 12], "little")
        if max_members < entries < 0xFFFF:
            raise EvalDataError(f"{name}: the zip holds {entries:,} files; evalcore reads at most {max_members:,}. "
                                "Upload the log files themselves or a smaller folder.")
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise EvalDataError(f"{name}: not a readable zip archive (truncated or corrupt?): {exc}.") from exc


def members(archive: zipfile.ZipFile, name: str, limits: ReadLimits, infos: list[zipfile.ZipInfo],
            prefix: str = "") -> list[LogFile]:
    """The members ``infos`` of ``archive``, each decompressed, refused before reading when their sizes add up to
    more than ``limits.max_bytes`` (zipfile never returns more than a member's declared size: a member whose data
    would expand beyond it fails its check instead)."""
    total = sum(info.file_size for info in infos)
    if total > limits.max_bytes:
        raise EvalDataError(f"{name}: the zip expands beyond {size_text(limits.max_bytes)}, the most evalcore reads "
                            f"into memory. Upload fewer or smaller files. {limits.raise_hint('bytes')}")
    out = []
    for info in infos:
        try:
            data = archive.read(info)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, RuntimeError,
                ValueError) as exc:
            raise EvalDataError(f"{name}: member '{info.filename}' cannot be read (truncated, corrupt or encrypted "
                                f"zip?): {exc}.") from exc
        out.append(LogFile(prefix + info.filename, decompress(data, limits)))
    return out


def files_of(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The members of ``archive`` that are files (no folders, no macOS metadata)."""
    return [i for i in archive.infolist() if not i.is_dir() and not _metadata(i.filename)]


def zip_members(data: bytes, name: str, limits: ReadLimits, prefix: str = "") -> list[LogFile]:
    """The files inside the zip ``data`` (called ``name`` in messages), each decompressed, within ``limits``: at
    most :data:`MAX_MEMBERS` files."""
    archive = open_zip(data, name)
    infos = files_of(archive)
    if len(infos) > MAX_MEMBERS:
        raise EvalDataError(f"{name}: the zip holds {len(infos):,} files; evalcore reads at most {MAX_MEMBERS:,}. "
                            "Upload the log files themselves or a smaller folder.")
    return members(archive, name, limits, infos, prefix)


def folder_files(path: Path, limits: ReadLimits) -> list[LogFile]:
    """Every file under the folder ``path`` (names relative to it, with the folder's own name first), each
    decompressed, within ``limits`` for all of them together."""
    paths = sorted(p for p in path.rglob("*") if p.is_file() and not _metadata(p.name))
    if len(paths) > MAX_MEMBERS:
        raise EvalDataError(f"{path}: the folder holds {len(paths):,} files; evalcore reads at most "
                            f"{MAX_MEMBERS:,}.")
    out, total = [], 0
    for p in paths:
        try:
            total += p.stat().st_size
            if total > limits.max_bytes:
                raise EvalDataError(f"{path}: the folder's files are larger than {size_text(limits.max_bytes)} "
                                    f"together, the most evalcore reads into memory. {limits.raise_hint('bytes')}")
            data = p.read_bytes()
        except OSError as exc:
            raise EvalDataError(f"Cannot read '{p}' ({exc.strerror or exc}).") from exc
        out.append(LogFile(f"{path.name}/{p.relative_to(path).as_posix()}", decompress(data, limits)))
    return out


def _metadata(name: str) -> bool:
    """macOS resource forks and Finder files that zips and folders made on a Mac carry."""
    parts = name.split("/")
    return "__MACOSX" in parts or parts[-1].startswith("._") or parts[-1] == ".DS_Store"
