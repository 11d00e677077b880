"""evalcore.leaderboard.bootstrap: the paired bootstrap of per-example logs (the same Poisson weight for every model of
an example), one path for a frame in memory and a log in an engine.

Known answers: resampling the n examples of a task (to first order, Poisson(1) weights per example) makes the
replicated accuracies of models a and b have covariance ``(mean(c_a c_b) - mean(c_a) mean(c_b)) / n`` and variance
``p(1-p)/n`` (plug-in moments of the mean of n i.i.d. draws from the empirical distribution).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from evalcore.leaderboard.bootstrap import bootstrap_replicates, bootstrap_summary, leaderboard, pairwise_differences, rank_intervals
from evalcore.data.validation import validate
from evalcore.data.reading import EvalDataError


def _log(correct: np.ndarray, tasks: list[str] | None = None, categories: list[str] | None = None) -> pd.DataFrame:
    """A canonical-looking log from ``correct`` of shape (n_models, n_examples); tasks / categories per example."""
    m, n = correct.shape
    tasks = tasks or ["t0"] * n
    categories = categories or ["c0"] * n
    return pd.DataFrame({
        "model": np.repeat([f"m{i}" for i in range(m)], n),
        "example_id": np.tile([f"e{e}" for e in range(n)], m),
        "task": np.tile(tasks, m),
        "category": np.tile(categories, m),
        "group": "all",
        "correct": correct.astype(float).ravel(),
    })


def _correlated(rng: np.random.Generator, n: int, p=(0.7, 0.6), flip: float = 0.25) -> np.ndarray:
    """Two models that agree on most examples: b copies a, with a fraction ``flip`` redrawn."""
    a = (rng.random(n) < p[0]).astype(int)
    b = np.where(rng.random(n) < flip, (rng.random(n) < p[1]).astype(int), a)
    return np.vstack([a, b])


def _summary_of(log: pd.DataFrame) -> pd.DataFrame:
    lab = log[log["correct"].notna()]
    return (
        lab.groupby(["model", "task"], sort=False)
        .agg(category=("category", "first"), n=("correct", "size"), n_correct=("correct", "sum"))
        .reset_index()
        .astype({"n_correct": int})
    )


def test_paired_covariance_and_variance_match_the_analytic_values():
    rng = np.random.default_rng(3)
    n = 250
    c = _correlated(rng, n)
    # 5,000 replicates: the covariance's Monte-Carlo error is ~4% (seen 2%), the variances' ~2%, against 10%
    rep = bootstrap_replicates(_log(c), n_boot=5000, seed=1)
    assert rep.paired and "Poisson" in rep.note
    va, vb = rep.values[:, 0, 0], rep.values[:, 1, 0]
    cov_true = (np.mean(c[0] * c[1]) - c[0].mean() * c[1].mean()) / n
    assert cov_true > 0
    assert np.cov(va, vb)[0, 1] == pytest.approx(cov_true, rel=0.1)
    for v, ci in ((va, c[0]), (vb, c[1])):
        p = ci.mean()
        assert v.var(ddof=1) == pytest.approx(p * (1 - p) / n, rel=0.1)
        assert v.mean() == pytest.approx(p, abs=0.003)


def test_paired_covariance_per_task_and_zero_across_tasks():
    rng = np.random.default_rng(5)
    c1, c2 = _correlated(rng, 150), _correlated(rng, 90, flip=0.5)
    log = _log(np.hstack([c1, c2]), tasks=["t1"] * 150 + ["t2"] * 90, categories=["x"] * 150 + ["y"] * 90)
    # 5,000 replicates: covariances within 3% of the truth (tolerance 10%), |r| 0.03 across tasks (SE 0.014, bound 0.05)
    rep = bootstrap_replicates(log, n_boot=5000, seed=2)
    assert rep.tasks == ("t1", "t2") and rep.categories == ("x", "y")
    for j, c in enumerate((c1, c2)):
        cov_true = (np.mean(c[0] * c[1]) - c[0].mean() * c[1].mean()) / c.shape[1]
        assert np.cov(rep.values[:, 0, j], rep.values[:, 1, j])[0, 1] == pytest.approx(cov_true, rel=0.1)
    # tasks are resampled independently
    r = np.corrcoef(rep.values[:, 0, 0], rep.values[:, 0, 1])[0, 1]
    assert abs(r) < 0.05


def test_replicates_are_reproducible_by_seed_and_paired():
    rng = np.random.default_rng(0)
    c = (rng.random((3, 137)) < 0.5).astype(int)
    log = _log(c)
    a = bootstrap_summary(log, n_boot=300, seed=7)
    b = bootstrap_summary(log, n_boot=300, seed=7)
    d = bootstrap_summary(log, n_boot=300, seed=8)
    assert a.shape == (300, 3, 1)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, d)
    assert ((a >= 0) & (a <= 1)).all()
    # a model identical to another gives identical replicates (the same weights on the same examples)
    same = bootstrap_summary(_log(np.vstack([c[0], c[0]])), n_boot=50, seed=1)
    np.testing.assert_array_equal(same[:, 0], same[:, 1])
    # the weights belong to the examples, not to the rows' order
    shuffled = log.sample(frac=1.0, random_state=3)
    np.testing.assert_allclose(bootstrap_summary(shuffled, n_boot=300, seed=7), a, atol=1e-12)


def test_unlabeled_rows_are_excluded():
    rng = np.random.default_rng(1)
    c = (rng.random((2, 60)) < 0.5).astype(float)
    log = _log(c)
    extra = log.iloc[:4].copy()
    extra["example_id"] = ["u1", "u2", "u3", "u4"]
    extra["model"] = ["m0", "m1", "m0", "m1"]
    extra["correct"] = np.nan
    rep = bootstrap_replicates(pd.concat([log, extra], ignore_index=True), n_boot=20, seed=0)
    assert rep.paired
    np.testing.assert_array_equal(rep.n, [[60], [60]])
    np.testing.assert_allclose(rep.observed[:, 0], c.mean(axis=1))


def test_different_example_sets_stay_paired_on_the_shared_examples():
    """A model that lacks one example of a task no longer forces the unpaired bootstrap: the weights belong to the
    examples, so the examples both models answered keep their correlation (known covariance, as above)."""
    rng = np.random.default_rng(2)
    c = _correlated(rng, 400)
    log = _log(c, tasks=["a"] * 200 + ["b"] * 200)
    log = log[~((log["model"] == "m1") & (log["example_id"] == "e241"))]  # m1 lacks one example of task b
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no fallback warning any more
        rep = bootstrap_replicates(log, n_boot=20000, seed=4)
    assert rep.paired
    np.testing.assert_array_equal(rep.n, [[200, 200], [200, 199]])
    shared = c[:, 200:]
    keep = np.arange(200) != 41
    cov_true = (np.mean(shared[0, keep] * shared[1, keep]) - shared[0].mean() * shared[1, keep].mean()) * 199 / 200 ** 2
    assert np.cov(rep.values[:, 0, 1], rep.values[:, 1, 1])[0, 1] == pytest.approx(cov_true, rel=0.15)
    assert leaderboard(log, n_boot=200, seed=4).attrs["paired"] is True


def test_log_equals_its_summary_in_leaderboard_estimates():
    rng = np.random.default_rng(4)
    c = (rng.random((4, 300)) < np.linspace(0.3, 0.8, 4)[:, None]).astype(float)
    tasks = ["t0"] * 100 + ["t1"] * 120 + ["t2"] * 80
    cats = ["nat"] * 100 + ["nat"] * 120 + ["str"] * 80
    log = _log(c, tasks=tasks, categories=cats)
    from_log = leaderboard(log, n_boot=400, seed=0)
    from_summary = leaderboard(_summary_of(log), n_boot=400, seed=0)
    pd.testing.assert_frame_equal(
        from_log[["model", "scope", "name", "estimate"]], from_summary[["model", "scope", "name", "estimate"]]
    )
    assert from_log.attrs["paired"] is True and from_summary.attrs["paired"] is False
    assert (from_log["ci_low"] <= from_log["estimate"] + 1e-12).all()
    assert (from_log["estimate"] <= from_log["ci_high"] + 1e-12).all()
    # the other public functions accept the log too
    ranks = rank_intervals(log, method="avg_rank", n_boot=200, seed=0)
    assert list(ranks["model"]) == ["m0", "m1", "m2", "m3"] and ranks.attrs["paired"]
    diffs = pairwise_differences(log, n_boot=200, seed=0)
    assert len(diffs) == 6 and diffs.attrs["paired"]


def test_validated_canonical_log_is_accepted():
    rng = np.random.default_rng(6)
    c = (rng.random((3, 50)) < 0.5).astype(int)
    raw = _log(c, tasks=["a"] * 25 + ["b"] * 25, categories=["x"] * 25 + ["y"] * 25).drop(columns="group")
    raw["example_id"] = raw["example_id"] + "-" + raw["task"]
    frame = validate(raw, kind="log")
    rep = bootstrap_replicates(frame, n_boot=50, seed=0)
    assert rep.paired and rep.models == ("m0", "m1", "m2") and rep.tasks == ("a", "b")


def test_paired_difference_interval_is_narrower_and_covers_at_the_nominal_rate():
    """Simulated population: two correlated models; the paired 90% interval for the difference of accuracies
    covers the true difference about 90% of the time, and is narrower than the unpaired (binomial) one."""
    rng = np.random.default_rng(11)
    n, sims, level = 200, 300, 0.9
    # population: a ~ Bern(0.7); b = a with prob 0.7, else Bern(0.55) -> P(b=1) = 0.7*0.7 + 0.3*0.55
    true_diff = 0.7 - (0.7 * 0.7 + 0.3 * 0.55)
    hits, ratio = 0, []
    for s in range(sims):
        c = _correlated(rng, n, p=(0.7, 0.55), flip=0.3)
        log = validate(_log(c))  # validated once in memory: the bootstrap does not check it again
        rep = bootstrap_replicates(log, n_boot=400, seed=s)
        d = rep.values[:, 0, 0] - rep.values[:, 1, 0]
        lo, hi = np.quantile(d, [(1 - level) / 2, (1 + level) / 2])
        hits += lo <= true_diff <= hi
        if s < 20:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                unpaired = bootstrap_replicates(_summary_of(log), n_boot=400, seed=s).values
            du = unpaired[:, 0, 0] - unpaired[:, 1, 0]
            ratio.append(d.std() / du.std())
    assert 0.85 <= hits / sims <= 0.95
    assert np.mean(ratio) < 0.8


def test_bad_logs_are_refused():
    c = np.array([[1, 0, 1], [0, 0, 1]])
    log = _log(c)
    dup = pd.concat([log, log.iloc[[0]]], ignore_index=True)
    with pytest.raises(EvalDataError, match="must appear once"):
        bootstrap_replicates(dup, n_boot=10)
    empty = log.assign(correct=np.nan)
    with pytest.raises(EvalDataError, match="no labeled rows"):
        bootstrap_replicates(empty, n_boot=10)
    with pytest.raises(EvalDataError, match="0 or 1"):
        bootstrap_replicates(log.assign(correct=0.5), n_boot=10)
    with pytest.raises(EvalDataError, match="correct"):
        bootstrap_replicates(log.drop(columns="correct"), n_boot=10)
    split = log.copy()
    split.loc[0, "category"] = "other"
    with pytest.raises(EvalDataError, match="several categories"):
        bootstrap_replicates(split, n_boot=10)
    one = log[log["model"] == "m0"]
    with pytest.raises(EvalDataError, match="Only one model"):
        bootstrap_replicates(one, n_boot=10)
    lacks = pd.concat([_log(c), _log(c).assign(task="t1", example_id=lambda f: f["example_id"] + "x")])
    lacks = lacks[~((lacks["model"] == "m1") & (lacks["task"] == "t1"))]
    with pytest.raises(EvalDataError, match="lacks task"):
        bootstrap_replicates(lacks, n_boot=10)


def test_degenerate_accuracies_and_single_example_tasks():
    c = np.array([[1, 1, 1, 1], [0, 0, 0, 0]])
    rep = bootstrap_replicates(_log(c, tasks=["a", "a", "a", "b"]), n_boot=100, seed=0)
    assert rep.paired and np.isfinite(rep.values).all()
    # all-correct / all-wrong cells are drawn from the Jeffreys-smoothed bootstrap: never constant, mostly at the end
    for i, end in ((0, 1.0), (1, 0.0)):
        for j in range(2):
            assert rep.values[:, i, j].std() > 0 and np.mean(rep.values[:, i, j] == end) > 0.5
    np.testing.assert_array_equal(rep.n, [[3, 1], [3, 1]])
