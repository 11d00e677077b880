"""The order in which a labeling campaign asks for labels: every prefix of the queue is a sample of its design.

People label from the front of the queue and stop when the interval is narrow enough, so the design must hold for
any number of labels, not only the planned one. Each design's queue is a random order of the whole pool (seeded)
with that property:

* ``srs``: a random permutation; any prefix of n is a simple random sample (inclusion probability n / N).
* ``proportional`` and ``neyman``: strata are the exact 1-D k-means clusters of the proxy
  (:func:`evalcore.sampling.designs.kmeans_strata`, as on the Labeling budget page), the allocation ``n_h`` of the
  planned number of labels is proportional to ``N_h`` or to ``N_h S_h`` (Neyman, with the proxy's plug-in spread,
  :func:`evalcore.sampling.designs.allocate_budget`), and the strata are interleaved so that after t labels
  stratum h has had ``round(t a_h)`` of them (``a_h = n_h / n``; the stratum furthest behind goes next), each
  stratum's examples in a random order: a prefix is a stratified simple random sample, inclusion probability
  ``n_h / N_h`` from the labels it holds.
* ``active`` (Zrnic & Candès, *Active Statistical Inference*, ICML 2024): examples are drawn with probability
  growing with the proxy's uncertainty ``u_i = sqrt(p_i (1 - p_i))``, mixed with the uniform
  (``u_i ← (1 - ε) u_i + ε ū``, ε = 0.1, so no example is left with a negligible chance). The queue is priority
  sampling (Duffield, Lund & Thorup, *Priority sampling for estimation of arbitrary subset sums*, JACM 2007):
  priority ``q_i = u_i / U_i`` with ``U_i`` uniform, in decreasing order; the first n examples with the threshold
  ``τ`` = the (n+1)-th priority have inclusion probability ``π_i = min(1, u_i / τ)`` and Horvitz-Thompson sums over
  them are unbiased.
* ``ppi``: a random permutation, as ``srs``; the estimate adds an AI judge's verdicts on every example (PPI++).

:func:`plan_queue` returns the queue and what the estimator needs of the pool (sizes, strata, proxy and judge sums)
so that no estimate reads the pool again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import norm

from evalcore.errors import EvalDataError
from evalcore.labeling.designs import DESIGN_NAMES, DESIGNS  # noqa: F401 - defined there, used through here
from evalcore.sampling.designs import allocate_budget, kmeans_strata, stratum_spread

#: strata of the stratified designs (as the Labeling budget page's default)
N_STRATA = 10
#: weight of the uniform in the active design's sampling probabilities, and of proportional allocation in the Neyman
#: design's shares (defensive mixtures: a part of the proxy tells the design nothing, whatever the proxy claims)
UNIFORM_SHARE = 0.25
#: the proxy is read within [PROXY_TRUST, 1 - PROXY_TRUST] when it shapes a design: a confidence of 0.999 is
#: planned for as 0.95, so the examples a proxy calls certain still get labels enough to check that claim
PROXY_TRUST = 0.05
#: the share of examples on which an AI judge is taken to agree with the humans before any label (PPI++'s plan)
JUDGE_AGREEMENT = 0.85


@dataclass(frozen=True)
class QueuePlan:
    """A campaign's queue and the pool constants its estimates need.

    ``order`` is a frame in queue order with ``example_id``, ``stratum`` (0 where unstratified), ``weight`` (the
    active design's ``u_i``; 1 elsewhere), ``priority`` (the active design's ``q_i``; else the reversed position),
    ``proxy`` and ``judge`` (NaN where absent). ``planned`` is the number of labels the plan expects (the budget,
    or what the target needs by the proxy's plug-in variance); ``pool`` holds N, the stratum sizes and the proxy's
    and the judge's sums over the pool."""

    design: str
    order: pd.DataFrame
    planned: int
    pool: dict = field(default_factory=dict)


def _z(level: float) -> float:
    return float(norm.ppf(0.5 + level / 2))


def _planned(design: str, proxy: np.ndarray, strata: np.ndarray, weight: np.ndarray, target: float | None,
             budget: int | None, level: float, spread: float, judge: np.ndarray) -> int:
    """The budget, or the labels that reach ±``target`` by the design's variance under the proxy read as the
    probability of a correct answer (``S_h² ≈ p̄_h (1 - p̄_h)``; without a proxy the worst case ``spread² / 4``).
    PPI++ plans with the judge: the rectifier's variance is at most the disagreement rate, taken as
    ``1 -`` :data:`JUDGE_AGREEMENT` before any label (the live estimate re-plans from the measured one), and never
    above the labels' own ``m (1 - m)`` at the judge's mean m, which λ = 0 gives."""
    n_pool = proxy.size
    if budget is not None:
        return int(budget)
    if design == "ppi" and np.isfinite(judge).all():
        m = float(np.clip(judge.mean(), 0.0, 1.0))
        variance_n = min(m * (1 - m), 1 - JUDGE_AGREEMENT) * spread**2
    elif np.isfinite(proxy).all():
        wh = np.bincount(strata) / n_pool
        mean_h = np.bincount(strata, proxy) / np.maximum(np.bincount(strata), 1)
        s_h = np.sqrt(np.clip(mean_h * (1 - mean_h), 1e-4, None)) * spread
        if design == "neyman":
            variance_n = float(np.sum(wh * s_h)) ** 2
        elif design == "active":
            variance_n = float(np.mean(weight)) ** 2 * spread**2
        else:
            variance_n = float(np.sum(wh * s_h**2))
    else:
        variance_n = spread**2 / 4
    needed = math.ceil(_z(level) ** 2 * variance_n / target**2)
    return int(min(max(needed, 30), n_pool))


def merged_strata(strata: np.ndarray, minimum: int = 2) -> np.ndarray:
    """Strata (0 the lowest proxy) with every one of fewer than ``minimum`` examples merged into its neighbour below
    (the lowest into the one above), renumbered 0..H-1: k-means on a narrow proxy can leave an outlier alone, and a
    stratum must hold the 2 labels its variance needs."""
    sizes = np.bincount(strata)
    keep = np.flatnonzero(sizes >= minimum)
    if keep.size == 0:
        return np.zeros_like(strata)
    # each stratum's new number: the last kept stratum at or below it (the first kept one for those below it)
    target = np.searchsorted(keep, np.arange(sizes.size), side="right") - 1
    return np.maximum(target, 0)[strata]


def allocation_shares(design: str, strata: np.ndarray, trusted: np.ndarray | None, labels: int,
                      spread: np.ndarray | None = None) -> np.ndarray:
    """Each stratum's share of ``labels``: proportional allocation (:func:`evalcore.sampling.designs.allocate_budget`:
    ``n_h ∝ N_h``, at least 2 per stratum), or Neyman's ``n_h ∝ N_h S_h`` (``S_h`` given as ``spread``, or from the
    proxy read within the trusted range) mixed with it, ``(1 - ε) a_h + ε a_h^prop`` (ε = :data:`UNIFORM_SHARE`): a
    stratum the proxy calls certain keeps a quarter of its proportional share, labels enough to find out if it is
    not."""
    proportional = allocate_budget(strata, labels, "proportional")
    proportional = proportional / proportional.sum()
    if design == "proportional":
        return proportional
    counts = allocate_budget(strata, labels, "neyman", proxy=trusted, spread=spread)
    return (1 - UNIFORM_SHARE) * counts / counts.sum() + UNIFORM_SHARE * proportional


def interleaved_order(strata: np.ndarray, shares: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Pool positions in an order whose every prefix of t holds about ``t · shares[h]`` of stratum h (the stratum
    furthest behind its share goes next; a stratum used up leaves its share to the others), each stratum's
    members in a random order."""
    members = [rng.permutation(np.flatnonzero(strata == h)) for h in range(shares.size)]
    # the k-th member (k = 0, 1, ...) of stratum h is due at "time" (k + 1/2) / a_h: merge the strata by due time
    due = np.concatenate([(np.arange(m.size) + 0.5) / max(a, 1e-12) for m, a in zip(members, shares)])
    return np.concatenate(members)[np.argsort(due, kind="stable")]


def plan_queue(pool: pd.DataFrame, design: str, target: float | None = None, budget: int | None = None,
               level: float = 0.95, seed: int = 0, scale: tuple[float, float] = (0.0, 1.0)) -> QueuePlan:
    """The queue of ``design`` over ``pool`` (columns ``example_id``, and ``proxy`` (the model's confidence, a
    probability) and ``judge`` where the log has them). ``target`` (a half-width) or ``budget`` sizes the plan;
    ``scale`` is the metric's range. EvalDataError when the design needs a column the pool lacks."""
    if design not in DESIGNS:
        raise EvalDataError(f"The design must be one of {', '.join(DESIGNS)}; got {design!r}.")
    n_pool = len(pool)
    if n_pool < 2:
        raise EvalDataError(f"A campaign needs at least 2 examples to label; the pool has {n_pool}.")
    if budget is not None and not 2 <= int(budget) <= n_pool:
        raise EvalDataError(f"The label budget must be between 2 and the pool's {n_pool:,} examples; got {budget}.")
    proxy = pool["proxy"].to_numpy(float) if "proxy" in pool else np.full(n_pool, np.nan)
    judge = pool["judge"].to_numpy(float) if "judge" in pool else np.full(n_pool, np.nan)
    needs = {"proportional": ("proxy", proxy), "neyman": ("proxy", proxy), "active": ("proxy", proxy),
             "ppi": ("judge", judge)}
    if design in needs:
        role, values = needs[design]
        missing = int((~np.isfinite(values)).sum())
        if missing:
            what = ("an AI judge's verdict ('judge' column)" if role == "judge" else
                    "a proxy (the model's confidence, 'confidence' or 'proxy' column)")
            raise EvalDataError(f"The {DESIGN_NAMES[design]} design needs {what} for every example; {missing:,} of "
                                f"{n_pool:,} examples have none. Choose 'srs', or map that column.")
    rng = np.random.default_rng(seed)
    spread = scale[1] - scale[0]
    trusted = np.clip(proxy, PROXY_TRUST, 1 - PROXY_TRUST)
    strata = np.zeros(n_pool, dtype=np.int64)
    weight = np.ones(n_pool)
    if design in ("proportional", "neyman"):
        strata = merged_strata(kmeans_strata(proxy, min(N_STRATA, max(1, n_pool // 4)), seed=seed).astype(np.int64))
    elif design == "active":
        u = np.sqrt(trusted * (1 - trusted))
        weight = (1 - UNIFORM_SHARE) * u + UNIFORM_SHARE * u.mean()
    planned = _planned(design, trusted, strata, weight, target, budget, level, spread, judge)
    sizes = np.bincount(strata)
    if design in ("proportional", "neyman"):
        shares = allocation_shares(design, strata, trusted, max(planned, 2 * sizes.size))
        position = interleaved_order(strata, shares, rng)
        priority = -np.arange(n_pool, dtype=float)
    elif design == "active":
        keys = weight / rng.uniform(size=n_pool)  # priorities q_i = u_i / U_i
        position = np.argsort(-keys, kind="stable")
        priority = keys[position]
    else:
        position = rng.permutation(n_pool)
        priority = -np.arange(n_pool, dtype=float)
    order = pd.DataFrame({"example_id": pool["example_id"].astype(str).to_numpy()[position],
                          "stratum": strata[position], "weight": weight[position], "priority": priority,
                          "proxy": proxy[position], "judge": judge[position]})
    if "task" in pool:
        order.insert(1, "task", pool["task"].astype(str).to_numpy()[position])
    finite_j = np.isfinite(judge)
    constants = {"N": n_pool, "strata": sizes.tolist(), "spread": float(spread),
                 "sum_judge": float(judge[finite_j].sum()), "sum_judge_sq": float((judge[finite_j] ** 2).sum()),
                 "sum_proxy": float(np.nansum(proxy)), "n_strata": int(sizes.size)}
    if design == "neyman":
        constants["spread_h"] = stratum_spread(strata, trusted).tolist()
    return QueuePlan(design, order, planned, constants)
