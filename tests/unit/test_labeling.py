"""Labeling campaigns (evalcore.labeling): queues, estimates with hand-computed answers, agreement with published
values, and the campaign in a real SQLite workspace (claims under concurrency, history, refusals, kill -9)."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pandas as pd
import pytest

from evalcore.errors import EvalDataError
from evalcore.labeling import agreement, live_estimate, plan_queue
from evalcore.labeling.campaign import Campaign
from evalcore.workspace import Workspace

BOB, ALICE = "bob@team.org", "alice@team.org"


def _pool(n: int = 600, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.beta(4, 1.5, n)
    z = (rng.random(n) < p).astype(float)
    judge = np.where(rng.random(n) < 0.85, z, 1 - z)
    return pd.DataFrame({"example_id": [f"q{i}" for i in range(n)], "proxy": p, "judge": judge}), z


def _labeled(plan, z_by_id: dict, n: int) -> dict:
    order = plan.order.iloc[:n]
    return {"value": order["example_id"].map(z_by_id).to_numpy(float),
            **{c: order[c].to_numpy() for c in ("stratum", "weight", "proxy", "judge")}}


# ------------------------------------------------------------------------------------------------ queues
def test_every_prefix_of_a_stratified_queue_follows_the_allocation():
    pool, _ = _pool()
    plan = plan_queue(pool, "neyman", budget=120, seed=1)
    assert sorted(plan.order["example_id"]) == sorted(pool["example_id"])  # the whole pool, each once
    strata = plan.order["stratum"].to_numpy()
    sizes = np.bincount(strata)
    from evalcore.sampling.designs import allocate_budget
    by_pool = np.asarray(pd.Series(strata, index=plan.order["example_id"]).loc[pool["example_id"]])
    # Neyman's allocation with the proxy read within [0.05, 0.95], mixed with proportional: 3/4 + 1/4
    allocation = allocate_budget(by_pool, 120, "neyman", proxy=np.clip(pool["proxy"].to_numpy(), 0.05, 0.95))
    proportional = allocate_budget(by_pool, 120, "proportional")
    shares = 0.75 * allocation / allocation.sum() + 0.25 * proportional / proportional.sum()
    for t in (10, 40, 120):
        counts = np.bincount(strata[:t], minlength=sizes.size)
        assert np.all(np.abs(counts - t * shares) <= 1.0), (t, counts, t * shares)


def test_the_active_queue_is_priority_sampling_by_the_proxys_uncertainty():
    pool, _ = _pool()
    plan = plan_queue(pool, "active", budget=100, seed=2)
    priority = plan.order["priority"].to_numpy()
    assert np.all(np.diff(priority) <= 0)  # decreasing priorities
    p = np.clip(plan.order["proxy"].to_numpy(), 0.05, 0.95)  # a proxy's certainty is read as at most 0.95
    u = np.sqrt(p * (1 - p))
    assert plan.order["weight"].to_numpy() == pytest.approx(0.75 * u + 0.25 * u.mean())
    # examples near p = 0.5 come early: the mean uncertainty of the first 100 is above the pool's
    assert u[:100].mean() > u.mean()


def test_a_design_without_its_column_is_refused_by_name():
    pool = pd.DataFrame({"example_id": ["a", "b", "c"]})
    with pytest.raises(EvalDataError, match="needs a proxy"):
        plan_queue(pool, "neyman", budget=2)
    with pytest.raises(EvalDataError, match="AI judge"):
        plan_queue(pool, "ppi", budget=2)
    with pytest.raises(EvalDataError, match="design must be one of"):
        plan_queue(pool, "cluster", budget=2)


# ------------------------------------------------------------------------------------------------ estimates
def _wilson(theta: float, var: float, k: float) -> tuple[float, float]:
    """The Wilson interval at the effective sample size n* = θ(1 - θ)/v with critical value k, by the textbook."""
    n = theta * (1 - theta) / var
    center = (theta + k * k / (2 * n)) / (1 + k * k / n)
    half = k / (1 + k * k / n) * math.sqrt(theta * (1 - theta) / n + k * k / (4 * n * n))
    return center - half, center + half


def test_stratified_horvitz_thompson_by_hand():
    """Two strata of 6 and 4 examples; 3 and 2 labels. θ = 0.6·(2/3) + 0.4·(1/2) = 0.6;
    v = 0.36·(1 - 3/6)·(1/3)/3 + 0.16·(1 - 2/4)·(1/2)/2 = 0.02 + 0.02 = 0.04 (the floors 1/8 and 1/6 do not bind);
    Satterthwaite's df = 0.04² / (0.02²/2 + 0.02²/1) = 8/3; the interval is Wilson's at n* = 0.24 / 0.04 = 6."""
    from scipy.stats import t as student_t

    from evalcore.labeling.estimate import design_moments

    pool = {"N": 10, "strata": [6, 4]}
    labeled = {"value": np.array([1.0, 1.0, 0.0, 1.0, 0.0]), "stratum": np.array([0, 0, 0, 1, 1]),
               "weight": np.ones(5), "proxy": np.full(5, 0.5), "judge": np.full(5, np.nan)}
    theta, var, df = design_moments("proportional", labeled["value"], labeled, pool)
    assert (theta, var, df) == pytest.approx((0.6, 0.04, 8 / 3))
    got = live_estimate(labeled, "proportional", pool, planned=5, target=None, level=0.95)
    assert got.estimate == pytest.approx(0.6)
    assert (got.ci_low, got.ci_high) == pytest.approx(_wilson(0.6, 0.04, student_t.ppf(0.975, 8 / 3)))
    assert got.stop  # a budget campaign stops when its labels are in


def test_ipw_with_a_control_variate_by_hand():
    """Three labeled examples with π = (0.5, 0.25, 1.0) (u / τ, τ = 0.8) in a pool of 8 whose proxy sums to 4;
    c = (1 - π)/π² = (2, 12, 0), z = (1, 0, 1), p = (0.5, 0.5, 0.9). The control variate a + λp minimises
    Σ c (z - a - λp)² (weighted least squares); both weighted examples have p = 0.5, so λ = 0 and a is the weighted
    mean of z, 2/14: θ = (8a + (1 - a)/0.5 + (0 - a)/0.25 + (1 - a)) / 8. The variance uses each residual as if
    left out of the fit, r / (1 - h), with leverages h = c / Σc = (2/14, 12/14, 0): residuals (1 - a)/(12/14) = 1
    and -a/(2/14) = -1, so v = (2 · 1 + 12 · 1) / 64 (above the floor, half a unit residual at the largest weight,
    6 / 64)."""
    from evalcore.labeling.estimate import design_moments

    labeled = {"value": np.array([1.0, 0.0, 1.0]), "weight": np.array([0.4, 0.2, 0.9]),
               "proxy": np.array([0.5, 0.5, 0.9]), "stratum": np.zeros(3, int), "judge": np.full(3, np.nan)}
    pool = {"N": 8, "strata": [8], "sum_proxy": 4.0}
    a = 2 / 14
    theta = (8 * a + (1 - a) / 0.5 + (0 - a) / 0.25 + (1 - a)) / 8
    got_theta, var, _ = design_moments("active", labeled["value"], labeled, pool, tau=0.8)
    assert got_theta == pytest.approx(theta) and var == pytest.approx(14 / 64)
    got = live_estimate(labeled, "active", pool, planned=3, target=0.1, level=0.95, tau=0.8)
    assert got.estimate == pytest.approx(theta) and got.ci_low < theta < got.ci_high


def test_the_active_control_variate_is_weighted_least_squares():
    """Four examples, c = (1, 1, 2, 0): the fit of z on p with weights c by numpy's least squares."""
    from evalcore.labeling.estimate import _control

    t, p, c = np.array([1.0, 0.0, 1.0, 1.0]), np.array([0.9, 0.2, 0.6, 0.5]), np.array([1.0, 1.0, 2.0, 0.0])
    design = np.c_[np.ones(4), p] * np.sqrt(c)[:, None]
    expected = np.linalg.lstsq(design, t * np.sqrt(c), rcond=None)[0]
    assert _control(t, p, c) == pytest.approx(tuple(expected))


def test_priority_sampling_ipw_is_unbiased_over_queue_seeds():
    """The mean of the active design's estimate over 400 queues (one pool, 60 labels each) is the pool's accuracy
    within 3 standard errors of that mean."""
    pool, z = _pool(400, seed=5)
    z_by_id = dict(zip(pool["example_id"], z))
    estimates = []
    for seed in range(400):
        plan = plan_queue(pool, "active", budget=60, seed=seed)
        got = live_estimate(_labeled(plan, z_by_id, 60), "active", plan.pool, 60, None, 0.95,
                            tau=plan.order["priority"].iloc[60])
        estimates.append(got.estimate)
    estimates = np.asarray(estimates)
    assert abs(estimates.mean() - z.mean()) < 3 * estimates.std(ddof=1) / math.sqrt(estimates.size)


def test_ppi_with_a_perfect_judge_is_exact_and_with_a_constant_one_is_the_sample_mean():
    """A perfect judge: the estimate is the pool's accuracy and the rectifier's variance its floor, half a
    disagreement in 51: v = (1 - 50/300) (0.5 / 51) / 50. A constant judge: λ = 0, the sample mean and its variance."""
    from evalcore.labeling.estimate import design_moments

    pool, z = _pool(300, seed=1)
    z_by_id = dict(zip(pool["example_id"], z))
    perfect = pool.assign(judge=z)
    plan = plan_queue(perfect, "ppi", budget=50, seed=0)
    labeled = _labeled(plan, z_by_id, 50)
    theta, var, _ = design_moments("ppi", labeled["value"], labeled, plan.pool)
    assert theta == pytest.approx(z.mean()) and var == pytest.approx((1 - 50 / 300) * (0.5 / 51) / 50)
    got = live_estimate(labeled, "ppi", plan.pool, 50, None, 0.95)
    assert got.estimate == pytest.approx(z.mean()) and got.ci_high - got.ci_low > 0.01
    flat = pool.assign(judge=0.5)
    plan = plan_queue(flat, "ppi", budget=50, seed=0)
    labeled = _labeled(plan, z_by_id, 50)
    y = labeled["value"]
    theta, var, _ = design_moments("ppi", y, labeled, plan.pool)
    assert theta == pytest.approx(y.mean()) and var == pytest.approx((1 - 50 / 300) * y.var(ddof=1) / 50)


def test_no_stop_before_the_minimum_even_when_every_label_agrees():
    pool, _ = _pool(500)
    plan = plan_queue(pool, "srs", target=0.2, seed=0)
    ones = {eid: 1.0 for eid in pool["example_id"]}
    early = live_estimate(_labeled(plan, ones, 10), "srs", plan.pool, plan.planned, 0.2, 0.95)
    assert not early.stop and early.ci_high - early.ci_low > 0  # the 0/1 floor: never a zero-width interval


# ------------------------------------------------------------------------------------------------ coverage
@pytest.mark.parametrize("design", ["srs", "proportional", "neyman", "active", "ppi"])
def test_coverage_when_the_stop_rule_fires(design):
    """Seeded simulation with known truth (benchmarks.labeling: calibrated proxy, 85% judge): 150 campaigns per
    design labeled until the stop rule fires at ±0.06; the interval shown then covers the pool's accuracy in
    95% ± 5 points of them (the note's table has 500 campaigns per design at ±0.03 and ±0.05)."""
    from benchmarks.labeling import simulate

    result = simulate(design, campaigns=150, target=0.06, seed=11)
    assert abs(result["coverage_at_stop"] - 0.95) <= 0.05, result
    assert abs(result["coverage_fixed_n"] - 0.95) <= 0.05, result


# ------------------------------------------------------------------------------------------------ agreement
def test_krippendorffs_published_example():
    """Krippendorff (2011), 'Computing Krippendorff's alpha-reliability', nominal example: 4 coders, 12 units,
    missing values: alpha = 0.743."""
    data = {"A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
            "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
            "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
            "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]}
    labels = pd.DataFrame([{"example_id": f"u{i}", "annotator": who, "value": v}
                           for who, values in data.items() for i, v in enumerate(values) if v is not None])
    found = agreement.annotator_agreement(labels, "pairwise")
    assert found.statistic == "Krippendorff's alpha" and found.value == pytest.approx(0.743, abs=5e-4)
    assert found.ci_low <= found.value <= found.ci_high and found.n == 11  # units with two labels or more


def test_cohens_kappa_and_the_judges_worth_by_hand():
    """p_o = 4/6, p_e = 1/2: kappa = 1/3. A judge equal to the labels is worth infinitely many labels."""
    labels = pd.DataFrame({"example_id": [f"e{i}" for i in range(6)] * 2,
                           "annotator": ["a"] * 6 + ["b"] * 6, "value": [1, 1, 0, 0, 1, 0, 1, 0, 0, 0, 1, 1]})
    found = agreement.annotator_agreement(labels, "correct")
    assert found.statistic == "Cohen's kappa" and found.value == pytest.approx(1 / 3)
    per = pd.DataFrame({"value": [1.0, 0, 1, 0, 1, 1], "judge": [1.0, 0, 1, 0, 1, 1]})
    judged = agreement.judge_agreement(per, "correct")
    assert judged.kappa.value == pytest.approx(1.0) and math.isinf(judged.effective_labels)
    assert judged.confusion.loc["correct", "correct"] == 4


# ------------------------------------------------------------------------------------------------ campaigns
@pytest.fixture()
def workspace(tmp_path):
    ws = Workspace(tmp_path / "ws")
    pool, _ = _pool(400)
    frame = pd.DataFrame({"model": "m", "example_id": pool["example_id"], "confidence": pool["proxy"].round(4),
                          "correct": np.nan, "proxy": pool["judge"]})  # no label at all: predictions and a proxy
    record = ws.add_dataset(frame.to_csv(index=False).encode(), "pool", owner=BOB, shared=True)
    return ws, record.id


def test_eight_annotators_at_once_never_get_the_same_example(workspace):
    ws, dataset = workspace
    campaign = Campaign.create(ws, dataset, "m", "srs", budget=200, owner=BOB, shared=True)
    got: dict[str, list] = {}
    errors = []

    def annotate(k: int) -> None:
        who = f"ann{k}@team.org"
        mine = got.setdefault(who, [])
        opened = Campaign.open(ws, campaign.id, viewer=who)  # each annotator its own connection, as in the server
        try:
            for _ in range(20):
                eid = opened.next(who)
                mine.append(eid)
                opened.record(eid, who, 1)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(repr(exc))

    threads = [threading.Thread(target=annotate, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    handed = [e for ids in got.values() for e in ids]
    assert len(handed) == 160 == len(set(handed))  # never the same example twice
    assert campaign.estimate().labels == 160 and len(campaign.history()) == 160  # no label lost
    assert set(handed) == set(campaign.export()["example_id"].iloc[:160])  # the queue's front, in order


def test_the_skipped_examples_profile_beside_the_settled_ones(workspace):
    """Four labels and two skips of a simple random campaign: shares 2/6 and 4/6, each group's mean confidence and
    judge verdict from the queue, by hand."""
    ws, dataset = workspace
    campaign = Campaign.create(ws, dataset, "m", "srs", budget=50, owner=BOB, shared=True, seed=2)
    drawn = []
    for k in range(6):
        eid = campaign.next(ALICE)
        drawn.append(eid)
        campaign.record(eid, ALICE, None if k in (1, 4) else 1, skipped=k in (1, 4))
    profile = campaign.skip_profile().set_index("group")
    queue = pd.DataFrame([campaign.example(e) for e in drawn])
    skipped = queue.iloc[[1, 4]]
    assert profile.loc["skipped", "examples"] == 2 and profile.loc["skipped", "share"] == pytest.approx(2 / 6)
    assert profile.loc["skipped", "proxy"] == pytest.approx(skipped["proxy"].mean())
    assert profile.loc["settled", "judge"] == pytest.approx(queue.drop(index=[1, 4])["judge"].mean())
    assert campaign.estimate().skipped == 2


def test_relabeling_keeps_the_history_and_overlap_hands_an_example_to_k_annotators(workspace):
    ws, dataset = workspace
    campaign = Campaign.create(ws, dataset, "m", "srs", budget=50, owner=BOB, shared=True, overlap=2)
    first = campaign.next(BOB)
    assert campaign.next(ALICE) == first  # overlap 2: a second annotator gets the same example
    assert campaign.next("carol@team.org") != first  # but not a third
    campaign.record(first, BOB, 0)
    campaign.record(first, BOB, 1, note="misread it")
    history = campaign.history()
    assert history["value"].tolist() == [0.0, 1.0] and history["replaced_by"].iloc[0] == history["id"].iloc[1]
    assert campaign.current_labels()["value"].tolist() == [1.0]


def test_refusals_name_what_is_wrong(workspace):
    ws, dataset = workspace
    campaign = Campaign.create(ws, dataset, "m", "neyman", target=0.05, owner=BOB)  # private to bob
    with pytest.raises(EvalDataError, match="not in the queue"):
        campaign.record("no-such-example", BOB, 1)
    eid = campaign.next(BOB)
    with pytest.raises(EvalDataError, match="not on this campaign's scale: give 0 or 1"):
        campaign.record(eid, BOB, 0.7)
    with pytest.raises(PermissionError, match="not a member"):
        campaign.record(eid, ALICE, 1)
    with pytest.raises(PermissionError, match="Only its owner"):
        campaign.delete(viewer=ALICE)
    with pytest.raises(EvalDataError, match="labeling campaign"):
        ws.delete(dataset, viewer=BOB)  # its dataset stays while a campaign uses it
    campaign.delete(viewer=BOB)
    with pytest.raises(LookupError):
        Campaign.open(ws, campaign.id)


def test_an_acknowledged_label_survives_kill_9(workspace, tmp_path):
    ws, dataset = workspace
    campaign = Campaign.create(ws, dataset, "m", "srs", budget=20, owner=BOB, shared=True)
    script = textwrap.dedent(f"""
        import os, signal
        from evalcore.workspace import Workspace
        from evalcore.labeling.campaign import Campaign
        c = Campaign.open(Workspace({str(ws.root)!r}), {campaign.id!r}, viewer={ALICE!r})
        e = c.next({ALICE!r})
        c.record(e, {ALICE!r}, 1)
        print(e, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL
    acknowledged = done.stdout.strip()
    assert campaign.current_labels()[["example_id", "annotator", "value"]].values.tolist() == [
        [acknowledged, ALICE, 1.0]]


def test_the_estimate_equals_an_independent_computation_from_the_export(workspace):
    ws, dataset = workspace
    campaign = Campaign.create(ws, dataset, "m", "proportional", budget=80, owner=BOB, shared=True, seed=4)
    rng = np.random.default_rng(0)
    for _ in range(80):
        campaign.record(campaign.next(ALICE), ALICE, int(rng.random() < 0.7))
    table = campaign.export()
    ht = float((table["label"] / table["inclusion_probability"]).sum()) / 400
    got = campaign.estimate()
    assert got.estimate == pytest.approx(ht) and got.labels == 80 and got.stop
    labeled = campaign.labeled_examples()
    assert labeled["inclusion_probability"].tolist() == table["inclusion_probability"].tolist()


def test_labels_are_read_on_the_metrics_scale():
    from evalcore.labeling.campaign import parse_value

    assert [parse_value(v, "pairwise", (0, 1)) for v in ("A", "b", " tie ")] == [0.0, 1.0, 0.5]
    assert [parse_value(v, "correct", (0, 1)) for v in ("correct", "Incorrect", 1, "0", True)] == [1, 0, 1, 0, 1]
    assert parse_value("7.5", "score", (1, 10)) == 7.5
    for value, metric, allowed in ((11, "score", "from 1 to 10"), ("maybe", "correct", "0 or 1"),
                                   ("C", "pairwise", "A, B or tie"), (float("nan"), "score", "from 1 to 10")):
        with pytest.raises(EvalDataError, match=allowed):
            parse_value(value, metric, (1, 10))


def test_repeated_samples_are_one_example_with_the_mean_confidence_and_the_first_samples_text():
    from evalcore.data.validation import validate
    from evalcore.labeling.campaign import _pool, examples_of

    raw = pd.DataFrame({"model": ["m"] * 4 + ["n"] * 2, "example_id": ["a", "a", "b", "b", "a", "b"],
                        "repeat": [1, 2, 1, 2, 1, 1], "correct": [1, 0, 1, 1, 0, 0],
                        "confidence": [0.8, 0.6, 0.9, 0.7, 0.5, 0.5], "question": ["qa", "qa", "qb", "qb", "qa", "qb"]})
    frame = validate(raw)
    rows = examples_of(frame, "m", "correct")
    assert rows.index.tolist() == ["a", "b"] and rows["input"].tolist() == ["qa", "qb"]
    assert _pool(frame, "m", "correct")["proxy"].tolist() == pytest.approx([0.7, 0.8])
