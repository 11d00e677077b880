"""Weighted category aggregates and the ternary task-weighting map (evalcore.leaderboard.weighting, evalcore.stats.figures).

Paper: "Statistical Uncertainty Quantification for Aggregate Performance Metrics in Machine Learning Benchmarks"
(../shared/papers/aggregate-uncertainty-vtab.txt), Section 2.3, Section 3.3 (Figures 3, 4) and the Appendix.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from evalcore.data.validation import load_eval_log
from evalcore.leaderboard.figures import TERNARY_GRAY, ternary_figure
from evalcore.data.reading import EvalDataError
from evalcore.leaderboard.weighting import correlation_factor, difference_se, simplex_grid, ternary_winner_map, weighted_scores


def _summary(rows):
    return pd.DataFrame(rows, columns=["model", "task", "category", "n", "n_correct"])


@pytest.fixture
def tiny() -> pd.DataFrame:
    # natural: t1 (N=100), t2 (N=400); specialized: t3 (N=200); structured: t4 (N=50)
    return _summary([
        ("A", "t1", "natural", 100, 80), ("A", "t2", "natural", 400, 200),
        ("A", "t3", "specialized", 200, 150), ("A", "t4", "structured", 50, 25),
        ("B", "t1", "natural", 100, 60), ("B", "t2", "natural", 400, 300),
        ("B", "t3", "specialized", 200, 100), ("B", "t4", "structured", 50, 40),
    ])


W = {"natural": 0.5, "specialized": 0.25, "structured": 0.25}
# hand computation (see the test below): Var[S_A], Var[S_B]
VAR_A = 0.25 * (0.16 / 100 + 0.25 / 400) / 4 + 0.0625 * 0.1875 / 200 + 0.0625 * 0.25 / 50  # 0.00051015625
VAR_B = 0.25 * (0.24 / 100 + 0.1875 / 400) / 4 + 0.0625 * 0.25 / 200 + 0.0625 * 0.16 / 50  # 0.000457421875


def test_weighted_scores_hand_computed(tiny):
    # A: natural (0.8 + 0.5)/2 = 0.65, specialized 0.75, structured 0.5 -> 0.5*0.65 + 0.25*0.75 + 0.25*0.5 = 0.6375
    # B: natural (0.6 + 0.75)/2 = 0.675, specialized 0.5, structured 0.8 -> 0.6625
    out = weighted_scores(tiny, W).set_index("model")
    assert list(out.columns) == ["score", "se", "ci_low", "ci_high"]
    assert out.at["A", "score"] == pytest.approx(0.6375, abs=1e-12)
    assert out.at["B", "score"] == pytest.approx(0.6625, abs=1e-12)
    assert VAR_A == pytest.approx(0.00051015625, abs=1e-15)
    assert VAR_B == pytest.approx(0.000457421875, abs=1e-15)
    assert out.at["A", "se"] == pytest.approx(math.sqrt(0.00051015625), rel=1e-12)
    assert out.at["B", "se"] == pytest.approx(math.sqrt(0.000457421875), rel=1e-12)
    # a sequence of weights is taken in the data's category order; a mapping may omit categories (weight 0)
    seq = weighted_scores(tiny, [0.5, 0.25, 0.25]).set_index("model")
    assert seq.at["A", "score"] == pytest.approx(0.6375)
    corner = weighted_scores(tiny, {"structured": 1.0}).set_index("model")
    assert corner.at["B", "score"] == pytest.approx(0.8)
    assert corner.at["B", "se"] == pytest.approx(math.sqrt(0.8 * 0.2 / 50))
    # 95% normal interval by default (DEFAULT_LEVEL): z = Phi^-1(0.975) = 1.95996; the paper's 83.4% (Goldstein &
    # Healy), passed explicitly, gives z = Phi^-1(0.917) = 1.38517
    assert out.at["B", "score"] - out.at["B", "ci_low"] == pytest.approx(1.959964 * math.sqrt(VAR_B), rel=1e-6)
    narrow = weighted_scores(tiny, W, level=0.834).set_index("model")
    assert narrow.at["A", "ci_high"] - narrow.at["A", "score"] == pytest.approx(1.385172 * math.sqrt(VAR_A), rel=1e-6)


def test_chance_and_ceiling_normalization_by_hand(tiny):
    # chance 0.5 and ceiling 1 on every task: normalized = (p - 0.5) / 0.5, variance / 0.25
    bounds = {t: (0.5, 1.0) for t in tiny.task.unique()}
    out = weighted_scores(tiny, W, normalized=True, bounds=bounds).set_index("model")
    assert out.at["A", "score"] == pytest.approx((0.6375 - 0.5) / 0.5, abs=1e-12)
    assert out.at["B", "se"] == pytest.approx(math.sqrt(VAR_B) / 0.5, rel=1e-12)
    below = weighted_scores(tiny, {"structured": 1.0}, normalized=True,
                            bounds={t: (0.6, 1.0) for t in tiny.task.unique()}).set_index("model")
    assert below.at["A", "score"] == pytest.approx((0.5 - 0.6) / 0.4)  # below chance: negative, kept
    with pytest.raises(EvalDataError, match="No chance/ceiling given for task"):
        weighted_scores(tiny, W, normalized=True, bounds={"t1": (0.0, 1.0)})
    with pytest.raises(EvalDataError, match="0 <= chance < ceiling <= 1"):
        weighted_scores(tiny, W, normalized=True, bounds={t: (0.7, 0.7) for t in tiny.task.unique()})
    with pytest.raises(ValueError, match="normalized=True"):
        weighted_scores(tiny, W, bounds=bounds)


def test_bayesian_standard_errors_come_from_the_posterior(tiny):
    from evalcore.leaderboard.bayes import fit

    draws = fit(tiny, draws=2000, chains=4, seed=3)
    m = ternary_winner_map(tiny, step=0.05, se_source="bayes", posterior=draws)
    b = ternary_winner_map(tiny, step=0.05)
    assert (m.winner == b.winner).all()  # regions come from the observed means; only the gray zone may change
    # at the 'structured' corner the SE is the posterior sd of theta_A - theta_B on that single task
    corner = m[m.w3 == 1].iloc[0]
    theta = draws.theta.reshape(-1, 2, draws.theta.shape[-1])
    j = list(draws.tasks).index("t4")
    assert corner.se == pytest.approx(np.std(theta[:, 0, j] - theta[:, 1, j], ddof=1), rel=1e-9)
    assert m.attrs["se_source"] == "bayes"
    with pytest.raises(ValueError, match="other models or tasks"):
        ternary_winner_map(tiny.assign(task=tiny.task + "x"), step=0.05, se_source="bayes", posterior=draws)


def test_difference_se_and_the_papers_correlation_factor(tiny):
    out = difference_se(tiny, "A", "B", W, rho=0.5)
    assert out.diff == pytest.approx(-0.025)
    assert out.var_a == pytest.approx(VAR_A) and out.var_b == pytest.approx(VAR_B)
    assert out.se_independent == pytest.approx(math.sqrt(0.000967578125), rel=1e-12)
    k = 0.00051015625 / 0.000457421875  # larger / smaller variance
    assert out.k == pytest.approx(k, rel=1e-12)
    assert out.factor == pytest.approx(math.sqrt(((k + 1) - 2 * 0.5 * math.sqrt(k)) / (k + 1)), rel=1e-12)
    # the factor reproduces Eq. (3): Var[A - B] = Var[A] + Var[B] - 2 rho sqrt(Var[A] Var[B])
    assert out.se_adjusted == pytest.approx(math.sqrt(VAR_A + VAR_B - math.sqrt(VAR_A * VAR_B)), rel=1e-12)
    assert difference_se(tiny, "A", "B", W).se_adjusted == pytest.approx(out.se_independent)
    # the paper's examples: equal variances and rho = 0.5 -> about 70% of the independent SD; rho = 1 -> 0
    assert correlation_factor(1.0, 0.5) == pytest.approx(math.sqrt(0.5))
    assert correlation_factor(1.0, 1.0) == pytest.approx(0.0)
    assert correlation_factor(4.0, 0.0) == pytest.approx(1.0)
    assert correlation_factor(4.0, 0.5) == pytest.approx(math.sqrt(3 / 5))
    with pytest.raises(ValueError):
        correlation_factor(0.5, 0.1)
    with pytest.raises(ValueError):
        difference_se(tiny, "A", "B", W, rho=1.5)
    with pytest.raises(EvalDataError, match="Unknown model"):
        difference_se(tiny, "A", "C", W)


def test_bad_weights(tiny):
    with pytest.raises(ValueError, match="sum to 1"):
        weighted_scores(tiny, {"natural": 0.5})
    with pytest.raises(ValueError, match="non-negative"):
        weighted_scores(tiny, [1.5, -0.5, 0.0])
    with pytest.raises(EvalDataError, match="Unknown category"):
        weighted_scores(tiny, {"nature": 1.0})
    with pytest.raises(ValueError, match="3 weights"):
        weighted_scores(tiny, [0.5, 0.5])


def test_simplex_grid():
    g = simplex_grid(0.1)
    assert g.shape == (66, 3)
    assert np.allclose(g.sum(axis=1), 1)
    assert len({tuple(np.round(r, 9)) for r in g}) == 66
    assert simplex_grid(0.01).shape == (5151, 3)
    with pytest.raises(ValueError):
        simplex_grid(0.03)


def _random_summary(seed: int, n_models: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    tasks = [("n1", "nat"), ("n2", "nat"), ("s1", "spec"), ("r1", "str"), ("r2", "str"), ("r3", "str")]
    rows = []
    for i in range(n_models):
        for t, c in tasks:
            n = int(rng.integers(50, 2000))
            rows.append((f"m{i}", t, c, n, int(rng.binomial(n, rng.uniform(0.3, 0.9)))))
    return _summary(rows)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_winners_match_brute_force_argmax(seed):
    data = _random_summary(seed)
    got = ternary_winner_map(data, step=0.05, z=2.0)
    assert len(got) == 231
    assert got.attrs["categories"] == ("nat", "spec", "str")
    models = list(dict.fromkeys(data.model))
    acc: dict[tuple[str, str], list[float]] = {}
    var: dict[tuple[str, str], list[float]] = {}
    for r in data.itertuples():  # plain-Python category means and binomial variances
        q = r.n_correct / r.n
        acc.setdefault((r.model, r.category), []).append(q)
        var.setdefault((r.model, r.category), []).append(q * (1 - q) / r.n)
    for row in got.itertuples():
        w = {"nat": row.w1, "spec": row.w2, "str": row.w3}
        scores, vs = {}, {}
        for m in models:  # S_m(w) = sum_c w_c * mean of the category's task accuracies
            scores[m] = sum(w[c] * sum(acc[m, c]) / len(acc[m, c]) for c in w)
            vs[m] = sum(w[c] ** 2 * sum(var[m, c]) / len(var[m, c]) ** 2 for c in w)
        best = max(models, key=lambda m: scores[m])
        second = max((m for m in models if m != best), key=lambda m: scores[m])
        assert row.winner == best and row.runner_up == second
        assert row.diff == pytest.approx(scores[best] - scores[second], abs=1e-12)
        assert row.se == pytest.approx(math.sqrt(vs[best] + vs[second]), rel=1e-9)
        assert row.gray == (row.diff < 2.0 * row.se)


def test_gray_zone_when_within_z_standard_errors():
    # A = 0.50 everywhere; B = 0.49 on the "a" task, 0.50 elsewhere; N = 10,000 per task.
    rows = []
    for m, pa in (("A", 5000), ("B", 4900)):
        rows += [(m, "ta", "a", 10_000, pa), (m, "tb", "b", 10_000, 5000), (m, "tc", "c", 10_000, 5000)]
    data = _summary(rows)
    se_corner = math.sqrt(0.25 / 10_000 + 0.49 * 0.51 / 10_000)  # 0.0070704...
    ratio = 0.01 / se_corner  # the difference is ~1.414 SE at the corner w_a = 1
    for z, gray in ((1.0, False), (2.0, True)):
        m = ternary_winner_map(data, step=0.1, z=z)
        corner = m[m.w1 == 1].iloc[0]
        assert corner.winner == "A" and corner.runner_up == "B"
        assert corner["diff"] == pytest.approx(0.01)
        assert corner.se == pytest.approx(se_corner, rel=1e-12)
        assert bool(corner.gray) is gray, (z, ratio)
        # where w_a = 0 the models tie exactly: always too close to call, even at z = 0
        assert m[m.w1 == 0].gray.all()
    # along the edge w_b + w_c = 1 - w_a the margin is 0.01 w_a and SE ~ sqrt(w_a^2 (.25+.2499) + ...)/100:
    # at z = 1 exactly the points with margin >= SE are clear
    m = ternary_winner_map(data, step=0.1, z=1.0)
    clear = m[~m.gray]
    assert (clear["diff"] >= clear.se).all() and (m[m.gray]["diff"] < m[m.gray].se).all()
    assert len(clear) > 0
    # the paper's z = 2 sqrt(1/2) for correlated models equals z = 2 with rho = 0.5 when variances are ~equal
    a = ternary_winner_map(data, step=0.1, z=2 * math.sqrt(0.5))
    b = ternary_winner_map(data, step=0.1, z=2.0, rho=0.5)
    assert (a.gray == b.gray).mean() > 0.95


def test_one_or_four_categories_explained(tiny):
    one = tiny.assign(category="all")
    with pytest.raises(EvalDataError, match="three task categories"):
        ternary_winner_map(one)
    four = tiny.copy()
    four.loc[four.task == "t2", "category"] = "extra"
    with pytest.raises(EvalDataError, match="pick three"):
        ternary_winner_map(four)
    m = ternary_winner_map(four, step=0.5, categories=["extra", "natural", "structured"])
    assert m.attrs["categories"] == ("extra", "natural", "structured")
    corner = m[m.w1 == 1].iloc[0]  # 'extra' = t2 only: A 0.5, B 0.75
    assert corner.winner == "B" and corner["diff"] == pytest.approx(0.25)
    with pytest.raises(EvalDataError, match="exactly three"):
        ternary_winner_map(four, categories=["extra", "natural"])
    with pytest.raises(ValueError, match="Unknown se_source"):
        ternary_winner_map(tiny, se_source="posterior")


def test_figure_has_a_trace_per_winner_and_a_gray_zone():
    data = _random_summary(0)
    m = ternary_winner_map(data, step=0.05, z=2.0)
    fig = ternary_figure(m)
    assert all(isinstance(t, go.Scatterternary) for t in fig.data)
    names = [t.name for t in fig.data]
    winners = set(m.loc[~m.gray, "winner"])
    assert set(names[:-1]) == winners if m.gray.any() else set(names) == winners
    assert sum(len(t.a) for t in fig.data) == len(m)
    if m.gray.any():
        assert fig.data[-1].marker.color == TERNARY_GRAY and "too close" in fig.data[-1].name
    assert fig.layout.ternary.caxis.title.text == "w str"
    # the column names are accepted too
    fig2 = ternary_figure(ternary_winner_map(data, step=0.05))
    assert sum(len(t.a) for t in fig2.data) == len(m)


# ---------------------------------------------------------------------------------------------- VTAB-1k


@pytest.fixture
def vtab(shared_file) -> pd.DataFrame:
    return load_eval_log(shared_file("vtab_1k.csv"))


@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("z", [2.0, 2 * math.sqrt(0.5)])
def test_vtab_rotation_wins_when_structured_tasks_dominate(vtab, z, normalized):
    """Paper, Section 3.3 (Figures 3 and 4): 'A robust result across all of these plots is that when structured
    images are weighted heavily in the aggregation, Rotation is suggested as the best performing model.'"""
    m = ternary_winner_map(vtab, step=0.01, z=z, normalized=normalized, categories=["natural", "specialized", "structured"])
    corner = m[np.isclose(m.w3, 1.0)].iloc[0]
    assert corner.winner == "Rotation" and not corner.gray
    near = m[m.w3 >= 0.95 - 1e-9]  # 21 grid points around the structured corner
    assert len(near) == 21
    assert (near.winner == "Rotation").all() and not near.gray.any()
    # Rotation (6th overall) wins nowhere near the natural corner
    assert not (m[m.w3 <= 0.5].winner == "Rotation").any()


def test_vtab_natural_corner_is_too_close_between_the_supervised_models(vtab):
    # paper: no meaningful difference between Sup-Rotation-100% and Sup-Exemplar-100% for many weightings
    m = ternary_winner_map(vtab, step=0.01, z=2.0)
    corner = m[np.isclose(m.w1, 1.0)].iloc[0]
    assert {corner.winner, corner.runner_up} == {"Sup-Exemplar-100%", "Sup-Rotation-100%"}
    assert corner.gray
    # raw accuracies: outside Rotation's corner the clear winner is Sup-Rotation-100%
    clear = m[~m.gray]
    assert set(clear.winner) == {"Rotation", "Sup-Rotation-100%"}


def test_vtab_bootstrap_standard_errors_agree_with_binomial(vtab):
    a = ternary_winner_map(vtab, step=0.05, z=2.0)
    b = ternary_winner_map(vtab, step=0.05, z=2.0, se_source="bootstrap", n_boot=2000, seed=0)
    assert (a.winner == b.winner).all()
    assert np.allclose(b.se / a.se, 1.0, atol=0.1)


def test_vtab_ternary_map_at_one_percent_has_every_grid_point(vtab):
    m = ternary_winner_map(vtab, step=0.01, z=2.0)
    assert len(m) == 5151  # (100 + 1)(100 + 2) / 2
