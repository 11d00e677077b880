"""Coverage of bayes_leaderboard's intervals (benchmarks/coverage/bayes.py holds the settings and the full table).

A coverage test fails when the measured coverage is more than 3 points below nominal beyond Monte Carlo noise:
``measured + 2 MC SE >= nominal - 0.03``. Seeded; the fits here are shorter than the benchmark's (800 draws x 2
chains), enough for these small models.
"""

import numpy as np
import pandas as pd
import pytest

from benchmarks.coverage import bayes as cov


def holds(row) -> bool:
    return row.measured + 2 * row.mc_se >= row.nominal - 0.03


def test_truth_aggregates_by_hand():
    frame = pd.DataFrame({"model": ["a"] * 3, "task": ["t1", "t2", "t3"], "category": ["x", "x", "y"],
                          "theta": [0.2, 0.4, 0.9]})
    out = cov._aggregate(frame, "theta").set_index(["scope", "name"])["theta"]
    assert out[("category", "x")] == pytest.approx(0.3) and out[("category", "y")] == pytest.approx(0.9)
    assert out[("overall", "overall")] == pytest.approx(1.5 / 3)
    assert out[("task", "t2")] == 0.4


def test_hierarchy_population_draws_from_the_prior():
    population = cov.hierarchy_population(8.0, 3.0, 100, 200, np.random.default_rng(0))
    assert population["model"].nunique() == 200 and (population.groupby("model").size() == 19).all()
    assert population["theta"].mean() == pytest.approx(8 / 11, abs=0.01)  # Beta(8, 3) mean


def test_intervals_cover_data_drawn_from_the_hierarchy():
    population = cov.hierarchy_population(8.0, 3.0, 100, 40, np.random.default_rng([5, 1]))
    rows = cov.setting_rows("hierarchy", population, seed=5, draws=800, chains=2)
    assert len(rows) == 12  # 2 kinds x 2 levels x 3 scopes
    assert all(holds(r) for r in rows), [r for r in rows if not holds(r)]
    task = [r for r in rows if "(task)" in r.method]
    assert all(r.reps == 40 * 19 for r in task)
