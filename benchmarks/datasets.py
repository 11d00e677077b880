"""Synthetic inputs for the benchmarks: a 1,000,000-row per-example log and 1,000,000 predictions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from evalcore.demo.synthetic import TASKS

N_ROWS = 1_000_000
MODELS = ("atlas-l", "atlas-m", "breeze-7b", "cirrus", "drift-s")
MISSING_FRACTION = 0.4


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def eval_log(n_rows: int = N_ROWS, seed: int = 0) -> pd.DataFrame:
    """A paired per-example log: 5 models x (n_rows / 5) examples over 9 tasks, 3 categories, 60 groups.

    Columns: model, example_id, task, category, group (text), correct (0/1, about 40% missing = unlabeled),
    confidence and proxy (probabilities) and one numeric feature, difficulty_hint.
    """
    rng = np.random.default_rng(seed)
    n_examples = n_rows // len(MODELS)
    task_ix = rng.integers(0, len(TASKS), size=n_examples)
    tasks = np.array([t.name for t in TASKS])
    categories = np.array([t.category for t in TASKS])
    # the 60 groups of the demo: each task owns its own n_groups groups
    group_names = np.array([f"{t.name}/g{k + 1:02d}" for t in TASKS for k in range(t.n_groups)])
    first_group = np.cumsum([0] + [t.n_groups for t in TASKS])[:-1]
    n_groups = np.array([t.n_groups for t in TASKS])
    group_ix = first_group[task_ix] + (rng.random(n_examples) * n_groups[task_ix]).astype(int)
    difficulty = rng.normal(0.0, 1.0, size=n_examples)
    ease = np.array([t.ease for t in TASKS])[task_ix]
    labeled = rng.random(n_examples) >= MISSING_FRACTION  # the same examples are labeled for every model
    example_id = np.char.add(np.char.add(tasks[task_ix], "-"), np.char.zfill(np.arange(n_examples).astype(str), 7))

    frames = []
    for m, model in enumerate(MODELS):
        logit = 1.5 - 0.4 * m + ease - difficulty
        correct = (rng.random(n_examples) < _sigmoid(logit)).astype(float)
        frames.append(pd.DataFrame({
            "model": model,
            "example_id": example_id,
            "task": tasks[task_ix],
            "category": categories[task_ix],
            "group": group_names[group_ix],
            "correct": np.where(labeled, correct, np.nan),
            # six decimals, as exported logs usually hold them
            "confidence": np.round(_sigmoid((0.6 + 0.3 * m) * logit + 0.1), 6),
            "proxy": np.round(_sigmoid(logit + rng.normal(0.0, 0.8, size=n_examples)), 6),
            "difficulty_hint": np.round(difficulty + rng.normal(0.0, 0.6, size=n_examples), 6),
        }))
    return pd.concat(frames, ignore_index=True)


def write_eval_log(folder: Path, n_rows: int = N_ROWS) -> dict[str, Path]:
    """Write the log once as CSV and as Parquet into ``folder``; returns {"csv": path, "parquet": path}.

    The CSV is written by pyarrow (ten times faster than ``DataFrame.to_csv``) without quotes, as pandas and
    spreadsheets write such a table: a missing label is an empty field, 0/1 labels are written as ``0``/``1``.
    """
    table = pa.Table.from_pandas(eval_log(n_rows), preserve_index=False)  # NaN -> null -> empty field
    paths = {"csv": folder / "eval_log.csv", "parquet": folder / "eval_log.parquet"}
    with open(paths["csv"], "wb") as out:
        out.write((",".join(table.column_names) + "\n").encode())  # pyarrow would quote the header's names
        pa_csv.write_csv(table, out, pa_csv.WriteOptions(include_header=False, quoting_style="none"))
    table.to_pandas().to_parquet(paths["parquet"], index=False)
    return paths


def predictions(n: int = N_ROWS, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``(confidence, correct)`` of n labeled predictions from a slightly overconfident model."""
    rng = np.random.default_rng(seed)
    logit = rng.normal(1.0, 1.5, size=n)
    correct = (rng.random(n) < _sigmoid(logit)).astype(float)
    confidence = np.round(_sigmoid(1.3 * logit), 6)  # values as a CSV would hold them: many ties
    return confidence, correct
