"""Inputs of the aggregation benchmarks (issue 4): the VTAB-1k leaderboard and a simulated VTAB-sized log.

* :func:`vtab_path`: ``../shared/data/vtab_1k.csv`` (16 models x 19 tasks, three categories) or None when absent;
  load it with :func:`evalcore.data.validation.load_eval_log` (a summary frame model, task, category, n, n_correct).
* :func:`paired_log`: a seeded, paired per-example log the size of VTAB's test sets: 16 models x 19 tasks with the
  VTAB test-set sizes (:data:`VTAB_TASKS`, 387,904 examples in all, 6,206,464 rows), the same examples for
  every model of a task. P(correct) = sigmoid(model skill + task ease - example difficulty), so models are
  correlated through the shared example difficulty. The canonical frame (model, example_id, task, category,
  correct as float) is built directly from integer codes: model, task, category and example_id are pandas
  Categoricals (example ids are the integer-like strings "0", "1", ... built once and shared by the tasks, since an
  id only has to be unique within its task), so building it takes about a second instead of minutes of string
  operations.
* :func:`correctness_matrices` and :func:`naive_resampling`: the naive paired bootstrap used as the speed-up
  reference: per replicate and task, draw ``N_j`` example indices and fancy-index the (n_models, N_j) 0/1 matrix
  (``C[:, idx].mean(axis=1)``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
VTAB = ROOT.parent / "shared" / "data" / "vtab_1k.csv"

#: (task, category, test-set size) of VTAB-1k (``../shared/data/vtab_test_sizes.csv``, column test_size)
VTAB_TASKS = (
    ("Caltech101", "natural", 6084),
    ("CIFAR-100", "natural", 10000),
    ("DTD", "natural", 1880),
    ("Flowers102", "natural", 6149),
    ("Pets", "natural", 3669),
    ("Sun397", "natural", 21750),
    ("SVHN", "natural", 26032),
    ("Camelyon", "specialized", 32768),
    ("EuroSAT", "specialized", 5400),
    ("Resisc45", "specialized", 6300),
    ("Retinopathy", "specialized", 42670),
    ("Clevr-Count", "structured", 15000),
    ("Clevr-Dist", "structured", 15000),
    ("DMLab", "structured", 22735),
    ("dSpr-Loc", "structured", 73728),
    ("dSpr-Orient", "structured", 73728),
    ("KITTI-Dist", "structured", 711),
    ("sNORB-Azim", "structured", 12150),
    ("sNORB-Elev", "structured", 12150),
)
N_MODELS = 16


def vtab_path() -> Path | None:
    return VTAB if VTAB.exists() else None


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def paired_log(seed: int = 0, n_models: int = N_MODELS) -> pd.DataFrame:
    """Canonical paired per-example log of ``n_models`` models on the VTAB test sets (module doc)."""
    rng = np.random.default_rng(seed)
    sizes = np.array([n for _, _, n in VTAB_TASKS], dtype=np.int64)
    skill = np.linspace(1.5, -0.5, n_models)
    task_ease = rng.normal(0.5, 0.8, size=len(VTAB_TASKS))
    models = [f"model-{i:02d}" for i in range(n_models)]
    tasks = [t for t, _, _ in VTAB_TASKS]
    cats = list(dict.fromkeys(c for _, c, _ in VTAB_TASKS))
    cat_of_task = np.array([cats.index(c) for _, c, _ in VTAB_TASKS])
    ids = np.arange(sizes.max()).astype(str)  # built once; an example id only has to be unique within its task
    model_code, task_code, example_code, correct = [], [], [], []
    for j, n in enumerate(sizes):
        difficulty = rng.normal(0.0, 1.2, size=n)
        p = _sigmoid(skill[:, None] + task_ease[j] - difficulty[None, :]
                     + rng.normal(0.0, 0.2, size=(n_models, 1)))  # model-by-task interaction
        correct.append((rng.random((n_models, n)) < p).astype(float).ravel())
        model_code.append(np.repeat(np.arange(n_models, dtype=np.int8), n))
        example_code.append(np.tile(np.arange(n, dtype=np.int32), n_models))
        task_code.append(np.full(n_models * n, j, dtype=np.int8))
    task_code = np.concatenate(task_code)
    return pd.DataFrame({
        "model": pd.Categorical.from_codes(np.concatenate(model_code), categories=models),
        "example_id": pd.Categorical.from_codes(np.concatenate(example_code), categories=ids),
        "task": pd.Categorical.from_codes(task_code, categories=tasks),
        "category": pd.Categorical.from_codes(cat_of_task[task_code].astype(np.int8), categories=cats),
        "correct": np.concatenate(correct),
    })


def correctness_matrices(log: pd.DataFrame) -> list[np.ndarray]:
    """Per task (in category order), the (n_models, N_j) 0/1 matrix of a :func:`paired_log` frame."""
    model = log["model"].cat.codes.to_numpy()
    task = log["task"].cat.codes.to_numpy()
    example = log["example_id"].cat.codes.to_numpy()
    correct = log["correct"].to_numpy()
    n_models = len(log["model"].cat.categories)
    mats = []
    for j in range(len(log["task"].cat.categories)):
        rows = np.flatnonzero(task == j)
        c = np.zeros((n_models, int(example[rows].max()) + 1))
        c[model[rows], example[rows]] = correct[rows]
        mats.append(c)
    return mats


def naive_resampling(mats: list[np.ndarray], n_boot: int, seed: int = 0) -> np.ndarray:
    """Naive paired bootstrap: per replicate and task, ``C[:, idx].mean(axis=1)`` with ``N_j`` drawn indices."""
    rng = np.random.default_rng(seed)
    values = np.empty((n_boot, mats[0].shape[0], len(mats)))
    for b in range(n_boot):
        for j, c in enumerate(mats):
            idx = rng.integers(0, c.shape[1], size=c.shape[1])
            values[b, :, j] = c[:, idx].mean(axis=1)
    return values
