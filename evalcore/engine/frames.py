"""A log in memory as a :class:`~evalcore.engine.scan.LazyLog`: one path for every log.

:func:`from_frame` hands a validated canonical frame (:func:`evalcore.data.validation.validate`) to an in-process
DuckDB, which reads the columns in place (a registered Arrow view of the frame's arrays: pandas' strings are
Arrow-backed, so no copy into the database, and DuckDB scans Arrow in parallel), so the methods run the same reductions (:mod:`.reductions`, :mod:`.poisson`)
on a frame as on a log stored in an engine. The LazyLog keeps the frame: :func:`evalcore.engine.examples.fetch` hands
a restriction of it back without a round trip.

Only the roles and ``n_repeats`` are registered (value roles as float64 with NaN read as missing, text roles as
strings): other columns may hold Python objects DuckDB cannot type; per-example views take them from the frame.
"""

from __future__ import annotations

import itertools

import pandas as pd
import pyarrow as pa

from evalcore.data.repeats import N_REPEATS, per_example
from evalcore.data.schema import BATTLES, LOG
from evalcore.errors import EvalDataError
from evalcore.engine.connection import duckdb_connection
from evalcore.engine.scan import TEXT_ROLES, VALUE_ROLES, LazyLog, missing_nan, scan

#: text and value roles of a battles log
BATTLE_TEXT = ("model_a", "model_b")
BATTLE_VALUES = ("outcome", "judge")

_names = itertools.count()
#: rows per Arrow batch of a registered frame: DuckDB scans batches in parallel
CHUNK_ROWS = 122_880


def from_frame(frame: pd.DataFrame, source: str, kind: str = LOG) -> LazyLog:
    """A :class:`LazyLog` reading ``frame`` (a canonical per-example log of ``kind`` LOG, or BATTLES) in place;
    ``source`` names it in messages. The frame must not change afterwards (DuckDB reads its arrays)."""
    if kind not in (LOG, BATTLES):
        raise EvalDataError(f"{source}: a {kind} table is not a per-example log; only per-example logs and "
                            "battles are analysed through the engine's reductions.")
    text, values = (BATTLE_TEXT, BATTLE_VALUES) if kind == BATTLES else (TEXT_ROLES, (*VALUE_ROLES, N_REPEATS))
    present = [c for c in (*text, *values) if c in frame.columns]
    missing = [c for c in text if c not in frame.columns]
    if missing:
        raise EvalDataError(f"{source}: the log lacks the column(s) {', '.join(map(repr, missing))}; load it with "
                            "evalcore.data.validation.load_eval_log.")
    con = duckdb_connection()
    name = f"evalcore_frame_{next(_names)}"
    arrow = pa.Table.from_pandas(frame[present], preserve_index=False)
    con.con.register(name, pa.Table.from_batches(arrow.to_batches(max_chunksize=CHUNK_ROWS), arrow.schema))
    raw = con.table(name)
    table = raw.select(**{c: raw[c].cast("string") for c in text},
                       **{c: missing_nan(raw[c].cast("float64")) for c in values if c in present})
    report = frame.attrs.get("report")
    mapping = dict(report["mapping"]) if isinstance(report, dict) and report.get("mapping") else {
        c: c for c in present if c != N_REPEATS}
    return LazyLog(table, source, mapping, len(frame), kind=kind, frame=frame)


def as_log(data, source: str = "the log") -> LazyLog:
    """``data`` as a LazyLog: itself if it is one; :func:`from_frame` of a validated frame (its kind from the
    validation report it carries), with repeated samples averaged per example first
    (:func:`evalcore.data.repeats.per_example`: the example is the unit); any other frame is validated in the
    engine as :func:`evalcore.engine.scan` validates a file."""
    if isinstance(data, LazyLog):
        return data
    report = data.attrs.get("report")
    if not isinstance(report, dict):  # not validated: checked in the engine as a scanned file is
        return _scanned(data)
    kind = report.get("kind", LOG)
    return from_frame(per_example(data) if kind == LOG else data, source, kind)


def _scanned(frame: pd.DataFrame) -> LazyLog:
    """A frame that did not come from :func:`evalcore.data.validation.validate`, validated in the engine
    (:func:`evalcore.engine.scan`: roles from the column names, values, identities, repeated rows)."""
    con = duckdb_connection()
    name = f"evalcore_frame_{next(_names)}"
    con.con.register(name, frame)
    return scan(con.table(name))
