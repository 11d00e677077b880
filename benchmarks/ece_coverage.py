"""Coverage of :func:`evalcore.calibration.estimators.ece_interval` over repeated samples with a known true ECE.

Cases (15 uniform bins; the target is the population ECE for these same bins):

* simulated: confidence ``c ~ Beta(5, 2)``, ``correct ~ Bernoulli(k * c)`` with k = 0.97, 0.9 (overconfident) and
  1 (perfectly calibrated), n = 1,000 and 5,000. Every bin has the same sign of gap ``(k - 1) c``, so the true ECE
  is ``|k - 1| E[c] = |k - 1| * 5/7`` for any bins: 0.0214, 0.0714 and 0;
* ImageNet-X: subsamples of 1,000 drawn without replacement from one model's 50,000 predictions of
  ``../shared/data/imagenet_x_predictions.csv.gz`` (confidence ``predicted_probability``); the truth is the ECE on
  all 50,000.

For every case and level the table reports the coverage (share of intervals containing the truth, with its Monte
Carlo standard error), the mean width, and the mean bias of the ``debiased`` estimate. Repetition ``r`` of a case
draws its sample from ``np.random.default_rng([seed, case index, r])`` and calls ``ece_interval(..., seed=r)``.
:func:`repetitions` gives the per-repetition outcomes; ``benchmarks/coverage/calibration.py`` puts these cases in the
coverage table of ``python -m benchmarks.coverage``.

``python -m benchmarks.ece_coverage [--reps R] [--n-boot B]`` prints the table as Markdown.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from evalcore.calibration.estimators import ece_interval, expected_calibration_error

N_BINS = 15
IMAGENET = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "imagenet_x_predictions.csv.gz"


@dataclass(frozen=True)
class Case:
    """A population to sample from: ``draw(rng, n)`` returns (confidence, correct); ``truth`` its ECE."""

    name: str
    n: int
    truth: float
    draw: Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray]]


def beta_case(slope: float, n: int) -> Case:
    """``c ~ Beta(5, 2)``, ``correct ~ Bernoulli(slope * c)``: true ECE ``|slope - 1| * 5/7``."""

    def draw(rng: np.random.Generator, size: int):
        conf = rng.beta(5.0, 2.0, size)
        return conf, (rng.random(size) < slope * conf).astype(float)

    label = "calibrated" if slope == 1 else f"acc={slope:g}c"
    return Case(f"{label}, n={n:,}", n, abs(slope - 1) * 5 / 7, draw)


def imagenet_cases(path: Path = IMAGENET, n: int = 1000) -> list[Case]:
    """One case per model: subsamples of ``n`` without replacement; truth = ECE on all its predictions."""
    frame = pd.read_csv(path, usecols=["model", "predicted_probability", "correct"])
    cases = []
    for model, rows in frame.groupby("model", sort=True):
        conf = rows["predicted_probability"].to_numpy(float)
        correct = rows["correct"].to_numpy(float)
        truth = expected_calibration_error(conf, correct, n_bins=N_BINS)
        cases.append(Case(f"ImageNet-X {model}, n={n:,}", n, truth, subsampler(conf, correct)))
    return cases


def subsampler(conf: np.ndarray, correct: np.ndarray) -> Callable[[np.random.Generator, int], tuple]:
    """``draw(rng, size)``: ``size`` of the (confidence, correct) pairs, without replacement."""

    def draw(rng: np.random.Generator, size: int):
        pick = rng.choice(conf.size, size, replace=False)
        return conf[pick], correct[pick]

    return draw


def simulated_cases() -> list[Case]:
    """The six simulated cases: k = 0.97, 0.9, 1 at n = 1,000 and 5,000."""
    return [beta_case(slope, n) for n in (1000, 5000) for slope in (0.97, 0.9, 1.0)]


def repetitions(case: Case, index: int, level: float, reps: int, n_boot: int,
                seed: int = 12345) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per repetition: whether the interval held the truth, its width, and the bias of ``debiased``."""
    hits, widths, bias = np.empty(reps, bool), np.empty(reps), np.empty(reps)
    for r in range(reps):
        conf, correct = case.draw(np.random.default_rng([seed, index, r]), case.n)
        res = ece_interval(conf, correct, n_bins=N_BINS, n_boot=n_boot, level=level, seed=r)
        hits[r] = res.ci_low <= case.truth <= res.ci_high
        widths[r] = res.ci_high - res.ci_low
        bias[r] = res.debiased - case.truth
    return hits, widths, bias


def coverage(case: Case, index: int, level: float, reps: int, n_boot: int, seed: int = 12345) -> dict:
    """Coverage, its Monte Carlo SE, mean width and mean bias of ``debiased`` over ``reps`` samples."""
    hits, widths, bias = repetitions(case, index, level, reps, n_boot, seed)
    cov = hits.mean()
    return {"case": case.name, "truth": case.truth, "nominal": level, "coverage": cov,
            "se": np.sqrt(cov * (1 - cov) / reps), "width": widths.mean(), "bias": bias.mean()}


def table(cases: list[Case], levels=(0.9, 0.95), reps: int = 1000, n_boot: int = 500) -> pd.DataFrame:
    """One row per (case, level)."""
    return pd.DataFrame([coverage(c, i, lev, reps, n_boot) for i, c in enumerate(cases) for lev in levels])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--n-boot", type=int, default=500)
    args = parser.parse_args(argv)
    cases = simulated_cases() + (imagenet_cases() if IMAGENET.is_file() else [])
    frame = table(cases, reps=args.reps, n_boot=args.n_boot)
    print(f"{args.reps} repetitions, n_boot = {args.n_boot}, {N_BINS} uniform bins\n")
    print("| case | truth | nominal | coverage (SE) | mean width | bias of debiased |")
    print("|---|---|---|---|---|---|")
    for row in frame.itertuples():
        print(f"| {row.case} | {row.truth:.4f} | {row.nominal:.2f} | {row.coverage:.3f} ({row.se:.3f}) "
              f"| {row.width:.4f} | {row.bias:+.4f} |")


if __name__ == "__main__":
    main()
