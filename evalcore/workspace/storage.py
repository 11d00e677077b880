"""Canonical frames stored as Parquet files named by the sha256 digest of their bytes, written atomically.

``<root>/data/<digest>.parquet``: a frame saved twice is stored once. A file is written to a temporary name in the
same folder, flushed to disk and renamed into place, so a reader sees either no file or the whole file, never half
of one. A writer killed mid-write leaves a temporary file; one killed between writing its data file and saving its
catalog row leaves a data file no dataset refers to: :func:`sweep` removes both once they are :data:`GRACE_S` old.
The validation report travels in the Parquet metadata, so a frame read back carries its ``attrs["report"]``.

A write the disk refuses raises :class:`~evalcore.errors.EvalDataError` with :func:`storage_problem`'s message: what
happened (full disk, read-only file system, no permission) and in which folder.
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import tempfile
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evalcore.errors import EvalDataError

_REPORT_KEY = b"evalcore.report"
#: seconds a file no catalog row refers to is left alone: its writer may still be at work
GRACE_S = 3600.0


def frame_bytes(frame: pd.DataFrame) -> bytes:
    """``frame`` as Parquet bytes, its validation report in the file's metadata."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    report = json.dumps(frame.attrs.get("report", {}), default=list).encode()
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), _REPORT_KEY: report})
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename; a full disk or a read-only folder becomes
    an :class:`EvalDataError` saying so."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise EvalDataError(storage_problem(path.parent, exc)) from exc


def storage_problem(folder: Path, exc: OSError) -> str:
    """What a refused write means, in which folder, and what to do."""
    code = errno.errorcode.get(exc.errno or 0, "error")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (f"The disk holding the workspace folder {folder} is full ({code}: {exc.strerror or 'no space left'}): "
                "free space on it, or set EVALCORE_WORKSPACE to a folder on another disk.")
    if exc.errno == errno.EROFS:
        return (f"The workspace folder {folder} is on a read-only file system ({code}): saved items can be opened "
                "but not saved or changed; set EVALCORE_WORKSPACE to a writable folder.")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return (f"The workspace folder {folder} is read-only for the user running evalcore ({code}: permission "
                "denied): saved items can be opened but not saved or changed; make it writable for that user, or "
                "set EVALCORE_WORKSPACE to a writable folder.")
    return f"The workspace folder {folder} cannot be written ({code}: {exc.strerror or exc})."


def probe(folder: Path) -> OSError | None:
    """Whether a file can be written in ``folder`` now: None, or the error the disk gives (the probe file, a
    temporary one, is removed)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-probe-")
    except OSError as exc:
        return exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(bytes(4096))
            handle.flush()
        return None
    except OSError as exc:
        return exc
    finally:
        Path(tmp).unlink(missing_ok=True)


def store(root: Path, frame: pd.DataFrame) -> tuple[str, int]:
    """Save ``frame`` under its digest (once); (digest, size in bytes)."""
    data = frame_bytes(frame)
    key = digest(data)
    path = root / "data" / f"{key}.parquet"
    if not path.exists():
        write_atomic(path, data)
    return key, len(data)


def store_table(root: Path, table) -> tuple[str, int]:
    """Write an engine's table (an Ibis expression) to Parquet through the engine, streamed, then store the file
    under the sha256 of its bytes (once); (digest, size in bytes). Written to a temporary name and renamed, as
    :func:`write_atomic` does."""
    import duckdb

    from evalcore.engine.connection import write_parquet

    folder = root / "data"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".parquet")
        os.close(fd)
        try:
            write_parquet(table, tmp, compression="zstd")
            h = hashlib.sha256()
            with open(tmp, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    h.update(block)
                os.fsync(handle.fileno())
            key, size = h.hexdigest(), os.path.getsize(tmp)
            path = folder / f"{key}.parquet"
            if path.exists():
                Path(tmp).unlink()
            else:
                os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise EvalDataError(storage_problem(folder, exc)) from exc
    except duckdb.IOException as exc:  # the engine's own write: its message, not an OSError, says what the disk did
        cause = engine_write_cause(exc, folder)
        if cause is None:
            raise
        raise EvalDataError(storage_problem(folder, cause)) from exc
    return key, size


def engine_write_cause(exc: Exception, folder: Path) -> OSError | None:
    """The disk's refusal behind an engine's failed write (DuckDB says "IO Error: ... No space left on device"): the
    error its message names, else what a probe write in ``folder`` gets now; None when the disk takes writes."""
    for code in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES):
        if os.strerror(code) in str(exc):
            return OSError(code, os.strerror(code))
    return probe(folder)


def path_of(root: Path, key: str) -> Path:
    """The Parquet file stored under ``key``."""
    return root / "data" / f"{key}.parquet"


def load(root: Path, key: str) -> pd.DataFrame:
    """The frame stored under ``key``, with its validation report in ``attrs``."""
    path = root / "data" / f"{key}.parquet"
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid) as exc:
        raise EvalDataError(f"The stored data {path.name} of the workspace cannot be read ({exc}): restore the "
                            "workspace folder from a backup.") from exc
    frame = table.to_pandas()
    report = (table.schema.metadata or {}).get(_REPORT_KEY)
    if report:
        frame.attrs["report"] = json.loads(report)
        return frame
    from evalcore.data.validation import validate

    return validate(frame)


def stored_report(root: Path, key: str) -> dict:
    """The validation report stored with the frame under ``key`` (the file's metadata only, no rows read); {} for
    a file written by the engine without one."""
    path = root / "data" / f"{key}.parquet"
    try:
        metadata = pq.read_schema(path).metadata or {}
    except (OSError, pa.ArrowInvalid) as exc:
        raise EvalDataError(f"The stored data {path.name} of the workspace cannot be read ({exc}): restore the "
                            "workspace folder from a backup.") from exc
    report = metadata.get(_REPORT_KEY)
    return json.loads(report) if report else {}


def remove(root: Path, key: str) -> None:
    """Delete the frame stored under ``key`` (called when no dataset refers to it any more)."""
    path = root / "data" / f"{key}.parquet"
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        raise EvalDataError(storage_problem(path.parent, exc)) from exc


def sweep(root: Path, keep: set[str], older_than: float = GRACE_S) -> None:
    """Remove what killed writers left in ``root/data``, once untouched for ``older_than`` seconds: temporary files,
    and data files whose digest is not in ``keep`` (the digests the catalog refers to). A younger file may belong to
    a writer at work (its data file is written before its catalog row), so it stays; the caller holds the catalog's
    write lock, under which every writer checks that its file is still there before it inserts its row. Files the
    disk refuses to remove (a read-only folder) stay."""
    now = time.time()
    folder = root / "data"
    if not folder.is_dir():
        return
    for path in folder.iterdir():
        orphan = path.name.startswith(".tmp-") or (path.suffix == ".parquet" and path.stem not in keep)
        try:
            if orphan and now - path.stat().st_mtime >= older_than:
                path.unlink()
        except OSError:
            continue
