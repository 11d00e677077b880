"""evalcore.leaderboard.bayes: beta-binomial hierarchical model by Gibbs sampling, diagnostics, Table 7 and Table 1.

Known answers: "Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine Learning
Benchmarks" (../shared/papers/aggregate-uncertainty-vtab.txt) — Section 2.2 simulation study (Table 1, 95%
credible interval (-0.021, -0.003) for the difference of mean task accuracies), Table 7 (83.4% intervals on
VTAB-1k), Figure 5 (Rotation ranks first when structured tasks get weight 0.95); a grid-integrated posterior;
simulated data with known alpha, beta; an AR(1) process with known effective sample size.
"""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
from scipy.special import betaln

from evalcore.leaderboard.bayes import (
    GibbsDraws, bayes_leaderboard, effective_sample_size, fit, gibbs, posterior_rank_probabilities, split_rhat,
)
from evalcore.data.validation import load_eval_log
from evalcore.data.reading import EvalDataError

# Table 7 (83.4% BHM intervals, percent): model -> {category: (estimate, low, high)}
TABLE_7 = {
    "Sup-Rotation-100%": {"natural": (73.6, 73.2, 74.0), "structured": (55.5, 55.0, 55.9),
                          "overall": (68.0, 67.7, 68.2)},
    "Sup-Exemplar-100%": {"specialized": (83.1, 82.7, 83.4), "overall": (67.6, 67.4, 67.9)},
    "Rotation": {"natural": (53.7, 53.2, 54.2), "structured": (57.3, 56.8, 57.7), "overall": (60.4, 60.2, 60.7)},
    "From-Scratch": {"natural": (27.9, 27.5, 28.3), "overall": (43.1, 42.9, 43.4)},
    "WAE-GAN": {"specialized": (54.0, 53.5, 54.4), "structured": (38.4, 37.9, 38.9), "overall": (33.3, 33.0, 33.5)},
}


@pytest.fixture(scope="module")
def vtab_draws(shared_file) -> GibbsDraws:
    return fit(load_eval_log(shared_file("vtab_1k.csv")), draws=5000, chains=4, seed=0)


@pytest.fixture(scope="module")
def vtab_board(vtab_draws) -> pd.DataFrame:
    return bayes_leaderboard(vtab_draws, level=0.834)  # the paper's Table 7 is at 83.4%


# ------------------------------------------------------------------------------------ diagnostics


def _ar1(phi: float, chains: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = rng.standard_normal((chains, n))
    x = np.empty((chains, n))
    x[:, 0] = e[:, 0] / np.sqrt(1 - phi**2)
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + e[:, t]
    return x


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_ess_of_ar1_matches_theory(phi):
    x = _ar1(phi, chains=4, n=5000, seed=1)
    expected = 4 * 5000 * (1 - phi) / (1 + phi)
    ess = effective_sample_size(x)
    assert ess == pytest.approx(expected, rel=0.15)
    assert split_rhat(x) < 1.01


def test_ess_and_rhat_vectorise_over_parameters():
    x = np.stack([_ar1(0.0, 4, 2000, 2), _ar1(0.8, 4, 2000, 3)], axis=-1)
    ess = effective_sample_size(x)
    assert ess.shape == (2,)
    assert ess[0] > 3 * ess[1]
    assert effective_sample_size(np.ones((2, 100))) == 200
    assert split_rhat(np.ones((2, 100))) == 1.0


def test_rhat_flags_chains_that_disagree():
    x = _ar1(0.5, chains=4, n=1000, seed=4) + np.array([0.0, 0.0, 0.0, 3.0])[:, None]
    assert split_rhat(x) > 1.1
    trend = np.linspace(0, 5, 1000)[None, :] + _ar1(0.0, 2, 1000, 5)  # split-R-hat catches a drift in one chain
    assert split_rhat(trend) > 1.1


# ------------------------------------------------------------------------------------ sampler correctness


def test_recovers_known_alpha_beta_from_many_tasks():
    rng = np.random.default_rng(11)
    true_a, true_b = np.array([24.0, 6.0]), np.array([8.0, 12.0])
    j = 300
    n = rng.integers(200, 2000, size=j)
    theta = rng.beta(true_a[:, None], true_b[:, None], size=(2, j))
    y = rng.binomial(n, theta)
    g = gibbs(y, n, draws=2000, chains=2, seed=3)
    for est, true in ((g.alpha, true_a), (g.beta, true_b)):
        mean = est.mean(axis=(0, 1))
        sd = est.std(axis=(0, 1))
        assert np.all(np.abs(mean - true) < 3 * sd), (mean, sd, true)
        assert np.all(np.abs(mean / true - 1) < 0.2)
    # theta: posterior means close to the truth on average (binomial noise ~ 1-2 points)
    assert np.abs(g.theta.mean(axis=(0, 1)) - theta).mean() < 0.015


def _grid_posterior(y, n, rate):
    """Posterior means of theta_1 and alpha by numerical integration over (log a, log b), theta integrated out."""
    u = np.linspace(-7, 7, 1401)
    la, lb = np.meshgrid(u, u, indexing="ij")
    a, b = np.exp(la), np.exp(lb)
    logp = -rate * (a + b) + la + lb  # Exponential priors, Jacobian of the log scale
    for yj, nj in zip(y, n):
        logp = logp + betaln(a + yj, b + nj - yj) - betaln(a, b)  # beta-binomial likelihood (binomial coef. const)
    p = np.exp(logp - logp.max())
    p /= p.sum()
    theta1 = (a + y[0]) / (a + b + n[0])  # E[theta_1 | a, b, data]
    return float((p * theta1).sum()), float((p * a).sum()), float((p * a / (a + b)).sum())


def test_matches_grid_posterior_on_a_tiny_problem():
    y, n = np.array([3, 9, 17]), np.array([10, 15, 20])
    rate = 0.2
    g = gibbs(y, n, draws=12000, chains=4, seed=5, prior={"alpha": {"rate": rate}, "beta": {"rate": rate}})
    t1_grid, a_grid, m_grid = _grid_posterior(y, n, rate)
    t1 = g.theta[:, :, 0, 0]
    mean_ab = g.alpha / (g.alpha + g.beta)
    for draws, truth in ((t1, t1_grid), (g.alpha[:, :, 0], a_grid), (mean_ab[:, :, 0], m_grid)):
        mcse = draws.std() / np.sqrt(effective_sample_size(draws))
        assert abs(draws.mean() - truth) < 4 * mcse + 1e-3, (draws.mean(), truth, mcse)


def test_papers_simulation_example_table_1():
    # Table 1 with N2 = 10,000 (the text's value; the table's 1000 is a typo) and the truncated normal priors
    y = np.array([[100, 5000, 10000], [115, 5000, 10000]])
    n = np.array([200, 10000, 20000])
    prior = {"alpha": ([2000, 2100], [10, 10]), "beta": ([2000, 1900], [10, 10])}
    g = gibbs(y, n, draws=5000, chains=4, seed=0, prior=prior)
    diff = (g.theta[:, :, 0].mean(axis=-1) - g.theta[:, :, 1].mean(axis=-1)).ravel()
    lo, hi = np.quantile(diff, [0.025, 0.975])
    assert lo == pytest.approx(-0.021, abs=0.003)
    assert hi == pytest.approx(-0.003, abs=0.003)
    assert split_rhat(g.alpha).max() < 1.01


def test_prior_given_per_model_as_mapping_is_the_same():
    y = np.array([[100, 5000, 10000], [115, 5000, 10000]])
    n = np.array([200, 10000, 20000])
    a = gibbs(y, n, draws=200, chains=2, seed=1, models=("A", "B"),
              prior={"alpha": ([2000, 2100], [10, 10]), "beta": ([2000, 1900], [10, 10])})
    b = gibbs(y, n, draws=200, chains=2, seed=1, models=("A", "B"),
              prior={"alpha": {"A": (2000, 10), "B": (2100, 10)}, "beta": {"A": (2000, 10), "B": (1900, 10)}})
    np.testing.assert_array_equal(a.theta, b.theta)


def test_reproducible_by_seed_and_chains_differ():
    y, n = np.array([[3, 9, 17], [5, 5, 5]]), np.array([10, 15, 20])
    a = gibbs(y, n, draws=300, chains=3, seed=7)
    b = gibbs(y, n, draws=300, chains=3, seed=7)
    c = gibbs(y, n, draws=300, chains=3, seed=8)
    np.testing.assert_array_equal(a.theta, b.theta)
    np.testing.assert_array_equal(a.alpha, b.alpha)
    assert not np.array_equal(a.theta, c.theta)
    assert not np.array_equal(a.theta[0], a.theta[1])
    assert a.theta.shape == (3, 150, 2, 3) and a.burn == 150


def test_extreme_counts_give_finite_draws():
    y = np.array([[0, 1, 50], [1, 0, 0]])
    n = np.array([50, 1, 50])
    g = gibbs(y, n, draws=400, chains=2, seed=0)
    assert np.isfinite(g.theta).all() and (g.theta >= 0).all() and (g.theta <= 1).all()
    assert np.isfinite(g.alpha).all() and (g.alpha > 0).all()


# ------------------------------------------------------------------------------------ public tables


def _toy(models=("a", "b", "c")):
    rng = np.random.default_rng(5)
    rows = []
    for k, m in enumerate(models):
        for t, c in zip(("t1", "t2", "t3", "t4"), ("x", "x", "y", "y")):
            rows.append({"model": m, "task": t, "category": c, "n": 400, "n_correct": int(rng.integers(150, 250)) + 40 * k})
    return pd.DataFrame(rows)


def test_leaderboard_columns_and_consistency():
    board = bayes_leaderboard(_toy(), draws=600, chains=2, seed=0)
    assert list(board.columns) == ["model", "scope", "name", "estimate", "ci_low", "ci_high", "rhat", "ess_bulk",
                                   "ess_tail"]
    assert list(board.model.unique()) == ["a", "b", "c"]
    assert list(board.name[board.model == "a"]) == ["t1", "t2", "t3", "t4", "x", "y", "overall"]
    assert (board.ci_low <= board.estimate).all() and (board.estimate <= board.ci_high).all()
    assert board[["estimate", "ci_low", "ci_high"]].stack().between(0, 1).all()
    post = bayes_leaderboard(_toy(), draws=600, chains=2, seed=0, interval="posterior")
    assert ((post.ci_high - post.ci_low) < (board.ci_high - board.ci_low)).all()
    np.testing.assert_allclose(post.estimate, board.estimate)


def test_bad_input_is_refused():
    with pytest.raises(EvalDataError):
        bayes_leaderboard(_toy().iloc[1:], draws=50)  # model 'a' lacks a task
    with pytest.raises(ValueError):
        bayes_leaderboard(_toy(), level=1.5, draws=50)
    with pytest.raises(ValueError):
        bayes_leaderboard(_toy(), draws=50, prior={"gamma": (1, 1)})
    with pytest.raises(ValueError):
        bayes_leaderboard(_toy(), draws=50, prior={"alpha": (1, -1)})
    with pytest.raises(ValueError):
        gibbs([[3, 11]], [10, 10], draws=50)
    with pytest.raises(ValueError):
        posterior_rank_probabilities(_toy(), weights={"z": 1.0}, draws=50)


def test_rank_probabilities_match_a_brute_force_count():
    g = fit(_toy(), draws=400, chains=2, seed=2)
    w = {"x": 0.8, "y": 0.2}
    table = posterior_rank_probabilities(g, weights=w)
    assert len(table) == 9
    mat = table.pivot(index="model", columns="rank", values="probability")
    np.testing.assert_allclose(mat.sum(axis=0), 1.0)
    np.testing.assert_allclose(mat.sum(axis=1), 1.0)
    cats = np.asarray(g.categories)
    score = 0.8 * g.theta[..., cats == "x"].mean(-1) + 0.2 * g.theta[..., cats == "y"].mean(-1)
    score = score.reshape(-1, 3)
    brute_first = np.bincount(score.argmax(axis=1), minlength=3) / len(score)
    np.testing.assert_allclose(mat[1].to_numpy(), brute_first)


# ------------------------------------------------------------------------------------ VTAB-1k (paper)


def test_table_7_reproduced_within_a_tenth_of_a_point(vtab_board):
    board = vtab_board.set_index(["model", "name"])
    for model, cells in TABLE_7.items():
        for name, ref in cells.items():
            row = board.loc[(model, name)]
            ours = 100 * row[["estimate", "ci_low", "ci_high"]].to_numpy(dtype=float)
            np.testing.assert_allclose(ours, ref, atol=0.1, err_msg=f"{model} {name}")


def test_vtab_diagnostics(vtab_board):
    assert vtab_board.rhat.max() < 1.01
    assert vtab_board.ess_bulk.min() > 2000  # of 10,000 kept draws
    assert vtab_board.ess_tail.min() > 1000


def test_figure_5_rotation_wins_when_structured_dominates(vtab_draws):
    w = {"natural": 0.025, "specialized": 0.025, "structured": 0.95}
    table = posterior_rank_probabilities(vtab_draws, weights=w)
    first = table[table["rank"] == 1].set_index("model").probability
    assert first.idxmax() == "Rotation" and first["Rotation"] > 0.95
    plain = posterior_rank_probabilities(vtab_draws)
    first_plain = plain[plain["rank"] == 1].set_index("model").probability
    assert first_plain.idxmax() == "Sup-Rotation-100%"
