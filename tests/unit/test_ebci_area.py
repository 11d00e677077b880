"""evalcore.subgroups.robust_intervals.ebci: the R package ebci's area-level procedure, against the vignette's output, hand-computed
cases, R's own test-suite values and a coverage simulation with known truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtr, ndtri
from scipy.stats import ncx2

from evalcore.data.validation import EvalDataError
from evalcore.subgroups.robust_intervals import ebci


@pytest.fixture(scope="module")
def cz(shared_file) -> pd.DataFrame:
    return pd.read_csv(shared_file("ebci_cz.csv"))


@pytest.fixture(scope="module")
def vignette(cz):
    """R: ebci(theta25 ~ stayer25, data=cz, se=se25, weights=1/se25^2, alpha=0.1)."""
    return ebci(cz["theta25"], cz["se25"], cz[["stayer25"]], weights=1 / cz["se25"] ** 2, alpha=0.1)


def test_vignette_scalars(vignette, shared_file):
    summary = pd.read_csv(shared_file("ebci_cz_vignette_summary.csv")).set_index("quantity")["value"]
    assert vignette.mu2 == pytest.approx(6.243867e-03, rel=1e-6)  # as printed in the vignette
    assert vignette.kappa == pytest.approx(778.5337, rel=1e-6)
    for ours, name in ((vignette.mu2, "mu2"), (vignette.mu2_uncorrected, "mu2_uncorrected"),
                       (vignette.kappa, "kappa"), (vignette.kappa_uncorrected, "kappa_uncorrected"),
                       (vignette.delta["intercept"], "delta_intercept"),
                       (vignette.delta["stayer25"], "delta_stayer25"),
                       (vignette.table["cva"].iloc[0], "cva_first"),
                       (vignette.table["half_length"].iloc[0], "len_eb_first"),
                       (vignette.table["half_length"].mean(), "mean_len_eb"),
                       (vignette.table["len_pa"].mean(), "mean_len_pa"),
                       (vignette.table["ncov_pa"].mean(), "mean_ncov_pa")):
        assert ours == pytest.approx(summary[name], rel=1e-10), name
    assert list(vignette.delta.index) == ["intercept", "stayer25"]
    assert len(vignette.table) == summary["n"] == 595
    assert vignette.alpha == 0.1 and vignette.fs_correction == "PMT"


def test_vignette_every_row(vignette, cz, shared_file):
    fit = pd.read_csv(shared_file("ebci_cz_vignette_fit.csv"))
    table = vignette.table
    assert (cz.loc[table.index, "cz"].to_numpy() == fit["cz"].to_numpy()).all()  # same rows, same order
    for ours, theirs in (("eb", "th_eb"), ("half_length", "len_eb"), ("w_eb", "w_eb"), ("len_pa", "len_pa"),
                         ("ncov_pa", "ncov_pa"), ("estimate", "th_us"), ("se", "se"), ("weight", "weights")):
        np.testing.assert_allclose(table[ours].to_numpy(), fit[theirs].to_numpy(), rtol=1e-8, atol=1e-13,
                                   err_msg=ours)
    np.testing.assert_allclose(table["estimate"] - table["fit"], fit["residuals"], rtol=1e-8, atol=1e-13)
    np.testing.assert_allclose(table["ci_low"], fit["th_eb"] - fit["len_eb"], rtol=1e-8, atol=1e-13)
    np.testing.assert_allclose(table["ci_high"], fit["th_eb"] + fit["len_eb"], rtol=1e-8, atol=1e-13)


def test_vignette_rows_left_out_are_counted(vignette, cz):
    """R's na.omit drops the 146 rows without theta25/se25 (stayer25 is missing in 23 of them); we say so."""
    [note] = vignette.notes
    assert note.startswith("146 of 741 rows left out for a missing value")
    assert "23 without covariate 'stayer25'" in note
    assert set(cz.index) - set(vignette.table.index) == set(cz.index[cz["theta25"].isna()])


def test_unweighted_variant_floors_mu2(cz):
    """weights=None: OLS and plain means; the raw mu2 is negative, so PMT floors it at T2 = 2 mean(s^4)/(n mean(s^2))
    and kappa at 1 + T4/mu2^2."""
    r = ebci(cz["theta25"], cz["se25"], cz[["stayer25"]], alpha=0.1)
    used = cz.dropna(subset=["theta25", "se25", "stayer25"])
    s, n = used["se25"].to_numpy(), len(used)
    t2 = 2 * np.mean(s**4) / (n * np.mean(s**2))
    t4 = 32 * np.mean(s**8) / (n * np.mean(s**4))
    ols = np.linalg.lstsq(np.column_stack([np.ones(n), used["stayer25"]]), used["theta25"], rcond=None)[0]
    np.testing.assert_allclose(r.delta.to_numpy(), ols, rtol=1e-12)
    assert r.mu2_uncorrected == pytest.approx(-0.18848, abs=1e-5)
    assert r.mu2 == pytest.approx(t2, rel=1e-12) == pytest.approx(4.305095e-02, rel=1e-6)
    assert r.kappa == pytest.approx(1 + t4 / t2**2, rel=1e-12) == pytest.approx(36389.36, rel=1e-6)
    assert (r.table["weight"] == 1).all()


def test_user_kappa_replaces_the_estimate(cz, vignette):
    """kappa=inf: mu2 is still estimated; on the vignette the kurtosis bound never binds, so the lengths agree."""
    r = ebci(cz["theta25"], cz["se25"], cz[["stayer25"]], weights=1 / cz["se25"] ** 2, alpha=0.1, kappa=np.inf)
    assert r.kappa == np.inf and r.kappa_uncorrected == pytest.approx(345.3191480692, rel=1e-10)
    assert r.mu2 == vignette.mu2
    np.testing.assert_allclose(r.table["half_length"], vignette.table["half_length"], rtol=1e-10)


def test_r_test_suite_values(cz):
    """kolesarm/ebci tests/testthat/test-eb.R on the largest commuting zones (no weights)."""
    big = cz.sort_values("pop", ascending=False, kind="stable")
    top10 = big.iloc[:10]
    r = ebci(top10["theta25"], top10["se25"], top10[["stayer25"]], alpha=0.1, fs_correction="none")
    t = r.table
    got = [np.sqrt(r.mu2), r.kappa, np.mean(r.mu2 / t["se"] ** 2), *r.delta, t["w_eb"].mean(), t["ncov_pa"].mean(),
           t["half_length"].mean(), t["len_pa"].mean(), 1.6448536269514722 * t["se"].mean(),
           t["half_length"].mean() / t["len_pa"].mean()]
    expected = [0.060852, 5.959142, 0.956639, -0.913932, 0.020049, 0.456490, 0.115947, 0.078879, 0.073284,
                0.113034, 1.076356]
    np.testing.assert_allclose(np.round(got, 6), expected, atol=1e-12)
    top40 = big.iloc[:40]
    r = ebci(top40["theta25"], top40["se25"], top40[["stayer25"]], alpha=0.1)
    np.testing.assert_allclose(np.sqrt([r.mu2, r.mu2_uncorrected]), [0.0247533358, 0.016287771],
                               atol=5e-10)  # to the printed digits
    np.testing.assert_allclose([r.kappa, r.kappa_uncorrected], [475.964641182, 1719.44225761], rtol=1e-9)


HAND = pd.Series([-2.0, 0.0, 0.0, 2.0], index=["a", "b", "c", "d"])


def test_hand_computed_case():
    """se = 1, no covariates: fit 0, raw mu2 = mean(y^2) - 1 = 1 > T2 = 2/4; raw mu4 = mean(y^4 - 6y^2 + 3) = -1,
    so kappa = 1 + T4/mu2^2 = 1 + 32/4 = 9; w_eb = 1/2, eb = y/2."""
    r = ebci(HAND, np.ones(4), alpha=0.05)
    assert r.mu2 == pytest.approx(1.0) and r.mu2_uncorrected == pytest.approx(1.0)
    assert r.kappa == pytest.approx(9.0) and r.kappa_uncorrected == pytest.approx(-1.0)
    assert list(r.delta.index) == ["intercept"] and r.delta["intercept"] == pytest.approx(0.0, abs=1e-15)
    assert list(r.table.index) == ["a", "b", "c", "d"] and r.notes == ()
    np.testing.assert_allclose(r.table["w_eb"], 0.5)
    np.testing.assert_allclose(r.table["eb"], [-1.0, 0.0, 0.0, 1.0], atol=1e-15)
    z = ndtri(0.975)
    np.testing.assert_allclose(r.table["len_pa"], z * np.sqrt(0.5))


def test_hand_computed_case_kappa_one():
    """kappa = 1 given: the critical value is the parametric sqrt(ncx2_{0.95}(1 df, nc = m2 = 1)) = 2.646145548
    (published), the half-length that times w_eb se = 1/2, and the parametric non-coverage is r(1, z sqrt 2)."""
    r = ebci(HAND, np.ones(4), alpha=0.05, kappa=1)
    cva = np.sqrt(ncx2.ppf(0.95, 1, 1.0))
    assert cva == pytest.approx(2.646145548, abs=1e-9)
    np.testing.assert_allclose(r.table["half_length"], cva / 2, rtol=1e-10)
    np.testing.assert_allclose(r.table["ci_high"] - r.table["ci_low"], cva, rtol=1e-10)
    chi = ndtri(0.975) * np.sqrt(2)
    np.testing.assert_allclose(r.table["ncov_pa"], ndtr(-1 - chi) + ndtr(1 - chi), rtol=1e-10)
    none = ebci(HAND, np.ones(4), alpha=0.05, fs_correction="none")
    assert none.mu2 == pytest.approx(1.0) and none.kappa == 1.0  # max(-1, 1)


def test_weighted_regression_is_weighted_least_squares():
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    y = np.array([0.1, 1.3, 1.9, 3.4, 3.8])
    se = np.array([0.1, 0.2, 0.1, 0.3, 0.2])
    r = ebci(y, se, x, weights=1 / se**2)
    w = 1 / se**2
    design = np.column_stack([np.ones(5), x])
    expected = np.linalg.solve(design.T @ (w[:, None] * design), design.T @ (w * y))
    np.testing.assert_allclose(r.delta.to_numpy(), expected, rtol=1e-12)
    assert list(r.delta.index) == ["intercept", "x1"]
    np.testing.assert_allclose(r.table["fit"], design @ expected, rtol=1e-12)
    named = ebci(y, se, pd.DataFrame({"se": x}), weights=1 / se**2)  # a covariate may carry any name
    assert list(named.delta.index) == ["intercept", "se"] and named.delta["se"] == pytest.approx(expected[1])


def test_mu2_zero_is_reported_not_hidden():
    """With fs_correction='none' and no spread beyond the noise, mu2 = 0: estimates are the fit, no intervals."""
    r = ebci([0.0, 0.1, -0.1, 0.0], [1.0, 1.0, 1.0, 1.0], fs_correction="none")
    assert r.mu2 == 0 and r.mu2_uncorrected < 0
    np.testing.assert_allclose(r.table["eb"], 0.0, atol=1e-15)
    assert r.table["half_length"].isna().all()
    assert any("mu2 = 0" in note for note in r.notes)


@pytest.mark.parametrize("call, message", [
    (lambda: ebci([1, 2, 3], [1, 1]), "se has shape (2,); expected one value per estimate (3)"),
    (lambda: ebci([1, 2, 3, 4], [1, 0, 1, -1]), "se must be positive and finite; rows 1, 3 are not (0.0, -1.0)"),
    (lambda: ebci([1, "x", 3, 4], [1, 1, 1, 1]), "estimate must be numeric; rows 1 are not ('x')"),
    (lambda: ebci([1, 2, 3, 4], [1, 1, 1, 1], weights=[1, -1, 1, 1]), "weights must be non-negative"),
    (lambda: ebci([1, 2, 3, 4], [1, 1, 1, 1], covariates=[[1], [2]]), "covariates have 2 rows"),
    (lambda: ebci([1, 2, 3, 4], [1, 1, 1, 1], covariates=np.ones(4)), "collinear"),
    (lambda: ebci([1, 2], [1, 1], covariates=[0, 1]), "2 complete rows cannot fit 2 regression coefficients"),
    (lambda: ebci([1, 2, 3], [1, 1, 1], kappa=0.5), "kappa is a kurtosis, at least 1"),
    (lambda: ebci([1, 2, 3], [1, 1, 1], alpha=1.5), "alpha must be in (0, 1)"),
    (lambda: ebci([1, 2, 3], [1, 1, 1], fs_correction="FPLIB"), "fs_correction must be one of PMT, none"),
])
def test_errors(call, message):
    with pytest.raises(EvalDataError) as info:
        call()
    assert message in str(info.value)


def test_missing_values_are_left_out_and_counted():
    r = ebci(pd.Series([1.0, np.nan, 3.0, 0.5, 2.0]), [1.0, 1.0, None, 1.0, 1.0])
    assert list(r.table.index) == [0, 3, 4]
    assert r.notes == ("2 of 5 rows left out for a missing value (1 without estimate; 1 without se): "
                       "rows 1, 2.",)


def test_average_coverage_with_known_truth():
    """Non-normal true values around a regression, heteroskedastic se, 500 units: the robust intervals cover the
    truth 90% of the time on average across units (over 20 seeded data sets: 0.919 observed)."""
    rng = np.random.default_rng(1)
    coverage = []
    for _ in range(20):
        x = rng.uniform(0, 1, 500)
        se = rng.uniform(0.3, 2.0, 500)
        theta = 1 + 2 * x + rng.choice([-1, 1], 500) * rng.exponential(0.7, 500)
        r = ebci(theta + se * rng.standard_normal(500), se, x, weights=1 / se**2, alpha=0.1)
        coverage.append(np.mean((r.table["ci_low"] <= theta) & (theta <= r.table["ci_high"])))
    assert 0.895 <= np.mean(coverage) <= 0.94
    assert min(coverage) >= 0.86
