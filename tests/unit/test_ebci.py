"""Robust EBCI critical values: published values, both reference grids, identities, the LP dual certificate,
Monte Carlo checks of the definition, the fast path against the direct solver, asymptotes and bad input."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtr, ndtri
from scipy.stats import ncx2

from evalcore.subgroups.robust_intervals import _cva_direct, _least_favorable, _max_noncoverage, _r, _r_t, _t0, robust_critical_value

INF = np.inf

# Armstrong, Kolesar & Plagborg-Moller's R package ebci: vignette and tests/testthat/test-cv.R (issue 3).
PUBLISHED = [
    (0, INF, 0.05, 1.959964),
    (4, INF, 0.05, 7.216351),
    (4, 3, 0.05, 4.619513),
    (25, 3, 0.05, 11.88358367),
    (1, 3, 0.20, 1.8494683),
    (100, 3, 0.05, 24.86172217),
    (7.84, 8, 0.10, 7.0779747158),
]


def r_by_hand(t, chi):
    """P(|Z + sqrt(t)| > chi), written independently of the module."""
    return ndtr(-np.sqrt(t) - chi) + 1.0 - ndtr(chi - np.sqrt(t))


def half_unit(text: str) -> float:
    """Half a unit in the last printed digit of a published number ("6.0216e-05" -> 5e-10)."""
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 0.5 * 10.0 ** (-decimals + int(exponent or 0))


# --------------------------------------------------------------------------------------------- known values


@pytest.mark.parametrize(("m2", "kappa", "alpha", "expected"), PUBLISHED)
def test_published_values_scalar_and_array(m2, kappa, alpha, expected):
    scalar = robust_critical_value(m2, kappa, alpha)
    array = robust_critical_value(np.array([m2, m2]), kappa, alpha)
    assert isinstance(scalar, float)
    assert abs(scalar - expected) < 1e-6
    assert np.abs(array - expected).max() < 1e-6


# ebci_reference_values.csv leaves commas unquoted inside the chi ("cva(4,1,0.05)") and source fields.
REFERENCE_ROW = re.compile(
    r"(?P<function>[^,]*),(?P<m2>[^,]*),(?P<kappa>[^,]*),(?P<alpha>[^,]*),(?P<chi>cva\([^)]*\)|[^,]*),"
    r"(?P<expected>[^,]*),(?P<quantity>[^,]*),(?P<source>.*)"
)


def test_reference_values_csv(shared_file):
    """Every numeric cva and rho row of ebci_reference_values.csv, to the published digits (+1e-9)."""
    header, *lines = shared_file("ebci_reference_values.csv").read_text().splitlines()
    assert header == "function,m2,kappa,alpha,chi,expected_value,quantity,source"
    checked = {"cva": 0, "rho": 0}
    for line in lines:
        row = REFERENCE_ROW.fullmatch(line)
        assert row, line
        if not re.fullmatch(r"[0-9.]+", row["m2"]):
            continue  # the "m2->inf" Chebyshev row is checked in test_large_m2_asymptotes
        m2, kappa, expected = float(row["m2"]), float(row["kappa"]), float(row["expected"])
        tol = half_unit(row["expected"]) + 1e-9
        if row["function"] == "cva":
            alpha = float(row["alpha"])
            assert robust_critical_value(m2, kappa, alpha) == pytest.approx(expected, abs=tol), line
            assert robust_critical_value([m2], kappa, alpha)[0] == pytest.approx(expected, abs=tol), line
        else:
            call = re.fullmatch(r"cva\((.*)\)", row["chi"])
            chi = robust_critical_value(*map(float, call.group(1).split(","))) if call else float(row["chi"])
            assert float(_max_noncoverage(m2, kappa, chi)) == pytest.approx(expected, abs=tol), line
        checked[row["function"]] += 1
    assert checked == {"cva": 10, "rho": 3}


def test_cva_grid_csv_all_144_rows(shared_file):
    """R ebci and the Python package multiple-inference agree on this grid to 2e-12; so do we, to 1e-9."""
    grid = pd.read_csv(shared_file("ebci_cva_grid.csv"))
    assert len(grid) == 144 and set(grid.kappa) == {1, 2, 3, 5, 10, INF}
    for (kappa, alpha), rows in grid.groupby(["kappa", "alpha"]):
        fast = robust_critical_value(rows.m2.to_numpy(), kappa, alpha)
        assert np.abs(fast - rows.cv.to_numpy()).max() < 1e-9, (kappa, alpha)
        for m2, cv in zip(rows.m2, rows.cv):
            assert abs(robust_critical_value(float(m2), kappa, alpha) - cv) < 1e-9, (m2, kappa, alpha)


@pytest.mark.parametrize(
    ("m2", "kappa", "alpha", "relation"),
    [
        (1, 1e4, 0.2, "equal"),  # R test-cv.R: cva(B=1, kappa=10000) == cva(B=1, Inf), alpha = 0.2
        (4, 20, 0.05, "equal"),  # kappa = Inf solution has kurtosis 17.4 < 20: constraint slack
        (0.25, 15, 0.05, "less"),  # ... 16.6 > 15: binding, strictly smaller
    ],
)
def test_kappa_binds_exactly_when_the_unconstrained_solution_violates_it(m2, kappa, alpha, relation):
    bounded, unbounded = (robust_critical_value(m2, k, alpha) for k in (kappa, INF))
    if relation == "equal":
        assert bounded == pytest.approx(unbounded, abs=1e-10)
    else:
        assert bounded < unbounded - 1e-4


@pytest.mark.parametrize(("m2", "kappa", "alpha"), [(25, 1.000001, 0.05), (1e-4, 15, 0.05), (1e-4, 15, 0.2)])
def test_close_to_parametric_value_near_kappa_one_or_m2_zero(m2, kappa, alpha):
    """R test-cv.R: |cva - CVb| < 1e-5 for kappa -> 1 and for m2 -> 0."""
    parametric = np.sqrt(ncx2.ppf(1 - alpha, 1, m2))
    assert abs(robust_critical_value(m2, kappa, alpha) - parametric) < 1e-5


# --------------------------------------------------------------------------------------------- identities


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.2, 0.5])
def test_kappa_one_is_the_noncentral_chi_square_quantile(alpha):
    m2 = np.array([1e-3, 0.01, 0.1, 0.5, 1, 2, 4, 9, 25, 100, 400, 1e3, 1e4])
    expected = np.sqrt(ncx2.ppf(1 - alpha, df=1, nc=m2))
    assert np.abs(robust_critical_value(m2, 1, alpha) - expected).max() < 1e-10
    assert abs(robust_critical_value(4.0, 1, alpha) - expected[6]) < 1e-10


@pytest.mark.parametrize("kappa", [1, 1.5, 3, 1e6, INF])
@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1, 0.5])
def test_m2_zero_gives_the_normal_quantile_for_every_kappa(kappa, alpha):
    z = ndtri(1 - alpha / 2)
    assert robust_critical_value(0.0, kappa, alpha) == z
    assert robust_critical_value(np.zeros(3), kappa, alpha).tolist() == [z] * 3


@pytest.mark.parametrize("kappa", [1, 1.5, 3, 10, INF])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_increasing_in_m2(kappa, alpha):
    m2 = np.concatenate([[0.0], np.geomspace(1e-4, 1e6, 300)])
    assert (np.diff(robust_critical_value(m2, kappa, alpha)) > 0).all()


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_increasing_in_kappa(alpha):
    kappas = [1, 1.001, 1.5, 2, 3, 5, 10, 100, 1e4, INF]
    m2 = np.array([0.01, 0.1, 0.5, 1, 4, 25, 100, 1e4])
    table = np.array([robust_critical_value(m2, k, alpha) for k in kappas])
    assert (np.diff(table, axis=0) >= -1e-12).all()
    # Where the kurtosis bound matters (at alpha = 0.2 and m2 <= 1, chi^2 <= 3: r concave, cva = parametric).
    assert (table[-1] > table[0] + 1e-3)[m2 >= (0.1 if alpha == 0.05 else 4)].all()
    assert (table[-1] - table[0] < 1e-8)[m2 <= (0 if alpha == 0.05 else 1)].all()


# ------------------------------------------------------------------------------ the worst-case distribution


def certificate(m2, kappa, chi):
    """LP dual certificate for rho(m2, kappa, chi): returns (rho, bound, min(q - r) on a dense grid, lambda2).

    q(t) = l0 + l1 t + l2 t^2 passes through the least favourable support points, tangent to r at the upper
    one (tangent at m2 for a point mass). If q >= r on [0, inf) and l2 >= 0, every feasible F has
    E r(T) <= E q(T) <= l0 + l1 m2 + l2 kappa m2^2 = bound, so rho = bound proves optimality.
    """
    x, p = _least_favorable(np.array([float(m2)]), kappa, np.array([chi]))
    (a, b), (pa, pb) = x[:, 0], p[:, 0]
    rho = pa * r_by_hand(a, chi) + pb * r_by_hand(b, chi)
    if pb == 0:
        lam = np.array([r_by_hand(m2, chi) - m2 * _r_t(m2, chi), _r_t(m2, chi), 0.0])
    else:
        lam = np.linalg.solve(
            [[1, a, a * a], [1, b, b * b], [0, 1, 2 * b]], [r_by_hand(a, chi), r_by_hand(b, chi), _r_t(b, chi)]
        )
    t = np.concatenate([np.linspace(0, (chi + 12) ** 2, 200_001), np.geomspace(1e-12, (chi + 12) ** 2, 20_001)])
    gap = lam[0] + lam[1] * t + lam[2] * t * t - r_by_hand(t, chi)
    bound = lam[0] + lam[1] * m2 + (lam[2] * kappa * m2 * m2 if lam[2] > 1e-14 else 0.0)
    return rho, bound, gap.min(), lam[2]


@pytest.mark.parametrize(
    ("m2", "kappa", "alpha", "regime"),
    [
        (4, 3, 0.05, "binding"),
        (25, 3, 0.05, "binding"),
        (100, 3, 0.05, "binding"),
        (1, 3, 0.01, "binding"),
        (1e4, 1.5, 0.10, "binding"),
        (7.84, 8, 0.10, "corner"),  # binding with a = 0: F = {0, kappa m2}
        (0.5, 5, 0.05, "corner"),
        (0.25, 15, 0.05, "corner"),
        (4, 20, 0.05, "envelope"),  # kappa slack: F = {0, t0}
        (4, INF, 0.05, "envelope"),
        (0.5, 3, 0.20, "point"),  # chi^2 <= 3: r concave, F = point mass at m2
        (25, 3, 0.95, "point"),  # m2 >= t0(chi) > 0
        (100, 1.5, 0.99, "point"),
    ],
)
def test_least_favorable_distribution_passes_the_dual_certificate(m2, kappa, alpha, regime):
    chi = robust_critical_value(m2, kappa, alpha)
    x, p = _least_favorable(np.array([float(m2)]), kappa, np.array([chi]))
    (a, b), p_b, t0 = x[:, 0], p[1, 0], _t0(np.array([chi]))[0]
    if p_b == 0:
        observed = "point"
    elif a == 0:
        observed = "envelope" if b == pytest.approx(t0, rel=1e-14) else "corner"
    else:
        observed = "binding"
    assert observed == regime
    rho, bound, min_gap, lam2 = certificate(m2, kappa, chi)
    assert rho == pytest.approx(alpha, abs=1e-12)
    assert min_gap > -1e-12 and lam2 > -1e-14
    assert bound - rho < 1e-10


@pytest.mark.parametrize(("m2", "kappa", "alpha"), [(4, 3, 0.05), (0.5, 15, 0.05), (25, 3, 0.1), (7.84, 8, 0.1)])
def test_monte_carlo_check_of_the_definition(m2, kappa, alpha):
    """The solver's worst case is feasible and has non-coverage alpha; random feasible laws do no worse."""
    chi = robust_critical_value(m2, kappa, alpha)
    x, p = (v[:, 0] for v in _least_favorable(np.array([float(m2)]), kappa, np.array([chi])))
    assert (p >= 0).all() and p.sum() == pytest.approx(1, abs=1e-15)
    assert p @ x == pytest.approx(m2, rel=1e-12)
    assert p @ x**2 <= kappa * m2**2 * (1 + 1e-12)
    assert p @ r_by_hand(x, chi) == pytest.approx(alpha, abs=1e-8)

    rng = np.random.default_rng(3)
    n = 400_000
    bias = np.sqrt(rng.choice(x, size=n, p=p / p.sum())) * rng.choice([-1, 1], size=n)
    miss = np.mean(np.abs(rng.standard_normal(n) + bias) > chi)
    assert abs(miss - alpha) < 4.5 * np.sqrt(alpha * (1 - alpha) / n)

    # Random feasible two-point laws {low, high}: mean m2, variance up to (kappa - 1) m2^2. None does worse,
    # and the best of them comes within 1e-3 of alpha, so the bound is attained, not just respected.
    draws = 20_000
    low = m2 * rng.uniform(0, 1, size=draws)
    high = m2 + rng.uniform(0, 1, size=draws) * (kappa - 1) * m2**2 / (m2 - low)
    p_high = (m2 - low) / (high - low)
    noncoverage = (1 - p_high) * r_by_hand(low, chi) + p_high * r_by_hand(high, chi)
    assert alpha - 1e-3 < noncoverage.max() <= alpha + 1e-12


# --------------------------------------------------------------------------------- fast path, large m2


@pytest.mark.parametrize("kappa", [1, 2, 3, 10, INF])
def test_fast_path_equals_direct_solver_on_300_random_m2(kappa):
    rng = np.random.default_rng(2022)
    m2 = np.concatenate([[0.0, 1e4], rng.uniform(0, 1e4, 149), 10 ** rng.uniform(-4, 4, 149)])
    fast = robust_critical_value(m2, kappa, 0.05)
    direct = np.array([_cva_direct(float(v), kappa, 0.05) for v in m2])
    assert np.abs(fast - direct).max() < 1e-8


@pytest.mark.parametrize("alpha", [0.05, 0.1])
@pytest.mark.parametrize("kappa", [1, 1.5, 3, 10, INF])
def test_large_m2_asymptotes(kappa, alpha):
    """kappa = 1: cva = sqrt(m2) + z_{1-alpha}; otherwise cva / sqrt(k m2) -> 1 with P(U >= k) = alpha for
    the worst U >= 0 with E U = 1, E U^2 <= kappa (Cantelli, or Markov/Chebyshev when kappa >= 1/alpha:
    the reference table's limit sqrt((1 + m2)/alpha) for kappa = Inf)."""
    m2 = np.array([1e4, 1e6, 1e8, 1e10])
    cva = robust_critical_value(m2, kappa, alpha)
    assert np.isfinite(cva).all()
    assert abs(robust_critical_value(1e6, kappa, alpha) - cva[1]) < 1e-12 * cva[1] + 1e-10
    if kappa == 1:
        assert np.abs(cva - np.sqrt(m2) - ndtri(1 - alpha)).max() < 1e-9
        return
    k = 1 / alpha if kappa >= 1 / alpha else 1 + np.sqrt((kappa - 1) * (1 - alpha) / alpha)
    error = np.abs(cva / np.sqrt(k * m2) - 1)  # observed at most 1.5e-2, 1.9e-3, 2.3e-4, 2.6e-5
    assert (error < [2e-2, 3e-3, 4e-4, 5e-5]).all() and (np.diff(error) < 0).all()
    if kappa == INF:
        assert abs(cva[-1] / np.sqrt((1 + m2[-1]) / alpha) - 1) < 1e-4


def test_fast_path_on_extreme_alpha_and_kappa_matches_direct():
    m2 = np.array([1e-8, 1e-3, 0.3, 3, 30, 3e3])
    for kappa, alpha in [(1.0001, 0.001), (1e6, 0.001), (2, 0.6), (50, 0.3), (1.2, 0.01)]:
        fast = robust_critical_value(m2, kappa, alpha)
        direct = [_cva_direct(float(v), kappa, alpha) for v in m2]
        assert np.allclose(fast, direct, rtol=1e-10, atol=1e-10), (kappa, alpha)


def test_r_matches_its_definition():
    t = np.array([0, 1e-6, 0.5, 4, 100, 1e4])
    for chi in (1.0, 1.96, 7.5, 120.0):
        assert np.allclose(_r(t, chi), r_by_hand(t, chi), rtol=1e-12, atol=1e-15)
        step = 1e-6 * (1 + t)
        numeric = (r_by_hand(t + step, chi) - r_by_hand(np.maximum(t - step, 0), chi)) / (
            t + step - np.maximum(t - step, 0)
        )
        assert np.allclose(_r_t(t, chi), numeric, rtol=1e-5, atol=1e-9)


# ----------------------------------------------------------------------------------- shapes and bad input


def test_shapes_and_types():
    grid = np.array([[0.0, 1.0, 4.0], [9.0, 25.0, 100.0]])
    out = robust_critical_value(grid, 3)
    assert out.shape == (2, 3)
    assert np.allclose(out, [[robust_critical_value(float(v), 3) for v in row] for row in grid], atol=1e-10)
    assert isinstance(robust_critical_value(np.float64(4), 3), float)
    assert isinstance(robust_critical_value(np.array(4.0), 3), float)
    assert isinstance(robust_critical_value(4, 3), float)
    assert robust_critical_value([4], 3).shape == (1,)
    assert robust_critical_value(np.array([]), 3).shape == (0,)


@pytest.mark.parametrize(
    ("m2", "kappa", "alpha", "match"),
    [
        (-1.0, 3, 0.05, "m2"),
        (np.nan, 3, 0.05, "m2"),
        (np.inf, 3, 0.05, "m2"),
        ([1.0, np.nan], 3, 0.05, "m2"),
        ([0.0, -1e-12], 3, 0.05, "m2"),
        (1.0, 0.5, 0.05, "kappa"),
        (1.0, np.nan, 0.05, "kappa"),
        (1.0, -np.inf, 0.05, "kappa"),
        (1.0, 3, 0.0, "alpha"),
        (1.0, 3, 1.0, "alpha"),
        (1.0, 3, -0.1, "alpha"),
        (1.0, 3, 1.5, "alpha"),
        (1.0, 3, np.nan, "alpha"),
    ],
)
def test_bad_input_raises_value_error(m2, kappa, alpha, match):
    with pytest.raises(ValueError, match=match):
        robust_critical_value(m2, kappa, alpha)
