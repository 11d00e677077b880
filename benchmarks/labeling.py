"""Labeling campaigns by simulation and on real data: coverage at the stop rule, and labels each design needs.

``python -m benchmarks.labeling [--campaigns 500] [--target 0.05]`` simulates campaigns with known truth: a pool of
3,000 examples whose proxy ``p_i ~ Beta(4, 1.5)`` is calibrated (``z_i ~ Bernoulli(p_i)``) and an AI judge that
agrees with the true label 85% of the time; each campaign draws the pool's labels and the judge anew (the truth is
the pool's accuracy, ``mean z``), plans its queue with a new seed (:func:`evalcore.labeling.plan_queue`), and labels
from the front of the queue, asking :func:`evalcore.labeling.live_estimate` after every label, exactly as the Label
page does, until ``stop``. It prints per design: the campaigns, the coverage of the interval shown when the stop rule
fired, the mean labels used, and the coverage of the same interval at the planned fixed n without the rule.

``--real FILE`` runs the stop rule at ±2 points (95%) on ImageNet-X (:func:`real_imagenet`: human ReaL labels, the
model's confidence as proxy, the original-label grade as judge; 5 seeds per design) and prints the mean labels at
the stop per design and their ratio to simple random sampling.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from evalcore.labeling import DESIGNS, live_estimate, plan_queue
from evalcore.labeling.estimate import MIN_LABELS

POOL = 3000
JUDGE_AGREEMENT = 0.85
COLUMNS = ("stratum", "weight", "proxy", "judge")


def _pool(rng: np.random.Generator, n: int = POOL) -> tuple[pd.DataFrame, np.ndarray]:
    p = rng.beta(4, 1.5, n)
    z = (rng.random(n) < p).astype(float)
    judge = np.where(rng.random(n) < JUDGE_AGREEMENT, z, 1 - z)
    return pd.DataFrame({"example_id": [f"q{i}" for i in range(n)], "proxy": p, "judge": judge}), z


def run_to_stop(pool: pd.DataFrame, z: np.ndarray, design: str, target: float, level: float, seed: int,
                fixed_n: bool = False, skip: np.ndarray | None = None, plan=None):
    """Label ``pool`` (true values ``z`` in pool order) from the front of the design's queue until the stop rule
    fires; (the estimate at the stop, the estimate at the planned n without the rule, or None). ``skip`` marks the
    examples an annotator skips (in pool order): drawn, never labeled, bounded by the whole scale (as
    :meth:`evalcore.labeling.campaign.Campaign.estimate` gives them to the estimator)."""
    plan = plan or plan_queue(pool, design, target=target, level=level, seed=seed)
    order = plan.order
    index = _queue_index(pool, order)
    values = z[index].astype(float)
    if skip is not None:
        values = np.where(skip[index], np.nan, values)
    arrays = {c: order[c].to_numpy() for c in COLUMNS}
    arrays["low"], arrays["high"] = np.nan_to_num(values, nan=0.0), np.nan_to_num(values, nan=1.0)
    priority = order["priority"].to_numpy()
    n_pool = len(pool)

    def at(n: int):
        labeled = {"value": values[:n], **{c: a[:n] for c, a in arrays.items()}}
        return live_estimate(labeled, design, plan.pool, plan.planned, target, level,
                             tau=priority[n] if n < n_pool else 0.0)

    fixed = at(plan.planned) if fixed_n else None
    for n in range(MIN_LABELS, n_pool + 1):
        shown = at(n)
        if shown.stop:
            return shown, fixed
    return shown, fixed


def _queue_index(pool: pd.DataFrame, order: pd.DataFrame) -> np.ndarray:
    """Each queue row's position in ``pool``."""
    return pd.Series(np.arange(len(pool)), index=pool["example_id"].astype(str)).loc[order["example_id"]].to_numpy()


def simulate(design: str, campaigns: int, target: float, level: float = 0.95, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    covered = fixed_covered = 0
    labels = []
    for k in range(campaigns):
        pool, z = _pool(rng)
        truth = z.mean()
        stopped, fixed = run_to_stop(pool, z, design, target, level, seed=seed * 100_000 + k, fixed_n=True)
        covered += stopped.ci_low <= truth <= stopped.ci_high
        fixed_covered += fixed.ci_low <= truth <= fixed.ci_high
        labels.append(stopped.labels)
    return {"design": design, "campaigns": campaigns, "coverage_at_stop": covered / campaigns,
            "mean_labels": float(np.mean(labels)), "coverage_fixed_n": fixed_covered / campaigns}


def real_imagenet(path, target: float = 0.02, seeds: int = 5, level: float = 0.95) -> pd.DataFrame:
    """Mean labels at the stop rule (±``target``) per design and model on ImageNet-X: the labels are the ReaL
    re-annotation by humans (``correct_real``, on the images that have one), the proxy the model's top-1
    probability, and the "judge" the automatic grade against the original ImageNet label (``correct``)."""
    frame = pd.read_csv(path)
    frame = frame[frame["real_labels_available"] == 1]
    rows = []
    for model, part in frame.groupby("model"):
        pool = pd.DataFrame({"example_id": part["file_name"].astype(str).to_numpy(),
                             "proxy": part["predicted_probability"].to_numpy(float),
                             "judge": part["correct"].to_numpy(float)})
        z = part["correct_real"].to_numpy(float)
        for design in DESIGNS:
            used = [run_to_stop(pool, z, design, target, level, seed)[0].labels for seed in range(seeds)]
            rows.append({"model": model, "design": design, "labels": float(np.mean(used)),
                         "accuracy (ReaL)": float(z.mean())})
    table = pd.DataFrame(rows)
    srs = table[table["design"] == "srs"].set_index("model")["labels"]
    table["ratio_to_srs"] = table["labels"] / table["model"].map(srs)
    return table


#: the pools of the audit: held-out ImageNet-X pools of one model, as they are and with the proxy misleading
POOLS = ("real", "easy", "overconfident", "shuffled", "reversed", "judge-agreeing start", "skips")
#: the examples of the "easy" pool: those the model is sure of (accuracy 0.97-0.98 on ImageNet-X)
EASY_CONFIDENCE = 0.9


def audit_pool(frame: pd.DataFrame, model: str, kind: str, rng: np.random.Generator, size: int):
    """One held-out pool of ``size`` examples of ``model`` (ReaL labels as truth, the top-1 probability as proxy,
    the grade against the original label as judge) for the audit's ``kind``: "easy" keeps the examples whose
    confidence exceeds :data:`EASY_CONFIDENCE`; "overconfident" reads every confidence above 0.5 as 0.999;
    "shuffled" permutes the proxy; "reversed" is 1 - proxy; the others take the pool as it is."""
    part = frame[frame["model"] == model]
    if kind == "easy":
        part = part[part["predicted_probability"] > EASY_CONFIDENCE]
    part = part.sample(size, random_state=int(rng.integers(1 << 31)))
    p = part["predicted_probability"].to_numpy(float)
    p = {"overconfident": lambda: np.where(p > 0.5, 0.999, p), "shuffled": lambda: rng.permutation(p),
         "reversed": lambda: 1 - p}.get(kind, lambda: p)()
    pool = pd.DataFrame({"example_id": part["file_name"].astype(str).to_numpy(), "proxy": p,
                         "judge": part["correct"].to_numpy(float)})
    return pool, part["correct_real"].to_numpy(float)


def audit_row(frame: pd.DataFrame, model: str, kind: str, design: str, target: float, campaigns: int,
              size: int = 3000, level: float = 0.95, seed: int = 0) -> dict:
    """Coverage at the stop over ``campaigns`` campaigns on fresh pools of ``kind``. "judge-agreeing start" keeps
    only queues whose first :data:`MIN_LABELS` labels all equal the judge's verdict (drawn until that many are
    found: 4-5% of random starts on ImageNet-X); "skips": annotators skip 10% of the examples the model got wrong and
    1% of the others (the hard ones, not at random: about 2.5% of the draws, whose worst-to-best range alone is
    ±1.25 points), and the truth is still the whole pool's accuracy."""
    rng = np.random.default_rng(seed)
    covered, labels = [], []
    start = time.perf_counter()
    attempt = 0
    while len(covered) < campaigns:
        attempt += 1
        pool, z = audit_pool(frame, model, "real" if kind in POOLS[5:] else kind, rng, size)
        plan = plan_queue(pool, design, target=target, level=level, seed=seed * 1_000_003 + attempt)
        if kind == "judge-agreeing start":
            head = plan.order.head(MIN_LABELS)
            if not (z[_queue_index(pool, head)] == head["judge"].to_numpy()).all():
                continue
        skip = rng.random(z.size) < np.where(z == 1, 0.01, 0.1) if kind == "skips" else None
        shown, _ = run_to_stop(pool, z, design, target, level, 0, skip=skip, plan=plan)
        covered.append(shown.ci_low <= z.mean() <= shown.ci_high)
        labels.append(shown.labels + shown.skipped)
    c = float(np.mean(covered))
    return {"model": model, "pool": kind, "design": design, "target": target, "campaigns": campaigns,
            "coverage": c, "mc_se": float(np.sqrt(c * (1 - c) / campaigns)), "median_labels": float(np.median(labels)),
            "seconds": time.perf_counter() - start}


def audit(path, campaigns: int = 200, target: float = 0.04, model: str = "ResNet50", pools=POOLS,
          designs=DESIGNS, seed: int = 0) -> pd.DataFrame:
    """The coverage-at-the-stop table of the closing note: every design on every kind of pool (the easy pool at
    half the target: its accuracy near 1 is where a width rule stops too early)."""
    frame = pd.read_csv(path)
    frame = frame[frame["real_labels_available"] == 1]
    rows = []
    for kind in pools:
        for design in designs:
            rows.append(audit_row(frame, model, kind, design, target / 2 if kind == "easy" else target, campaigns,
                                  seed=seed))
            r = rows[-1]
            print(f"| {r['pool']} | {r['design']} | ±{r['target']:g} | {r['campaigns']} | {r['coverage']:.3f} "
                  f"({r['mc_se']:.3f}) | {r['median_labels']:,.0f} | {r['seconds']:.0f} |", flush=True)
    return pd.DataFrame(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaigns", type=int, default=500)
    parser.add_argument("--target", type=float, default=0.05)
    parser.add_argument("--designs", nargs="+", default=list(DESIGNS))
    parser.add_argument("--real", default=None, help="ImageNet-X predictions (imagenet_x_predictions.csv.gz)")
    parser.add_argument("--audit", default=None, help="ImageNet-X predictions: the coverage-at-the-stop audit")
    parser.add_argument("--pools", nargs="+", default=list(POOLS))
    parser.add_argument("--seed", type=int, default=0, help="the audit's seed (independent runs pool together)")
    args = parser.parse_args()
    if args.audit:
        print("| pool | design | target | campaigns | coverage at the stop (MC s.e.) | median labels | seconds |\n"
              "|---|---|---:|---:|---:|---:|---:|")
        audit(args.audit, args.campaigns, args.target, pools=args.pools, designs=args.designs, seed=args.seed)
        return 0
    if args.real:
        table = real_imagenet(args.real)
        print("| model | design | mean labels at the stop (±0.02, 95%) | ratio to SRS | accuracy (ReaL) |\n"
              "|---|---|---:|---:|---:|")
        for row in table.itertuples(index=False):
            print(f"| {row.model} | {row.design} | {row.labels:,.0f} | {row.ratio_to_srs:.2f} | {row[3]:.3f} |")
        return 0
    print(f"| design | campaigns | coverage at the stop (95%) | mean labels at the stop (±{args.target}) | "
          "coverage at the planned fixed n | seconds |\n|---|---:|---:|---:|---:|---:|")
    for design in args.designs:
        start = time.perf_counter()
        r = simulate(design, args.campaigns, args.target)
        print(f"| {design} | {r['campaigns']} | {r['coverage_at_stop']:.3f} | {r['mean_labels']:.0f} | "
              f"{r['coverage_fixed_n']:.3f} | {time.perf_counter() - start:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
