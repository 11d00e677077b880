"""Comparison campaigns: which of two or more models is better, from the fewest labels (pure functions; the campaign
that stores them is :mod:`.comparison`).

**The pool and its patterns** (:func:`comparison_pool`): the examples every model answered, each with its models'
outputs and its agreement pattern, the partition of the models by identical output ("all agree" when every model
gave the same output). Where every model gives the same output, every model is right or every one is wrong: the
example says nothing about any difference, which is known to be 0 there.

**Designs** (:func:`plan_comparison`): ``srs`` labels a random paired sample of the whole pool (the baseline: any
prefix of its queue is a simple random sample); ``disagreement`` queues only the examples whose outputs differ, in a
random order, so any prefix is a simple random sample of the disagreement set D (N_D of the pool's N examples);
``neyman`` (where the log has an AI judge's verdict on each output, or each model's confidence: :data:`PROXIES`)
stratifies D by the difference the first two models' proxies predict (:func:`predicted_difference`) and allocates
labels as Neyman, ``n_h ∝ N_h S_h``, mixed with proportional allocation and reading each proxy within [0.05, 0.95]
as one-model campaigns do (:func:`_neyman_queue`: every prefix of the queue is a stratified simple random sample).

**Estimates** (:func:`comparison_estimate`), for each pair (i, j) with ``d = c_i - c_j`` (c the 0/1 verdict):
``srs``: ``Δ = mean_S(d)``; ``disagreement``: ``Δ = (N_D / N) mean_S(d)`` (d = 0 on every example outside D);
``neyman``: ``Δ = (N_D / N) Σ_h W_h mean_h(d)``, ``W_h = N_h / N_D``. All are design-unbiased (Horvitz-Thompson with
inclusion probability n/N, n/N_D or n_h/N_h inside D, and 0 outside where d is 0). Two intervals:

* the **fixed-n interval** for the width rule ("stop when the interval is within ±target"): ``Δ ± t_ν se``,
  ``se² = f² Σ_h W_h² (1 - n_h/N_h) m_h²/n_h`` (one stratum of M examples for ``srs`` and ``disagreement``; f = 1
  or N_D/N) with ``m_h² = Σ_h (d - c_h)² / (n_h - 1)``, d's second moment about a centre ``c_h`` fixed before any
  label: 0 for one stratum (McNemar's variance: the share of examples where the two verdicts differ), the
  proxies' predicted mean of d for a Neyman stratum; floored at half a pseudo-event
  (:func:`evalcore.labeling.estimate.floored_variance`); ν by Satterthwaite (Cochran 1977, 5A.42; n - 1 for one
  stratum). ``m_h²`` is at least the sample variance ``s_h²`` (``m² = s² + n (d̄ - c)²/(n - 1)``), so the interval
  is conservative, little where the centre is near the mean. A stop on the width of an interval made with ``s²``
  favours samples whose ``d̄`` strays from the truth on the side where ``s²`` is smaller (``s²`` falls as ``|d̄|``
  grows): read after every label it covered 0.93 at the stop where the models differ by 8 points (ImageNet-X's
  SimCLR vs ViT). With a fixed centre a straying ``d̄`` widens the interval instead, and it covers (Chow & Robbins
  1965 for a width rule; coverage at the stop measured in ``benchmarks/comparison.py``);
* the **confidence sequence** for the "decided" rule ("stop when the interval excludes zero or the margin"), which
  is a rule on the estimate crossing a value: the betting confidence sequence of
  :func:`evalcore.stats.sequential.betting_cs` for the mean of ``(d + 1) / 2`` over the M sampled-from examples,
  mapped back, holds at every number of labels at once, so a decision read after every label is wrong with
  probability at most α. With more than two models every pair's sequence is at ``α / (K (K - 1) / 2)``
  (Bonferroni): all pairs hold at once, so "the leader beats every other model" is wrong with probability at most α.
  The fixed-n intervals of more than two models are at that level too (simultaneous over the pairs), so the width
  rule's "every pair with the leader within ±target" holds for all of them at once.

Skipped or disputed examples (NaN) are bounded as in one-model campaigns: each interval runs from its lower end with
every unknown d at -1 to its upper end with every one at +1 (Manski).

The ``neyman`` design has no confidence sequence (a betting sequence needs every prefix to be a simple random
sample): its campaigns stop by the width rule or a budget.

Sources: Sawade, Landwehr & Scheffer, *Active comparison of prediction models*, NeurIPS 2012 (labels where models
differ); Neyman 1934 and Cochran, *Sampling Techniques*, 1977, ch. 5 (stratified allocation and variance);
Waudby-Smith & Ramdas, JRSS-B 2024 (betting confidence sequences).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from evalcore.errors import EvalDataError, listed
from evalcore.labeling.designs import COMPARISON_DESIGN_NAMES, COMPARISON_DESIGNS  # noqa: F401 (re-exported)
from evalcore.labeling.estimate import MIN_LABELS, critical_value, floored_variance, wilson_at_effective_n
from evalcore.labeling.queue import (N_STRATA, PROXY_TRUST, QueuePlan, allocation_shares, interleaved_order,
                                    merged_strata)
from evalcore.sampling.designs import kmeans_strata
from evalcore.stats.sequential import betting_cs

#: fewest examples the models must share for a comparison campaign
MIN_SHARED = 20
#: outputs are classes or choices (the annotator gives the right answer once) when each is this short and the
#: pool has at most this many distinct outputs
CLASS_LENGTH, CLASS_VALUES = 40, 2000
ALL_AGREE = "all agree"
#: the columns the Neyman design reads as each output's chance of being right, in order of preference: an AI judge's
#: verdict on it (the log's proxy role), else the model's own confidence
PROXIES = (("proxy", "an AI judge's verdict"), ("confidence", "the model's confidence"))


@dataclass(frozen=True)
class ComparisonPool:
    """The examples every model answered: ``outputs`` (indexed by example id, a column per model, the output text),
    ``patterns`` (example id -> agreement pattern), ``kind`` ("class": the annotator gives the right answer once;
    "text": a verdict per distinct output), ``notes`` (what was left out and why) and ``confidence`` (each output's
    chance of being right, as ``outputs``: an AI judge's verdict or the model's confidence, :data:`PROXIES`; None
    where the log has neither for some shared example)."""

    outputs: pd.DataFrame
    patterns: pd.Series
    kind: str
    notes: tuple[str, ...] = ()
    confidence: pd.DataFrame | None = None


def _pattern(row: tuple, models: list[str]) -> str:
    """"all agree", or the models grouped by identical output, e.g. "A = B ≠ C"."""
    groups: dict[str, list[str]] = {}
    for model, output in zip(models, row):
        groups.setdefault(output, []).append(model)
    if len(groups) == 1:
        return ALL_AGREE
    return " ≠ ".join(" = ".join(g) for g in sorted(groups.values(), key=lambda g: models.index(g[0])))


def comparison_pool(frame: pd.DataFrame, models: list[str]) -> ComparisonPool:
    """The shared examples of ``models`` in a validated log (``model``, ``example_id``, ``output``; ``task`` where
    ids repeat across tasks: ids become ``task/example_id``). EvalDataError naming what is wrong: fewer than 2
    models, a model not in the log, no ``output`` column, or fewer than :data:`MIN_SHARED` shared examples (with how
    many are shared)."""
    models = [str(m) for m in models]
    if len(models) < 2 or len(set(models)) != len(models):
        raise EvalDataError(f"A comparison needs two or more different models; got {listed(models)}.")
    present = set(frame["model"].astype(str))
    unknown = [m for m in models if m not in present]
    if unknown:
        raise EvalDataError(f"The dataset has no model {listed(unknown)}; its models are {listed(sorted(present))}.")
    if "output" not in frame:
        raise EvalDataError("A comparison campaign shows each model's output: the log needs an 'output' column "
                            "(the model's answer, class or text).")
    rows = frame[frame["model"].astype(str).isin(models)]
    ids = rows["example_id"].astype(str)
    if "task" in rows and rows.groupby(["model", ids])["task"].nunique().max() > 1:
        ids = rows["task"].astype(str) + "/" + ids
    rows = rows.assign(_id=ids.to_numpy()).drop_duplicates(["model", "_id"])  # repeats: the first sample's output
    wide = rows.pivot(index="_id", columns="model", values="output").reindex(columns=models)
    answered = wide.notna()
    shared = answered.all(axis=1)
    notes = []
    for model in models:
        missing = int((~answered[model] & answered.drop(columns=model).any(axis=1)).sum())
        if missing:
            notes.append(f"{missing:,} example{' lacks' if missing == 1 else 's lack'} an output of {model!r} "
                         "(another model has one): left out, not guessed.")
    if shared.sum() < MIN_SHARED:
        counts = ", ".join(f"{m} {int(answered[m].sum()):,}" for m in models)
        raise EvalDataError(f"The models share {int(shared.sum()):,} examples (with an output from each); a comparison "
                            f"campaign needs at least {MIN_SHARED}. Examples per model: {counts}. Check that their "
                            "example ids match (the same id for the same question).")
    outputs = wide[shared].astype(str)
    outputs.index.name = "example_id"
    outputs.columns.name = None
    stripped = outputs.apply(lambda c: c.str.strip())
    patterns = pd.Series([_pattern(r, models) for r in stripped.itertuples(index=False, name=None)],
                         index=outputs.index, name="pattern")
    values = pd.unique(stripped.to_numpy().ravel())
    kind = "class" if len(values) <= CLASS_VALUES and max(map(len, values)) <= CLASS_LENGTH else "text"
    confidence = None
    for column, what in PROXIES:  # an AI judge's verdicts first, else the models' own confidences
        if column not in rows:
            continue
        wide = rows.assign(**{column: pd.to_numeric(rows[column], errors="coerce")}).pivot(
            index="_id", columns="model", values=column).reindex(index=outputs.index, columns=models)
        lacking = int((~np.isfinite(wide.to_numpy(float))).any(axis=1).sum())
        if lacking:
            notes.append(f"{lacking:,} shared example{' lacks' if lacking == 1 else 's lack'} {what} of a model's "
                         f"output ('{column}' column): the Neyman design does not read it.")
            continue
        confidence = wide.astype(float).clip(0.0, 1.0)
        confidence.columns.name = None
        break
    return ComparisonPool(outputs, patterns, kind, tuple(notes), confidence)


def predicted_difference(confidence: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(mean, variance) of ``d = c_a - c_b`` that the two models' confidences (columns a, b; each the probability
    that the model's output is right, read within [:data:`~evalcore.labeling.queue.PROXY_TRUST`, 1 - it]) predict
    on examples where their outputs differ: for classes or choices at most one of two different outputs is right,
    ``P(d = 1) = p_a / max(1, p_a + p_b)`` and ``P(d = -1) = p_b / max(1, p_a + p_b)``; for texts both may be,
    independently, ``P(d = 1) = p_a (1 - p_b)`` and ``P(d = -1) = p_b (1 - p_a)``. Mean ``P(1) - P(-1)``, variance
    ``P(1) + P(-1) - mean²``."""
    p = np.clip(np.asarray(confidence, dtype=float), PROXY_TRUST, 1 - PROXY_TRUST)
    a, b = p[:, 0], p[:, 1]
    if kind == "class":
        total = np.maximum(a + b, 1.0)
        up, down = a / total, b / total
    else:
        up, down = a * (1 - b), b * (1 - a)
    mean = up - down
    return mean, up + down - mean**2


def plan_comparison(pool: ComparisonPool, design: str, seed: int, target: float | None = None,
                    budget: int | None = None, level: float = 0.95) -> QueuePlan:
    """The queue of ``design`` (:data:`COMPARISON_DESIGNS`): a random order of the pool (``srs``) or of its
    disagreement set (``disagreement``), or the Neyman queue of the disagreement set (``neyman``,
    :func:`_neyman_queue`); ``stratum`` is the sampling stratum (0 for one); ``planned`` is the budget, or the labels
    for ±``target`` if the models' accuracies were equal (the worst case: ``Var(d)`` at most the share of examples
    that differ, ``P(c_i ≠ c_j) ≤`` the share of different outputs; ``neyman``: by the confidences' variance).
    ``pool`` constants: N, N_D, M (the population a prefix samples), the pattern names and sizes, and the sampling
    strata's sizes and centres (``strata``, ``centers``: the value d's second moment is taken about)."""
    if design not in COMPARISON_DESIGNS:
        raise EvalDataError(f"A comparison's design must be one of {', '.join(COMPARISON_DESIGNS)}; got {design!r}.")
    names = [ALL_AGREE, *sorted(set(pool.patterns) - {ALL_AGREE})]
    stratum = pool.patterns.map({n: i for i, n in enumerate(names)}).to_numpy(np.int64)
    n_pool = len(stratum)
    differ = stratum > 0
    n_differ = int(differ.sum())
    if design != "srs" and n_differ < 2:
        raise EvalDataError(f"The models give the same output on {n_pool - n_differ:,} of the {n_pool:,} shared "
                            "examples: there is nothing to compare (their accuracies are equal on this pool).")
    population = n_pool if design == "srs" else n_differ
    if budget is not None and not 2 <= int(budget) <= population:
        raise EvalDataError(f"The label budget must be between 2 and the {population:,} examples the design can "
                            f"draw; got {budget}.")
    sizes = np.bincount(stratum, minlength=len(names))
    constants = {"N": n_pool, "N_D": n_differ, "M": population, "patterns": names, "pattern_sizes": sizes.tolist()}
    if design == "neyman":
        return _neyman_queue(pool, differ, constants, seed, target, budget, level)
    candidates = np.flatnonzero(differ) if design == "disagreement" else np.arange(n_pool)
    position = np.random.default_rng(seed).permutation(candidates)
    share = n_differ / n_pool
    # Var(d) <= share of differing outputs over the pool, share_D = 1 inside the disagreement set (times f = share)
    planned = int(budget) if budget is not None else _planned(share if design == "srs" else share**2, target,
                                                               level, population)
    order = pd.DataFrame({"example_id": pool.outputs.index.to_numpy()[position], "stratum": 0,
                          "weight": 1.0, "priority": -np.arange(population, dtype=float), "proxy": np.nan,
                          "judge": np.nan})
    constants.update(strata=[population], centers=[0.0])
    return QueuePlan(design, order, planned, constants)


def _planned(variance: float, target: float, level: float, population: int) -> int:
    """The labels that reach ±``target`` on Δ when ``variance`` is n times the estimate's variance:
    ``n0 = z² variance / target²`` with the finite-population correction ``n0 / (1 + n0 / M)``, at least
    :data:`~evalcore.labeling.estimate.MIN_LABELS`, at most the ``population`` M."""
    n0 = critical_value(level) ** 2 * variance / target**2
    return int(min(max(math.ceil(n0 / (1 + n0 / population)), MIN_LABELS), population))


def _neyman_queue(pool: ComparisonPool, differ: np.ndarray, constants: dict, seed: int, target: float | None,
                  budget: int | None, level: float) -> QueuePlan:
    """The ``neyman`` queue over the disagreement set D: strata are the exact 1-D k-means clusters of the predicted
    mean of d (:func:`predicted_difference` of the first two models;
    :func:`evalcore.sampling.designs.kmeans_strata`, at most :data:`~evalcore.labeling.queue.N_STRATA`), so that
    the stratified estimator removes what the confidences foresee; labels are allocated ``n_h ∝ N_h S_h`` with the
    predicted ``S_h² = mean_h(Var d + E[d]²) - c_h²`` (``c_h`` the stratum's predicted mean, also its centre), mixed
    with proportional allocation and interleaved as one-model campaigns' Neyman queue
    (:func:`evalcore.labeling.queue.allocation_shares`, :func:`~evalcore.labeling.queue.interleaved_order`): every
    prefix is a stratified simple random sample. Planned: the budget, or ``z² f² (Σ W_h S_h)² / target²`` with the
    finite-population correction (f = N_D / N)."""
    if pool.confidence is None:
        raise EvalDataError("The Neyman design reads each model's confidence in its output ('confidence' column) or "
                            "an AI judge's verdict on it ('proxy' column) on every shared example; this log has "
                            "neither for some of them. Choose 'disagreement'.")
    models = list(pool.outputs.columns)
    ids = pool.outputs.index.to_numpy()[differ]
    population = int(ids.size)
    mean, variance = predicted_difference(pool.confidence.loc[ids, models[:2]].to_numpy(float), pool.kind)
    strata = merged_strata(kmeans_strata(mean, min(N_STRATA, max(1, population // 4))).astype(np.int64))
    sizes = np.bincount(strata)
    centers = np.bincount(strata, mean) / sizes
    spread = np.sqrt(np.maximum(np.bincount(strata, variance + mean**2) / sizes - centers**2, 0.0))
    planned = int(budget) if budget is not None else _planned(
        (constants["N_D"] / constants["N"] * float(sizes @ spread) / population) ** 2, target, level, population)
    shares = allocation_shares("neyman", strata, None, max(planned, 2 * sizes.size), spread=spread)
    position = interleaved_order(strata, shares, np.random.default_rng(seed))
    order = pd.DataFrame({"example_id": ids[position], "stratum": strata[position], "weight": 1.0,
                          "priority": -np.arange(population, dtype=float), "proxy": np.nan, "judge": np.nan})
    constants.update(strata=sizes.tolist(), centers=centers.tolist())
    return QueuePlan("neyman", order, planned, constants)


@dataclass(frozen=True)
class ComparisonEstimate:
    """A comparison campaign's answer now: ``difference`` (the first model's accuracy minus the second's) with
    ``ci_low``–``ci_high`` (the confidence sequence for a "decided" campaign, else the fixed-n interval; NaN before
    two labels), ``labels`` (examples with every verdict), ``skipped`` (unknown: skipped or disputed), ``stop``,
    ``decided`` (the model the interval shows better, or not worse by more than the margin; None), ``leader`` (the
    best estimate), ``pairs`` (every pair: difference, fixed-n interval, confidence sequence), ``needed`` (more
    labels for the target at the current variance), ``random_labels`` (about how many labels a random paired sample
    would need for the same interval), ``interval`` (which one is shown), ``meaning`` (one line) and, for the ``srs``
    design, ``accuracies`` (each model's accuracy with its interval; None for ``disagreement``, which labels none of
    the examples where every model agrees)."""

    models: tuple[str, ...]
    difference: float
    ci_low: float
    ci_high: float
    labels: int
    skipped: int
    stop: bool
    decided: str | None
    leader: str | None
    pairs: pd.DataFrame
    needed: int
    random_labels: float
    interval: str
    meaning: str
    level: float
    design: str
    target: float | None = None
    margin: float = 0.0
    equivalent: bool = False
    per_pattern: dict = field(default_factory=dict)
    accuracies: pd.DataFrame | None = None

    def as_dict(self) -> dict:
        """The numbers as plain values (``pairs`` a list of one dict per pair), as ``evalcore label status --json``
        writes them."""
        return {"models": list(self.models), "difference": self.difference, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "labels": self.labels, "skipped": self.skipped, "stop": self.stop,
                "decided": self.decided, "leader": self.leader, "equivalent": self.equivalent,
                "interval": self.interval, "meaning": self.meaning, "level": self.level, "design": self.design,
                "target": self.target, "margin": self.margin, "needed": self.needed,
                "random_labels": self.random_labels, "per_pattern": dict(self.per_pattern),
                "accuracies": None if self.accuracies is None else [
                    {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
                    for row in self.accuracies.to_dict("records")],
                "pairs": [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
                          for row in self.pairs.to_dict("records")]}


FIXED_MEANING = ("A fixed-n interval read after every label with a stop rule on its width (Chow & Robbins): about "
                 "{level:.0%} of the intervals shown at the stop contain the difference over the whole pool "
                 "(measured by simulation).")
SEQUENCE_MEANING = ("A confidence sequence (betting, Waudby-Smith & Ramdas 2024): it holds at every number of labels "
                    "at once, so stopping the moment it excludes {what} declares a wrong winner with probability at "
                    "most {alpha:.0%}.")


def fixed_interval(d: np.ndarray, scale: float, level: float, h: np.ndarray, sizes, centers) -> tuple[float, ...]:
    """(Δ, low, high, se) of the fixed-n interval (module docstring) from the differences d (values -1, 0, 1) of a
    stratified simple random sample (``h`` each draw's stratum, ``sizes`` the strata's sizes, ``centers`` the value
    each stratum's second moment is taken about), scaled by ``scale`` (N_D/N or 1); NaN until every stratum holds
    two draws."""
    sizes = np.asarray(sizes, dtype=float)
    n_h = np.bincount(h, minlength=sizes.size).astype(float)
    if (n_h < 2).any():
        return (math.nan,) * 4
    w = sizes / sizes.sum()
    mean_h = np.bincount(h, d, sizes.size) / n_h
    deviations = ((d - np.asarray(centers, dtype=float)[h]) / 2) ** 2  # on the [0, 1] scale of (d + 1)/2
    m2_h = 4 * floored_variance(np.bincount(h, deviations, sizes.size), n_h)
    parts = w**2 * np.maximum(1 - n_h / sizes, 0.0) * m2_h / n_h
    df = float(parts.sum()) ** 2 / float(np.sum(parts**2 / (n_h - 1))) if parts.any() else 1.0  # Cochran 5A.42
    se = scale * math.sqrt(float(parts.sum()))
    k = float(student_t.ppf(0.5 + level / 2, max(df, 1.0)))
    delta = scale * float(w @ mean_h)
    return delta, delta - k * se, delta + k * se, se


def _sequence(d: np.ndarray, scale: float, population: int, alpha: float) -> tuple[float, float]:
    """The confidence sequence's bounds on Δ after the draws d (in the order drawn)."""
    low, high = betting_cs((d + 1) / 2, population, alpha)
    return scale * (2 * low[-1] - 1), scale * (2 * high[-1] - 1)


def comparison_estimate(correct: pd.DataFrame, models: list[str], design: str, constants: dict,
                        target: float | None, budget: int | None, decide: bool, margin: float,
                        level: float) -> ComparisonEstimate:
    """The estimate from ``correct`` (one row per drawn example, in queue order; a 0/1 column per model, NaN where
    the example was skipped or is disputed; ``stratum``, the sampling stratum, for the ``neyman`` design;
    ``pattern``, the agreement pattern, for the labels per pattern); see the module docstring."""
    models = [str(m) for m in models]
    values = correct[models].to_numpy(float)
    known = np.isfinite(values).all(axis=1)
    n, n_known = len(values), int(known.sum())
    scale = constants["N_D"] / constants["N"] if design != "srs" else 1.0
    population = int(constants["M"])
    sizes = np.asarray(constants.get("strata", [population]), dtype=float)
    centers = np.asarray(constants.get("centers", [0.0]), dtype=float)
    h = (correct["stratum"].to_numpy(np.int64) if design == "neyman" else np.zeros(n, dtype=np.int64))
    weights = sizes / sizes.sum()
    k_models = len(models)
    alpha = 1 - level
    pair_alpha = alpha / (k_models * (k_models - 1) / 2)
    means = _stratum_means(values[known], h[known], weights) if n_known else np.full(k_models, np.nan)
    leader = models[int(np.nanargmax(means))] if n_known and np.isfinite(means).any() else None
    rows = []
    for i, j in itertools.combinations(range(k_models), 2):
        if n_known < 2:
            rows.append({"model_a": models[i], "model_b": models[j], "difference": math.nan, "ci_low": math.nan,
                         "ci_high": math.nan, "cs_low": math.nan, "cs_high": math.nan, "se": math.nan})
            continue
        d = values[:, i] - values[:, j]
        delta, *_ = fixed_interval(d[known], scale, 1 - pair_alpha, h[known], sizes, centers)
        bounds = []
        for fill in (-1.0, 1.0) if n_known < n else (0.0,):  # Manski: unknown d at its worst, then at its best
            filled = np.where(known, d, fill)
            _, low, high, se = fixed_interval(filled, scale, 1 - pair_alpha, h, sizes, centers)
            cs_low, cs_high = _sequence(filled, scale, population, pair_alpha) if decide else (math.nan, math.nan)
            bounds.append((low, high, cs_low, cs_high, se))
        rows.append({"model_a": models[i], "model_b": models[j], "difference": delta,
                     "ci_low": max(bounds[0][0], -scale), "ci_high": min(bounds[-1][1], scale),
                     "cs_low": bounds[0][2], "cs_high": bounds[-1][3], "se": max(b[4] for b in bounds)})
    pairs = pd.DataFrame(rows)
    first = pairs.iloc[0]
    shown_low, shown_high = (first["cs_low"], first["cs_high"]) if decide else (first["ci_low"], first["ci_high"])
    decided = _decided(pairs, models, leader, margin) if decide and n_known >= 2 else None
    equivalent = bool(decide and margin > 0 and k_models == 2 and n_known >= 2 and decided is None
                      and first["cs_low"] > -margin and first["cs_high"] < margin)
    half = (shown_high - shown_low) / 2 if n_known >= 2 else math.inf
    if decide:  # decided, or the budget (where one is set) used
        stop = decided is not None or equivalent or n >= population or (budget is not None and n >= budget)
    elif budget is not None:
        stop = n >= budget
    else:
        stop = n >= MIN_LABELS and (_all_within(pairs, models, leader, target) if k_models > 2 else half <= target)
        stop = stop or n >= population
    needed = _needed(n, half, target, budget, population, stop)
    second = (float(_stratum_means((values[known, 0] - values[known, 1])[:, None] ** 2, h[known], weights)[0])
              if n_known >= 2 else math.nan)
    random_labels = _random_equivalent(second, float(first["difference"]), scale, first["se"], n_known, constants,
                                       design)
    what = "zero" if margin == 0 else f"±{margin:g}"
    meaning = (SEQUENCE_MEANING.format(what=what, alpha=alpha) if decide else FIXED_MEANING.format(level=level))
    counts = correct["pattern"].value_counts() if "pattern" in correct else pd.Series(dtype=int)
    per_pattern = {str(name): int(c) for name, c in counts.items()}
    accuracies = _accuracies(values, known, models, population, level) if design == "srs" else None
    return ComparisonEstimate(tuple(models), float(first["difference"]), float(shown_low), float(shown_high), n_known,
                              n - n_known, bool(stop), decided, leader, pairs, needed, random_labels,
                              "confidence sequence" if decide else "fixed-n interval", meaning, level, design, target,
                              margin, equivalent, per_pattern, accuracies)


def _accuracies(values: np.ndarray, known: np.ndarray, models: list[str], population: int,
                level: float) -> pd.DataFrame | None:
    """Each model's accuracy from a random paired sample (``srs``: every shared example could be drawn; the
    disagreement design labels none of the examples where all agree, so it estimates differences only): the sample
    mean with the Wilson interval at the design's effective sample size, every skipped example at 0 and at 1
    (:func:`evalcore.labeling.estimate.wilson_at_effective_n`, as one-model campaigns)."""
    n = len(values)
    if int(known.sum()) < 2:
        return None
    z = critical_value(level)
    rows = []
    for k, model in enumerate(models):
        ends = []
        for fill, end in ((0.0, 0), (1.0, 1)):
            c = np.where(known, values[:, k], fill)
            var = max(1 - n / population, 0.0) * float(floored_variance(float(np.sum((c - c.mean()) ** 2)), n)) / n
            ends.append(wilson_at_effective_n(float(c.mean()), var, n, z)[end])
        rows.append({"model": model, "accuracy": float(values[known, k].mean()), "ci_low": ends[0],
                     "ci_high": ends[1]})
    return pd.DataFrame(rows)


def _decided(pairs: pd.DataFrame, models: list[str], leader: str, margin: float) -> str | None:
    """With two models: the one the confidence sequence shows better (with a margin M: not worse than the other by
    more than M; None where it shows both, i.e. equivalent within ±M); with more: the leader, once its sequence
    against every other model lies above ``-M`` (above 0 without a margin)."""
    if len(models) == 2:
        row = pairs.iloc[0]
        first, second = row["cs_low"] > -margin, row["cs_high"] < margin
        return None if first and second else models[0] if first else models[1] if second else None
    for row in pairs.itertuples(index=False):
        if leader in (row.model_a, row.model_b):
            low = row.cs_low if row.model_a == leader else -row.cs_high
            if not low > -margin:
                return None
    return leader


def _all_within(pairs: pd.DataFrame, models: list[str], leader: str | None, target: float | None) -> bool:
    """Every pair with the leader has its fixed-n interval within ±target."""
    rows = pairs[(pairs["model_a"] == leader) | (pairs["model_b"] == leader)]
    return bool(len(rows) and ((rows["ci_high"] - rows["ci_low"]) / 2 <= target).all())


def _needed(n: int, half: float, target: float | None, budget: int | None, population: int, stop: bool) -> int:
    if stop:
        return 0
    if budget is not None:
        return max(budget - n, 0)
    if target is None or not math.isfinite(half) or half <= 0:
        return max(MIN_LABELS - n, 1)
    return int(min(max(math.ceil(n * (half / target) ** 2) - n, MIN_LABELS - n, 1), population - n))


def _stratum_means(values: np.ndarray, h: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each column's design-weighted mean ``Σ_h W_h mean_h`` over the draws (NaN where a stratum has none)."""
    n_h = np.bincount(h, minlength=weights.size).astype(float)
    if (n_h == 0).any():
        return np.full(values.shape[1], np.nan)
    sums = np.stack([np.bincount(h, column, weights.size) for column in values.T], axis=1)
    return weights @ (sums / n_h[:, None])


def _random_equivalent(second: float, delta: float, scale: float, se: float, n: int, constants: dict,
                       design: str) -> float:
    """About how many labels a random paired sample of the pool needs for the same fixed-n interval on the first
    pair, i.e. the same standard error ``se``: ``n0 = Var_pool(d) / se²`` with ``Var_pool(d) = f E_D[d²] - Δ²``
    (d = 0 outside D; ``second`` the design's estimate of ``E_D[d²]``) and the finite-population correction, from
    the labels held; NaN before there are two. For the ``srs`` design, the labels themselves."""
    if n < 2 or not se > 0 or not math.isfinite(second):
        return math.nan
    if design == "srs":
        return float(n)
    n0 = (scale * second - delta**2) / se**2
    return float(n0 / (1 + n0 / constants["N"]))
