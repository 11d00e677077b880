"""Every campaign interval honest at every label (issue 47): no zero width for any design however the first labels
fall, skipped examples bounded rather than dropped, the PPI++ plan using the judge, and coverage at the stop rule on
the pools where it used to fail (an easy pool, an overconfident proxy, starts that agree with the judge), by
simulation with known truth.

Coverage allowances as in ``test_coverage_labels.py``: a row may fall at most 3 points below nominal plus 2 Monte
Carlo standard errors (``sqrt(c (1 - c) / R)``), so a true 95% interval fails by chance in fewer than 1 run in 40;
the closing note's table (``python -m benchmarks.labeling --audit``) has 300 campaigns per row on ImageNet-X.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evalcore.labeling import DESIGNS, live_estimate, plan_queue
from evalcore.labeling.estimate import MIN_LABELS, design_moments, wilson_at_effective_n


def _pool(n: int, accuracy: float, seed: int, proxy: str = "calibrated") -> tuple[pd.DataFrame, np.ndarray]:
    """A pool with known truth: the proxy is each example's probability of being right (Beta around
    ``accuracy``), ``z`` drawn from it; "overconfident" reads every proxy above 0.5 as 0.999; the judge agrees with
    the truth on 88% of examples."""
    rng = np.random.default_rng(seed)
    strength = 40.0 if proxy == "calibrated" else 4.0
    p = rng.beta(accuracy * strength, (1 - accuracy) * strength, n)
    z = (rng.random(n) < p).astype(float)
    if proxy == "overconfident":
        p = np.where(p > 0.5, 0.999, p)
    judge = np.where(rng.random(n) < 0.88, z, 1 - z)
    return pd.DataFrame({"example_id": [f"e{i}" for i in range(n)], "proxy": p, "judge": judge}), z


def _labeled(plan, values: np.ndarray, n: int) -> dict:
    """The first n of the queue with ``values`` (in queue order)."""
    order = plan.order.iloc[:n]
    return {"value": np.asarray(values[:n], float), **{c: order[c].to_numpy() for c in ("stratum", "weight", "proxy",
                                                                                         "judge")}}


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("n", [2, 10, 30])
@pytest.mark.parametrize("labels", ["all right", "as the judge says"])
def test_no_design_shows_a_zero_width_interval_or_stops_on_one(design, n, labels):
    """n labels all equal (all right, or each equal to the judge's verdict and to the proxy's rounding): the interval
    has a width, and a ±0.02 campaign does not stop on it."""
    pool, _ = _pool(400, 0.9, seed=n)
    pool["judge"] = (pool["proxy"] > 0.5).astype(float)  # judge and proxy agree with each other
    plan = plan_queue(pool, design, target=0.02, seed=1)
    values = np.ones(len(pool)) if labels == "all right" else plan.order["judge"].to_numpy()
    got = live_estimate(_labeled(plan, values, n), design, plan.pool, plan.planned, 0.02, 0.95,
                        tau=float(plan.order["priority"].iloc[n]))
    if math.isnan(got.estimate):  # a stratified design before 2 labels in every stratum
        assert design in ("proportional", "neyman") and not got.stop
        return
    assert got.ci_high - got.ci_low > 0.01, got
    assert not got.stop


def test_a_run_of_right_answers_gets_the_jeffreys_floor_once_not_divided_by_n_twice():
    """30 of 30 right in a simple random sample of a pool of 3,000: the variance is (1 - 30/3000) · (1/(2·31)) / 30,
    not that over 30 again (the bug that gave a √30-too-narrow interval), and the interval is Wilson's at the
    effective n* = p̃(1 - p̃)/v (p̃ = 30.5/31) with Student's t at 29 degrees of freedom: [n*/(n* + t²), 1]."""
    from scipy.stats import t as student_t

    pool = {"N": 3000, "strata": [3000]}
    labeled = {"value": np.ones(30), "stratum": np.zeros(30, int), "weight": np.ones(30), "proxy": np.ones(30),
               "judge": np.ones(30)}
    theta, var, _ = design_moments("srs", labeled["value"], labeled, pool)
    assert theta == 1.0 and var == pytest.approx((1 - 30 / 3000) * 0.5 / 31 / 30)
    got = live_estimate(labeled, "srs", pool, 100, 0.02, 0.95)
    n_eff = (30.5 / 31) * (0.5 / 31) / var
    assert got.ci_high == 1.0 and got.ci_low == pytest.approx(n_eff / (n_eff + student_t.ppf(0.975, 29) ** 2))
    assert 0.87 < got.ci_low < 0.89  # Wilson's 30 of 30 at 95%: 0.8865


def test_the_wilson_form_near_one_and_the_normal_one_inside():
    """Where the variance is well estimated the interval is θ ± z√v; at θ = 1 it is not degenerate."""
    low, high = wilson_at_effective_n(0.6, 0.0004, 600, 1.959964)
    assert (low, high) == pytest.approx((0.6 - 1.959964 * 0.02, 0.6 + 1.959964 * 0.02), abs=1e-3)
    low, high = wilson_at_effective_n(1.0, 0.5 / 101 / 100, 100, 1.959964)  # 100 of 100: Wilson's [0.963, 1]
    assert high == 1.0 and low == pytest.approx(0.963, abs=0.001)


def test_skipped_examples_widen_the_interval_to_their_worst_and_best_case():
    """A simple random sample of 40 drawn from 1,000: 36 labeled (27 right), 4 skipped. The estimate is 27/36; the
    interval runs from the lower end with the 4 wrong (27/40) to the upper end with the 4 right (31/40)."""
    pool = {"N": 1000, "strata": [1000]}
    value = np.r_[np.ones(27), np.zeros(9), np.full(4, np.nan)]
    base = {"stratum": np.zeros(40, int), "weight": np.ones(40), "proxy": np.full(40, 0.5), "judge": np.ones(40)}
    labeled = {"value": value, "low": np.nan_to_num(value, nan=0.0), "high": np.nan_to_num(value, nan=1.0), **base}
    got = live_estimate(labeled, "srs", pool, 100, 0.05, 0.95, skipped=4)
    assert got.estimate == pytest.approx(27 / 36) and got.labels == 36 and got.skipped == 4
    worst = live_estimate({"value": np.nan_to_num(value, nan=0.0), **base}, "srs", pool, 100, 0.05, 0.95)
    best = live_estimate({"value": np.nan_to_num(value, nan=1.0), **base}, "srs", pool, 100, 0.05, 0.95)
    assert got.ci_low == pytest.approx(worst.ci_low) and got.ci_high == pytest.approx(best.ci_high)
    dropped = live_estimate({"value": value[:36], **{k: v[:36] for k, v in base.items()}}, "srs", pool, 100, 0.05,
                            0.95)
    assert got.ci_high - got.ci_low > dropped.ci_high - dropped.ci_low + 0.05  # skips are not dropped


def test_the_ppi_plan_uses_the_judge():
    """With a judge the PPI++ plan is below simple random sampling's (same pool, same target)."""
    pool, _ = _pool(5000, 0.8, seed=2)
    srs = plan_queue(pool.drop(columns="proxy"), "srs", target=0.02, seed=0).planned
    ppi = plan_queue(pool, "ppi", target=0.02, seed=0).planned
    assert ppi < srs


def _coverage(pool_of, design: str, target: float, campaigns: int, seed: int, agreeing: bool = False
              ) -> tuple[float, float]:
    """Coverage at the stop rule over ``campaigns`` fresh pools (``pool_of(rng)``) and its Monte Carlo s.e.;
    ``agreeing`` keeps only queues whose first 30 labels all equal the judge's verdict."""
    from benchmarks.labeling import run_to_stop

    rng = np.random.default_rng(seed)
    covered = []
    attempt = 0
    while len(covered) < campaigns:
        attempt += 1
        pool, z = pool_of(rng)
        plan = plan_queue(pool, design, target=target, seed=attempt)
        index = pd.Series(np.arange(len(pool)), index=pool["example_id"]).loc[plan.order["example_id"]].to_numpy()
        if agreeing and not (z[index[:MIN_LABELS]] == plan.order["judge"].to_numpy()[:MIN_LABELS]).all():
            continue
        shown, _ = run_to_stop(pool, z, design, target, 0.95, 0, plan=plan)
        covered.append(shown.ci_low <= z.mean() <= shown.ci_high)
    c = float(np.mean(covered))
    return c, math.sqrt(c * (1 - c) / campaigns)


@pytest.mark.parametrize("design", ["srs", "ppi", "active", "neyman"])
def test_coverage_at_the_stop_on_an_easy_pool(design):
    """Accuracy 0.98 (the images a model is sure of): the old floor stopped on a run of right answers (47.5% for
    simple random, 40% PPI++, 62% active on ImageNet-X)."""
    c, se = _coverage(lambda rng: _pool(1500, 0.98, int(rng.integers(1 << 30))), design, 0.03, 120, seed=7)
    assert c >= 0.95 - 0.03 - 2 * se, (design, c)


@pytest.mark.parametrize("design", ["neyman", "active"])
def test_coverage_at_the_stop_with_an_overconfident_proxy(design):
    """Every proxy above 0.5 read as 0.999: the strata and examples it calls certain still get labels enough to
    check it (Neyman 62%, active 59% before)."""
    c, se = _coverage(lambda rng: _pool(1500, 0.85, int(rng.integers(1 << 30)), "overconfident"), design, 0.05,
                      120, seed=8)
    assert c >= 0.95 - 0.03 - 2 * se, (design, c)


@pytest.mark.slow
def test_coverage_at_the_stop_when_the_first_labels_agree_with_the_judge():
    """PPI++ campaigns whose first 30 labels all equal the judge's verdict (zero width and "stop" before)."""
    c, se = _coverage(lambda rng: _pool(1500, 0.85, int(rng.integers(1 << 30))), "ppi", 0.04, 100, seed=9,
                      agreeing=True)
    assert c >= 0.95 - 0.03 - 2 * se, c
