"""evalcore.sampling.proxy: expected metrics under the proxy's class distribution and cross-fitted isotonic calibration."""

from __future__ import annotations

import numpy as np
import pytest

from evalcore.sampling.proxy import CalibratedProxy, calibrate_crossfit, check_proxy, expected_metric, metric_range
from evalcore.data.reading import EvalDataError

F = np.array([[0.7, 0.2, 0.1],
              [0.1, 0.3, 0.6]])
Q = np.array([[0.5, 0.3, 0.2],
              [0.2, 0.2, 0.6]])


# ------------------------------------------------------------------------------------------------ expected metrics


def test_accuracy_hand_computed():
    zhat, zsq = expected_metric(F, Q, "accuracy")
    np.testing.assert_allclose(zhat, [0.5, 0.6])  # q at argmax f = (0, 2)
    np.testing.assert_allclose(zsq, zhat)
    zhat, _ = expected_metric(F, metric="accuracy")  # q = f: the top-1 probability
    np.testing.assert_allclose(zhat, [0.7, 0.6])
    zhat, _ = expected_metric(F, Q, "accuracy", predicted=[1, 1])
    np.testing.assert_allclose(zhat, [0.3, 0.2])


def test_brier_hand_computed():
    zhat, zsq = expected_metric(F, Q, "brier")
    # row 0: 0.5*0.3^2 + 0.3*0.8^2 + 0.2*0.9^2 = 0.045 + 0.192 + 0.162
    # row 1: 0.2*0.9^2 + 0.2*0.7^2 + 0.6*0.4^2 = 0.162 + 0.098 + 0.096
    np.testing.assert_allclose(zhat, [0.399, 0.356])
    np.testing.assert_allclose(zsq, [0.5 * 0.3 ** 4 + 0.3 * 0.8 ** 4 + 0.2 * 0.9 ** 4,
                                     0.2 * 0.9 ** 4 + 0.2 * 0.7 ** 4 + 0.6 * 0.4 ** 4])


def test_cross_entropy_hand_computed():
    zhat, zsq = expected_metric(F, Q, "cross_entropy")
    l0, l1 = -np.log(F[0]), -np.log(F[1])
    np.testing.assert_allclose(zhat, [0.5 * l0[0] + 0.3 * l0[1] + 0.2 * l0[2],
                                      0.2 * l1[0] + 0.2 * l1[1] + 0.6 * l1[2]])
    np.testing.assert_allclose(zsq, [(Q[0] * l0 ** 2).sum(), (Q[1] * l1 ** 2).sum()])
    # a zero probability is clipped at 1e-12: finite loss
    zhat, _ = expected_metric([[1.0, 0.0]], [[0.5, 0.5]], "cross_entropy")
    np.testing.assert_allclose(zhat, [0.5 * -np.log(1e-12)])


@pytest.mark.parametrize("metric", ["accuracy", "brier", "cross_entropy"])
def test_expectations_match_monte_carlo(metric):
    rng = np.random.default_rng(1)
    n, k, draws = 20, 4, 200_000
    f = rng.dirichlet(np.ones(k), size=n)
    q = rng.dirichlet(np.ones(k), size=n)
    zhat, zsq = expected_metric(f, q, metric)
    for i in range(n):
        y = rng.choice(k, size=draws, p=q[i])
        if metric == "accuracy":
            z = (y == f[i].argmax()).astype(float)
        elif metric == "brier":
            z = (1.0 - f[i, y]) ** 2
        else:
            z = -np.log(f[i, y])
        se = z.std() / np.sqrt(draws)
        assert abs(z.mean() - zhat[i]) < 5 * se + 1e-9
        assert abs((z ** 2).mean() - zsq[i]) < 5 * (z ** 2).std() / np.sqrt(draws) + 1e-9


def test_expected_metric_errors():
    with pytest.raises(EvalDataError, match="2-D"):
        expected_metric(np.array([0.5, 0.5]))
    with pytest.raises(EvalDataError, match="sum to 1.*row 1"):
        expected_metric([[0.5, 0.5], [0.5, 0.4]])
    with pytest.raises(EvalDataError, match=r"outside \[0, 1\] in rows 0"):
        expected_metric([[1.5, -0.5], [0.5, 0.5]])
    with pytest.raises(EvalDataError, match="missing or infinite probabilities in rows 1"):
        expected_metric([[0.5, 0.5], [np.nan, 0.5]])
    with pytest.raises(EvalDataError, match="proxy_probs has shape"):
        expected_metric(F, Q[:1])
    with pytest.raises(EvalDataError, match="proxy_probs rows must sum to 1"):
        expected_metric(F, Q / 2)
    with pytest.raises(EvalDataError, match="Unknown metric"):
        expected_metric(F, metric="f1")
    with pytest.raises(EvalDataError, match="outside 0..2 in rows 1"):
        expected_metric(F, predicted=[0, 3])
    with pytest.raises(EvalDataError, match="one label per example"):
        expected_metric(F, predicted=[0])


# ------------------------------------------------------------------------------------------------ range checks


def test_metric_range_and_check_proxy():
    assert metric_range("accuracy") == (0.0, 1.0)
    assert metric_range("brier") == (0.0, 1.0)
    assert metric_range("cross_entropy") == (0.0, np.inf)
    np.testing.assert_allclose(check_proxy([0.1, 0.9]), [0.1, 0.9])
    np.testing.assert_allclose(check_proxy([0.0, 7.5], "cross_entropy"), [0.0, 7.5])
    with pytest.raises(EvalDataError, match=r"outside the range \[0, 1\].*1: 1.2.*3: -0.1"):
        check_proxy([0.5, 1.2, 0.3, -0.1], "accuracy")
    with pytest.raises(EvalDataError, match="and 2 more"):
        check_proxy(np.full(7, 2.0), "brier")
    with pytest.raises(EvalDataError, match="outside the range"):
        check_proxy([-1.0], "cross_entropy")
    with pytest.raises(EvalDataError, match="missing or infinite at positions 1"):
        check_proxy([0.5, np.nan])
    with pytest.raises(EvalDataError, match="missing or infinite at positions 0"):
        check_proxy([np.inf], "cross_entropy")
    with pytest.raises(EvalDataError, match="1-D"):
        check_proxy([[0.5]])
    with pytest.raises(EvalDataError, match="Unknown metric"):
        metric_range("auc")


# ------------------------------------------------------------------------------------------------ calibration


def _miscalibrated(n, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0, 1, n)
    z = (rng.uniform(0, 1, n) < p ** 2).astype(float)
    return p, z


def test_calibration_recovers_known_miscalibration():
    p, z = _miscalibrated(30_000)
    labeled = np.zeros(len(p), dtype=bool)
    labeled[:20_000] = True
    cal = calibrate_crossfit(p, np.where(labeled, z, np.nan), labeled, folds=2, seed=0)
    assert isinstance(cal, CalibratedProxy)
    assert cal.folds == 2 and cal.n_labeled == 20_000 and cal.values.shape == p.shape
    assert np.all((cal.values >= 0) & (cal.values <= 1))
    assert np.mean(np.abs(cal.values - p ** 2)) < 0.03
    assert np.mean(np.abs(cal.values[~labeled] - p[~labeled] ** 2)) < 0.03
    assert np.mean(np.abs(p - p ** 2)) > 0.15  # the raw proxy is far off
    # the Brier score against the outcomes drops, on labeled (cross-fitted) and unlabeled examples alike
    for part in (labeled, ~labeled):
        assert np.mean((cal.values[part] - z[part]) ** 2) < np.mean((p[part] - z[part]) ** 2) - 0.02


def test_crossfit_value_independent_of_own_label():
    p, z = _miscalibrated(400, seed=3)
    labeled = np.ones(len(p), dtype=bool)
    labeled[300:] = False
    base = calibrate_crossfit(p, z, labeled, folds=3, seed=5).values
    for i in (0, 17, 123, 299):
        flipped = z.copy()
        flipped[i] = 1.0 - flipped[i]
        values = calibrate_crossfit(p, flipped, labeled, folds=3, seed=5).values
        assert values[i] == base[i]  # its own label never enters its own fit
        assert not np.array_equal(values, base)  # ... but it moves other examples' values


def test_crossfit_is_seeded():
    p, z = _miscalibrated(500, seed=2)
    labeled = np.arange(500) < 250
    a = calibrate_crossfit(p, z, labeled, seed=1).values
    np.testing.assert_array_equal(a, calibrate_crossfit(p, z, labeled, seed=1).values)
    assert not np.array_equal(a, calibrate_crossfit(p, z, labeled, seed=2).values)


def test_crossfit_bounds_clip():
    p = np.linspace(0, 1, 100)
    z = 3.0 * p  # a cross-entropy-like target on (0, 3)
    cal = calibrate_crossfit(p, z, np.ones(100, dtype=bool), bounds=(0.0, 2.0))
    assert cal.values.max() <= 2.0
    cal = calibrate_crossfit(p, z, np.ones(100, dtype=bool), bounds=(0.0, np.inf))
    assert cal.values.max() > 2.0


def test_crossfit_errors():
    p, z = _miscalibrated(50, seed=4)
    every = np.ones(50, dtype=bool)
    with pytest.raises(EvalDataError, match="at least 2"):
        calibrate_crossfit(p, z, every, folds=1)
    few = np.zeros(50, dtype=bool)
    few[:3] = True
    with pytest.raises(EvalDataError, match="Only 3 labeled examples.*at least 4"):
        calibrate_crossfit(p, z, few, folds=2)
    with pytest.raises(EvalDataError, match="same metric z = 1"):
        calibrate_crossfit(p, np.ones(50), every)
    bad_z = z.copy()
    bad_z[7] = np.nan
    with pytest.raises(EvalDataError, match="labeled positions 7"):
        calibrate_crossfit(p, bad_z, every)
    calibrate_crossfit(p, bad_z, np.arange(50) != 7)  # NaN where unlabeled is fine
    bad_p = p.copy()
    bad_p[2] = np.inf
    with pytest.raises(EvalDataError, match="positions 2"):
        calibrate_crossfit(bad_p, z, every)
    with pytest.raises(EvalDataError, match="one value per example"):
        calibrate_crossfit(p, z[:10], every)
    with pytest.raises(EvalDataError, match="boolean mask"):
        calibrate_crossfit(p, z, every.astype(int))
    with pytest.raises(EvalDataError, match="low < high"):
        calibrate_crossfit(p, z, every, bounds=(1.0, 0.0))


def test_platt_fit_recovers_a_known_recalibration():
    """Simulation with known (shift, slope) = (-0.7, 0.6): the estimates lie within 3 of their standard errors (from
    the stated covariance) of the truth, and those errors are those of 4,000 labels (slope SE ~ 0.03)."""
    from evalcore.sampling.designs import recalibrated
    from evalcore.sampling.proxy import platt_fit

    rng = np.random.default_rng(8)
    proxy = rng.beta(4, 1, 8000)
    z = (rng.random(proxy.size) < recalibrated(proxy, -0.7, 0.6)).astype(float)
    labeled = np.zeros(proxy.size, dtype=bool)
    labeled[:4000] = True
    fit = platt_fit(proxy, np.where(labeled, z, np.nan), labeled)
    se = np.sqrt(np.diag(fit.cov))
    assert abs(fit.shift + 0.7) <= 3 * se[0] and abs(fit.slope - 0.6) <= 3 * se[1]
    assert 0.01 < se[1] < 0.08 and fit.n_labeled == 4000
    with pytest.raises(EvalDataError, match="at least 2 correct and 2 wrong"):
        platt_fit(proxy, np.ones(proxy.size), labeled)
    # every wrong label below every correct one: the likelihood grows without bound, no curve is determined
    with pytest.raises(EvalDataError, match="separate correct from wrong"):
        platt_fit(proxy, (proxy > 0.8).astype(float), labeled)
