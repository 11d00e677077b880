"""Logs beyond memory: leaderboard (200 paired replicates) plus calibration by model, in memory and in the engine.

``python -m benchmarks.engine [--sizes 1 10 30 100] [--repeats 3]`` writes generated logs of that many million rows
as Parquet (10 models, one example per 10 rows, 20 tasks in 2 categories, 60 % labeled, confidence; cached in
``.bench_cache/engine``, ~9 bytes a row), then times each path in a fresh subprocess and reads its peak resident
memory (``ru_maxrss`` of the child):

* ``engine``: ``scan(path)`` (validation in DuckDB), ``aggregate.leaderboard(log, n_boot=200)`` and
  ``calibration.calibration_by_model(log, n_bins=15, n_boot=200)``;
* ``memory`` (1 and 10 million rows only): ``pandas.read_parquet`` + ``evalcore.data.validation.validate`` and the same two
  calls on the canonical frame (paired multinomial bootstrap, ``ece_interval`` per model).

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


def run_once(path: str, kind: str) -> dict:
    """One timed run in this process (called in a fresh subprocess): seconds per step and peak memory."""
    import resource

    from evalcore.leaderboard import bootstrap as aggregate
    from evalcore.calibration import estimators as calibration

    steps = {}
    start = time.perf_counter()
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


def measure(millions: int, kind: str, repeats: int) -> dict:
    path = log_path(millions)
    runs = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-m", "benchmarks.engine", "--child", str(path), kind],
                             capture_output=True, text=True, cwd=ROOT, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {key: statistics.median(r[key] for r in runs) for key in runs[0]} | {"n": len(runs)}


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 30, 100], help="millions of rows")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_once(*args.child)))
        return 0
    rows = []
    for millions in args.sizes:
        for kind in (("memory", "engine") if millions <= 10 else ("engine",)):
            result = measure(millions, kind, args.repeats)
            print(f"  {millions} million rows, {kind}: {result['total']:.1f} s, {result['peak_mb']:,.0f} MB",
                  flush=True)
            rows.append((millions, kind, result))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
