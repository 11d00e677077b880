"""Canonical frames stored as Parquet files named by the sha256 digest of their bytes, written atomically.

``<root>/data/<digest>.parquet``: a frame saved twice is stored once. A file is written to a temporary name in the
same folder, flushed to disk and renamed into place, so a reader sees either no file or the whole file, never half
of one (a writer killed mid-write leaves only a temporary file, which :func:`sweep` removes once it is an hour old). The validation report
travels in the Parquet metadata, so a frame read back carries its ``attrs["report"]``.
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

from ..errors import EvalDataError

_REPORT_KEY = b"evalcore.report"


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
    """A message for a failed write: which folder, and what to do."""
    if exc.errno == errno.ENOSPC:
        return f"The workspace folder {folder} is full (no space left on the disk): free space or move the workspace."
    if exc.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
        return (f"The workspace folder {folder} cannot be written (read-only or no permission): make it writable for "
                "the user running evalcore, or set EVALCORE_WORKSPACE to a writable folder.")
    return f"The workspace folder {folder} cannot be written ({exc.strerror or exc})."


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
    folder = root / "data"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".parquet")
        os.close(fd)
        try:
            table.to_parquet(tmp, compression="zstd")
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
    return key, size


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
    from ..data import validate  # a log saved through the engine (add_log): validated on its first load

    return validate(frame)


def remove(root: Path, key: str) -> None:
    """Delete the frame stored under ``key`` (called when no dataset refers to it any more)."""
    (root / "data" / f"{key}.parquet").unlink(missing_ok=True)


def sweep(root: Path, older_than: float = 3600.0) -> None:
    """Remove temporary files left by writers that were killed mid-write: those not touched for ``older_than``
    seconds (a younger one may belong to a writer at work in another process)."""
    now = time.time()
    for path in (root / "data").glob(".tmp-*"):
        try:
            if now - path.stat().st_mtime >= older_than:
                path.unlink(missing_ok=True)
        except FileNotFoundError:
            continue
