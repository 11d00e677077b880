"""Where a log is read: in memory, or in the engine (DuckDB through Ibis, :func:`evalcore.engine.scan`) when it is
large. The rule needs only the files' names and sizes (a Parquet file's footer), so that a command deciding it
imports neither the engine nor pandas; :mod:`evalcore.engine` re-exports :func:`belongs_in_engine`."""

from __future__ import annotations

import glob
from pathlib import Path

from evalcore.data.limits import env_number
from evalcore.errors import EvalDataError

#: the least a log's row takes once decoded in memory: a model name and an example id as text and one number
DECODED_ROW_BYTES = 40
PARQUET = (".parquet", ".pq")
CSV = (".csv", ".tsv", ".csv.gz", ".tsv.gz", ".txt")


def belongs_in_engine(paths, mode: str = "auto") -> bool:
    """Whether to open ``paths`` with :func:`evalcore.engine.scan` rather than in memory: ``mode`` "always", "never",
    or "auto": every path is a Parquet or CSV file, folder or glob, and together they exceed ``EVALCORE_ENGINE_MB``
    megabytes (default 200, the in-memory reader's size limit ``EVALCORE_MAX_FILE_MB``), counting a Parquet file by
    its data once decoded, as the in-memory reader counts it: at least its footer's uncompressed row-group sizes and
    :data:`DECODED_ROW_BYTES` a row (a 15 MB file of ten million rows decodes to far more than 15 MB)."""
    if mode != "auto":
        return mode == "always"
    try:
        files = [f for p in paths for f in files_of(Path(p))]
    except EvalDataError:
        return False
    if not files or any(kind_of(f) is None for f in files):
        return False
    return sum(_decoded_size(f) for f in files) > env_number("EVALCORE_ENGINE_MB", 200) * 2**20


def files_of(path: Path) -> list[Path]:
    """The Parquet and CSV files of ``path``: a glob's files, a folder's (recursively), or the file itself."""
    if glob.has_magic(str(path)):
        files = sorted(Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file())
    elif path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and kind_of(p) is not None)
    elif path.is_file():
        files = [path]
    else:
        raise EvalDataError(f"{path}: no such file or folder.")
    if not files:
        raise EvalDataError(f"{path}: no Parquet or CSV file matches.")
    return files


def kind_of(path: Path) -> str | None:
    """"parquet" or "csv" by the file's name; None for any other file."""
    name = path.name.lower()
    if name.endswith(PARQUET):
        return "parquet"
    if name.endswith(CSV):
        return "csv"
    return None


def _decoded_size(path: Path) -> int:
    """A CSV file's size; a Parquet file's uncompressed data (its size on disk when the footer cannot be read)."""
    if kind_of(path) == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            meta = pq.ParquetFile(path).metadata
            uncompressed = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
            return max(path.stat().st_size, uncompressed, DECODED_ROW_BYTES * meta.num_rows)
        except (OSError, pa.ArrowException):
            pass
    return path.stat().st_size
