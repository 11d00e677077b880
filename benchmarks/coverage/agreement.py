r"""Agreement intervals (:mod:`evalcore.labeling.agreement`): Cohen's kappa and Krippendorff's alpha against a known
truth, and their speed.

Each setting draws ``reps`` samples from a generating model whose population statistic is known exactly and
counts how often the 95% interval (:func:`~evalcore.labeling.agreement.kappa_interval`,
:func:`~evalcore.labeling.agreement.alpha_interval`: the hull of the BCa bootstrap and the Jeffreys posterior)
holds it. Samples where every label is the same value have no statistic (NaN, as the libraries give): they are left
out and their share is given in the setting text.

* Cohen's kappa, 0/1: the common-correlation model of two annotators with prevalence p and kappa k,
  ``P(1, 1) = p^2 + k p q``, ``P(0, 0) = q^2 + k p q``, ``P(0, 1) = P(1, 0) = (1 - k) p q`` (q = 1 - p): its kappa is
  k.
* Cohen's kappa, A/B/tie, and Krippendorff's alpha: a latent class Z ~ ``classes`` per unit; each annotator gives Z
  with probability ``accuracy``, else one of the other classes at random, independently; labels missing completely
  at random with probability ``missing`` (units with fewer than two labels left out, as the page does). Population
  kappa from the joint table of two annotators; population alpha ``1 - P(two labels of a unit differ) / (1 - sum_c
  p_c^2)`` (the limit of alpha's observed and expected disagreement when annotators are exchangeable).
* Krippendorff's alpha, interval (scores 1-5): a latent score T ~ ``SCORES`` per unit; each annotator gives T with
  probability 0.6, T - 1 or T + 1 with 0.2 each (kept within 1-5); population alpha ``1 - E[(X_i - X_j)^2] /
  (2 Var X)`` computed from the model exactly.

``before``: the interval shown before this change, the percentile bootstrap of 1,000 resamples of the units
(replicates where the statistic is undefined dropped; NaN when fewer than half remain), computed here from the
same sums vectorised rather than by 1,000 library calls (the same intervals; the old loop took 10-25 s a call).

:func:`timings` measures the seconds per call at the page's sizes; ``python -m benchmarks.coverage.agreement``
prints the table and the timings.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from benchmarks.coverage import CoverageRow, coverage_row, markdown
from evalcore.labeling.agreement import (_alpha_of_sums, _alpha_units, _kappa_of_sums, _kappa_units,
                                         alpha_interval, kappa_interval)

REPS = 1000
LEVEL = 0.95
OLD_RESAMPLES = 1000
SCORES = np.array([0.1, 0.2, 0.4, 0.2, 0.1])  # P(T = 1..5)


@dataclass(frozen=True)
class Setting:
    """One row: ``kind`` "kappa01" (common-correlation model), "kappa" or "alpha" (latent class) or "scores"
    (interval alpha); ``units`` sampled (before units with fewer than two labels are left out)."""

    kind: str
    units: int
    annotators: int = 2
    prevalence: float = 0.5
    kappa: float = 0.6
    classes: tuple[float, ...] = (0.5, 0.5)
    accuracy: float = 0.85
    missing: float = 0.0
    reps: int | None = None

    def describe(self) -> str:
        if self.kind == "kappa01":
            return f"0/1, prevalence {self.prevalence:g}, kappa {self.kappa:g}, n = {self.units}"
        what = ("scores 1-5" if self.kind == "scores" else
                f"classes {'/'.join(f'{c:g}' for c in self.classes)}, accuracy {self.accuracy:g}")
        return (f"{what}, {self.annotators} annotators, {self.missing:.0%} missing, {self.units} units"
                if self.kind != "kappa" else f"A/B/tie {what}, n = {self.units}")


KAPPA = (Setting("kappa01", 30, prevalence=0.5, kappa=0.6), Setting("kappa01", 30, prevalence=0.5, kappa=0.9),
         Setting("kappa01", 50, prevalence=0.95, kappa=0.6), Setting("kappa01", 50, prevalence=0.95, kappa=0.9),
         Setting("kappa01", 10, prevalence=0.5, kappa=0.6), Setting("kappa01", 100, prevalence=0.8, kappa=0.6),
         Setting("kappa01", 1000, prevalence=0.5, kappa=0.6),
         Setting("kappa", 30, classes=(0.4, 0.4, 0.2), accuracy=0.75),
         Setting("kappa", 30, classes=(0.6, 0.3, 0.1), accuracy=0.95))
ALPHA = (Setting("alpha", 30, 4, missing=0.4), Setting("alpha", 30, 4, classes=(0.4, 0.4, 0.2), accuracy=0.75,
                                                       missing=0.4),
         Setting("alpha", 50, 4, classes=(0.95, 0.05), accuracy=0.95),
         Setting("alpha", 50, 4, classes=(0.95, 0.05), accuracy=0.95, missing=0.4),
         Setting("alpha", 10, 5, missing=0.2), Setting("alpha", 1000, 5, accuracy=0.8, missing=0.4, reps=300),
         Setting("scores", 30, 4, missing=0.4), Setting("scores", 100, 3))
SETTINGS = KAPPA + ALPHA


def _confusion(classes, accuracy: float) -> np.ndarray:
    """P(label | latent class), rows the class: ``accuracy`` on the diagonal, the rest spread evenly."""
    k = len(classes)
    return np.full((k, k), (1 - accuracy) / (k - 1)) + np.eye(k) * (accuracy - (1 - accuracy) / (k - 1))


def _score_noise() -> np.ndarray:
    """P(score x | latent T), rows T = 1..5: T with 0.6, T - 1 and T + 1 with 0.2 each, kept within 1-5."""
    noise = np.zeros((5, 5))
    for t in range(5):
        for step, p in ((-1, 0.2), (0, 0.6), (1, 0.2)):
            noise[t, min(max(t + step, 0), 4)] += p
    return noise


def truth(s: Setting) -> float:
    """The population statistic of the setting's model (module docstring)."""
    if s.kind == "kappa01":
        return s.kappa
    prior, noise = ((SCORES, _score_noise()) if s.kind == "scores" else
                    (np.asarray(s.classes), _confusion(s.classes, s.accuracy)))
    joint = np.einsum("z,zi,zj->ij", prior, noise, noise)  # two labels of one unit
    marginal = joint.sum(axis=1)
    if s.kind == "kappa":
        p_e = marginal @ marginal
        return float((np.trace(joint) - p_e) / (1 - p_e))
    if s.kind == "alpha":
        return float(1 - (1 - np.trace(joint)) / (1 - marginal @ marginal))
    x = np.arange(1.0, 6.0)
    variance = marginal @ x ** 2 - (marginal @ x) ** 2
    return float(1 - joint.ravel() @ ((x[:, None] - x[None, :]) ** 2).ravel() / (2 * variance))


def sample(s: Setting, rng: np.random.Generator) -> np.ndarray:
    """Annotators x units labels (NaN missing; units with fewer than two labels left out)."""
    if s.kind == "kappa01":
        p, q, k = s.prevalence, 1 - s.prevalence, s.kappa
        cells = rng.choice(4, s.units, p=[q * q + k * p * q, (1 - k) * p * q, (1 - k) * p * q, p * p + k * p * q])
        return np.vstack([cells // 2, cells % 2]).astype(float)
    prior, noise = ((SCORES, _score_noise()) if s.kind == "scores" else
                    (np.asarray(s.classes), _confusion(s.classes, s.accuracy)))
    latent = rng.choice(len(prior), s.units, p=prior)
    cumulative = noise.cumsum(axis=1)[latent]  # units x values
    draws = rng.random((s.annotators, s.units, 1))
    labels = np.minimum((draws > cumulative[None]).sum(axis=2), len(prior) - 1).astype(float)
    if s.kind == "scores":
        labels += 1
    labels[rng.random(labels.shape) < s.missing] = np.nan
    return labels[:, (~np.isnan(labels)).sum(axis=0) >= 2]


def old_interval(matrix: np.ndarray, kappa: bool, nominal: bool, rng: np.random.Generator) -> tuple[float, float]:
    """The percentile bootstrap shown before (module docstring), vectorised."""
    if kappa:
        features, statistic = _kappa_units(matrix[0], matrix[1])[0], _kappa_of_sums
    else:
        features = _alpha_units(matrix, nominal)[0]

        def statistic(sums):
            return _alpha_of_sums(sums, nominal)
    n = len(features)
    picked = rng.integers(0, n, (OLD_RESAMPLES, n))
    weights = np.bincount((picked + n * np.arange(OLD_RESAMPLES)[:, None]).ravel(),
                          minlength=OLD_RESAMPLES * n).reshape(OLD_RESAMPLES, n)
    draws = statistic(weights @ features)
    draws = draws[np.isfinite(draws)]
    if draws.size < OLD_RESAMPLES // 2:
        return np.nan, np.nan
    low, high = np.quantile(draws, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return float(low), float(high)


def simulate(s: Setting, reps: int, seed: int = 0, before: bool = True) -> dict:
    """Coverage of the interval (and of the one before) over ``reps`` samples of ``s``: ``hits``, ``widths``,
    ``before_hits`` (booleans / widths per defined sample), ``undefined`` (share of samples with no statistic)."""
    rng = np.random.default_rng(seed)
    target = truth(s)
    kappa = s.kind.startswith("kappa")
    hits, widths, before_hits, undefined = [], [], [], 0
    for rep in range(reps):
        labels = sample(s, rng)
        if kappa:
            value, low, high = kappa_interval(labels[0], labels[1], LEVEL, seed=rep)
        else:
            value, low, high = alpha_interval(labels, s.kind != "scores", LEVEL, seed=rep)
        if not np.isfinite(value):
            undefined += 1
            continue
        hits.append(low <= target <= high)
        widths.append(high - low)
        if before:
            old_low, old_high = old_interval(labels, kappa, s.kind != "scores", rng)
            before_hits.append(old_low <= target <= old_high)
    return {"truth": target, "hits": np.array(hits), "widths": np.array(widths),
            "before_hits": np.array(before_hits), "undefined": undefined / reps}


def run(reps: int | None = None, seed: int = 0) -> list[CoverageRow]:
    """One row per setting (module docstring)."""
    rows = []
    for i, s in enumerate(SETTINGS):
        found = simulate(s, reps or s.reps or REPS, seed + i)
        method = "Cohen's kappa" if s.kind.startswith("kappa") else (
            "Krippendorff's alpha (interval)" if s.kind == "scores" else "Krippendorff's alpha (nominal)")
        setting = f"{s.describe()}; truth {found['truth']:.3f}; undefined {found['undefined']:.3f}"
        rows.append(coverage_row(method + ": BCa ∪ Jeffreys posterior", setting, LEVEL, found["hits"],
                                 found["widths"], before=float(found["before_hits"].mean())))
    return rows


def timings(repeat: int = 5, seed: int = 0) -> list[tuple[str, float]]:
    """Median seconds per call: kappa of 2 annotators at 30 and 1,000 units, nominal and interval alpha of 5
    annotators at 1,000 units (40% missing)."""
    rng = np.random.default_rng(seed)
    pair = sample(Setting("kappa01", 1000), rng)
    nominal = sample(Setting("alpha", 1000, 5, missing=0.4), rng)
    scores = sample(Setting("scores", 1000, 5, missing=0.4), rng)
    calls = {"kappa, 2 annotators, 30 units": lambda: kappa_interval(pair[0, :30], pair[1, :30]),
             "kappa, 2 annotators, 1,000 units": lambda: kappa_interval(pair[0], pair[1]),
             "alpha nominal, 5 annotators, 1,000 units": lambda: alpha_interval(nominal, True),
             "alpha interval, 5 annotators, 1,000 units": lambda: alpha_interval(scores, False)}
    out = []
    for name, call in calls.items():
        call()  # imports
        seconds = []
        for _ in range(repeat):
            start = time.perf_counter()
            call()
            seconds.append(time.perf_counter() - start)
        out.append((name, float(np.median(seconds))))
    return out


if __name__ == "__main__":
    print(markdown(run()))
    print("\n| call | seconds (median) |\n|---|---|")
    for name, seconds in timings():
        print(f"| {name} | {seconds:.4f} |")
