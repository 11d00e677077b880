"""Inputs of the subgroup benchmarks (issue 3): a seeded 1,000-unit log, m2 values, the MMLU-Pro log.

* :func:`eb_log`: a paired per-example log of 4 models x 250 groups (1,000 (model, group) units) over 10 tasks,
  5-60 labeled examples per group (the same examples for every model) plus as many unlabeled ones, with a
  ``confidence`` column and one numeric feature (``difficulty_hint``), generated like :mod:`evalcore.demo.synthetic`:
  P(correct) = sigmoid(skill + task ease + group ease - example difficulty).
* :func:`m2_values`: 1,000 distinct :math:`m_2 = s^2 / A` spread log-uniformly over [1e-3, 1e3] (EB fits give
  values from about 0.01 to a few hundred), plus 0.
* :func:`mmlu_pro_path`: ``../shared/data/mmlu_pro_per_question.csv.gz`` or None when the folder is absent.
* :func:`cpu_seconds`: CPU time of this process and its worker processes (the holdout study's joblib workers), to
  tell a slow run on a busy machine from a slow computation.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
MMLU_PRO = ROOT.parent / "shared" / "data" / "mmlu_pro_per_question.csv.gz"

EB_MODELS = (("atlas-l", 1.6), ("breeze-7b", 0.8), ("cirrus", 0.2), ("drift-s", -0.4))
EB_GROUPS = 250
EB_TASKS = 10
MIN_LABELED, MAX_LABELED = 5, 60


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def eb_log(seed: int = 0) -> pd.DataFrame:
    """Canonical log with 4 models x 250 groups = 1,000 units (module doc); about 66,000 rows."""
    rng = np.random.default_rng(seed)
    labeled_n = rng.integers(MIN_LABELED, MAX_LABELED + 1, size=EB_GROUPS)
    total_n = 2 * labeled_n  # as many unlabeled examples: their confidence and feature still count
    group_of = np.repeat(np.arange(EB_GROUPS), total_n)
    labeled = np.concatenate([np.arange(n) < k for n, k in zip(total_n, labeled_n)])
    task_of_group = np.arange(EB_GROUPS) % EB_TASKS
    task_ease = rng.normal(0.0, 0.5, size=EB_TASKS)
    group_ease = rng.normal(0.0, 0.6, size=EB_GROUPS)
    n_examples = group_of.size
    difficulty = rng.normal(0.0, 1.0, size=n_examples)
    hint = np.round(difficulty + rng.normal(0.0, 0.6, size=n_examples), 6)
    tasks = np.array([f"task{t:02d}" for t in range(EB_TASKS)])
    groups = np.array([f"{tasks[task_of_group[g]]}/g{g:03d}" for g in range(EB_GROUPS)])
    base = task_ease[task_of_group[group_of]] + group_ease[group_of] - difficulty
    frames = []
    for m, (name, skill) in enumerate(EB_MODELS):
        logit = skill + base + rng.normal(0.0, 0.3, size=EB_GROUPS)[group_of]  # model-by-group interaction
        correct = (rng.random(n_examples) < _sigmoid(logit)).astype(float)
        frames.append(pd.DataFrame({
            "model": name,
            "example_id": np.char.add("ex-", np.arange(n_examples).astype(str)),
            "task": tasks[task_of_group[group_of]],
            "category": "all",
            "group": groups[group_of],
            "correct": np.where(labeled, correct, np.nan),
            "confidence": np.round(_sigmoid((0.7 + 0.2 * m) * logit + 0.1), 6),
            "difficulty_hint": hint,
        }))
    return pd.concat(frames, ignore_index=True)


def m2_values(n: int = 1000) -> np.ndarray:
    """``n`` distinct m2: 0 and ``n - 1`` values log-uniform on [1e-3, 1e3] (a fixed grid, no randomness)."""
    return np.concatenate([[0.0], np.logspace(-3, 3, n - 1)])


def mmlu_pro_path() -> Path | None:
    return MMLU_PRO if MMLU_PRO.exists() else None


def cpu_seconds() -> float | None:
    """User + system CPU seconds of this process (its threads and waited-for children) and of its live
    descendants, from Linux ``/proc``; None where that is unavailable."""
    try:
        tick = os.sysconf("SC_CLK_TCK")
        parent, used = {}, {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", encoding="ascii") as f:
                    stat = f.read()
            except OSError:  # the process ended meanwhile
                continue
            fields = stat[stat.rindex(")") + 2:].split()  # fields from the 3rd (state) on
            pid = int(entry.name)
            parent[pid] = int(fields[1])
            used[pid] = int(fields[11]) + int(fields[12])  # utime + stime
            if pid == os.getpid():
                used[pid] += int(fields[13]) + int(fields[14])  # cutime + cstime: children that ended
        tree, frontier = {os.getpid()}, [os.getpid()]
        while frontier:
            children = [pid for pid, ppid in parent.items() if ppid in frontier and pid not in tree]
            tree.update(children)
            frontier = children
        return sum(used.get(pid, 0) for pid in tree) / tick
    except (OSError, ValueError):
        return None
