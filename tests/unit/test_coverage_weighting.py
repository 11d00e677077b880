"""Coverage of the weighted-aggregate intervals (benchmarks/coverage/weighting.py holds the populations and the table).

A coverage test fails when the measured coverage is more than 3 points below nominal beyond Monte Carlo noise:
``measured + 2 MC SE >= nominal - 0.03``. Seeded; a few seconds each.
"""

import numpy as np
import pandas as pd
import pytest

from benchmarks.coverage import weighting as cov


def holds(row) -> bool:
    return row.measured + 2 * row.mc_se >= row.nominal - 0.03


def test_true_scores_by_hand():
    population = pd.DataFrame({"model": ["a", "a", "a", "b", "b", "b"], "task": ["t1", "t2", "t3"] * 2,
                               "category": ["x", "x", "y"] * 2, "n": 10, "p": [0.2, 0.4, 0.9, 0.5, 0.5, 0.1]})
    # a: category means 0.3 and 0.9; b: 0.5 and 0.1
    truth = cov.true_scores(population, (0.25, 0.75))
    assert truth.to_dict() == pytest.approx({"a": 0.25 * 0.3 + 0.75 * 0.9, "b": 0.25 * 0.5 + 0.75 * 0.1})


def test_weighted_scores_and_differences_cover_simulated():
    name, population = cov.simulated_population(0)
    rows = cov.score_rows(name, population, 40, 3, 0)
    assert [r.nominal for r in rows] == [0.834, 0.834, 0.95, 0.95] and all(r.reps == 240 for r in rows)
    assert all(holds(r) for r in rows), rows
    difference, not_wrong, *_ = cov.difference_rows(name, population, 20, 3, 0)
    assert holds(difference), difference
    assert holds(not_wrong), not_wrong


def test_ternary_map_on_vtab_small_test_sets(shared_file):
    shared_file("vtab_1k.csv")
    name, population = cov.vtab_populations()[1]  # published accuracies, N = 200: few points called
    difference, not_wrong, *_ = cov.difference_rows(name, population, 15, 3, 2)
    assert holds(difference), difference
    assert holds(not_wrong), not_wrong
    assert np.isclose(not_wrong.nominal, 0.97725, atol=1e-5)
