"""The workspace's catalog: one SQLite file (standard library ``sqlite3``) listing datasets and saved analyses.

WAL journal mode lets readers go on while one process writes; a busy timeout makes concurrent writers wait for
each other instead of failing. Every change is one transaction (``BEGIN IMMEDIATE``, so that a check and the write
that depends on it cannot interleave with another process's), committed whole or not at all.

Reading needs no write access: on a read-only folder or a full disk the catalog is read through a read-only
connection, and, where even its shared-memory file (``-shm``) cannot be created, as an immutable file. A write the
disk refuses raises :class:`~evalcore.errors.EvalDataError` saying what happened and where (:func:`problem`).

The schema version is SQLite's ``user_version``, one migration step per version (:data:`STEPS`): version 1 stores
every owner in its canonical form (:func:`.access.canonical`); version 2 adds labeling campaigns (their queues,
labels and claims); version 3 series of runs; version 4 adjudication of labeling campaigns (a campaign's named
adjudicators, the decisions on its examples whose labels disagree); version 5 comparison campaigns (several models'
outputs judged on one pool, :mod:`evalcore.labeling.comparison`); version 6 the verdicts of a series' gate and the
runs accepted by a member (:mod:`evalcore.history.gate`). An older catalog is brought up to date once,
when a writer first opens it.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from evalcore.errors import EvalDataError
from evalcore.workspace.access import canonical
from evalcore.workspace.storage import probe, storage_problem

BUSY_TIMEOUT_MS = 30_000
SCHEMA = (
    """CREATE TABLE IF NOT EXISTS datasets (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, owner TEXT, shared INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL, rows INTEGER NOT NULL, models INTEGER NOT NULL, kind TEXT NOT NULL,
    digest TEXT NOT NULL, bytes INTEGER NOT NULL, mapping TEXT)""",
    """CREATE TABLE IF NOT EXISTS analyses (
    id TEXT PRIMARY KEY, dataset_id TEXT NOT NULL REFERENCES datasets(id), page TEXT NOT NULL,
    settings TEXT NOT NULL, selection TEXT NOT NULL, name TEXT NOT NULL, owner TEXT,
    shared INTEGER NOT NULL DEFAULT 0, created TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS analyses_dataset ON analyses(dataset_id)",
)
#: version 2: labeling campaigns (:mod:`evalcore.labeling.campaign`). ``queue`` is a campaign's examples in the
#: design's order (position 0 first) with what its estimator needs of each; ``labels`` every label ever given (a
#: replaced one keeps its row, ``replaced_by`` naming the label that replaced it; ``skipped`` 1 for a skip);
#: ``claims`` who is labeling which example until when
CAMPAIGNS = (
    """CREATE TABLE IF NOT EXISTS campaigns (
    id TEXT PRIMARY KEY, dataset_id TEXT NOT NULL REFERENCES datasets(id), name TEXT NOT NULL, owner TEXT,
    shared INTEGER NOT NULL DEFAULT 0, created TEXT NOT NULL, model TEXT NOT NULL, design TEXT NOT NULL,
    metric TEXT NOT NULL, scale_low REAL NOT NULL, scale_high REAL NOT NULL, target REAL, budget INTEGER,
    level REAL NOT NULL, seed INTEGER NOT NULL, overlap INTEGER NOT NULL, planned INTEGER NOT NULL,
    pool TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS queue (
    campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE, position INTEGER NOT NULL,
    example_id TEXT NOT NULL, task TEXT, stratum INTEGER NOT NULL, weight REAL NOT NULL, priority REAL NOT NULL,
    proxy REAL, judge REAL, labeled INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (campaign_id, position))""",
    "CREATE UNIQUE INDEX IF NOT EXISTS queue_example ON queue(campaign_id, example_id)",
    """CREATE TABLE IF NOT EXISTS labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT, campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    example_id TEXT NOT NULL, annotator TEXT NOT NULL, value REAL, note TEXT, skipped INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL, replaced_by INTEGER)""",
    "CREATE INDEX IF NOT EXISTS labels_example ON labels(campaign_id, example_id)",
    """CREATE TABLE IF NOT EXISTS claims (
    campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE, example_id TEXT NOT NULL,
    annotator TEXT NOT NULL, until REAL NOT NULL, PRIMARY KEY (campaign_id, example_id, annotator))""",
    "CREATE INDEX IF NOT EXISTS claims_annotator ON claims(campaign_id, annotator)",
)


#: version 3: series of runs (:mod:`evalcore.history`). A series is named once; ``baseline`` is its pinned run (a
#: dataset) or NULL (the latest run before the one compared); ``series_runs`` lists its datasets with when each
#: ran, free metadata (JSON) and the summary kept for the trend (:func:`evalcore.history.run_summary`, JSON)
SERIES = (
    """CREATE TABLE IF NOT EXISTS series (
    name TEXT PRIMARY KEY, owner TEXT, created TEXT NOT NULL, baseline TEXT REFERENCES datasets(id))""",
    """CREATE TABLE IF NOT EXISTS series_runs (
    series TEXT NOT NULL REFERENCES series(name) ON DELETE CASCADE,
    dataset_id TEXT NOT NULL REFERENCES datasets(id), run_time TEXT NOT NULL, meta TEXT NOT NULL,
    summary TEXT NOT NULL, PRIMARY KEY (series, dataset_id))""",
    "CREATE INDEX IF NOT EXISTS series_runs_time ON series_runs(series, run_time)",
)


#: version 4: adjudication (:mod:`evalcore.labeling.campaign`). ``campaigns.adjudicators`` is a JSON list of the
#: members who, besides the owner, settle the examples whose labels disagree; ``adjudications`` every decision ever
#: made (a replaced one keeps its row, ``replaced_by`` naming the decision that replaced it)
ADJUDICATORS = "ALTER TABLE campaigns ADD COLUMN adjudicators TEXT NOT NULL DEFAULT '[]'"
ADJUDICATIONS = (
    """CREATE TABLE IF NOT EXISTS adjudications (
    id INTEGER PRIMARY KEY AUTOINCREMENT, campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    example_id TEXT NOT NULL, value REAL NOT NULL, adjudicator TEXT NOT NULL, note TEXT, created TEXT NOT NULL,
    replaced_by INTEGER)""",
    "CREATE INDEX IF NOT EXISTS adjudications_example ON adjudications(campaign_id, example_id)",
)


#: version 5: comparison campaigns (:mod:`evalcore.labeling.comparison`), a campaign row (its queue and claims as
#: any campaign's) with a ``comparisons`` row: its ``models`` (JSON list, the first minus the second is the
#: difference), the ``decide`` rule and its ``margin``, what the ``outputs`` are ("class" or "text") and the pool's
#: ``notes`` (JSON list). ``comparison_examples`` holds each queued example's agreement ``pattern`` and its
#: ``outputs`` (JSON object model -> text, stored literally); ``comparison_labels`` every label ever given: the
#: per-model ``verdicts`` (JSON object model -> 0/1, NULL for a skip) and the ``answer`` they came from where the
#: annotator gave the right class (a replaced label keeps its row, ``replaced_by`` naming the one that replaced it)
COMPARISONS = (
    """CREATE TABLE IF NOT EXISTS comparisons (
    campaign_id TEXT PRIMARY KEY REFERENCES campaigns(id) ON DELETE CASCADE, models TEXT NOT NULL,
    decide INTEGER NOT NULL DEFAULT 0, margin REAL NOT NULL DEFAULT 0, outputs TEXT NOT NULL,
    notes TEXT NOT NULL DEFAULT '[]')""",
    """CREATE TABLE IF NOT EXISTS comparison_examples (
    campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE, example_id TEXT NOT NULL,
    pattern TEXT NOT NULL, outputs TEXT NOT NULL, PRIMARY KEY (campaign_id, example_id))""",
    """CREATE TABLE IF NOT EXISTS comparison_labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT, campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    example_id TEXT NOT NULL, annotator TEXT NOT NULL, verdicts TEXT, answer TEXT, note TEXT,
    skipped INTEGER NOT NULL DEFAULT 0, created TEXT NOT NULL, replaced_by INTEGER)""",
    "CREATE INDEX IF NOT EXISTS comparison_labels_example ON comparison_labels(campaign_id, example_id)",
)


#: version 6: what the gate (``evalcore compare --series``) decided of each run it compared, and the runs a member
#: accepted, every decision kept. A run is keyed by its content ``digest`` (a dataset's), so the verdict holds whether
#: the run is saved into the series before or after it is gated. ``status`` is "passed", "failed" (a regression:
#: exit 3) or "accepted" (by ``who``, NULL where nobody signs in); ``baseline`` and ``reference`` name the datasets
#: the gate compared the run with
VERDICTS = (
    """CREATE TABLE IF NOT EXISTS series_verdicts (
    id INTEGER PRIMARY KEY AUTOINCREMENT, series TEXT NOT NULL, digest TEXT NOT NULL, status TEXT NOT NULL,
    who TEXT, created TEXT NOT NULL, baseline TEXT, reference TEXT)""",
    "CREATE INDEX IF NOT EXISTS series_verdicts_run ON series_verdicts(series, digest)",
)


#: version 7: the adjudications of comparison campaigns: an owner's or adjudicator's ``verdicts`` (JSON object model ->
#: 0/1) on an example whose labels disagree or that was only skipped, with the ``answer`` they came from where the
#: outputs are classes; deciding again keeps the earlier decision, ``replaced_by`` naming the new one
COMPARISON_ADJUDICATIONS = (
    """CREATE TABLE IF NOT EXISTS comparison_adjudications (
    id INTEGER PRIMARY KEY AUTOINCREMENT, campaign_id TEXT NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
    example_id TEXT NOT NULL, adjudicator TEXT NOT NULL, verdicts TEXT NOT NULL, answer TEXT, note TEXT,
    created TEXT NOT NULL, replaced_by INTEGER)""",
    "CREATE INDEX IF NOT EXISTS comparison_adjudications_example ON comparison_adjudications(campaign_id, example_id)",
)


def _step_1(connection: sqlite3.Connection) -> None:
    """Version 1: the datasets and analyses, every owner in its canonical form."""
    for statement in SCHEMA:
        connection.execute(statement)
    for table in ("datasets", "analyses"):
        for row in connection.execute(f"SELECT id, owner FROM {table} WHERE owner IS NOT NULL").fetchall():
            if canonical(row["owner"]) != row["owner"]:
                connection.execute(f"UPDATE {table} SET owner = ? WHERE id = ?", (canonical(row["owner"]), row["id"]))


def _step_2(connection: sqlite3.Connection) -> None:
    """Version 2: labeling campaigns, their queues, labels and claims."""
    for statement in CAMPAIGNS:
        connection.execute(statement)


def _step_3(connection: sqlite3.Connection) -> None:
    """Version 3: series of runs."""
    for statement in SERIES:
        connection.execute(statement)


def _step_4(connection: sqlite3.Connection) -> None:
    """Version 4: a campaign's adjudicators and its adjudications. Like every step, it may run on a catalog that has
    them already (its column is added only where missing, as its tables are created only where missing)."""
    if "adjudicators" not in {row["name"] for row in connection.execute("PRAGMA table_info(campaigns)")}:
        connection.execute(ADJUDICATORS)
    for statement in ADJUDICATIONS:
        connection.execute(statement)


def _step_5(connection: sqlite3.Connection) -> None:
    """Version 5: comparison campaigns, their examples' outputs and their labels."""
    for statement in COMPARISONS:
        connection.execute(statement)


def _step_6(connection: sqlite3.Connection) -> None:
    """Version 6: the gate's verdicts and the runs accepted."""
    for statement in VERDICTS:
        connection.execute(statement)


def _step_7(connection: sqlite3.Connection) -> None:
    """Version 7: comparison campaigns' adjudications."""
    for statement in COMPARISON_ADJUDICATIONS:
        connection.execute(statement)


#: the migrations, one step per version: a catalog at version v runs the steps after v, in order
STEPS = (_step_1, _step_2, _step_3, _step_4, _step_5, _step_6, _step_7)
SCHEMA_VERSION = len(STEPS)
#: how a reader opens the catalog, in turn: as usual (it may recover a killed writer's journal), read-only, then
#: immutable (when the ``-shm`` file cannot be created: a read-only folder, a full disk)
READ_MODES = ("rw", "ro", "ro&immutable=1")


def _open(path: Path, mode: str) -> sqlite3.Connection:
    connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode={mode}", uri=True,
                                 timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    connection.row_factory = sqlite3.Row
    connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return connection


def problem(path: Path, exc: sqlite3.OperationalError) -> str:
    """What a failed catalog operation means: another writer held the lock too long, the disk is full, the folder
    refuses writes (the cause a probe write there gets), or the catalog file itself is read-only or damaged."""
    code = (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF
    if code == sqlite3.SQLITE_BUSY:
        return (f"The workspace catalog {path} stayed locked by another writer for {BUSY_TIMEOUT_MS // 1000} s: "
                "nothing was changed; try again.")
    if code == sqlite3.SQLITE_FULL:
        return storage_problem(path.parent, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    cause = probe(path.parent)
    if cause is not None:
        return storage_problem(path.parent, cause)
    if code == sqlite3.SQLITE_READONLY:
        return (f"The workspace catalog {path} is read-only ({exc}): saved items can be opened but not saved or "
                "changed; make the file writable for the user running evalcore.")
    return f"The workspace catalog {path} cannot be used ({exc}): restore the workspace folder from a backup."


def _upgrade(connection: sqlite3.Connection) -> None:
    """Create the tables of a new catalog and bring an older one to :data:`SCHEMA_VERSION` (the :data:`STEPS` after
    its ``user_version``, in order), in one transaction."""
    if connection.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        version = connection.execute("PRAGMA user_version").fetchone()[0]  # another writer may have upgraded it
        for step in STEPS[version:]:
            step(connection)
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def connect(path: Path) -> sqlite3.Connection:
    """A connection for writing to the catalog at ``path``, created with its tables when new and upgraded when old;
    :class:`EvalDataError` saying what the disk refused when that cannot be done."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EvalDataError(storage_problem(path.parent, exc)) from exc
    connection = None
    try:
        connection = _open(path, "rwc")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA foreign_keys = ON")
        _upgrade(connection)
        return connection
    except sqlite3.OperationalError as exc:
        if connection is not None:
            connection.close()
        raise EvalDataError(problem(path, exc)) from exc


@contextmanager
def transaction(path: Path) -> Iterator[sqlite3.Connection]:
    """One write transaction: committed when the block ends, rolled back when it raises (nothing of it is kept).
    A write the disk or a busy catalog refuses raises :class:`EvalDataError` with :func:`problem`'s message."""
    connection = connect(path)
    try:
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        raise EvalDataError(problem(path, exc)) from exc
    finally:
        connection.close()


def rows(path: Path, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
    """The rows of a read query, also where nothing can be written (:data:`READ_MODES`). The immutable fallback
    reads the catalog as last checkpointed, which is all of it: a folder that refuses the ``-shm`` file refuses
    every writer too. A catalog not created yet lists nothing."""
    if not path.exists():
        return []
    failure: sqlite3.OperationalError | None = None
    for mode in READ_MODES:
        try:
            connection = _open(path, mode)
        except sqlite3.OperationalError as exc:
            failure = exc
            continue
        try:
            return connection.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if str(exc).startswith("no such table"):  # created, but its tables never were (a full disk)
                return []
            if (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF == sqlite3.SQLITE_BUSY:
                raise EvalDataError(problem(path, exc)) from exc
            failure = exc
        finally:
            connection.close()
    raise EvalDataError(f"The workspace catalog {path} cannot be read ({failure}): check that the user running "
                        "evalcore may read it, or restore the workspace folder from a backup.")
