"""Bounded reading of zip archives (a zipped run folder, Inspect's ``.eval`` logs) and of folders.

A zip states its members' sizes in its directory, but a hostile one can lie: every member is therefore read as a
stream that stops once the members read so far pass ``limits.max_bytes`` together, so a small "zip bomb" costs at
most that much memory. At most :data:`MAX_MEMBERS` members are read; folders and macOS metadata are skipped.
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
_CHUNK = 2**20


def is_zip(data: bytes) -> bool:
    """Whether ``data`` is a zip archive (also an empty one)."""
    return data[:4] in (ZIP_MAGIC, b"PK\x05\x06")


def is_office_document(data: bytes) -> bool:
    """Whether the zip ``data`` is an Office document (an Excel workbook...), which the table reader refuses with
    advice of its own."""
    try:
        return "[Content_Types].xml" in zipfile.ZipFile(io.BytesIO(data)).namelist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return False


def zip_members(data: bytes, name: str, limits: ReadLimits, prefix: str = "") -> list[LogFile]:
    """The files inside the zip ``data`` (called ``name`` in messages), each decompressed, within ``limits``."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = [i for i in archive.infolist() if not i.is_dir() and not _metadata(i.filename)]
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise EvalDataError(f"{name}: not a readable zip archive (truncated or corrupt?): {exc}.") from exc
    if len(infos) > MAX_MEMBERS:
        raise EvalDataError(f"{name}: the zip holds {len(infos):,} files; evalcore reads at most {MAX_MEMBERS:,}. "
                            "Upload the log files themselves or a smaller folder.")
    out, total = [], 0
    for info in infos:
        chunks = []
        try:
            with archive.open(info) as member:
                while chunk := member.read(_CHUNK):
                    total += len(chunk)
                    if total > limits.max_bytes:
                        raise EvalDataError(
                            f"{name}: the zip expands beyond {size_text(limits.max_bytes)}, the most evalcore reads "
                            f"into memory. Upload fewer or smaller files. {limits.raise_hint('bytes')}")
                    chunks.append(chunk)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError,
                RuntimeError) as exc:
            raise EvalDataError(f"{name}: member '{info.filename}' cannot be read (truncated, corrupt or encrypted "
                                f"zip?): {exc}.") from exc
        out.append(LogFile(prefix + info.filename, decompress(b"".join(chunks), limits)))
    return out


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
