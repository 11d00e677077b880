"""The workspace's catalog: one SQLite file (standard library ``sqlite3``) listing datasets and saved analyses.

WAL journal mode lets readers go on while one process writes; a busy timeout makes concurrent writers wait for
each other instead of failing. Every change is one transaction (``BEGIN IMMEDIATE``, so that a check and the write
that depends on it cannot interleave with another process's), committed whole or not at all.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..errors import EvalDataError
from .storage import storage_problem

BUSY_TIMEOUT_MS = 30_000
SCHEMA = """
CREATE TABLE IF NOT EXISTS datasets (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, owner TEXT, shared INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL, rows INTEGER NOT NULL, models INTEGER NOT NULL, kind TEXT NOT NULL,
    digest TEXT NOT NULL, bytes INTEGER NOT NULL, mapping TEXT);
CREATE TABLE IF NOT EXISTS analyses (
    id TEXT PRIMARY KEY, dataset_id TEXT NOT NULL REFERENCES datasets(id), page TEXT NOT NULL,
    settings TEXT NOT NULL, selection TEXT NOT NULL, name TEXT NOT NULL, owner TEXT,
    shared INTEGER NOT NULL DEFAULT 0, created TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS analyses_dataset ON analyses(dataset_id);
"""


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the catalog at ``path`` (created with its tables when new)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        connection.row_factory = sqlite3.Row
        connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA foreign_keys = ON")
        connection.executescript(SCHEMA)
        return connection
    except sqlite3.OperationalError as exc:
        raise EvalDataError(f"The workspace catalog {path} cannot be opened ({exc}): check that the folder is "
                            "writable by the user running evalcore (EVALCORE_WORKSPACE).") from exc
    except OSError as exc:
        raise EvalDataError(storage_problem(path.parent, exc)) from exc


@contextmanager
def transaction(path: Path) -> Iterator[sqlite3.Connection]:
    """One write transaction: committed when the block ends, rolled back when it raises."""
    connection = connect(path)
    try:
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        raise EvalDataError(f"The workspace catalog {path} cannot be written ({exc}): check the disk and the "
                            "folder's permissions.") from exc
    finally:
        connection.close()


def rows(path: Path, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
    """The rows of a read query."""
    connection = connect(path)
    try:
        return connection.execute(sql, params).fetchall()
    finally:
        connection.close()
