"""Coverage of the per-example (cluster-robust) intervals for logs with repeated samples, by simulation.

``python -m benchmarks.repeats_coverage [--reps N]`` prints a Markdown table: each example i has its own success
probability p_i ~ Beta(a, b) (population accuracy a / (a + b)), each of its k samples is Bernoulli(p_i) (0/1
``correct``) or p_i + normal noise (``score``); the table gives how often the 95 % interval of
:func:`evalcore.stats.summaries.mean_table` contains the population mean, next to the interval that treats every sample as
independent (Wilson on all samples, or Student-t on all samples), with their mean widths.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy.special import stdtrit

from evalcore.stats.intervals import wilson_interval
from evalcore.stats.summaries import mean_table

CASES = ((150, 1, 2.0, 1.0), (150, 4, 2.0, 1.0), (150, 10, 2.0, 1.0), (150, 4, 20.0, 10.0), (40, 5, 1.0, 1.0),
         (400, 3, 0.5, 0.5))


def run(reps: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for metric in ("correct", "score"):
        for n, k, a, b in CASES:
            truth = a / (a + b)
            hits = naive_hits = 0
            width = naive_width = 0.0
            for _ in range(reps):
                p = rng.beta(a, b, size=n)
                if metric == "correct":
                    y = (rng.random((n, k)) < p[:, None]).astype(float)
                else:
                    y = p[:, None] + rng.normal(0, 0.2, size=(n, k))
                frame = pd.DataFrame({"model": "m", "example_id": np.repeat(np.arange(n).astype(str), k),
                                      "repeat": np.tile(np.arange(k), n), metric: y.ravel()})
                row = mean_table(frame, ["model"], metric).iloc[0]
                hits += row["ci_low"] <= truth <= row["ci_high"]
                width += row["ci_high"] - row["ci_low"]
                if metric == "correct":
                    low, high = wilson_interval(y.sum(), y.size, 0.05)
                else:
                    half = stdtrit(y.size - 1, 0.975) * y.std(ddof=1) / np.sqrt(y.size)
                    low, high = y.mean() - half, y.mean() + half
                naive_hits += low <= truth <= high
                naive_width += high - low
            icc = (a * b / ((a + b) ** 2 * (a + b + 1))) / (truth * (1 - truth)) if metric == "correct" else np.nan
            rows.append({"metric": metric, "examples": n, "samples each": k, "p_i ~ Beta": f"({a:g}, {b:g})",
                         "ICC (0/1)": round(icc, 3), "coverage per example": hits / reps,
                         "width": width / reps, "coverage, samples as independent": naive_hits / reps,
                         "width, samples as independent": naive_width / reps})
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    args = parser.parse_args()
    table = run(args.reps)
    print(f"95 % intervals, {args.reps} simulated logs per row (Monte Carlo SE about "
          f"{np.sqrt(0.95 * 0.05 / args.reps):.3f})\n")
    print("| " + " | ".join(table.columns) + " |")
    print("|" + "---|" * table.shape[1])
    for row in table.itertuples(index=False):
        print("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row) + " |")


if __name__ == "__main__":
    main()
