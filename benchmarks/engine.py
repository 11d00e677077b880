"""Logs beyond memory: leaderboard (200 paired replicates) plus calibration by model, in memory, in the engine and in
bare DuckDB.

``python -m benchmarks.engine [--sizes 1 10 30 100] [--repeats 3] [--paths memory engine duckdb]`` writes generated
logs of that many million rows as Parquet (10 models, one example per 10 rows, 20 tasks in 2 categories, 60 %
labeled, confidence; cached in ``.bench_cache/engine``, ~12 bytes a row), then times each path in a fresh subprocess,
the paths taking turns within each repeat, and reads its peak resident memory (``ru_maxrss`` of the child):

* ``engine``: ``scan(path)`` (validation in DuckDB: the "open" step), ``aggregate.leaderboard(log, n_boot=200)`` and
  ``calibration.calibration_by_model(log, n_bins=15, n_boot=200)``;
* ``duckdb``, the baseline: the GROUP BY passes those two calls run in the engine, written by hand in SQL and run
  with the duckdb Python API on a connection with the engine's settings (:func:`evalcore.engine.duckdb_connection`:
  memory limit, spill folder, threads), each result fetched as an Arrow table — for the leaderboard per (model,
  category, task) the labeled count, rows, Σy and Σy², and per (model, task, bucket) the labeled rows and Σy; for
  calibration per (model, bin) n, Σr, Σr², Σc(1 - c) and Σc of the residual r = y - c, and per (model, bin,
  bucket) the rows and Σr. The bucket is the engine's h(e) = first four hex digits of MD5(seed ‖ task ‖
  example_id) mod 8192 (:mod:`evalcore.engine.poisson`), computed once per row; the bin is the engine's uniform bin
  with its edge corrections (:func:`evalcore.engine.reductions._uniform_bin`). NaN is a missing value and the
  confidence is clipped to [0, 1], as in the engine. The results equal the engine's (:func:`bare_passes`; the engine
  numbers each cell in the same pass with a join, so its bucket sums come back keyed by number, here by text: the
  same groups, measured at the same speed);
* ``memory`` (1 and 10 million rows only): ``pandas.read_parquet`` + ``evalcore.data.validation.validate`` and the same two
  calls on the canonical frame.

A second table compares the medians: the engine's leaderboard + calibration against the bare passes (target: within
1.3x), and the engine's validation time per size with its growth from the previous size (target: linear, e.g.
within 3.3x for 3x the rows).

Targets (issue 17): 30 million rows under 3 minutes and 1.5 GB; 100 million rows under 3 GB.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".bench_cache" / "engine"
MODELS = 10
TASKS = 20
CHUNK = 1_000_000
N_BOOT = 200
TARGETS = {30: (180.0, 1536.0), 100: (None, 3072.0)}  # million rows -> (seconds, MB)
PATHS = ("memory", "engine", "duckdb")
SEED = 0
N_BINS = 15
#: the baseline's passes; {bucket}: h(e) of the row, {bin}: its uniform bin (SQL expressions on the view "log")
BARE_SQL = {
    "leaderboard": {
        "cells": "SELECT model, category, task, count(y) AS n, count(*) AS rows, sum(y) AS total, "
                 "sum(y * y) AS total_sq FROM log GROUP BY ALL",
        "cell_buckets": "SELECT model, task, {bucket} AS bucket, count(*) AS rows, sum(y) AS correct FROM log "
                        "WHERE y IS NOT NULL GROUP BY ALL",
    },
    "calibration": {
        "bins": "SELECT model, {bin} AS bin, count(*) AS n, sum(y - c) AS residual, sum((y - c) * (y - c)) AS "
                "residual_sq, sum(c * (1 - c)) AS spread, sum(c) AS sum_conf FROM log "
                "WHERE y IS NOT NULL AND c IS NOT NULL GROUP BY ALL",
        "bin_buckets": "SELECT model, {bin} AS bin, {bucket} AS bucket, count(*) AS rows, sum(y - c) AS residual "
                       "FROM log WHERE y IS NOT NULL AND c IS NOT NULL GROUP BY ALL",
    },
}


def write_log(path: Path, millions: int, seed: int = 0) -> None:
    """``millions`` million rows: MODELS models x (rows / MODELS) examples, written in row groups of examples."""
    rng = np.random.default_rng(seed)
    skill = np.linspace(-0.2, 1.6, MODELS)
    n_examples = millions * 1_000_000 // MODELS
    writer = None
    for start in range(0, n_examples, CHUNK // MODELS):
        ids = np.arange(start, min(start + CHUNK // MODELS, n_examples))
        difficulty = rng.normal(0, 1, ids.size)
        labeled = rng.random(ids.size) < 0.6
        task = ids % TASKS
        for m in range(MODELS):
            p = 1 / (1 + np.exp(-(skill[m] - difficulty)))
            correct = (rng.random(ids.size) < p).astype(np.float32)
            table = pa.table({
                "model": pa.array(np.full(ids.size, f"model-{m:02d}")).dictionary_encode(),
                "example_id": ids.astype(np.int64),
                "task": pa.array(np.char.add("task-", task.astype(str))).dictionary_encode(),
                "category": pa.array(np.where(task < TASKS // 2, "cat-a", "cat-b")).dictionary_encode(),
                "correct": pa.array(np.where(labeled, correct, np.nan), mask=~labeled),
                "confidence": np.clip(p + rng.normal(0, 0.08, ids.size), 0, 1).astype(np.float32)})
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table)
    writer.close()


def log_path(millions: int) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"log-{millions}m.parquet"
    if not path.exists():
        start = time.perf_counter()
        partial = path.with_suffix(".partial")
        write_log(partial, millions)
        partial.rename(path)
        print(f"  wrote {path.name} ({path.stat().st_size / 2**20:,.0f} MB) in {time.perf_counter() - start:.0f} s",
              flush=True)
    return path


def bare_sql(path: str, seed: int = SEED, n_bins: int = N_BINS) -> tuple[str, dict[str, dict[str, str]]]:
    """The baseline's view of the Parquet file (the engine's roles: example_id as text, NaN as null, confidence
    clipped to [0, 1]) and its passes by step. h(e) reads the first four hex digits of one MD5 per row; the bin, as
    the engine's: b0 = min(floor(c M), M - 1), b1 = b0 + [c >= (b0 + 1) / M and b0 < M - 1], bin = b1 - [c < b1 / M]."""
    view = (f"CREATE OR REPLACE VIEW log AS SELECT model, task, category, CAST(example_id AS VARCHAR) AS example_id, "
            "CASE WHEN isnan(correct) THEN NULL ELSE CAST(correct AS DOUBLE) END AS y, "
            "CASE WHEN isnan(confidence) THEN NULL WHEN confidence < 0 THEN 0.0 WHEN confidence > 1 THEN 1.0 "
            "ELSE CAST(confidence AS DOUBLE) END AS c "
            f"FROM read_parquet('{path}')")
    bucket = (f"CAST('0x' || substr(md5('{int(seed)}' || chr(31) || task || chr(31) || example_id), 1, 4) AS INTEGER)"
              " % 8192")
    low = f"least(CAST(floor(c * {n_bins}) AS BIGINT), {n_bins - 1})"
    raised = f"({low} + CAST(c >= CAST({low} + 1 AS DOUBLE) / {n_bins} AND {low} < {n_bins - 1} AS BIGINT))"
    binned = f"({raised} - CAST(c < CAST({raised} AS DOUBLE) / {n_bins} AS BIGINT))"
    return view, {step: {name: sql.format(bucket=bucket, bin=binned) for name, sql in passes.items()}
                  for step, passes in BARE_SQL.items()}


def bare_passes(path: str, timings: dict | None = None) -> dict:
    """The baseline's results {pass: Arrow table}, with the seconds of each step in ``timings``."""
    from evalcore.engine import duckdb_connection

    con = duckdb_connection().con  # the duckdb connection itself: SQL in, Arrow out
    view, steps = bare_sql(path)
    con.execute(view)
    out = {}
    for step, passes in steps.items():
        start = time.perf_counter()
        out |= {name: con.execute(sql).to_arrow_table() for name, sql in passes.items()}
        if timings is not None:
            timings[step] = time.perf_counter() - start
    return out


def run_once(path: str, kind: str) -> dict:
    """One timed run in this process (called in a fresh subprocess): seconds per step and peak memory."""
    import resource

    from evalcore.leaderboard import bootstrap as aggregate
    from evalcore.calibration import estimators as calibration

    steps = {}
    start = time.perf_counter()
    if kind == "duckdb":
        steps["open"] = 0.0
        bare_passes(path, steps)
        steps["total"] = time.perf_counter() - start
        steps["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return steps
    if kind == "engine":
        from evalcore.engine import scan

        log = scan(path)
    else:
        import pandas as pd

        from evalcore.data.validation import validate

        log = validate(pd.read_parquet(path))
    steps["open"] = time.perf_counter() - start
    mark = time.perf_counter()
    aggregate.leaderboard(log, level=0.95, n_boot=N_BOOT, seed=0)
    steps["leaderboard"] = time.perf_counter() - mark
    mark = time.perf_counter()
    calibration.calibration_by_model(log, n_bins=15, n_boot=N_BOOT, seed=0)
    steps["calibration"] = time.perf_counter() - mark
    steps["total"] = time.perf_counter() - start
    steps["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return steps


def measure(millions: int, kinds: list[str], repeats: int) -> dict[str, dict]:
    """The median of each step over ``repeats`` runs of every path in ``kinds``, the paths taking turns (so a
    change in the machine's load falls on all of them alike)."""
    path = log_path(millions)
    runs: dict[str, list[dict]] = {kind: [] for kind in kinds}
    for _ in range(repeats):
        for kind in kinds:
            out = subprocess.run([sys.executable, "-m", "benchmarks.engine", "--child", str(path), kind],
                                 capture_output=True, text=True, cwd=ROOT, check=True)
            runs[kind].append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {kind: {key: statistics.median(r[key] for r in rs) for key in rs[0]} | {"n": len(rs)}
            for kind, rs in runs.items()}


def table(rows: list[tuple[int, str, dict]]) -> str:
    head = ("| rows | path | n | open s | leaderboard s | calibration s | total s (median) | peak MB | target |\n"
            "|---:|---|---:|---:|---:|---:|---:|---:|---|")
    lines = []
    for millions, kind, m in rows:
        seconds, mb = TARGETS.get(millions, (None, None)) if kind == "engine" else (None, None)
        target = ", ".join(([f"< {seconds / 60:g} min" + (" yes" if m["total"] < seconds else " **no**")]
                            if seconds else []) + ([f"< {mb / 1024:g} GB" + (" yes" if m["peak_mb"] < mb else " **no**")]
                                                   if mb else [])) or "–"
        lines.append(f"| {millions:,} million | {kind} | {m['n']} | {m['open']:.1f} | {m['leaderboard']:.1f} | "
                     f"{m['calibration']:.1f} | {m['total']:.1f} | {m['peak_mb']:,.0f} | {target} |")
    return head + "\n" + "\n".join(lines)


def comparison(rows: list[tuple[int, str, dict]]) -> str:
    """The engine's leaderboard + calibration against the bare DuckDB passes, and its validation per size."""
    found = {(millions, kind): m for millions, kind, m in rows}
    head = ("| rows | engine leaderboard + calibration s | bare DuckDB s | ratio (target < 1.3) | engine peak MB | "
            "DuckDB peak MB | engine validation s | validation growth |\n|---:|---:|---:|---:|---:|---:|---:|---|")
    lines, previous = [], None
    for millions in sorted({m for m, _ in found}):
        engine, bare = found.get((millions, "engine")), found.get((millions, "duckdb"))
        if engine is None:
            continue
        work = engine["leaderboard"] + engine["calibration"]
        base = bare["leaderboard"] + bare["calibration"] if bare else None
        growth = f"{engine['open'] / previous[1]:.2f}x for {millions / previous[0]:g}x rows" if previous else "–"
        bare_cells = f"{base:.1f} | {work / base:.2f}" if bare else "– | –"
        bare_mb = f"{bare['peak_mb']:,.0f}" if bare else "–"
        lines.append(f"| {millions:,} million | {work:.1f} | {bare_cells} | {engine['peak_mb']:,.0f} | {bare_mb} | "
                     f"{engine['open']:.1f} | {growth} |")
        previous = (millions, engine["open"])
    return head + "\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 30, 100], help="millions of rows")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS),
                        help="which paths to time (memory only up to 10 million rows)")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_once(*args.child)))
        return 0
    rows = []
    for millions in args.sizes:
        kinds = [k for k in PATHS if k in args.paths and (k != "memory" or millions <= 10)]
        for kind, result in measure(millions, kinds, args.repeats).items():
            print(f"  {millions} million rows, {kind}: {result['total']:.1f} s, {result['peak_mb']:,.0f} MB",
                  flush=True)
            rows.append((millions, kind, result))
    print(table(rows))
    print()
    print(comparison(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
