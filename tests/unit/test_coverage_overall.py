"""Coverage of the overall number's interval (benchmarks/coverage/overall.py), sized to run in seconds.

The overall number is the mean over tasks with the normal interval ``se = sqrt(sum_j se_j^2) / T``
(:func:`evalcore.stats.overall.overall_table`). A coverage check fails when the measured coverage is more than 3 points
below nominal beyond Monte Carlo noise: ``measured + 2 MC SE >= nominal - 0.03``. Seeded. The full-size numbers:
``python -m benchmarks.coverage --only overall``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from benchmarks.coverage import overall as cov
from evalcore.stats.overall import overall_table


def holds(row) -> bool:
    return row.measured + 2 * row.mc_se >= row.nominal - 0.03


def test_interval_by_hand():
    # model a: 8/10 and 5/10 -> estimate 0.65, se = sqrt(0.8*0.2/10 + 0.5*0.5/10) / 2 = sqrt(0.041) / 2 = 0.101242
    summary = pd.DataFrame({"model": ["a", "a"], "task": ["t1", "t2"], "n": [10, 10], "n_correct": [8, 5]})
    row = overall_table(summary, summary=True).iloc[0]
    assert row.estimate == pytest.approx(0.65)
    assert row.se == pytest.approx(math.sqrt(0.041) / 2, rel=1e-12)
    assert row.ci_high - row.estimate == pytest.approx(1.959964 * 0.1012423, rel=1e-5)
    truth = pd.Series([0.6, 0.9], index=["a", "b"])
    hit, width = cov.held(pd.DataFrame({"model": ["b", "a"], "ci_low": [0.95, 0.5], "ci_high": [0.99, 0.7]}), truth)
    assert hit.tolist() == [True, False] and width == pytest.approx([0.2, 0.04])  # in truth's order: a, then b


def test_a_task_with_one_label_keeps_the_models_interval():
    # t1: 1 of 2 (se^2 = 0.5*0.5/2 = 0.125); t2: 1 of 1 (Jeffreys p = 1.5/2 = 0.75, se^2 = 0.1875)
    # -> se = sqrt(0.3125) / 2 = 0.279508, estimate (0.5 + 1) / 2 = 0.75, the same from a log and from a summary
    log = pd.DataFrame({"model": "a", "task": ["t1", "t1", "t2"], "example_id": ["1", "2", "3"],
                        "correct": [1.0, 0.0, 1.0]})
    summary = pd.DataFrame({"model": ["a", "a"], "task": ["t1", "t2"], "n": [2, 1], "n_correct": [1, 1]})
    for row in (overall_table(log).iloc[0], overall_table(summary, summary=True).iloc[0]):
        assert row.estimate == pytest.approx(0.75) and row.se == pytest.approx(math.sqrt(0.3125) / 2, rel=1e-12)
        assert row.ci_low == pytest.approx(0.75 - 1.959964 * 0.2795085, rel=1e-5) and row.ci_high == 1.0


def test_simulated_truth_is_the_mean_over_tasks_and_the_log_path_agrees():
    rng = np.random.default_rng(3)
    summary, truth = cov.simulated_summary(4, 10, 0.85, 0.95, 3, rng)
    assert len(summary) == 12 and (summary["n"] == 10).all() and summary["n_correct"].between(0, 10).all()
    assert truth.between(0.85, 0.95).all() and list(truth.index) == ["m000", "m001", "m002"]
    # the same counts as a per-example log give the same table (the benchmark uses the faster summary path)
    rows = [{"model": r.model, "task": r.task, "example_id": f"{r.task}-{i}", "correct": float(i < r.n_correct)}
            for r in summary.itertuples() for i in range(r.n)]
    from_log = overall_table(pd.DataFrame(rows))
    from_summary = overall_table(summary, summary=True)
    cols = ["model", "n_tasks", "n", "estimate", "se", "ci_low", "ci_high"]
    pd.testing.assert_frame_equal(from_log[cols], from_summary[cols], check_dtype=False)


@pytest.mark.parametrize("setting", [(10, 10, 0.85, 0.95), (10, 30, 0.85, 0.95), (3, 10, 0.85, 0.95),
                                     (10, 10, 0.30, 0.95)])
def test_simulation_with_known_truth_covers_at_small_n(setting):
    rows = cov.simulated_rows(setting, reps=16, seed=1)
    assert [r.nominal for r in rows] == list(cov.LEVELS) and all(r.reps == 16 * cov.MODELS for r in rows)
    assert all(holds(r) for r in rows), rows


def test_mmlu_pro_subsamples_cover_the_full_data_mean_over_categories(shared_file):
    shared_file("mmlu_pro_per_question.csv.gz")
    log, truth = cov.mmlu_pro()
    assert len(truth) == 29 and truth.between(0, 1).all()
    rows = cov.mmlu_pro_rows(log, truth, 30, reps=8, seed=1)
    assert all(r.reps == 8 for r in rows)
    assert all(holds(r) for r in rows), rows

