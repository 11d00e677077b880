"""Bounded reading of zip archives (a zipped run folder, Inspect's ``.eval`` logs) and of folders.

Every byte a member or file expands to counts against the load's :class:`~evalcore.data.limits.Budget`
(``max_bytes`` for all the files of one load together): the members to read are refused together when the sizes
the zip states add up to more than the room left, and each member is then read in chunks of :data:`CHUNK` bytes,
so that a member whose stated size lies costs no more than the room left either. (``ZipFile.read`` would
decompress up to 2 GiB in one call before cutting the data to the stated size; a member compressed again inside
the zip, e.g. a gzip file, expands within the same room.) Members compressed with Zstandard (zip method 93, APPNOTE
4.4.5: what Inspect AI writes by default since version 0.3.206) are expanded by the ``zstandard`` library, which
``zipfile`` of Python 3.11 lacks, in the same bounded steps, their size and CRC-32 checked as ``zipfile`` checks
the others'. Members compressed with bzip2 or LZMA inside the zip are refused: ``zipfile`` expands those without a
bound. At most :data:`MAX_MEMBERS` members are read; folders and macOS metadata are skipped.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path

import zstandard

from evalcore.data.compression import decompress
from evalcore.errors import EvalDataError
from evalcore.data.limits import Budget
from evalcore.importers.base import LogFile, parents_of

MAX_MEMBERS = 10_000
#: bytes read from a member at a time
CHUNK = 4 * 2**20
#: the zip compression method number of Zstandard (PKWARE's APPNOTE.TXT 4.4.5)
ZIP_ZSTANDARD = 93
_EXPANDED_IN_BOUNDED_STEPS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, ZIP_ZSTANDARD)
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


def members(archive: zipfile.ZipFile, name: str, budget: Budget, infos: list[zipfile.ZipInfo],
            prefix: str = "") -> list[LogFile]:
    """The members ``infos`` of ``archive`` (called ``name`` in messages), each decompressed, within ``budget``:
    refused before reading when the sizes they state add up to more than its room, and each read in bounded
    chunks (:func:`read_member`)."""
    if sum(info.file_size for info in infos) > budget.room:
        raise budget.refusal(name)
    out = []
    for info in infos:
        data = expanded(read_member(archive, info, name, budget), f"{name}/{info.filename}", budget)
        out.append(LogFile(prefix + info.filename, data, budget))
    return out


def expanded(data: bytes, name: str, budget: Budget) -> bytes:
    """``data`` decompressed (:func:`~evalcore.data.compression.decompress`) within ``budget`` and counted against it,
    errors naming the file ``name``."""
    try:
        data = decompress(data, budget)
    except EvalDataError as exc:
        raise EvalDataError(f"{name}: {exc}") from exc
    budget.spend(len(data), name)
    return data


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, budget: Budget) -> bytes:
    """The bytes of the member ``info``, read :data:`CHUNK` bytes at a time: never more than ``budget.room`` nor
    than the size the zip states for it are produced, whatever its compressed data would expand to."""
    if info.compress_type not in _EXPANDED_IN_BOUNDED_STEPS:
        raise EvalDataError(f"{name}: member '{info.filename}' is compressed with bzip2 or LZMA inside the zip, "
                            "which evalcore does not expand: zip the files again with the usual compression "
                            "(deflate).")
    parts, size = [], 0
    # zipfile stops a member at its stated size; a Zstandard stream is stopped one byte past it here
    cap = min(budget.room, info.file_size) if info.compress_type == ZIP_ZSTANDARD else budget.room
    try:
        with _member_stream(archive, info) as stream:
            while part := stream.read(min(CHUNK, cap + 1 - size)):
                parts.append(part)
                size += len(part)
                if size > budget.room:
                    raise budget.refusal(f"{name}/{info.filename}")
                if size > cap:
                    break
        data = b"".join(parts)
        if info.compress_type == ZIP_ZSTANDARD and (len(data) != info.file_size or
                                                    zlib.crc32(data) != info.CRC):
            raise zipfile.BadZipFile(f"{len(data):,} bytes with CRC-32 {zlib.crc32(data):08x}, where the zip states "
                                     f"{info.file_size:,} bytes with {info.CRC:08x}")
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, RuntimeError,
            ValueError, zlib.error, zstandard.ZstdError) as exc:
        if isinstance(exc, EvalDataError):
            raise
        raise EvalDataError(f"{name}: member '{info.filename}' cannot be read: it is truncated, corrupt or "
                            f"encrypted, or its data does not match the size and checksum the zip states for it "
                            f"({exc}).") from exc
    return data


def _member_stream(archive: zipfile.ZipFile, info: zipfile.ZipInfo):
    """A readable stream of the member's expanded bytes: ``zipfile``'s own, or for a Zstandard member a
    ``zstandard`` stream reader over its compressed bytes (located through its local header: 30 bytes, then its
    name and extra field, whose lengths the header gives at offsets 26 and 28)."""
    if info.compress_type != ZIP_ZSTANDARD:
        return archive.open(info)
    if info.flag_bits & 0x1:
        raise NotImplementedError("the member is encrypted")
    archive.fp.seek(info.header_offset)
    header = archive.fp.read(30)
    if len(header) < 30 or header[:4] != ZIP_MAGIC:  # a member's local header starts as the zip does
        raise zipfile.BadZipFile("its local header is missing")
    archive.fp.seek(int.from_bytes(header[26:28], "little") + int.from_bytes(header[28:30], "little"), io.SEEK_CUR)
    compressed = archive.fp.read(info.compress_size)
    return zstandard.ZstdDecompressor().stream_reader(compressed, read_across_frames=True)


def files_of(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The members of ``archive`` that are files (no folders, no macOS metadata)."""
    return [i for i in archive.infolist() if not i.is_dir() and not _metadata(i.filename)]


def zip_members(data: bytes, name: str, budget: Budget, prefix: str = "") -> list[LogFile]:
    """The files inside the zip ``data`` (called ``name`` in messages), each decompressed, within ``budget``: at
    most :data:`MAX_MEMBERS` files."""
    archive = open_zip(data, name)
    infos = files_of(archive)
    if len(infos) > MAX_MEMBERS:
        raise EvalDataError(f"{name}: the zip holds {len(infos):,} files; evalcore reads at most {MAX_MEMBERS:,}. "
                            "Upload the log files themselves or a smaller folder.")
    return members(archive, name, budget, infos, prefix)


def folder_files(path: Path, budget: Budget) -> list[LogFile]:
    """Every file under the folder ``path`` (names relative to it, with the folder's own name first), each
    decompressed, within ``budget`` for all of them together (a file is not read when it is larger than the room
    left)."""
    paths = sorted(p for p in path.rglob("*") if p.is_file() and not _metadata(p.name))
    if len(paths) > MAX_MEMBERS:
        raise EvalDataError(f"{path}: the folder holds {len(paths):,} files; evalcore reads at most "
                            f"{MAX_MEMBERS:,}.")
    out, parents = [], parents_of(path.resolve().as_posix())
    for p in paths:
        name = f"{path.name}/{p.relative_to(path).as_posix()}"
        try:
            if p.stat().st_size > budget.room:
                raise budget.refusal(name)
            data = p.read_bytes()
        except OSError as exc:
            raise EvalDataError(f"Cannot read '{p}' ({exc.strerror or exc}).") from exc
        out.append(LogFile(name, expanded(data, name, budget), budget, parents))
    return out


def _metadata(name: str) -> bool:
    """macOS resource forks and Finder files that zips and folders made on a Mac carry."""
    parts = name.split("/")
    return "__MACOSX" in parts or parts[-1].startswith("._") or parts[-1] == ".DS_Store"
