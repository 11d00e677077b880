"""Bradley-Terry coefficients from pairwise comparisons: classical logistic MLE, PPI and PPI++.

Method: "AutoEval Done Right" (Boyeau et al., ``../shared/papers/autoeval-ppi.txt``), Section 3 (the Bradley-Terry
model, Section 3.1, and its prediction-powered estimator, eq. (6) of Section 3.2), Supplement A (the estimator as
computed by the reference package ``ppi_py``, ``ppi_logistic_ci``) and Supplement C.2 (Bonferroni-corrected intervals,
overlapping intervals share a rank). Supplement B's importance weights are not used (labeled and unlabeled
comparisons are assumed to come from the same population).

Model. Comparison ``i`` pits model ``A_i`` against model ``B_i``; ``Y_i = 1`` if ``B_i`` wins (the human prefers
``B_i``'s answer), ``0`` if ``A_i`` wins. ``P(Y = 1) = sigmoid(x' zeta)`` where ``x`` has ``-1`` at ``A``, ``+1`` at
``B`` and zeros elsewhere, with the reference model's column dropped (its coefficient is fixed at 0; ``M - 1``
columns, no intercept). Larger coefficients are stronger models.

Estimator (eq. (6)). With ``l(x, y) = -y x'zeta + log(1 + exp(x'zeta))`` (``y`` may be a probability: soft labels),
``n`` labeled comparisons ``(x_i, Y_i, Yhat_i)`` and ``N`` judge-only comparisons ``(x^u_i, Yhat^u_i)``::

    L(zeta) = (1/n) sum_lab l(x, Y) - lam (1/n) sum_lab l(x, Yhat) + (lam/N) sum_unl l(x^u, Yhat^u).

``lam = 0`` is the classical logistic MLE (the judge is not used), ``lam = 1`` is PPI, and ``lam = None`` is PPI++
with ``lam`` tuned from the data. ``Yhat`` is the judge's probability that ``B`` wins (``judge="probability"``) or
its hard vote (``judge="hard"``: 1 if the probability is above 0.5, 0 if below, 0.5 at exactly 0.5). With fewer than
2 judge-only comparisons (the unlabeled covariance needs 2) the classical estimate is returned, with a note.

Sufficient statistics. ``L``, its gradient and Hessian, and every covariance term below depend on the data only
through per ordered pair ``(A, B)`` counts and sums of ``Y, Yhat, Y^2, Yhat^2, Y Yhat`` (e.g.
``sum_i (p - Y_i)^2 = n_ab p^2 - 2 p sum Y + sum Y^2``), so the work per fit is ``O(#pairs)`` after one pass over the
rows. ``L`` is minimised by Newton's method from 0 with a backtracking line search; its Hessian is
``sum_pairs w_ab p(1 - p) x x'`` with ``w_ab = (1 - lam) n_ab/n + lam N_ab/N``.

Covariance (as ``ppi_py``'s ``_logistic_get_stats`` / ``ppi_logistic_ci``). At the estimate, with
``p = sigmoid(x'zeta)``, ``g_i = x_i (p_i - Y_i)``, ``ghat_i = x_i (p_i - Yhat_i)`` and
``ghat^u_i = x^u_i (p^u_i - Yhat^u_i)``::

    H = (sum_unl p(1-p) x x' + sum_lab p(1-p) x x') / (n + N)   (lam != 0;  sum_lab p(1-p) x x' / n  when lam = 0)
    Sigma = H^-1 (n/N Cov(lam ghat^u) + Cov(g - lam ghat)) H^-1,    se = sqrt(diag(Sigma) / n),

``Cov`` the sample covariance (``ddof = 1``); the marginal interval is ``zeta_m +- z_{1-alpha/2} se_m``. The reference
model has ``se = 0`` and interval ``[0, 0]``.

Tuning (PPI++). ``lam = clip(tr(V C V) / (2 (1 + n/N) tr(V W V)), 0, 1)`` with ``V = H^-1`` (``H`` with the unlabeled
term), ``C = (1/n)(gc' ghc + ghc' gc)`` (``gc``, ``ghc`` the centered ``g``, ``ghat``) and ``W`` the sample covariance
of ``ghat`` and ``ghat^u`` pooled (``ppi_py``'s ``_calc_lam_glm``). Two tuning steps, as the reference implementation:
fit at ``lam = 1``, tune ``lam_1`` there and refit (``ppi_logistic_pointestimate(lam=None)``), tune ``lam_2`` at that
fit and refit; the reported estimate, intervals and ``lam`` are those of ``lam_2`` (``ppi_logistic_ci(lam=None)``).

Ranks (Supplement C.2): ``rank_with_ties`` of the Bonferroni intervals ``zeta_m +- bonferroni_z(alpha, M) se_m`` over
all ``M`` models (the reference included, with zero width).

Identifiability. The labeled comparisons must involve every model, contain both outcomes and connect all models; the
classical MLE also needs Ford's condition: the directed graph "``a`` beat ``b`` in some labeled comparison" is strongly
connected (no group of models won, or lost, every labeled comparison against the others).

The AI judge's own ranking. Battles judged by an AI only (AlpacaEval annotations, MT-Bench pairwise judgments: no
human vote anywhere) have nothing to correct the judge with; :func:`judge_bradley_terry` (and
:func:`bradley_terry_of_log` on such a log) fits the classical model above with the judge's verdict as the outcome
(``Y = Yhat``: its probability that ``B`` wins, a soft label, or the hard vote), ``lam = 0``. That is the ranking the
judge's preferences imply; its intervals are valid for the judge's preferences (sampling of battles), not for
people's, and nothing corrects the judge's bias. The result says so in ``attrs["labels"] = "judge"`` and a note.

Public API: ``ppi_bradley_terry(labeled, unlabeled, alpha=DEFAULT_ALPHA, lam=None, reference=None, judge="probability")
-> DataFrame`` with columns ``model, coefficient, se, ci_low, ci_high, rank, lam`` and ``attrs`` ``notes``, ``n``,
``N``, ``reference``, ``alpha``, ``labels`` ("human" or "judge": then ``n`` = 0 human votes and ``N`` the battles
the AI judge decided); ``judge_bradley_terry(battles, alpha, reference,
judge)`` the AI judge's ranking from its verdicts alone (same columns); ``pair_estimates(m, reference, la, lb, y,
yhat, ua, ub, yhat_u, lams)`` the array-level estimator on integer model codes (for split studies).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import ibis

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit
from scipy.stats import norm

from evalcore.engine import as_log, reductions
from evalcore.leaderboard.ranks import bonferroni_z, rank_with_ties
from evalcore.data.reading import EvalDataError, listed
from evalcore.stats.intervals import DEFAULT_ALPHA

JUDGE_MODES = ("probability", "hard")
MAX_NEWTON_STEPS = 100
GRAD_TOL = 1e-12
MAX_LOGIT = 20.0  # a fitted win probability within e^-20 of 0 or 1 on a compared pair: the estimates diverge
MAX_ROWS_LISTED = 10

#: the words of the messages about the labels a fit uses: the human votes, or the AI judge's verdicts alone
HUMAN_WORDS = {"rows": "rows with a human 'outcome'", "votes": "human votes", "a vote": "human vote",
               "more": "Add human votes where the other side wins, or use the judge (lam != 0)."}
JUDGE_WORDS = {"rows": "rows with the AI judge's verdict 'judge'", "votes": "the AI judge's verdicts",
               "a vote": "verdict of the AI judge",
               "more": "The AI judge's verdicts alone cannot rank these models: add battles where the other side "
                       "wins."}
JUDGE_NOTE = ("The AI judge's ranking: Bradley-Terry fitted to the verdicts of the AI judge alone ({n:,} battles, "
              "its {how} as the outcome); no battle has a human vote, so nothing corrects the judge's bias. The "
              "intervals are valid for the judge's preferences, not for people's.")


@dataclass(frozen=True)
class _PairStats:
    """Per ordered pair ``(A, B)``: design row and the counts / sums the estimator needs."""

    x: np.ndarray  # (P, M-1) design rows, reference column dropped
    n_ab: np.ndarray  # labeled counts
    sy: np.ndarray  # sum Y
    syy: np.ndarray  # sum Y^2
    sh: np.ndarray  # sum Yhat (labeled)
    shh: np.ndarray  # sum Yhat^2 (labeled)
    syh: np.ndarray  # sum Y Yhat
    nu_ab: np.ndarray  # unlabeled counts
    su: np.ndarray  # sum Yhat^u
    suu: np.ndarray  # sum (Yhat^u)^2
    n: int
    N: int


def ppi_bradley_terry(
    labeled: pd.DataFrame,
    unlabeled: pd.DataFrame,
    alpha: float = DEFAULT_ALPHA,
    lam: float | None = None,
    reference: str | None = None,
    judge: str = "probability",
) -> pd.DataFrame:
    """Bradley-Terry coefficients with marginal intervals and tied ranks (classical, PPI or PPI++; see module doc)."""
    if not 0 < alpha < 1:
        raise EvalDataError(f"alpha must be in (0, 1), got {alpha!r}.")
    if lam is not None and not 0 <= lam <= 1:
        raise EvalDataError(f"lam must be None (PPI++ tuned) or a number in [0, 1], got {lam!r}.")
    if judge not in JUDGE_MODES:
        raise EvalDataError(f"judge must be one of {JUDGE_MODES}, got {judge!r}.")
    _check_columns(labeled, "labeled", ("model_a", "model_b", "outcome"))
    _check_columns(unlabeled, "unlabeled", ("model_a", "model_b"))
    la, lb = _model_columns(labeled, "labeled")
    ua, ub = _model_columns(unlabeled, "unlabeled")
    models = sorted(set(la) | set(lb) | set(ua) | set(ub))
    y = _outcomes(labeled)
    _check_labeled_design(la, lb, y, models)
    reference = models[0] if reference is None else reference
    if reference not in models:
        raise EvalDataError(f"Reference model {reference!r} is not one of the compared models: {', '.join(models)}.")

    notes = []
    n, N = len(labeled), len(unlabeled)
    if lam != 0 and N < 2:
        notes.append(f"{'No' if N == 0 else 'Only one'} comparison without a human vote: PPI needs unlabeled "
                     "(judge-only) comparisons, at least 2; the classical estimate (lam = 0) is shown.")
        lam = 0.0
    if lam == 0:
        _check_ford(la, lb, y, models)
        yhat, yhat_u = np.zeros(n), np.zeros(N)
    else:
        _check_columns(labeled, "labeled", ("judge",))
        _check_columns(unlabeled, "unlabeled", ("judge",))
        yhat = _judge_labels(labeled, "labeled", judge)
        yhat_u = _judge_labels(unlabeled, "unlabeled", judge)
        if lam is None and np.ptp(np.concatenate([yhat, yhat_u])) == 0:
            raise EvalDataError("The judge gives the same value for every comparison; PPI++ would set λ = 0 — "
                                "use lam=0 (classical).")

    codes = {model: k for k, model in enumerate(models)}
    [(coef, se, lam)] = pair_estimates(
        len(models), codes[reference], *(np.array([codes[m] for m in col], dtype=np.int64) for col in (la, lb)), y,
        yhat, *(np.array([codes[m] for m in col], dtype=np.int64) for col in (ua, ub)), yhat_u, (lam,))
    return _result_frame(models, reference, coef, se, lam, alpha, notes, n, N)


def judge_bradley_terry(battles: pd.DataFrame, alpha: float = DEFAULT_ALPHA, reference: str | None = None,
                        judge: str = "probability") -> pd.DataFrame:
    """The AI judge's own Bradley-Terry ranking: the classical fit (λ = 0) with the judge's verdict (column
    ``judge``: its probability that model_b wins, or the hard vote with ``judge="hard"``) as the outcome, for
    battles without human votes. Not corrected by human votes: the intervals are valid for the judge's preferences,
    not for people's (``attrs["labels"] == "judge"``, with a note saying so)."""
    if not 0 < alpha < 1:
        raise EvalDataError(f"alpha must be in (0, 1), got {alpha!r}.")
    if judge not in JUDGE_MODES:
        raise EvalDataError(f"judge must be one of {JUDGE_MODES}, got {judge!r}.")
    _check_columns(battles, "judged", ("model_a", "model_b", "judge"))
    a, b = _model_columns(battles, "judged")
    y = _judge_labels(battles, "judged", judge)
    models = sorted(set(a) | set(b))
    _check_labeled_design(a, b, y, models, JUDGE_WORDS)
    reference = models[0] if reference is None else reference
    if reference not in models:
        raise EvalDataError(f"Reference model {reference!r} is not one of the compared models: {', '.join(models)}.")
    _check_ford(a, b, y, models, JUDGE_WORDS)
    codes = {model: k for k, model in enumerate(models)}
    ia, ib = (np.array([codes[m] for m in col], dtype=np.int64) for col in (a, b))
    none = np.zeros(0, dtype=np.int64)
    stats = _pair_stats(len(models), codes[reference], ia, ib, y, np.zeros(len(y)), none, none, np.zeros(0))
    [(coef, se, lam)] = _estimates(stats, codes[reference], (0.0,), JUDGE_WORDS)
    how = "probability that model_b wins" if judge == "probability" else "hard vote (1 if its probability is above 0.5)"
    return _result_frame(models, reference, coef, se, lam, alpha, [JUDGE_NOTE.format(n=len(y), how=how)], 0, len(y),
                         labels="judge")


def bradley_terry_of_log(log, alpha: float = DEFAULT_ALPHA, lam: float | None = None,
                         reference: str | None = None) -> pd.DataFrame:
    """:func:`ppi_bradley_terry` of a battles log: the battles with a human ``outcome`` are labeled, those with only
    the ``judge``'s probability unlabeled (classical, λ = 0, without a judge column, or when some voted battle has no
    judge verdict: PPI needs both on the same battles). Without any human vote, the AI judge's own ranking
    (:func:`judge_bradley_terry`'s fit, ``attrs["labels"] == "judge"``).

    ``log`` is a canonical battles frame or a log in an engine (:class:`evalcore.engine.LazyLog` of battles); either
    way (one path, :func:`evalcore.engine.as_log`) the engine returns the per-pair statistics the estimator needs (counts, Σy, Σy², Σŷ, Σŷ², Σyŷ of the
    labeled battles and counts, Σŷ, Σŷ² of the judge-only ones per ordered pair) and the fit is the same."""
    log = as_log(log)
    judged = "judge" in log
    if not 0 < alpha < 1:
        raise EvalDataError(f"alpha must be in (0, 1), got {alpha!r}.")
    if judged and "outcome" not in log:  # the AI judge's verdicts only: an outcome column of nulls for the sums
        log = replace(log, table=log.table.mutate(outcome=ibis.null().cast("float64")), _cache={})
    pairs = reductions.pair_statistics(log, judged)
    pairs = pairs[pairs["n_ab"] + pairs["nu_ab"] > 0].reset_index(drop=True)
    models = sorted(set(pairs["model_a"]) | set(pairs["model_b"]))
    n, N = int(pairs["n_ab"].sum()), int(pairs["nu_ab"].sum())
    reference = models[0] if reference is None else reference
    if reference not in models:
        raise EvalDataError(f"Reference model {reference!r} is not one of the compared models: {', '.join(models)}.")
    words, labels, notes = HUMAN_WORDS, "human", []
    if judged and n == 0 and N > 0:  # the AI judge alone: its verdicts are the outcome of a classical fit
        words, labels, n, N = JUDGE_WORDS, "judge", N, 0
        pairs = pairs.assign(n_ab=pairs["nu_ab"], sy=pairs["su"], syy=pairs["suu"], nu_ab=0.0, su=0.0, suu=0.0)
        notes.append(JUDGE_NOTE.format(n=n, how="probability that model_b wins"))
        lam = 0.0
    elif judged and n > 0:
        t = log.table
        unjudged = int(log.run(t.aggregate(k=(t.outcome.notnull() & t.judge.isnull()).cast("int64").sum()))["k"]
                       .fillna(0).iloc[0])
        if unjudged and lam != 0:
            notes.append(f"{unjudged:,} of {n:,} battles with a human vote have no verdict of the AI judge: PPI needs "
                         "the judge on the voted battles too; the classical estimate from the human votes (lam = 0) "
                         "is shown, and the judge's verdicts are not used.")
            lam = 0.0
    voted = pairs[pairs["n_ab"] > 0]  # one pseudo-battle per pair with its mean outcome: the design's structure
    a, b, y = voted["model_a"].to_numpy(), voted["model_b"].to_numpy(), (voted["sy"] / voted["n_ab"]).to_numpy()
    if n < 2:
        raise EvalDataError(f"Only {n} labeled comparison(s) ({words['rows']}): the Bradley-Terry "
                            "coefficients need at least 2, and in practice many more.")
    _check_labeled_design(a, b, y, models, words, rows=n)
    if not judged:
        lam = 0.0
    elif lam != 0 and N < 2:
        notes.append(f"{'No' if N == 0 else 'Only one'} comparison without a human vote: PPI needs unlabeled "
                     "(judge-only) comparisons, at least 2; the classical estimate (lam = 0) is shown.")
        lam = 0.0
    if lam == 0:
        _check_ford(a, b, y, models, words)
    codes = {model: k for k, model in enumerate(models)}
    ia, ib = pairs["model_a"].map(codes).to_numpy(), pairs["model_b"].map(codes).to_numpy()
    full = np.zeros((len(pairs), len(models)))
    full[np.arange(len(pairs)), ia], full[np.arange(len(pairs)), ib] = -1.0, 1.0
    if lam == 0:  # the classical fit ignores the judge: its sums are 0, as ppi_bradley_terry sets them
        pairs = pairs.assign(sh=0.0, shh=0.0, syh=0.0, su=0.0, suu=0.0)
    order = np.argsort(ia * len(models) + ib, kind="stable")
    stats = _PairStats(x=np.delete(full, codes[reference], axis=1)[order],
                       **{c: pairs[c].to_numpy(float)[order]
                          for c in ("n_ab", "sy", "syy", "sh", "shh", "syh", "nu_ab", "su", "suu")}, n=n, N=N)
    [(coef, se, lam)] = _estimates(stats, codes[reference], (lam,), words)
    if labels == "judge":  # no human vote: n counts those (0), N the battles the AI judge decided
        n, N = 0, n
    return _result_frame(models, reference, coef, se, lam, alpha, notes, n, N, labels=labels)


def pair_estimates(m: int, reference: int, la, lb, y, yhat, ua, ub, yhat_u,
                   lams) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Array-level estimator behind :func:`ppi_bradley_terry` (no input checks): ``(coefficients, se, lam)`` for
    each λ of ``lams`` on the same per-pair statistics (computed once).

    Models are integer codes ``0..m-1`` (``la``/``lb`` labeled, ``ua``/``ub`` unlabeled); the reference's
    coefficient and se are 0. A λ of None tunes it in two steps as the reference implementation. Raises
    EvalDataError when a fit diverges. Used directly by split studies (:mod:`evalcore.ppi.curves`).
    """
    return _estimates(_pair_stats(m, reference, la, lb, y, yhat, ua, ub, yhat_u), reference, lams)


def _estimates(stats: _PairStats, reference: int, lams,
               words: dict[str, str] = HUMAN_WORDS) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """:func:`pair_estimates` from the per-pair statistics."""
    fits = []
    for lam in lams:
        if lam is None:
            zeta = _fit(stats, 1.0, words)
            for _ in range(2):  # two tuning steps, as the reference implementation
                lam = _tuned_lam(stats, zeta)
                zeta = _fit(stats, lam, words)
        else:
            lam = float(lam)
            zeta = _fit(stats, lam, words)
        se = _standard_errors(stats, zeta, lam)
        fits.append((np.insert(zeta, reference, 0.0), np.insert(se, reference, 0.0), lam))
    return fits


# ------------------------------------------------------------------------------------------------ validation


def _check_columns(frame: pd.DataFrame, name: str, columns: tuple[str, ...]) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise EvalDataError(f"Expected the {name} comparisons as a pandas DataFrame, got {type(frame).__name__}.")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise EvalDataError(f"The {name} comparisons lack column(s) {', '.join(missing)}; expected columns "
                            "model_a, model_b, outcome (1 if model_b wins, 0 if model_a wins) and judge "
                            "(the judge's probability that model_b wins).")


def _model_columns(frame: pd.DataFrame, name: str) -> tuple[np.ndarray, np.ndarray]:
    missing = (frame["model_a"].isna() | frame["model_b"].isna()).to_numpy()
    if missing.any():
        where = listed(np.flatnonzero(missing), MAX_ROWS_LISTED)
        raise EvalDataError(f"Model name missing in the {name} comparisons at row position(s) {where}.")
    a = frame["model_a"].astype(str).to_numpy()
    b = frame["model_b"].astype(str).to_numpy()
    same = a == b
    if same.any():
        raise EvalDataError(f"A model is compared with itself (model_a == model_b) in the {name} comparisons at row "
                            f"position(s) {listed(np.flatnonzero(same), MAX_ROWS_LISTED)}; drop those rows.")
    return a, b


def _outcomes(labeled: pd.DataFrame) -> np.ndarray:
    y = pd.to_numeric(labeled["outcome"], errors="coerce").to_numpy(dtype=float)
    bad = ~((y >= 0) & (y <= 1))  # also catches NaN
    if bad.any():
        raise EvalDataError(f"Column 'outcome' of the labeled comparisons must be 1 (model_b wins), 0 (model_a "
                            f"wins) or in between (0.5 a tie); row position(s) "
                            f"{listed(np.flatnonzero(bad), MAX_ROWS_LISTED)} are not.")
    return y


def _judge_labels(frame: pd.DataFrame, name: str, judge: str) -> np.ndarray:
    p = pd.to_numeric(frame["judge"], errors="coerce").to_numpy(dtype=float)
    bad = ~((p >= 0) & (p <= 1))  # also catches NaN
    if bad.any():
        where = listed(np.flatnonzero(bad), MAX_ROWS_LISTED)
        raise EvalDataError(f"Column 'judge' of the {name} comparisons must be a probability in [0, 1] (that "
                            f"model_b wins); row position(s) {where} are missing or outside [0, 1].")
    if judge == "hard":
        return np.where(p > 0.5, 1.0, np.where(p < 0.5, 0.0, 0.5))
    return p


def _check_labeled_design(a: np.ndarray, b: np.ndarray, y: np.ndarray, models: list[str],
                          words: dict[str, str] = HUMAN_WORDS, rows: int | None = None) -> None:
    """Enough labeled comparisons (``rows`` of them, else one per entry of ``y``; ``y`` may hold one mean outcome
    per compared pair), every model in one, both outcomes, a connected comparison graph."""
    rows = len(y) if rows is None else rows
    if rows < 2:
        raise EvalDataError(f"Only {rows} labeled comparison(s) ({words['rows']}): the Bradley-Terry "
                            "coefficients need at least 2, and in practice many more.")
    unseen = sorted(set(models) - set(a) - set(b))
    if unseen:
        raise EvalDataError(f"Model(s) {', '.join(unseen)} appear in no labeled comparison: their strength cannot be "
                            f"identified from {words['votes']}. Add {words['votes']} for them or drop their "
                            "comparisons.")
    if np.ptp(y) == 0 and y[0] in (0.0, 1.0):
        winner = "model_b" if y[0] == 1 else "model_a"
        raise EvalDataError(f"Every labeled outcome is {y[0]:g} ({winner} always wins): the coefficients are not "
                            "identified; the labeled comparisons need both outcomes.")
    ia, ib = np.searchsorted(models, a), np.searchsorted(models, b)
    count, label = connected_components(_graph(ia, ib, len(models)), directed=False)
    if count > 1:
        groups = "; ".join("{" + ", ".join(np.asarray(models)[label == k]) + "}" for k in range(count))
        raise EvalDataError(f"The labeled comparisons do not connect all models: no {words['a vote']} compares a "
                            f"model of one group with a model of another ({groups}). Add battles between the groups.")


def _check_ford(a: np.ndarray, b: np.ndarray, y: np.ndarray, models: list[str],
                words: dict[str, str] = HUMAN_WORDS) -> None:
    """Ford's condition for the classical MLE: the directed graph 'winner beat loser' is strongly connected (a tie
    or a fractional outcome is a partial win of each model, an edge both ways)."""
    ia, ib = np.searchsorted(models, a), np.searchsorted(models, b)
    b_won, a_won = y > 0, y < 1
    winner = np.concatenate([ib[b_won], ia[a_won]])
    loser = np.concatenate([ia[b_won], ib[a_won]])
    m = len(models)
    count, label = connected_components(_graph(winner, loser, m), directed=True, connection="strong")
    if count == 1:
        return
    names = np.asarray(models)
    outside = label[winner] != label[loser]
    beaten = np.bincount(label[loser[outside]], minlength=count) > 0  # lost to a model of another group
    won = np.bincount(label[winner[outside]], minlength=count) > 0
    wins, losses = [], []
    for k in range(count):
        group = names[label == k]
        who = group[0] if len(group) == 1 else "the group {" + ", ".join(group) + "}"
        if not beaten[k]:
            wins.append(f"{who} won every labeled comparison "
                        + ("it took part in (undefeated)" if len(group) == 1 else "against the other models"))
        if not won[k]:
            losses.append(f"{who} never won a labeled comparison" + ("" if len(group) == 1 else " against the others"))
    parts = wins + losses
    raise EvalDataError("The classical Bradley-Terry estimate does not exist (the coefficients diverge): "
                        + "; ".join(parts) + ". " + words["more"])


def _graph(rows: np.ndarray, cols: np.ndarray, m: int) -> csr_matrix:
    return csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(m, m))


# ------------------------------------------------------------------------------------------------ estimation


def _pair_stats(m: int, reference: int, la, lb, y, yhat, ua, ub, yhat_u) -> _PairStats:
    lab = la * m + lb
    unl = ua * m + ub

    def sums(codes, weights=None):
        return np.bincount(codes, weights=weights, minlength=m * m).astype(float)

    n_ab, nu_ab = sums(lab), sums(unl)
    used = np.flatnonzero(n_ab + nu_ab > 0)
    a, b = np.divmod(used, m)
    full = np.zeros((len(used), m))
    full[np.arange(len(used)), a] = -1.0
    full[np.arange(len(used)), b] = 1.0
    keep = [k for k in range(m) if k != reference]
    return _PairStats(
        x=full[:, keep], n_ab=n_ab[used], sy=sums(lab, y)[used], syy=sums(lab, y * y)[used],
        sh=sums(lab, yhat)[used], shh=sums(lab, yhat * yhat)[used], syh=sums(lab, y * yhat)[used],
        nu_ab=nu_ab[used], su=sums(unl, yhat_u)[used], suu=sums(unl, yhat_u * yhat_u)[used],
        n=len(y), N=len(yhat_u))


def _loss_weights(s: _PairStats, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """``L = sum_pairs (-c eta + w log(1 + e^eta))``: per-pair ``w`` and ``c`` at ``lam``."""
    w = (1 - lam) * s.n_ab / s.n
    c = (s.sy - lam * s.sh) / s.n
    if lam != 0:
        w = w + lam * s.nu_ab / s.N
        c = c + lam * s.su / s.N
    return w, c


def _fit(s: _PairStats, lam: float, words: dict[str, str] = HUMAN_WORDS) -> np.ndarray:
    """Newton's method with backtracking on ``L`` (eq. (6)), from 0 to a relative gradient norm below 1e-12.

    Separated data (no finite minimiser) drive some compared pair's logit ``x'zeta`` to infinity; a logit beyond
    ``MAX_LOGIT`` is reported as divergence rather than as a converged fit with a vanishing gradient.
    """
    w, c = _loss_weights(s, lam)

    def loss(theta):
        eta = s.x @ theta
        return float(np.sum(w * np.logaddexp(0.0, eta) - c * eta))

    theta = np.zeros(s.x.shape[1])
    value = loss(theta)
    scale = None
    for _ in range(MAX_NEWTON_STEPS):
        eta = s.x @ theta
        if np.max(np.abs(eta[w > 0])) > MAX_LOGIT:
            break
        p = expit(eta)
        grad = s.x.T @ (w * p - c)
        norm_grad = float(np.linalg.norm(grad))
        scale = norm_grad if scale is None else scale
        if norm_grad <= GRAD_TOL * max(scale, 1.0):
            return theta
        hess = (s.x * (w * p * (1 - p))[:, None]).T @ s.x
        try:
            step = -np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            break
        slope, t = float(grad @ step), 1.0
        while True:
            new = loss(theta + t * step)
            if new <= value + 1e-4 * t * slope + 1e-14 * abs(value) or t < 1e-10:
                break
            t /= 2
        theta, value = theta + t * step, new
    more = words["more"] if words is not HUMAN_WORDS else "Add human votes where the other side wins, or use a " \
        "different lam."
    raise EvalDataError(f"The Bradley-Terry fit at λ = {lam:.3g} does not converge: the estimates diverge "
                        "(some model, or group of models, won or lost every comparison that carries weight). " + more)


def _pair_moments(s: _PairStats, p: np.ndarray) -> dict[str, np.ndarray]:
    """Per-pair ``sum (p - Y)``, ``sum (p - Yhat)``, ``sum (p - Yhat^u)`` and their products' sums."""
    return {
        "g": s.n_ab * p - s.sy,
        "h": s.n_ab * p - s.sh,
        "u": s.nu_ab * p - s.su,
        "gg": s.n_ab * p * p - 2 * p * s.sy + s.syy,
        "hh": s.n_ab * p * p - 2 * p * s.sh + s.shh,
        "gh": s.n_ab * p * p - p * (s.sy + s.sh) + s.syh,
        "uu": s.nu_ab * p * p - 2 * p * s.su + s.suu,
    }


def _hessian(s: _PairStats, p: np.ndarray, use_unlabeled: bool) -> np.ndarray:
    """``H`` of the covariance: labeled and unlabeled curvature over ``n + N``, or labeled only over ``n``."""
    count, total = (s.n_ab + s.nu_ab, s.n + s.N) if use_unlabeled else (s.n_ab, s.n)
    return _gram(s.x, count * p * (1 - p)) / total


def _gram(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``sum_pairs weight x x'``."""
    return (x * weight[:, None]).T @ x


def _cov(x: np.ndarray, second: np.ndarray, first: np.ndarray, rows: int) -> np.ndarray:
    """Sample covariance (ddof 1) of ``rows`` vectors ``x_pair * r_i`` from per-pair ``sum r^2`` and ``sum r``."""
    total = x.T @ first
    return (_gram(x, second) - np.outer(total, total) / rows) / (rows - 1)


def _tuned_lam(s: _PairStats, zeta: np.ndarray) -> float:
    """PPI++'s ``lam`` (``ppi_py``'s ``_calc_lam_glm`` over all coordinates, clipped to [0, 1])."""
    p = expit(s.x @ zeta)
    mom = _pair_moments(s, p)
    v = np.linalg.inv(_hessian(s, p, use_unlabeled=True))
    g_sum, h_sum = s.x.T @ mom["g"], s.x.T @ mom["h"]
    cross = _gram(s.x, mom["gh"]) - np.outer(g_sum, h_sum) / s.n
    cov_grads = (cross + cross.T) / s.n
    var_hat = _cov(s.x, mom["hh"] + mom["uu"], mom["h"] + mom["u"], s.n + s.N)
    num = np.trace(v @ cov_grads @ v)
    denom = 2 * (1 + s.n / s.N) * np.trace(v @ var_hat @ v)
    return float(np.clip(num / denom, 0.0, 1.0))


def _standard_errors(s: _PairStats, zeta: np.ndarray, lam: float) -> np.ndarray:
    """``sqrt(diag(Sigma) / n)`` with ``Sigma = H^-1 (n/N Cov(lam ghat^u) + Cov(g - lam ghat)) H^-1``."""
    p = expit(s.x @ zeta)
    mom = _pair_moments(s, p)
    v = np.linalg.inv(_hessian(s, p, use_unlabeled=lam != 0))
    # g - lam ghat = x ((1 - lam) p - Y + lam Yhat) = x ((p - Y) - lam (p - Yhat))
    middle = _cov(s.x, mom["gg"] - 2 * lam * mom["gh"] + lam**2 * mom["hh"], mom["g"] - lam * mom["h"], s.n)
    if lam != 0:
        middle = middle + s.n / s.N * lam**2 * _cov(s.x, mom["uu"], mom["u"], s.N)
    sigma = v @ middle @ v
    return np.sqrt(np.clip(np.diag(sigma), 0.0, None) / s.n)


def _result_frame(models, reference, coef, se, lam, alpha, notes, n, N, labels="human") -> pd.DataFrame:
    z = float(norm.ppf(1 - alpha / 2))
    zb = bonferroni_z(alpha, len(models))
    out = pd.DataFrame({
        "model": models,
        "coefficient": coef,
        "se": se,
        "ci_low": coef - z * se,
        "ci_high": coef + z * se,
        "rank": rank_with_ties(coef - zb * se, coef + zb * se),
        "lam": float(lam),
    })
    out.attrs.update({"notes": notes, "n": n, "N": N, "reference": reference, "alpha": alpha, "labels": labels})
    return out
