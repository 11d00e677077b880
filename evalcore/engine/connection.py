"""The engine's connections, and the one way a query runs on them: :func:`execute`, one query at a time per connection.

A DuckDB connection must not run two queries at once: two threads running queries on one connection deadlock (both
inside ``DuckDBPyConnection.sql``, holding the GIL, so the whole process stops) or fail, and DuckDB's maintainers
say a connection cannot be shared across threads (duckdb/duckdb-python#462). The dashboard shares a log, so its
connection, between every session that opens the same data, and the command line's and the API's threads may share
a log too. So every query of evalcore runs through :func:`execute`, which holds the connection's own lock while the
engine works; the lock is taken with nothing else held, and a Python lock releases the GIL while it waits, so the
other threads (the web server's event loop among them) run on. DuckDB itself uses every core within one query, so
queries in turn lose little throughput. Other Ibis backends (Spark, BigQuery, ...) get a lock of their own too: one
query at a time per backend object is always safe.
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path

import ibis
import ibis.expr.types as ir
import pandas as pd

from evalcore.data.limits import env_number

#: the attribute of a backend object that holds its lock
_LOCK = "_evalcore_query_lock"
_LOCKS_GUARD = threading.Lock()


def lock_of(backend) -> threading.RLock:
    """The lock that serialises the queries of ``backend`` (made on first use, kept on the backend object itself,
    so it lives as long as the connection). Not a dictionary keyed by the backend: Ibis backends compare equal by
    database (every in-memory DuckDB is "the same"), and their hash is a ``functools.cached_property``, whose lock
    Python 3.11 shares between all instances. Reentrant: a thread that already holds it goes on."""
    lock = backend.__dict__.get(_LOCK)
    if lock is None:
        with _LOCKS_GUARD:
            lock = backend.__dict__.setdefault(_LOCK, threading.RLock())
    return lock


def execute(expr: ir.Expr, arrow: bool = False) -> pd.DataFrame | pd.Series | object:
    """Run ``expr`` in its engine, holding its connection's lock (:func:`lock_of`); pandas comes back (a frame for a
    table, a series for a column, a scalar for a scalar), as ``expr.to_pandas()`` returns it, or with ``arrow`` the
    Arrow table ``expr.to_pyarrow()`` returns (for large results: no conversion of each text cell to Python)."""
    with lock_of(ibis.get_backend(expr)):
        return expr.to_pyarrow() if arrow else expr.to_pandas()


def write_parquet(table: ir.Table, path, **options) -> None:
    """Write ``table`` to a Parquet file at ``path`` through its engine (streamed), holding its connection's lock
    as :func:`execute` does; ``options`` go to the writer (e.g. ``compression="zstd"``)."""
    with lock_of(ibis.get_backend(table)):
        table.to_parquet(path, **options)


def duckdb_connection() -> "ibis.BaseBackend":
    """An in-process DuckDB with bounded memory: ``EVALCORE_ENGINE_MEMORY_MB`` (default 1,024) before spilling to
    the folder ``evalcore-duckdb`` of the system's temporary directory, all cores."""
    con = ibis.duckdb.connect(threads=os.cpu_count() or 1)
    spill = Path(tempfile.gettempdir()) / "evalcore-duckdb"
    con.raw_sql(f"SET memory_limit = '{env_number('EVALCORE_ENGINE_MEMORY_MB', 1024)}MB'")
    con.raw_sql(f"SET temp_directory = '{spill.as_posix()}'")
    con.raw_sql("SET preserve_insertion_order = false")
    return con
