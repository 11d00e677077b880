"""Comparison campaigns' statistics (evalcore.labeling.difference): the pool and its agreement patterns, the two
designs' queues, the estimate by hand, the width rule's coverage at the stop and the "decided" rule's error rate
under monitoring by simulation with known truth, and the label savings on ImageNet-X."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalcore.errors import EvalDataError
from evalcore.labeling.difference import (ALL_AGREE, comparison_estimate, comparison_pool, fixed_interval,
                                          plan_comparison)


def _log(n: int, agree: float, acc_a: float, acc_b: float, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A log of two models' class outputs on n examples (the right class is "k"; they give the same output on a
    share ``agree`` of them) and the true verdicts."""
    rng = np.random.default_rng(seed)
    same = rng.random(n) < agree
    a_right = rng.random(n) < acc_a
    b_right = np.where(same, a_right, rng.random(n) < acc_b)
    out_a = np.where(a_right, "k", np.array([f"w{i % 7}" for i in range(n)]))
    out_b = np.where(same, out_a, np.where(b_right, "k", np.array([f"v{i % 5}" for i in range(n)])))
    ids = [f"e{i}" for i in range(n)]
    log = pd.DataFrame({"model": ["A"] * n + ["B"] * n, "example_id": ids * 2, "output": np.r_[out_a, out_b]})
    correct = pd.DataFrame({"A": a_right.astype(float), "B": b_right.astype(float)}, index=ids)
    return log, correct


def test_the_pool_names_patterns_and_refuses_what_it_cannot_compare():
    log = pd.DataFrame({"model": ["A", "B", "C"] * 25, "example_id": np.repeat([f"q{i}" for i in range(25)], 3),
                        "output": ["x", "x", "x", "x", "y", "x", "x", "y", "z"] * 8 + ["a", "a", "b"]})
    pool = comparison_pool(log, ["A", "B", "C"])
    assert pool.kind == "class" and len(pool.outputs) == 25
    assert pool.patterns["q0"] == ALL_AGREE and pool.patterns["q1"] == "A = C ≠ B"
    assert pool.patterns["q2"] == "A ≠ B ≠ C"
    short = log[~((log["model"] == "B") & log["example_id"].isin([f"q{i}" for i in range(10)]))]
    with pytest.raises(EvalDataError, match=r"share 15 examples.*at least 20.*A 25, B 15"):
        comparison_pool(short, ["A", "B"])
    notes = comparison_pool(log[~((log["model"] == "B") & (log["example_id"] == "q3"))], ["A", "B"]).notes
    assert notes == ("1 example lacks an output of 'B' (another model has one): left out, not guessed.",)
    with pytest.raises(EvalDataError, match="no model D"):
        comparison_pool(log, ["A", "D"])


def test_the_disagreement_queue_holds_only_examples_whose_outputs_differ():
    log, _ = _log(400, 0.75, 0.8, 0.7, seed=1)
    pool = comparison_pool(log, ["A", "B"])
    plan = plan_comparison(pool, "disagreement", seed=0, target=0.05)
    differ = set(pool.patterns.index[pool.patterns != ALL_AGREE])
    assert set(plan.order["example_id"]) == differ and (plan.order["stratum"] == 0).all()  # one sampling stratum
    assert plan.pool["N"] == 400 and plan.pool["N_D"] == len(differ) == plan.pool["M"]
    srs = plan_comparison(pool, "srs", seed=0, target=0.05)
    assert len(srs.order) == 400 and srs.planned > plan.planned


def test_the_estimate_by_hand():
    """N = 100, N_D = 20; 10 labels in D with d = (1, 1, 1, 0, 0, -1, 1, 0, 1, 0): mean 0.4, Δ = 0.2 · 0.4 = 0.08;
    the variance is d's second moment about zero, Σd²/(n - 1) = 6/9, so se = 0.2 √((1 - 10/20) · (6/9) / 10) and
    the interval is Δ ± t_9 se (wider than with the sample variance, (6 - 10 · 0.4²)/9 = 4.4/9)."""
    from scipy.stats import t as student_t

    d = np.array([1, 1, 1, 0, 0, -1, 1, 0, 1, 0], dtype=float)
    correct = pd.DataFrame({"A": (d >= 0).astype(float), "B": (d <= 0).astype(float) - (d == 0) * (d == 0) * 0.0})
    correct["B"] = np.where(d == 0, correct["A"], 1 - correct["A"])
    constants = {"N": 100, "N_D": 20, "M": 20, "patterns": [ALL_AGREE, "A ≠ B"]}
    got = comparison_estimate(correct, ["A", "B"], "disagreement", constants, target=0.5, budget=None,
                              decide=False, margin=0.0, level=0.95)
    se = 0.2 * math.sqrt(0.5 * (6 / 9) / 10)
    assert got.difference == pytest.approx(0.08)
    assert (got.ci_low, got.ci_high) == pytest.approx((0.08 - student_t.ppf(0.975, 9) * se,
                                                       0.08 + student_t.ppf(0.975, 9) * se))
    assert got.leader == "A" and got.decided is None and got.labels == 10


def test_the_benchmarks_running_path_is_the_products_interval():
    from benchmarks.comparison import fixed_path

    rng = np.random.default_rng(2)
    d = rng.choice([-1.0, 0.0, 1.0], size=200, p=[0.3, 0.3, 0.4])
    estimate, half = fixed_path(d, 0.25, 800, 0.95)
    for n in (2, 17, 120, 200):
        delta, low, high, _ = fixed_interval(d[:n], 0.25, 0.95, np.zeros(n, dtype=np.int64), [800], [0.0])
        assert estimate[n - 1] == pytest.approx(delta) and half[n - 1] == pytest.approx((high - low) / 2)


def test_skipped_examples_bound_the_interval():
    d = np.array([1, 1, 0, -1, 1, 0, 1, 1, 0, 1], dtype=float)
    correct = pd.DataFrame({"A": (d >= 0).astype(float)})
    correct["B"] = np.where(d == 0, correct["A"], 1 - correct["A"])
    constants = {"N": 50, "N_D": 25, "M": 25, "patterns": [ALL_AGREE, "A ≠ B"]}
    args = ("disagreement", constants, 0.5, None, False, 0.0, 0.95)
    full = comparison_estimate(correct, ["A", "B"], *args)
    skipped = correct.copy()
    skipped.iloc[[2, 5]] = np.nan
    got = comparison_estimate(skipped, ["A", "B"], *args)
    assert got.skipped == 2 and got.labels == 8
    assert got.ci_low < full.ci_low and got.ci_high > full.ci_high


def _campaigns(design: str, decide: bool, correct: pd.DataFrame, pool, target: float, k: int) -> list[dict]:
    from benchmarks.comparison import campaign

    return [campaign(correct, pool, "A", "B", design, seed, target, decide=decide) for seed in range(k)]


def test_the_width_rule_covers_at_the_stop_and_needs_far_fewer_labels_where_outputs_agree():
    """75% of outputs agree: labeling only where they differ reaches ±0.03 with at most a third of the random
    paired sample's labels, and both intervals cover the pool's difference at the stop."""
    log, correct = _log(6000, 0.75, 0.8, 0.76, seed=3)
    pool = comparison_pool(log, ["A", "B"])
    srs = _campaigns("srs", False, correct, pool, 0.03, 150)
    dis = _campaigns("disagreement", False, correct, pool, 0.03, 150)
    ratio = np.median([c["labels"] for c in dis]) / np.median([c["labels"] for c in srs])
    assert ratio <= 0.33, ratio
    for runs in (srs, dis):
        c = np.mean([r["covered"] for r in runs])
        assert c >= 0.95 - 0.03 - 2 * math.sqrt(c * (1 - c) / len(runs)), c


@pytest.mark.slow
def test_deciding_on_a_pair_with_no_difference_declares_a_winner_at_most_alpha_of_the_time():
    """The two models exchangeable (the zero pair of benchmarks.comparison): stopping the moment the confidence
    sequence excludes 0, read after every label, names a winner in at most α + 2 MC s.e. of 200 campaigns; a fixed-n
    interval read the same way would name one far more often (checked alongside: the check can fail)."""
    from benchmarks.comparison import _swapped, fixed_path

    log, correct = _log(1500, 0.6, 0.75, 0.75, seed=4)
    zero_log, zero_correct = _swapped(log, correct, "A", "B", np.random.default_rng(0))
    assert zero_correct["A"].mean() == zero_correct["B"].mean()
    pool = comparison_pool(zero_log, ["A", "B"])
    runs = _campaigns("disagreement", True, zero_correct, pool, 0.05, 200)
    wrong = np.mean([r["winner"] is not None for r in runs])
    assert wrong <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 200), wrong
    naive = 0
    for seed in range(200):
        plan = plan_comparison(pool, "disagreement", seed, target=0.05)
        ids = plan.order["example_id"]
        d = zero_correct.loc[ids, "A"].to_numpy() - zero_correct.loc[ids, "B"].to_numpy()
        estimate, half = fixed_path(d, plan.pool["N_D"] / plan.pool["N"], plan.pool["M"], 0.95)
        naive += bool((np.abs(estimate[29:-1]) > half[29:-1]).any())
    assert naive / 200 > 0.15


def test_imagenet_pair_reaches_one_point_with_at_most_030_of_the_random_labels(shared_file):
    from benchmarks.comparison import imagenet

    log, correct = imagenet(shared_file("imagenet_x_predictions.csv.gz"))
    log = log[log["model"].isin(["DINO", "ViT"])]
    correct = correct[["DINO", "ViT"]].dropna().rename(columns={"DINO": "A", "ViT": "B"})
    pool = comparison_pool(log.replace({"model": {"DINO": "A", "ViT": "B"}}), ["A", "B"])
    srs = _campaigns("srs", False, correct, pool, 0.01, 10)
    dis = _campaigns("disagreement", False, correct, pool, 0.01, 10)
    assert np.median([c["labels"] for c in dis]) <= 0.30 * np.median([c["labels"] for c in srs])


def test_three_models_the_leader_is_decided_once_it_beats_each_other_at_the_bonferroni_level():
    """Model A right on 90% of the disagreements, B and C on 40%: with every pair's sequence at α/3, the estimate
    names A decided only when both of A's sequences exclude 0, and the pairs table has the three pairs."""
    rng = np.random.default_rng(5)
    n = 600
    correct = pd.DataFrame({"A": (rng.random(n) < 0.9).astype(float), "B": (rng.random(n) < 0.4).astype(float),
                            "C": (rng.random(n) < 0.4).astype(float)})
    constants = {"N": 2000, "N_D": 600, "M": 600, "patterns": [ALL_AGREE, "A ≠ B ≠ C"]}
    early = comparison_estimate(correct.head(8), ["A", "B", "C"], "disagreement", constants, None, None, True, 0.0,
                                0.95)
    assert early.decided is None and not early.stop
    got = comparison_estimate(correct.head(150), ["A", "B", "C"], "disagreement", constants, None, None, True, 0.0,
                              0.95)
    assert list(zip(got.pairs["model_a"], got.pairs["model_b"])) == [("A", "B"), ("A", "C"), ("B", "C")]
    assert got.leader == "A" and got.decided == "A" and got.stop
    assert (got.pairs.loc[:1, "cs_low"] > 0).all()
    assert got.interval == "confidence sequence" and got.ci_low == got.pairs.loc[0, "cs_low"]


def test_a_random_paired_sample_estimates_every_models_accuracy_too():
    """srs: each model's accuracy is its sample mean with the Wilson interval at the effective n (here 6 of 10 and
    3 of 10 from a pool of 1,000); the disagreement design gives none (it never labels where all agree)."""
    correct = pd.DataFrame({"A": [1, 1, 1, 1, 1, 1, 0, 0, 0, 0], "B": [1, 0, 1, 0, 1, 0, 0, 0, 0, 0]}, dtype=float)
    constants = {"N": 1000, "N_D": 400, "M": 1000, "patterns": [ALL_AGREE, "A ≠ B"]}
    got = comparison_estimate(correct, ["A", "B"], "srs", constants, 0.1, None, False, 0.0, 0.95)
    table = got.accuracies.set_index("model")
    assert table.loc["A", "accuracy"] == pytest.approx(0.6) and table.loc["B", "accuracy"] == pytest.approx(0.3)
    assert table.loc["A", "ci_low"] < 0.6 < table.loc["A", "ci_high"] and got.as_dict()["accuracies"][1]["model"] == "B"
    constants["M"] = 400
    assert comparison_estimate(correct, ["A", "B"], "disagreement", constants, 0.1, None, False, 0.0,
                               0.95).accuracies is None


# ------------------------------------------------------------------------------------------------ the Neyman design
def test_the_confidences_predict_the_difference_by_hand():
    """Classes (at most one of two different outputs is right): p = (0.9, 0.3) gives P(d = 1) = 0.9/1.2 = 0.75,
    P(d = -1) = 0.25, mean 0.5, variance 1 - 0.25 = 0.75; texts (independent): P(1) = 0.9 · 0.7 = 0.63,
    P(-1) = 0.3 · 0.1 = 0.03, mean 0.6, variance 0.66 - 0.36 = 0.30; a confidence of 0.999 or 0 is read as 0.95 or
    0.05 (never certain)."""
    from evalcore.labeling.difference import predicted_difference

    mean, var = predicted_difference(np.array([[0.9, 0.3], [0.999, 0.0]]), "class")
    assert mean == pytest.approx([0.5, 0.9]) and var == pytest.approx([0.75, 1.0 - 0.81])
    mean, var = predicted_difference(np.array([[0.9, 0.3]]), "text")
    assert mean == pytest.approx([0.6]) and var == pytest.approx([0.30])


def test_the_stratified_estimate_by_hand():
    """N = 100, N_D = 40 in two strata of 30 and 10 with centres 0.5 and 0. Stratum 0: d = (1, 1, 0, 1, -1), mean
    0.4, Σ(d - 0.5)² = 3.25 over 4; stratum 1: d = (0, -1, 1), mean 0, Σd² = 2 over 2. Δ = 0.4 (0.75 · 0.4 + 0.25 · 0)
    = 0.12; se² = 0.4² (0.75² (1 - 5/30) 0.8125/5 + 0.25² (1 - 3/10) 1/3), ν by Satterthwaite."""
    from scipy.stats import t as student_t

    d = np.array([1, 1, 0, 1, -1, 0, -1, 1], dtype=float)
    a = np.where(d >= 0, 1.0, 0.0)
    correct = pd.DataFrame({"A": a, "B": a - d, "stratum": [0] * 5 + [1] * 3,
                            "pattern": "A ≠ B"}, index=[f"e{i}" for i in range(8)])
    constants = {"N": 100, "N_D": 40, "M": 40, "strata": [30, 10], "centers": [0.5, 0.0],
                 "patterns": [ALL_AGREE, "A ≠ B"]}
    got = comparison_estimate(correct, ["A", "B"], "neyman", constants, target=0.5, budget=None, decide=False,
                              margin=0.0, level=0.95)
    parts = np.array([0.75**2 * (1 - 5 / 30) * (3.25 / 4) / 5, 0.25**2 * (1 - 3 / 10) * (2 / 2) / 3])
    df = parts.sum() ** 2 / (parts[0] ** 2 / 4 + parts[1] ** 2 / 2)
    half = student_t.ppf(0.975, df) * 0.4 * math.sqrt(parts.sum())
    assert got.difference == pytest.approx(0.12)
    assert (got.ci_low, got.ci_high) == pytest.approx((0.12 - half, 0.4))  # cut at ±N_D/N: d is 0 outside D
    assert got.per_pattern == {"A ≠ B": 8} and got.labels == 8


def _confident_log(n: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two models' class outputs with confidences that are calibrated where the outputs differ (who is right is
    drawn from :func:`predicted_difference`'s class probabilities): mostly low (both probably wrong, d mostly 0),
    some contested (d ±1)."""
    from evalcore.labeling.difference import predicted_difference

    rng = np.random.default_rng(seed)
    same = rng.random(n) < 0.6
    conf = rng.beta(0.5, 1.5, size=(n, 2)).clip(0.05, 0.95)
    conf[same, 1] = conf[same, 0]
    mean, var = predicted_difference(conf, "class")
    second = var + mean**2  # E d² = P(d = 1) + P(d = -1)
    up = (second + mean) / 2
    u = rng.random(n)
    a_right = np.where(same, u < conf[:, 0], u < up)
    b_right = np.where(same, a_right, (u >= up) & (u < second))
    out_a = np.where(a_right, "k", "w")
    out_b = np.where(same, out_a, np.where(b_right, "k", "v"))
    ids = [f"e{i}" for i in range(n)]
    log = pd.DataFrame({"model": ["A"] * n + ["B"] * n, "example_id": ids * 2, "output": np.r_[out_a, out_b],
                        "confidence": np.r_[conf[:, 0], conf[:, 1]]})
    return log, pd.DataFrame({"A": a_right.astype(float), "B": b_right.astype(float)}, index=ids)


def test_the_neyman_design_covers_at_the_stop_with_fewer_labels_than_the_disagreement_design():
    """Known truth (the pool's difference), the width rule read after every label (by the estimate's own interval,
    :func:`fixed_interval`), 150 campaigns a design: the Neyman design's interval covers at the stop (≥ 0.90 at 95%; MC
    s.e. 0.018) and it needs fewer labels than random sampling of the disagreement set, whose confidences it
    reads; at the stop the campaign's estimate shows that interval."""
    log, correct = _confident_log(4000, seed=4)
    pool = comparison_pool(log, ["A", "B"])
    truth = float(correct["A"].mean() - correct["B"].mean())
    target = 0.02
    labels, covered = {}, {}
    for design in ("disagreement", "neyman"):
        labels[design], covered[design] = [], []
        for seed in range(150):
            plan = plan_comparison(pool, design, seed=seed, target=target)
            c = plan.pool
            d = (correct["A"] - correct["B"]).loc[plan.order["example_id"]].to_numpy()
            h = plan.order["stratum"].to_numpy()
            for n in range(30, d.size + 1):
                delta, low, high, _ = fixed_interval(d[:n], c["N_D"] / c["N"], 0.95, h[:n], c["strata"], c["centers"])
                if (high - low) / 2 <= target:
                    break
            labels[design].append(n)
            covered[design].append(low <= truth <= high)
    drawn = correct.loc[plan.order["example_id"][:n]].assign(stratum=h[:n])
    got = comparison_estimate(drawn, ["A", "B"], "neyman", plan.pool, target, None, False, 0.0, 0.95)
    assert got.stop and (got.ci_low, got.ci_high) == pytest.approx((low, high))
    assert np.mean(covered["neyman"]) >= 0.90, np.mean(covered["neyman"])
    assert np.median(labels["neyman"]) < 0.9 * np.median(labels["disagreement"]), (
        np.median(labels["neyman"]), np.median(labels["disagreement"]))


def test_the_neyman_design_reads_an_ai_judges_verdicts_before_the_models_confidences():
    """A log with both: the judge's verdict on each output (the proxy role) is what the Neyman design reads; where
    the judge misses an example, the confidences, with a note; neither: refused naming both columns."""
    log, _ = _confident_log(400, seed=2)
    judged = log.assign(proxy=(log["output"] == "k").astype(float))  # a perfect judge
    pool = comparison_pool(judged, ["A", "B"])
    assert pool.confidence.loc["e0"].tolist() == judged.loc[judged["example_id"] == "e0", "proxy"].tolist()
    plan = plan_comparison(pool, "neyman", seed=0, target=0.05)
    # a perfect judge predicts d exactly: every stratum's centre is a value of d (±0.9 read within [0.05, 0.95]) or 0
    assert all(abs(abs(c) - 0.9) < 1e-9 or abs(c) < 1e-9 for c in plan.pool["centers"]), plan.pool["centers"]
    holes = judged.assign(proxy=judged["proxy"].where(judged["example_id"] != "e3"))
    fallback = comparison_pool(holes, ["A", "B"])
    assert fallback.confidence.loc["e3"].tolist() == log.loc[log["example_id"] == "e3", "confidence"].tolist()
    assert any("lacks an AI judge's verdict" in n for n in fallback.notes)
    with pytest.raises(EvalDataError, match="'confidence' column\\) or an AI judge's verdict on it \\('proxy'"):
        plan_comparison(comparison_pool(log.drop(columns="confidence"), ["A", "B"]), "neyman", seed=0, target=0.05)


def test_three_models_fixed_intervals_are_simultaneous():
    """Three models, 40 examples of the srs design: each pair's fixed-n interval is at 1 - 0.05/3 (Bonferroni over the
    3 pairs, as the confidence sequences): its half-width is t_{39, 1 - 0.05/6} se, by hand for the pair (A, C)."""
    from scipy.stats import t as student_t

    rng = np.random.default_rng(5)
    correct = pd.DataFrame(rng.integers(0, 2, size=(40, 3)).astype(float), columns=["A", "B", "C"])
    constants = {"N": 400, "N_D": 400, "M": 400, "patterns": [ALL_AGREE]}
    got = comparison_estimate(correct, ["A", "B", "C"], "srs", constants, target=0.5, budget=None, decide=False,
                              margin=0.0, level=0.95)
    d = (correct["A"] - correct["C"]).to_numpy()
    se = math.sqrt((1 - 40 / 400) * (d @ d / 39) / 40)
    row = got.pairs.set_index(["model_a", "model_b"]).loc[("A", "C")]
    half = student_t.ppf(1 - 0.05 / 6, 39) * se
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((d.mean() - half, d.mean() + half))
