"""Comparison campaigns on real pools: labels to reach ±target on the difference, coverage at the stop, and the
"decided" rule's error rates under monitoring after every label (issue 48's tables).

``python -m benchmarks.comparison --data ../shared/data/imagenet_x_predictions.csv.gz [--campaigns 500]`` runs, for
every pair of ImageNet-X's four models (outputs: the predicted classes; the annotators' answers: the ReaL labels),
campaigns of both designs (:func:`evalcore.labeling.difference.plan_comparison`) with the stop rule read after every
label:

* **width** (±``target``, 95%): median labels at the stop for ``srs`` (a random paired sample) and
  ``disagreement``, their ratio, and the coverage of the interval at the stop over the campaigns;
* **decided** (the confidence sequence excludes 0): median labels to decide, the rate of declaring the wrong winner,
  and the same on a **zero-difference pair** (the two models' outputs swapped on a random half of the examples, so
  they are exchangeable: any declared winner is wrong).

The path of a campaign is computed at once for every number of labels: the fixed-n interval by running sums (the
same formula as :func:`evalcore.labeling.difference.fixed_interval`, checked equal in
``tests/unit/test_comparison.py``; the ``neyman`` design's stratified one after each label) and the confidence
sequence by :func:`evalcore.stats.sequential.betting_cs`, which returns the sequence after every draw.
``--mmlu FILE`` runs four pairs of MMLU-Pro's models (the same letter is the same output).
"""

from __future__ import annotations

import argparse
import itertools
import math
import time

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from evalcore.labeling.difference import MIN_LABELS, comparison_pool, fixed_interval, plan_comparison
from evalcore.stats.sequential import betting_cs


def fixed_path(d: np.ndarray, scale: float, population: int, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The fixed-n interval's (estimate, half-width) after each of the draws d (values -1, 0, 1)."""
    n = np.arange(1, d.size + 1, dtype=float)
    second = np.cumsum(d * d) / 4  # Σ ((d + 1)/2 - 1/2)², the second moment about zero on the [0, 1] scale
    var = 4 * np.maximum(np.where(n > 1, second / np.maximum(n - 1, 1), 0.0), 0.5 / (n + 1))
    se = scale * np.sqrt(np.maximum(1 - n / population, 0.0) * var / n)
    k = student_t.ppf(0.5 + level / 2, np.maximum(n - 1, 1))
    return scale * np.cumsum(d) / n, k * se


def campaign(correct: pd.DataFrame, pool, a: str, b: str, design: str, seed: int, target: float,
             level: float = 0.95, decide: bool = False) -> dict:
    """One campaign of ``design`` on the pair (a, b) with true verdicts ``correct`` (indexed by example id, a 0/1
    column per model): labels at the stop and whether the interval then covers the pool's difference; with
    ``decide``, labels until the confidence sequence excludes 0 and the winner it names (None: never decided)."""
    plan = plan_comparison(pool, design, seed, target=target)
    ids = plan.order["example_id"].to_numpy()
    d = correct.loc[ids, a].to_numpy(float) - correct.loc[ids, b].to_numpy(float)
    shared = pool.outputs.index  # the pool's examples: the campaign's estimand is their difference
    truth = float(correct.loc[shared, a].mean() - correct.loc[shared, b].mean())
    constants = plan.pool
    scale = constants["N_D"] / constants["N"] if design != "srs" else 1.0
    population = constants["M"]
    if decide:  # prefixes of growing length: a prefix's sequence is the full one's first part
        for length in (500, 2000, 8000, population):
            low, high = betting_cs((d[:length] + 1) / 2, population, 1 - level)
            low, high = scale * (2 * low - 1), scale * (2 * high - 1)
            hit = np.flatnonzero((low > 0) | (high < 0))
            if hit.size or length >= population:
                break
        if not hit.size:
            return {"labels": population, "winner": None, "truth": truth}
        t = int(hit[0])
        return {"labels": t + 1, "winner": a if low[t] > 0 else b, "truth": truth}
    if design == "neyman":  # stratified: the estimate's own interval after each label from the minimum on
        h = plan.order["stratum"].to_numpy()
        for t in range(MIN_LABELS - 1, d.size):
            delta, low, high, _ = fixed_interval(d[: t + 1], scale, level, h[: t + 1], constants["strata"],
                                         constants["centers"])
            if (high - low) / 2 <= target:
                break
        return {"labels": t + 1, "covered": bool(low <= truth <= high), "truth": truth}
    estimate, half = fixed_path(d, scale, population, level)
    n = np.arange(1, d.size + 1)
    hit = np.flatnonzero((n >= MIN_LABELS) & (half <= target))
    t = int(hit[0]) if hit.size else d.size - 1
    return {"labels": t + 1, "covered": bool(abs(estimate[t] - truth) <= half[t]), "truth": truth}


def imagenet(path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ImageNet-X's predictions as a log of outputs (``model``, ``example_id``, ``output`` the predicted class,
    ``confidence`` its top-1 probability, which the ``neyman`` design reads) and
    the true verdicts (ReaL labels) per example and model, on the images with a ReaL label."""
    frame = pd.read_csv(path)
    frame = frame[frame["real_labels_available"] == 1]
    log = pd.DataFrame({"model": frame["model"], "example_id": frame["file_name"].astype(str),
                        "output": frame["predicted_class"].astype(str),
                        "confidence": frame["predicted_probability"].astype(float)})
    correct = frame.pivot(index="file_name", columns="model", values="correct_real").astype(float)
    return log, correct


def _swapped(log: pd.DataFrame, correct: pd.DataFrame, a: str, b: str, rng) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The zero-difference pair: a and b's outputs and verdicts swapped on a random subset of the examples, chosen so
    that the two are exchangeable and win equally often: among the examples where exactly one is right, a random
    half (drawn independently of which one) ends with a right, the other half with b right (one such example
    dropped if their number is odd); elsewhere a fair coin swaps them. The pool's difference is then exactly 0."""
    d = (correct[a] - correct[b]).to_numpy()
    split = np.flatnonzero(d != 0)
    if split.size % 2:
        keep = np.ones(d.size, dtype=bool)
        keep[split[-1]] = False
        correct, d = correct[keep], d[keep]
        split = split[:-1]
    wins = np.zeros(d.size)
    wins[rng.permutation(split)[: split.size // 2]] = 1
    wins[split] = np.where(wins[split] == 1, 1, -1)
    flip = np.where(d != 0, np.sign(d) != wins, rng.random(d.size) < 0.5)
    ids = correct.index.to_numpy()
    wide = log[log["model"].isin([a, b])].pivot(index="example_id", columns="model", values="output").loc[ids]
    wide.loc[flip, [a, b]] = wide.loc[flip, [b, a]].to_numpy()
    out = correct[[a, b]].copy()
    out.loc[flip, [a, b]] = correct.loc[flip, [b, a]].to_numpy()
    swapped = wide.reset_index().melt(id_vars="example_id", var_name="model", value_name="output")
    return swapped, out


def run(log: pd.DataFrame, correct: pd.DataFrame, pairs, campaigns: int, target: float, level: float = 0.95,
        seed: int = 0, rules: tuple = ("width", "decided")) -> pd.DataFrame:
    """One row per pair; ``rules`` the stop rules to measure (a rule left out leaves its columns NaN)."""
    rows = []
    for a, b in pairs:
        start = time.perf_counter()
        both = correct[[a, b]].dropna()  # the examples with both verdicts
        pool = comparison_pool(log[log["example_id"].isin(both.index)], [a, b])
        truth = float(both[a].mean() - both[b].mean())
        row = {"pair": f"{a} vs {b}", "difference": truth, "same output": float((pool.patterns == "all agree").mean())}
        designs = ("srs", "disagreement", "neyman") if pool.confidence is not None else ("srs", "disagreement")
        row.update(dict.fromkeys(("srs labels", "disagreement labels", "ratio", "neyman labels", "neyman ratio",
                                  "coverage srs", "coverage disagreement", "coverage neyman", "labels to decide",
                                  "decided", "wrong winner", "zero pair: any winner", "zero pair: median labels"),
                                 math.nan))
        if "width" in rules:
            width = {design: [campaign(both, pool, a, b, design, seed + k, target, level)
                              for k in range(campaigns)] for design in designs}
            median = {design: float(np.median([c["labels"] for c in width[design]])) for design in designs}
            row.update({"srs labels": median["srs"], "disagreement labels": median["disagreement"],
                        "ratio": median["disagreement"] / median["srs"]})
            row.update({f"coverage {design}": float(np.mean([c["covered"] for c in width[design]]))
                        for design in designs})
            if "neyman" in designs:
                row.update({"neyman labels": median["neyman"], "neyman ratio": median["neyman"] / median["srs"]})
        if "decided" in rules:
            decided = [campaign(both, pool, a, b, "disagreement", seed + k, target, level, decide=True)
                       for k in range(campaigns)]
            right = a if truth > 0 else b
            rng = np.random.default_rng(seed)
            zero_log, zero_correct = _swapped(log, both, a, b, rng)
            zero_pool = comparison_pool(zero_log, [a, b])
            null = [campaign(zero_correct, zero_pool, a, b, "disagreement", seed + k, target, level, decide=True)
                    for k in range(campaigns)]
            row.update({"labels to decide": np.median([c["labels"] for c in decided]),
                        "decided": np.mean([c["winner"] is not None for c in decided]),
                        "wrong winner": np.mean([c["winner"] not in (None, right) for c in decided]),
                        "zero pair: any winner": np.mean([c["winner"] is not None for c in null]),
                        "zero pair: median labels": np.median([c["labels"] for c in null])})
        rows.append({**row, "seconds": time.perf_counter() - start})
        print(" | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in rows[-1].values()), flush=True)
    return pd.DataFrame(rows)


def best_of(log: pd.DataFrame, correct: pd.DataFrame, models: list[str], campaigns: int, level: float = 0.95,
            seed: int = 0) -> dict:
    """The best of several models by a ``disagreement`` campaign over all of them (every example where any two
    outputs differ), stopped the moment the leader's confidence sequence against every other model excludes 0,
    every pair at ``α / (K (K - 1) / 2)`` (:func:`evalcore.labeling.difference._decided`): median labels, how often
    it decided, and how often the model it named is not the pool's best."""
    pool = comparison_pool(log, models)
    k = len(models)
    pair_alpha = (1 - level) / (k * (k - 1) / 2)
    best = correct[models].mean().idxmax()
    labels, named = [], []
    for c in range(campaigns):
        plan = plan_comparison(pool, "disagreement", seed + c, target=0.01)
        values = correct.loc[plan.order["example_id"], models].to_numpy(float)
        scale = plan.pool["N_D"] / plan.pool["N"]
        bounds = {}
        for i, j in itertools.combinations(range(k), 2):
            low, high = betting_cs((values[:, i] - values[:, j] + 1) / 2, plan.pool["M"], pair_alpha)
            bounds[i, j] = (scale * (2 * low - 1), scale * (2 * high - 1))
        leader = np.argmax(np.cumsum(values, axis=0), axis=1)  # the leader after each label
        decided = np.ones(len(values), dtype=bool)
        for (i, j), (low, high) in bounds.items():  # the leader's side of each pair it is in
            decided &= np.where(leader == i, low > 0, np.where(leader == j, high < 0, True))
        hit = np.flatnonzero(decided)
        t = int(hit[0]) if hit.size else len(values) - 1
        labels.append(t + 1)
        named.append(models[leader[t]] if hit.size else None)
    return {"models": ", ".join(models), "best": best, "campaigns": campaigns,
            "median labels": float(np.median(labels)), "decided": float(np.mean([m is not None for m in named])),
            "wrong leader": float(np.mean([m not in (None, best) for m in named]))}


def mmlu(path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """MMLU-Pro per question: ``model``, ``question_id`` as the example, ``pred`` (the letter; "(no answer)" where
    the model gave none, which is wrong) as the output and ``correct`` (against the answer key) as the annotators'
    verdict."""
    frame = pd.read_csv(path)
    log = pd.DataFrame({"model": frame["model"].astype(str), "example_id": frame["question_id"].astype(str),
                        "output": frame["pred"].fillna("(no answer)").astype(str)})
    correct = frame.assign(question_id=frame["question_id"].astype(str)).pivot_table(
        index="question_id", columns="model", values="correct", aggfunc="first").astype(float)
    return log, correct


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data/imagenet_x_predictions.csv.gz")
    parser.add_argument("--mmlu", default=None, help="MMLU-Pro per question (mmlu_pro_per_question.csv.gz)")
    parser.add_argument("--campaigns", type=int, default=500)
    parser.add_argument("--target", type=float, default=0.01)
    parser.add_argument("--rules", default="width,decided", help="stop rules to measure: width, decided or both")
    parser.add_argument("--seed", type=int, default=0, help="campaign k uses seed + k")
    args = parser.parse_args()
    rules = tuple(args.rules.split(","))
    if args.mmlu:
        log, correct = mmlu(args.mmlu)
        ranked = correct.mean().sort_values(ascending=False).index  # four pairs of neighbours among the best
        pairs = [(ranked[i], ranked[i + 1]) for i in (0, 2, 4, 6)]
    else:
        log, correct = imagenet(args.data)
        pairs = list(itertools.combinations(sorted(correct.columns), 2))
    print("| pair | difference | same output | srs labels | disagreement labels | ratio | neyman labels | neyman "
          "ratio | coverage srs | coverage disagreement | coverage neyman | labels to decide | decided | wrong winner "
          "| zero pair: any winner | zero pair: median labels | seconds |\n|---|" + "---:|" * 16)
    run(log, correct, pairs, args.campaigns, args.target, seed=args.seed, rules=rules)
    if not args.mmlu and "decided" in rules:
        r = best_of(log, correct.dropna(), sorted(correct.columns), args.campaigns // 5)
        print(f"\nThe best of {r['models']} (the pool's best: {r['best']}): {r['campaigns']} campaigns, median "
              f"{r['median labels']:,.0f} labels to decide, decided {r['decided']:.0%}, wrong leader "
              f"{r['wrong leader']:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
