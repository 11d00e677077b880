"""Issue 41: empirical Bayes by category when each model is scored on its own questions (benchmarks/coverage/eb.py,
setting "questions drawn per model"), and the direct fallback of a fold that cannot estimate A honestly.

Before the fix the synthetic regression was fitted on the training units' own leave-out group difficulty, which,
with the groups told apart, gives back the unit's label (``estimates._training_difficulty``): on MMLU-Pro, 5
questions per (model, category), coverage 0.853 at 90 % and EB/DT MSE 0.80 (40 repetitions); after, 0.936 and 0.31.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks.coverage import eb
from evalcore.subgroups.estimates import _training_difficulty, empirical_bayes


def test_mmlu_pro_by_category_with_five_questions_drawn_per_model(shared_file):
    shared_file("mmlu_pro_per_question.csv.gz")  # skips without the shared data
    result = eb.measure(*eb.mmlu_pro("category"), 5, reps=5, seed=4, shared=False, numeric=("n_options",))
    for level in eb.LEVELS:
        shares = np.asarray(result[level]["hits"])
        measured, se = shares.mean(), shares.std(ddof=1) / np.sqrt(shares.size)
        assert measured + 2 * se >= level - 0.015, (level, measured, se)  # before: 0.853 at 90 %, 0.910 at 95 %
    assert result["mse_ratio"] < 0.5  # before 0.80, after 0.31 (40 repetitions)


def simulated_log(seed: int, shared: bool, groups: int = 12, models: int = 10, k: int = 5) -> tuple:
    """Known truth: P(correct) = sigmoid(skill + group ease + interaction - question difficulty) over 300 questions
    per group; tasks are the groups (as MMLU-Pro by category); ``k`` questions per (model, group), the same for
    every model (``shared``) or drawn per model. Returns the log and the truth per (model, group)."""
    rng = np.random.default_rng(seed)
    skill, ease = np.linspace(-1, 1.5, models), rng.normal(0, 0.8, groups)
    difficulty = rng.normal(0, 1, (groups, 300))
    rows, truth = [], {}
    for m in range(models):
        for g in range(groups):
            p = 1 / (1 + np.exp(-(skill[m] + ease[g] + rng.normal(0, 0.3) - difficulty[g])))
            truth[f"m{m}", f"g{g}"] = p.mean()
            pick = np.random.default_rng([seed, g]).choice(300, k, replace=False) if shared else rng.choice(300, k,
                                                                                                             False)
            for q in pick:
                rows.append((f"m{m}", f"g{g}-q{q}", f"g{g}", f"g{g}", float(rng.random() < p[q])))
    log = pd.DataFrame(rows, columns=["model", "example_id", "task", "group", "correct"]).assign(category="all")
    return log, pd.Series(truth)


def test_the_fit_does_not_read_a_units_label_back_from_its_group_difficulty():
    """Linear synthetic regression, questions drawn per model, tasks = groups: before the fix the fit's slope on
    the leave-out difficulty was about -(C - n) / n and its held-out predictions missed by more than 1 (root mean
    square, seeded); now they are within 0.2 of the truth, closer than the direct estimates."""
    log, truth = simulated_log(1, shared=False)
    table = empirical_bayes(log, regressor="linear")
    assert table.attrs["group_difficulty"][0] is True
    theta = truth.reindex(pd.MultiIndex.from_frame(table[["model", "group"]])).to_numpy()
    rmse_sr = np.sqrt(np.mean((table["synthetic"] - theta) ** 2))
    rmse_dt = np.sqrt(np.mean((table["direct"] - theta) ** 2))
    assert rmse_sr < 0.2 and rmse_sr < rmse_dt, (rmse_sr, rmse_dt)
    assert table.attrs["direct_fallback"] == (0, "")


def test_training_difficulty_is_the_groups_pooled_mean_by_hand():
    units = pd.DataFrame({"model": ["a", "b", "a", "b"], "group": ["x", "x", "y", "y"], "n": [2, 4, 5, 5],
                          "direct": [0.5, 0.25, 0.2, 0.6]})
    # x: (0.5 * 2 + 0.25 * 4) / 6 = 1/3; y: (1 + 3) / 10 = 0.4
    np.testing.assert_allclose(_training_difficulty(units), [1 / 3, 1 / 3, 0.4, 0.4])


def test_a_fold_of_one_shared_group_falls_back_to_the_direct_interval_and_says_so():
    log, _ = simulated_log(2, shared=True, groups=2)
    table = empirical_bayes(log, regressor="mean")
    count, reason = table.attrs["direct_fallback"]
    assert count == len(table) and "single group" in reason  # two groups: one per fold, each one draw of questions
    for eb_col, dt_col in (("eb", "direct"), ("eb_low", "direct_low"), ("eb_high", "direct_high")):
        np.testing.assert_array_equal(table[eb_col], table[dt_col])
    assert (table["shrinkage"] == 0).all()
    own, _ = simulated_log(2, shared=False, groups=2)  # own questions: units independent, clustered by unit
    own["example_id"] = own["model"] + ":" + own["example_id"]  # no question answered by two models
    assert empirical_bayes(own, regressor="mean").attrs["direct_fallback"] == (0, "")
    wide, _ = simulated_log(2, shared=True, groups=4)
    assert wide.pipe(empirical_bayes, regressor="mean").attrs["direct_fallback"][0] == 0
