"""evalcore.ppi.bradley_terry: classical, PPI and PPI++ Bradley-Terry coefficients from pairwise comparisons."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from evalcore.demo import synthetic as demo
from evalcore.ppi.bradley_terry import ppi_bradley_terry
from evalcore.data.reading import EvalDataError

NAMES = np.array([f"m{k}" for k in range(6)])
BETA = np.array([0.0, 0.4, -0.3, 0.9, 0.2, 1.3])  # m0 is the (default) reference: coefficient 0


def _sigmoid(t):
    return 1 / (1 + np.exp(-t))


def _battles(rng, n, beta=BETA, names=NAMES, judge_sd=0.5, judge_bias=0.0, judge_signal=1.0):
    """``n`` battles over uniformly drawn ordered pairs; ``judge`` a noisy, optionally biased probability that leans
    towards the actual outcome by ``judge_signal`` on the logit scale (without it the judge would carry no
    information about ``Y`` beyond the pair, and PPI++ would rightly tune ``lam`` to 0)."""
    m = len(beta)
    a = rng.integers(0, m, size=n)
    b = (a + rng.integers(1, m, size=n)) % m
    diff = beta[b] - beta[a]
    y = (rng.random(n) < _sigmoid(diff)).astype(float)
    judge = _sigmoid(diff + judge_bias + judge_signal * (2 * y - 1) + rng.normal(0, judge_sd, size=n))
    return pd.DataFrame({"model_a": names[a], "model_b": names[b], "outcome": y, "judge": judge})


def _design(frame, names=NAMES):
    """Two-hot rows (-1 at model_a, +1 at model_b) without the first model's column, as in Supplement A."""
    index = {m: k for k, m in enumerate(names)}
    x = np.zeros((len(frame), len(names)))
    rows = np.arange(len(frame))
    x[rows, frame["model_a"].map(index).to_numpy()] -= 1
    x[rows, frame["model_b"].map(index).to_numpy()] += 1
    return x[:, 1:]


def _hard(p):
    return np.where(p > 0.5, 1.0, np.where(p < 0.5, 0.0, 0.5))


@pytest.fixture(scope="module")
def design():
    rng = np.random.default_rng(11)
    labeled = _battles(rng, 400, judge_sd=1.0, judge_bias=0.2, judge_signal=0.5)
    unlabeled = _battles(rng, 5000, judge_sd=1.0, judge_bias=0.2, judge_signal=0.5).assign(outcome=np.nan)
    return labeled, unlabeled


# ------------------------------------------------------------------------------------------------ reference package


@pytest.mark.filterwarnings("ignore::FutureWarning", "ignore:.*faster on contiguous arrays")
@pytest.mark.parametrize("judge", ["probability", "hard"])
@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0, None])
def test_agrees_with_ppi_py(design, lam, judge):
    ppi = pytest.importorskip("ppi_py")
    labeled, unlabeled = design
    x, xu = _design(labeled), _design(unlabeled)
    y = labeled["outcome"].to_numpy()
    yhat, yhat_u = labeled["judge"].to_numpy(), unlabeled["judge"].to_numpy()
    if judge == "hard":
        yhat, yhat_u = _hard(yhat), _hard(yhat_u)

    out = ppi_bradley_terry(labeled, unlabeled, alpha=0.1, lam=lam, judge=judge)
    low, high = ppi.ppi_logistic_ci(x, y, yhat, xu, yhat_u, alpha=0.1, lam=lam)

    assert list(out["model"]) == list(NAMES)
    assert out.attrs["reference"] == "m0" and out.attrs["n"] == 400 and out.attrs["N"] == 5000
    ref = out.iloc[0]
    assert (ref["coefficient"], ref["se"], ref["ci_low"], ref["ci_high"]) == (0.0, 0.0, 0.0, 0.0)
    rest = out.iloc[1:]
    np.testing.assert_allclose(rest["coefficient"], (low + high) / 2, atol=1e-6)  # the CI is centred on the estimate
    np.testing.assert_allclose(rest["ci_low"], low, atol=1e-6)
    np.testing.assert_allclose(rest["ci_high"], high, atol=1e-6)
    used = out["lam"].iloc[0]
    assert (out["lam"] == used).all()
    if lam is None:
        # PPI++: two tuning steps, as ppi_py (lam_1 at the lam = 1 fit, lam_2 at the lam_1 fit)
        theta = ppi.ppi_logistic_pointestimate(x, y, yhat, xu, yhat_u, lam=None)
        from ppi_py.ppi import _calc_lam_glm, _logistic_get_stats
        lam_2 = _calc_lam_glm(*_logistic_get_stats(theta, x, y, yhat, xu, yhat_u), clip=True)
        assert 0 < lam_2 < 1  # the test design exercises a genuinely tuned lam
        assert used == pytest.approx(lam_2, abs=1e-7)
        refit = ppi.ppi_logistic_pointestimate(x, y, yhat, xu, yhat_u, lam=lam_2)
        np.testing.assert_allclose(rest["coefficient"], refit, atol=1e-6)
    else:
        assert used == lam
        theta = ppi.ppi_logistic_pointestimate(x, y, yhat, xu, yhat_u, lam=lam)
        np.testing.assert_allclose(rest["coefficient"], theta, atol=1e-6)


# ------------------------------------------------------------------------------------------------ statistics


def test_classical_recovers_truth():
    rng = np.random.default_rng(2)
    out = ppi_bradley_terry(_battles(rng, 20_000), _battles(rng, 0), lam=0)
    z = (out["coefficient"] - BETA) / out["se"].where(out["se"] > 0)
    assert np.nanmax(np.abs(z)) < 4
    assert out["se"].iloc[1:].max() < 0.06


def test_classical_interval_coverage():
    rng = np.random.default_rng(3)
    covered = []
    for _ in range(200):
        out = ppi_bradley_terry(_battles(rng, 600), _battles(rng, 0), alpha=0.1, lam=0)
        covered.append(((out["ci_low"] <= BETA) & (BETA <= out["ci_high"])).to_numpy()[1:])
    coverage = np.mean(covered)
    assert 0.86 <= coverage <= 0.94, coverage


def test_ppi_plus_plus_narrower_with_good_judge():
    rng = np.random.default_rng(4)
    frames = []
    for n in (1000, 60_000):
        f = _battles(rng, n)
        agree = rng.random(n) < 0.8
        f["judge"] = np.where(agree, f["outcome"], 1 - f["outcome"])  # hard labels, right 80% of the time
        frames.append(f)
    labeled, unlabeled = frames[0], frames[1].assign(outcome=np.nan)
    classical = ppi_bradley_terry(labeled, unlabeled, lam=0)
    tuned = ppi_bradley_terry(labeled, unlabeled, lam=None)
    width = lambda out: (out["ci_high"] - out["ci_low"]).to_numpy()[1:]  # noqa: E731
    assert np.all(width(tuned) < width(classical))
    assert 0 < tuned["lam"].iloc[0] <= 1
    assert classical["lam"].iloc[0] == 0


def test_lam_zero_is_the_logistic_mle():
    rng = np.random.default_rng(5)
    labeled = _battles(rng, 800)
    labeled.loc[::7, "judge"] = np.nan  # the judge is not needed by the classical estimate
    out = ppi_bradley_terry(labeled, labeled.iloc[:0], lam=0)
    x, y = _design(labeled), labeled["outcome"].to_numpy()

    def loss(theta):  # per-example binary cross-entropy, an independent fit of the same model
        eta = x @ theta
        return np.mean(np.logaddexp(0, eta) - y * eta), x.T @ (_sigmoid(eta) - y) / len(y)

    fit = minimize(loss, np.zeros(x.shape[1]), jac=True, method="BFGS", options={"gtol": 1e-11, "maxiter": 1000})
    np.testing.assert_allclose(out["coefficient"].iloc[1:], fit.x, atol=1e-6)
    assert out["coefficient"].iloc[0] == 0


def test_reference_and_hard_judge_convention():
    rng = np.random.default_rng(6)
    labeled, unlabeled = _battles(rng, 500), _battles(rng, 3000).assign(outcome=np.nan)
    base = ppi_bradley_terry(labeled, unlabeled, lam=1)
    moved = ppi_bradley_terry(labeled, unlabeled, lam=1, reference="m3")
    # a new reference shifts every coefficient by the same constant
    np.testing.assert_allclose(moved["coefficient"], base["coefficient"] - base["coefficient"].iloc[3], atol=1e-9)
    assert moved.loc[3, "se"] == 0 and moved.attrs["reference"] == "m3"
    # judge="hard" is the same as passing the thresholded judge, with 0.5 kept at 0.5
    labeled.loc[:9, "judge"] = 0.5
    hard = ppi_bradley_terry(labeled, unlabeled, lam=1, judge="hard")
    pre = ppi_bradley_terry(labeled.assign(judge=_hard(labeled["judge"])),
                            unlabeled.assign(judge=_hard(unlabeled["judge"])), lam=1)
    np.testing.assert_allclose(hard["coefficient"], pre["coefficient"], atol=1e-12)


def test_no_unlabeled_falls_back_to_classical():
    rng = np.random.default_rng(7)
    labeled = _battles(rng, 500)
    out = ppi_bradley_terry(labeled, labeled.iloc[:0], lam=None)
    classical = ppi_bradley_terry(labeled, labeled.iloc[:0], lam=0)
    np.testing.assert_allclose(out["coefficient"], classical["coefficient"])
    assert out["lam"].iloc[0] == 0
    assert any("without a human vote" in note for note in out.attrs["notes"])
    assert classical.attrs["notes"] == []
    one = ppi_bradley_terry(labeled, labeled.iloc[:1].assign(outcome=np.nan), lam=1)  # no covariance from 1 row
    assert one["lam"].iloc[0] == 0 and "Only one" in one.attrs["notes"][0]


def test_demo_battles():
    b = demo.pairwise_battles(seed=0)
    labeled = b.battles[b.battles["outcome"].notna()]
    unlabeled = b.battles[b.battles["outcome"].isna()]
    out = ppi_bradley_terry(labeled, unlabeled, alpha=0.1)
    truth = b.strengths.reindex(out["model"]).to_numpy()
    assert out.attrs["reference"] == b.strengths.index[0] == "atlas-l"
    ref = out[out["model"] == "atlas-l"].iloc[0]
    assert ref["coefficient"] == 0 and ref["se"] == 0
    rest = out["se"] > 0
    assert np.all(np.abs(out["coefficient"] - truth)[rest] < 3 * out["se"][rest])
    assert out["rank"].dtype.kind == "i" and out["rank"].min() == 1
    assert 0 <= out["lam"].iloc[0] <= 1
    assert out.attrs["n"] == len(labeled) and out.attrs["N"] == len(unlabeled) and out.attrs["alpha"] == 0.1


def test_ranks_from_bonferroni_intervals():
    rng = np.random.default_rng(8)
    beta = np.array([0.0, 0.05, 3.0])
    names = np.array(["a", "b", "c"])
    out = ppi_bradley_terry(_battles(rng, 3000, beta, names), _battles(rng, 0, beta, names), lam=0)
    assert list(out["rank"]) == [2, 2, 1]


def test_timing_printout():
    """Not an assertion on speed: prints the time of a 20-model, n = 1,000, N = 100,000 PPI++ fit."""
    rng = np.random.default_rng(9)
    beta = np.linspace(-1.0, 1.5, 20)
    names = np.array([f"model-{k:02d}" for k in range(20)])
    labeled = _battles(rng, 1000, beta, names)
    unlabeled = _battles(rng, 100_000, beta, names).assign(outcome=np.nan)
    start = time.perf_counter()
    out = ppi_bradley_terry(labeled, unlabeled, lam=None)
    print(f"\nppi_bradley_terry 20 models, n=1000, N=100000, PPI++: {time.perf_counter() - start:.3f} s, "
          f"lam={out['lam'].iloc[0]:.3f}")
    assert len(out) == 20


# ------------------------------------------------------------------------------------------------ bad input


def _small():
    """A tiny valid labeled set: a cycle x > y > z > x with a few extra votes."""
    labeled = pd.DataFrame({
        "model_a": ["x", "y", "z", "x", "y", "z"],
        "model_b": ["y", "z", "x", "z", "x", "y"],
        "outcome": [0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
        "judge": [0.2, 0.3, 0.4, 0.7, 0.6, 0.9],
    })
    unlabeled = labeled.assign(outcome=np.nan, judge=[0.1, 0.5, 0.8, 0.3, 0.6, 0.4])
    return labeled, unlabeled


def test_small_valid_case_runs():
    labeled, unlabeled = _small()
    for lam in (0, 1, None):
        out = ppi_bradley_terry(labeled, unlabeled, lam=lam)
        assert np.isfinite(out["coefficient"]).all()


def _raises(match, labeled, unlabeled, **kwargs):
    with pytest.raises(EvalDataError, match=match):
        ppi_bradley_terry(labeled, unlabeled, **kwargs)


def test_too_few_labeled():
    labeled, unlabeled = _small()
    _raises("at least 2", labeled.iloc[:1], unlabeled)
    _raises("at least 2", labeled.iloc[:0], unlabeled.iloc[:0])


def test_model_without_labeled_comparison():
    labeled, unlabeled = _small()
    extra = pd.DataFrame({"model_a": ["x"], "model_b": ["w-new"], "judge": [0.5]})
    _raises(r"w-new appear in no labeled comparison.*cannot be identified", labeled, pd.concat([unlabeled, extra]))


def test_all_outcomes_equal():
    labeled, unlabeled = _small()
    _raises("need both outcomes", labeled.assign(outcome=1.0), unlabeled)


def test_disconnected_comparisons():
    labeled = pd.DataFrame({"model_a": ["a", "b", "c", "d"], "model_b": ["b", "a", "d", "c"],
                            "outcome": [1.0, 1.0, 0.0, 1.0], "judge": 0.5})
    _raises(r"do not connect.*\{a, b\}; \{c, d\}", labeled, labeled.iloc[:0], lam=0)


def test_ford_condition_undefeated_and_winless():
    labeled, unlabeled = _small()
    labeled = labeled.assign(outcome=[0.0, 0.0, 1.0, 0.0, 1.0, 1.0])  # x beats y and z in every vote
    _raises(r"x won every labeled comparison.*undefeated", labeled, unlabeled, lam=0)
    labeled = labeled.assign(outcome=[1.0, 0.0, 0.0, 1.0, 0.0, 1.0])  # x loses every vote
    _raises(r"x never won", labeled, unlabeled, lam=0)


def test_ford_condition_groups():
    # {a, b} and {c, d} each a cycle, but a and b beat c and d every time
    labeled = pd.DataFrame({"model_a": ["a", "b", "c", "d", "a", "b"], "model_b": ["b", "a", "d", "c", "c", "d"],
                            "outcome": [1.0, 1.0, 1.0, 1.0, 0.0, 0.0]})
    _raises(r"the group \{a, b\} won every labeled comparison against the other models.*"
            r"the group \{c, d\} never won", labeled, labeled.iloc[:0], lam=0)


def test_bad_outcome_values():
    labeled, unlabeled = _small()
    labeled.loc[2, "outcome"] = 2.0
    _raises(r"'outcome'.*1 \(model_b wins\), 0 .*0\.5 a tie.*position\(s\) 2 ", labeled, unlabeled)
    labeled.loc[2, "outcome"] = np.nan
    _raises(r"position\(s\) 2 ", labeled, unlabeled)


def test_bad_judge_values():
    labeled, unlabeled = _small()
    _raises(r"'judge' of the labeled.*position\(s\) 1 ", labeled.assign(judge=[0.2, np.nan, 0.4, 0.7, 0.6, 0.9]),
            unlabeled, lam=1)
    _raises(r"'judge' of the unlabeled.*position\(s\) 4 ", labeled,
            unlabeled.assign(judge=[0.1, 0.5, 0.8, 0.3, 1.5, 0.4]), lam=0.5)
    many = pd.concat([unlabeled] * 3, ignore_index=True).assign(judge=np.nan)
    _raises(r"0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 8 more", labeled, many)
    _raises("lack column.*judge", labeled.drop(columns="judge"), unlabeled)
    # the classical estimate does not need the judge
    ppi_bradley_terry(labeled.assign(judge=np.nan), unlabeled.assign(judge=np.nan), lam=0)


def test_constant_judge_with_tuning():
    labeled, unlabeled = _small()
    _raises(r"same value for every comparison.*lam=0", labeled.assign(judge=0.7), unlabeled.assign(judge=0.7))


def test_self_comparison():
    labeled, unlabeled = _small()
    labeled.loc[3, "model_b"] = "x"
    _raises(r"compared with itself.*labeled.*position\(s\) 3", labeled, unlabeled)


def test_unknown_reference_and_parameters():
    labeled, unlabeled = _small()
    _raises("Reference model 'q' is not one of", labeled, unlabeled, reference="q")
    _raises("lam must be", labeled, unlabeled, lam=1.5)
    _raises("judge must be one of", labeled, unlabeled, judge="soft")
    _raises("alpha must be", labeled, unlabeled, alpha=0)


def test_divergent_fit_is_reported():
    # humans and a perfect judge agree on the labeled votes (they cancel at lam = 1), and on the unlabeled
    # comparisons the judge says x wins every time: the PPI loss has no finite minimiser
    labeled, _ = _small()
    labeled = labeled.assign(judge=labeled["outcome"])
    unlabeled = pd.DataFrame({"model_a": ["x", "y", "z", "x"], "model_b": ["y", "x", "x", "z"],
                              "judge": [0.0, 1.0, 1.0, 0.0]})
    unlabeled = pd.concat([unlabeled, pd.DataFrame({"model_a": ["y", "z"], "model_b": ["z", "y"],
                                                    "judge": [0.3, 0.6]})], ignore_index=True)
    _raises("does not converge.*diverge", labeled, unlabeled, lam=1)
