"""Two (or more) logs of the same model as one log whose runs are named after their files.

``runs_from_logs([("gpt-4o-jan.jsonl", frame_a), ("gpt-4o-feb.jsonl", frame_b)])`` gives one validated log whose
``model`` is "gpt-4o-jan" or "gpt-4o-feb", so ``compare_runs(combined, "gpt-4o-jan", "gpt-4o-feb")`` compares the
two runs example by example. A run's name is its file's name without folders and extensions (".jsonl.gz" counts
as one), made unique by a suffix " (2)", " (3)" ... where two files share a name. A log that holds several models
keeps them apart as "run / model" (an addition to the contract, where each log is one model). The names are
those the Data page's upload gives two files of one model (:func:`evalcore.importers.combine.run_name`), so the
dashboard and ``evalcore compare BASE NEW`` name (and compare) the same runs.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from evalcore.data.schema import LOG_ROLES
from evalcore.data.validation import validate
from evalcore.errors import EvalDataError
from evalcore.importers.combine import run_name, unique_names

__all__ = ["run_name", "runs_from_logs", "scan_runs", "unique_names"]


def runs_from_logs(logs: list[tuple[str, pd.DataFrame]], named: bool = False) -> pd.DataFrame:
    """One validated log of the (file name, validated per-example log) pairs ``logs``, its ``model`` the run name
    (module docstring; ``named``: the names given are run names already, e.g. saved datasets', kept whole); the
    report's notes say which file each run is. EvalDataError for fewer than two logs or a log that is not a
    per-example log."""
    if len(logs) < 2:
        raise EvalDataError(f"Comparing runs needs at least two logs; got {len(logs)}.")
    names = unique_names([name if named else run_name(name) for name, _ in logs])
    parts, notes, features = [], [], None
    for (source, frame), run in zip(logs, names):
        report = frame.attrs.get("report")
        if not isinstance(report, dict) or report.get("kind", "log") != "log":
            kind = report.get("kind") if isinstance(report, dict) else None
            what = {"summary": "a leaderboard summary (counts per model and task)",
                    "battles": "pairwise battles (which of two models won)",
                    "pairwise": "pairwise judgements (which of two answers won)"}.get(kind, "not a per-example log")
            raise EvalDataError(f"{source}: {what}. Comparing runs needs each run's per-example log (one row per "
                                "example with its correct or score value, as each tool writes it); evalcore "
                                f"validate {source} says what the file holds.")
        part = frame.copy()
        models = sorted(part["model"].astype(str).unique())
        part["model"] = run if len(models) == 1 else run + " / " + part["model"].astype(str)
        parts.append(part)
        feats = set(report.get("features", ()))
        features = feats if features is None else features & feats
        notes.append(f"Run '{run}' is {source} ({len(frame):,} rows, model{'s' if len(models) > 1 else ''} "
                     f"{', '.join(models)}).")
    combined = pd.concat(parts, ignore_index=True)
    derived_task = all("task" not in frame.attrs["report"].get("mapping", {"task": "task"}) for _, frame in logs)
    roles = [c for c in combined.columns if (c in LOG_ROLES or c == "repeat") and not (c == "task" and derived_task)]
    keep = roles + sorted(f for f in (features or ()) if f in combined.columns and f not in roles)
    out = validate(combined[keep], mapping={c: c for c in roles})  # the other columns: numeric features
    report = out.attrs["report"]
    report["notes"] = (*notes, *report["notes"])
    report["files"] = tuple(str(name) for name, _ in logs)
    return out


def scan_runs(paths: list, mapping: dict[str, str | None] | None = None, names: list[str] | None = None):
    """The engine's :func:`runs_from_logs` (an addition to the contract): each path (a Parquet or CSV file, folder
    or glob; ``mapping`` as for :func:`evalcore.engine.scan.scan`) is scanned and validated on one DuckDB
    connection, its rows (each sample, with its text) get the run name (``names``, default the file's name as in
    :func:`run_name`, made unique; a log of several models "run / model") as ``model``, and the union of the runs'
    common columns is validated again as one :class:`~evalcore.engine.scan.LazyLog` (repeats averaged per example
    there). Nothing is loaded into memory."""
    import ibis

    from evalcore.engine.connection import duckdb_connection
    from evalcore.engine.scan import scan

    if len(paths) < 2:
        raise EvalDataError(f"Comparing runs needs at least two logs; got {len(paths)}.")
    names = unique_names(list(names) if names is not None else [run_name(str(p)) for p in paths])
    con = duckdb_connection()
    parts, derived_task = [], True
    for path, run in zip(paths, names):
        log = scan(str(path), mapping, connection=con)
        derived_task &= "task" not in log.mapping
        rows = log.rows if log.rows is not None else log.table
        models = log.models()
        model = ibis.literal(run) if len(models) == 1 else ibis.literal(run + " / ") + rows.model
        parts.append(rows.mutate(model=model))
    common = [c for c in parts[0].columns if all(c in p.columns for p in parts[1:])
              and not (c == "task" and derived_task)]  # a task filled in from the category: filled in again
    union = parts[0].select(*common)
    for part in parts[1:]:
        union = union.union(part.select(*common))
    return replace(scan(union), source=", ".join(str(p) for p in paths))
