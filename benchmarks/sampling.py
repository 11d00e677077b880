"""Stratified sampling benchmarks (``strata-1m``, ``sample-estimate``, ``efficiency-50``) and the ImageNet study.

Method: Fogliato et al., "A Framework for Efficient Model Evaluation through Stratification, Sampling, and
Estimation" (``../shared/papers/stratified-sampling-evaluation.txt``); the code under test is
:mod:`evalcore.sampling.designs` (strata, allocation, sampling, estimators, predicted and Monte Carlo efficiency) and
:mod:`evalcore.sampling.proxy` (cross-fitted isotonic calibration of the proxy).

* :func:`simulated_population`: N = 1,000,000 simulated confidences ``p ~ Beta(5, 1)`` (a typical, mostly
  confident classifier) with outcomes ``Z ~ Bernoulli(p)`` (a calibrated proxy), seeded.
* :func:`bench_strata_1m`, :func:`bench_sample_estimate`, :func:`bench_efficiency_50`: the timed benchmarks
  registered in :mod:`benchmarks.run`; their notes time the equivalent steps of ``ssepy`` 0.1.1 (the paper's
  package; ``requirements-bench.txt``), which stratifies with a user-supplied clustering estimator
  (``ModelPerformanceEvaluator.stratify_data(KMeans(...), X=proxy)``), allocates (``allocate_budget``), draws
  (``sample("ssrs")``, Python's ``random.sample`` per stratum), estimates (``compute_estimate(Yl, "df")``) and
  computes design variances from given outcomes (``OracleEstimator.get_*_variance``). ssepy is optional: without it
  the notes say "ssepy not installed".
* :func:`imagenet_study`: for each model of ``../shared/data/imagenet_x_predictions.csv.gz`` (4 ImageNet models x
  50,000 validation images), accuracy ``Z = correct``; the data are split at random (seeded, per model) into a
  calibration half and an estimation half (the paper's Section 5.1). The *raw* proxy is ``predicted_probability``
  (top-1 probability); the *calibrated* proxy is :func:`evalcore.sampling.proxy.calibrate_crossfit` fitted on the labels of
  the calibration half only (2 folds; the estimation half's values average the two fold models), so no label of
  the estimation half is used. On the estimation half (N = 25,000) and for n = 100, 500, 1000 labels with 10
  strata, the table reports SSRS-proportional + HT and SRS + DF: the predicted relative efficiency
  (``design_efficiency``, MSE / MSE of SRS + HT) and the Monte Carlo one (``monte_carlo``, 2,000 seeded
  repetitions) with its standard error and the coverage of the 95% intervals. The SE of the Monte Carlo ratio
  ``rel = mse / mse_SRS+HT`` is the delta method ``rel * sqrt((se/mse)^2 + (se_base/mse_base)^2)`` from the
  frame's ``mse_se``, treating the two MSEs as independent (conservative when they share samples, as SRS + DF and
  SRS + HT do).

``python -m benchmarks.sampling --imagenet [--reps R]`` prints the ImageNet table as Markdown.

* :func:`honesty_study`: does the page's default prediction overpromise? For each fully labeled pool (the 4
  ImageNet-X models with the raw ``predicted_probability`` as proxy; the 6 models of
  :func:`evalcore.demo.sklearn_models.sklearn_models` (seed 0) with their raw ``confidence``), 10 k-means strata on the
  proxy, and each budget: :func:`evalcore.sampling.designs.efficiency_range` (prediction assuming a calibrated proxy and
  its range under miscalibration) next to :func:`evalcore.sampling.designs.monte_carlo`'s relative efficiency on the same
  pool. ``honest`` is the acceptance rule: prediction within 0.1 of the Monte Carlo value, or the Monte Carlo value
  inside [low, high], each with a tolerance of 2 Monte Carlo standard errors. The page's default is proportional
  allocation with HT; Neyman + HT and SRS + DF are shown for contrast.

``python -m benchmarks.sampling --honesty [--reps R]`` prints that table as Markdown.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.core import Result, time_calls

ROOT = Path(__file__).resolve().parents[1]
IMAGENET = ROOT.parent / "shared" / "data" / "imagenet_x_predictions.csv.gz"

N_POPULATION = 1_000_000
N_STRATA = 10
SAMPLE_BUDGET = 1_000
EFFICIENCY_BUDGETS = [int(b) for b in np.unique(np.round(np.geomspace(50, 20_000, 50)).astype(int))]
IMAGENET_BUDGETS = (100, 500, 1000)
IMAGENET_REPS = 2000
#: (design, estimator) pairs of the ImageNet table, as labelled in evalcore.sampling.designs's frames
IMAGENET_PAIRS = (("proportional", "ht"), ("srs", "df"))


def simulated_population(n: int = N_POPULATION, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(proxy, z)``: Beta(5, 1) confidences and Bernoulli(confidence) outcomes (module doc)."""
    rng = np.random.default_rng(seed)
    proxy = rng.beta(5.0, 1.0, size=n)
    z = (rng.random(n) < proxy).astype(float)
    return proxy, z


def wcss(values: np.ndarray, labels: np.ndarray) -> float:
    """Within-cluster sum of squares of 1-D ``values`` under ``labels``."""
    codes = np.unique(labels, return_inverse=True)[1]
    counts = np.bincount(codes)
    sums = np.bincount(codes, weights=values)
    squares = np.bincount(codes, weights=values * values)
    return float(np.sum(squares - sums * sums / counts))


def _ssepy():
    try:
        from ssepy import ModelPerformanceEvaluator, OracleEstimator
    except ImportError as exc:
        return None, ("ssepy not installed (`pip install --no-deps -r requirements-bench.txt`)"
                      if isinstance(exc, ModuleNotFoundError) else f"ssepy import failed: {exc}")
    return (ModelPerformanceEvaluator, OracleEstimator), ""


def _median(samples: list[float]) -> float:
    return float(np.median(samples))


# ------------------------------------------------------------------------------------------------ benchmarks


def bench_strata_1m(repeats: int) -> list[Result]:
    from sklearn.cluster import KMeans

    from evalcore.sampling.designs import kmeans_strata

    proxy, _ = simulated_population()
    samples = time_calls(partial(kmeans_strata, proxy, N_STRATA, seed=0), repeats)
    ours = kmeans_strata(proxy, N_STRATA, seed=0)
    start = time.perf_counter()
    sk = KMeans(n_clusters=N_STRATA, n_init=10, random_state=0).fit(proxy.reshape(-1, 1))
    sk_seconds = time.perf_counter() - start
    note = (f"WCSS {wcss(proxy, ours):.4f} vs sklearn `KMeans(n_clusters={N_STRATA}, n_init=10)` "
            f"{wcss(proxy, sk.labels_):.4f} in {sk_seconds:.2f} s (one run)")
    classes, why = _ssepy()
    if classes is None:
        note += f"; {why}"
    else:
        evaluator = classes[0](Yh=proxy, budget=SAMPLE_BUDGET)
        start = time.perf_counter()
        evaluator.stratify_data(KMeans(n_clusters=N_STRATA, n_init=10, random_state=0), X=proxy)
        note += (f"; ssepy `stratify_data(KMeans(n_init=10))` {time.perf_counter() - start:.2f} s (one run, "
                 f"WCSS {wcss(proxy, evaluator.strata_labels):.4f})")
    what = f"`kmeans_strata(proxy, {N_STRATA})` of N = 1,000,000 simulated Beta(5, 1) confidences"
    return [Result("strata-1m", what, samples, 0.5, note=note)]


def bench_sample_estimate(repeats: int) -> list[Result]:
    from evalcore.sampling.designs import allocate_budget, draw_sample, estimate, kmeans_strata

    proxy, z = simulated_population()
    strata = kmeans_strata(proxy, N_STRATA, seed=0)

    def ours():
        counts = allocate_budget(strata, SAMPLE_BUDGET, method="neyman", proxy=proxy, estimator="df")
        index = draw_sample(strata, counts, seed=0)
        return estimate(z[index], index, strata, proxy=proxy, estimator="df")

    samples = time_calls(ours, repeats)
    result = ours()
    note = (f"strata precomputed; estimate {result.estimate:.4f} (SE {result.se:.4f}) vs population mean "
            f"{z.mean():.4f}")
    classes, why = _ssepy()
    if classes is None:
        note += f"; {why}"
    else:
        evaluator = classes[0](Yh=proxy, budget=SAMPLE_BUDGET)
        evaluator.sampler.strata_labels = strata + 1  # same strata: time only allocation, sampling, estimation

        def theirs():
            evaluator.allocate_budget(allocation_type="neyman")
            index = evaluator.sample(sampling_method="ssrs")
            return evaluator.compute_estimate(z[index], estimator="df"), index

        random.seed(0)
        np.random.seed(0)
        their_samples = time_calls(theirs, min(repeats, 3))
        (est, var), _ = theirs()
        note += (f"; ssepy `allocate_budget('neyman')` + `sample('ssrs')` + `compute_estimate(.., 'df')` on the "
                 f"same strata: median {_median(their_samples):.3f} s of {len(their_samples)} (estimate "
                 f"{float(np.ravel(est)[0]):.4f}, SE {float(np.sqrt(np.ravel(var)[0])):.4f})")
    what = (f"`allocate_budget(neyman, df)` + `draw_sample` + `estimate(df)`, N = 1,000,000, n = {SAMPLE_BUDGET:,}, "
            f"{N_STRATA} strata")
    return [Result("sample-estimate", what, samples, 0.2, note=note)]


def bench_efficiency_50(repeats: int) -> list[Result]:
    from evalcore.sampling.designs import design_efficiency

    proxy, _ = simulated_population()
    budgets = EFFICIENCY_BUDGETS
    samples = time_calls(partial(design_efficiency, proxy, budgets, n_strata=N_STRATA, seed=0), repeats)
    frame = design_efficiency(proxy, budgets, n_strata=N_STRATA, seed=0)
    note = f"{len(frame)} rows ({frame['design'].nunique()} designs x {frame['estimator'].nunique()} estimators)"
    classes, why = _ssepy()
    if classes is None:
        note += f"; {why}"
    else:
        from sklearn.cluster import KMeans

        evaluator_cls, oracle_cls = classes

        def theirs():
            # ssepy has no predicted-efficiency function: its OracleEstimator variances with the proxy in place of
            # the outcomes (stratified once, then per budget: SRS, proportional and Neyman variances)
            oracle = oracle_cls(Yl=proxy, Yhl=proxy, total_samples=len(proxy), budget=budgets[0])
            oracle.evaluator.stratify_data(KMeans(n_clusters=N_STRATA, n_init=10, random_state=0), X=proxy)
            out = []
            for b in budgets:
                oracle.budget = b
                oracle.evaluator.sampler.budget = b
                out.append(oracle.get_srs_variance(proxy))
                oracle.evaluator.allocate_budget(allocation_type="proportional")
                out.append(oracle.get_ssrs_proportional_variance(proxy))
                oracle.evaluator.allocate_budget(allocation_type="neyman")
                out.append(oracle.get_ssrs_neyman_variance(proxy))
            return out

        np.random.seed(0)
        start = time.perf_counter()
        theirs()
        note += (f"; ssepy has no predicted-efficiency function: `OracleEstimator` SRS + proportional + Neyman "
                 f"variances for the same {len(budgets)} budgets (k-means n_init=10 included) took "
                 f"{time.perf_counter() - start:.2f} s (one run)")
    what = (f"`design_efficiency(proxy, {len(budgets)} budgets {budgets[0]}..{budgets[-1]:,}, n_strata={N_STRATA})`, "
            "N = 1,000,000 (k-means strata included)")
    return [Result("efficiency-50", what, samples, 0.5, note=note)]


BENCHMARKS = {
    "strata-1m": bench_strata_1m,
    "sample-estimate": bench_sample_estimate,
    "efficiency-50": bench_efficiency_50,
}


# ------------------------------------------------------------------------------------------------ ImageNet study


def _pair_rows(frame: pd.DataFrame, design: str, estimator: str) -> pd.DataFrame:
    rows = frame[(frame["design"] == design) & (frame["estimator"] == estimator)]
    if rows.empty:
        raise KeyError(f"no ({design}, {estimator}) rows; designs {sorted(frame['design'].unique())}, "
                       f"estimators {sorted(frame['estimator'].unique())}")
    return rows.set_index("budget")


def imagenet_study(frame: pd.DataFrame, budgets=IMAGENET_BUDGETS, reps: int = IMAGENET_REPS, seed: int = 0,
                   n_strata: int = N_STRATA, n_jobs: int = -1) -> pd.DataFrame:
    """Predicted and Monte Carlo relative efficiencies per model, proxy, n and (design, estimator) (module doc).

    ``frame``: the ImageNet-X predictions (columns model, correct, predicted_probability). Returns one row per
    model, proxy ("raw" / "calibrated"), budget, design and estimator with columns predicted, monte_carlo,
    monte_carlo_se (SE of the Monte Carlo relative efficiency, delta method with both MSEs' SEs), coverage,
    mse, predicted_mse.
    """
    from evalcore.sampling.proxy import calibrate_crossfit
    from evalcore.sampling.designs import design_efficiency, monte_carlo

    rows = []
    for m, (model, part) in enumerate(frame.groupby("model", sort=True)):
        z_all = part["correct"].to_numpy(dtype=float)
        p_all = part["predicted_probability"].to_numpy(dtype=float)
        rng = np.random.default_rng([seed, m])
        calibration_half = np.zeros(len(part), dtype=bool)
        calibration_half[rng.permutation(len(part))[: len(part) // 2]] = True
        calibrated = calibrate_crossfit(p_all, np.where(calibration_half, z_all, np.nan), calibration_half,
                                        folds=2, seed=seed).values
        estimation = ~calibration_half
        z = z_all[estimation]
        for proxy_name, proxy in (("raw", p_all[estimation]), ("calibrated", calibrated[estimation])):
            predicted = design_efficiency(proxy, list(budgets), n_strata=n_strata, seed=seed)
            mc = monte_carlo(z, proxy, list(budgets), n_strata=n_strata, reps=reps, seed=seed, n_jobs=n_jobs)
            base = _pair_rows(mc, "srs", "ht")
            for design, estimator in IMAGENET_PAIRS:
                pred = _pair_rows(predicted, design, estimator)
                sim = _pair_rows(mc, design, estimator)
                for b in budgets:
                    rel = sim.loc[b, "mse"] / base.loc[b, "mse"]
                    rel_se = rel * np.hypot(sim.loc[b, "mse_se"] / sim.loc[b, "mse"],
                                            base.loc[b, "mse_se"] / base.loc[b, "mse"])
                    rows.append({
                        "model": model, "proxy": proxy_name, "n": int(b), "design": design, "estimator": estimator,
                        "N": int(len(z)), "predicted": float(pred.loc[b, "relative_efficiency"]),
                        "monte_carlo": float(rel), "monte_carlo_se": float(rel_se),
                        "coverage": float(sim.loc[b, "coverage"]), "mse": float(sim.loc[b, "mse"]),
                        "predicted_mse": float(pred.loc[b, "predicted_mse"]),
                    })
    return pd.DataFrame(rows)


def imagenet_markdown(study: pd.DataFrame, reps: int) -> str:
    """The study as a Markdown table (relative efficiency = MSE / MSE of SRS + HT; below 1 is a gain)."""
    head = ("| model | proxy | n | design + estimator | predicted rel. eff. | Monte Carlo rel. eff. (SE) | "
            "coverage of 95% CI |\n|---|---|---:|---|---:|---:|---:|")
    lines = [head]
    for r in study.itertuples(index=False):
        label = {"proportional": "SSRS-prop", "srs": "SRS"}.get(r.design, r.design)
        lines.append(f"| {r.model} | {r.proxy} | {r.n:,} | {label} + {r.estimator.upper()} | {r.predicted:.3f} | "
                     f"{r.monte_carlo:.3f} ({r.monte_carlo_se:.3f}) | {r.coverage:.3f} |")
    n_est = int(study["N"].iloc[0]) if len(study) else 0
    return ("\n".join(lines) + f"\n\nEstimation half N = {n_est:,} per model, {N_STRATA} k-means strata on the proxy, "
            f"{reps:,} Monte Carlo repetitions (seed 0); calibrated = cross-fitted isotonic regression fitted on "
            "the other (calibration) half's labels only.")


#: (design, estimator) rows of the honesty table; the first is the page's default
HONESTY_PAIRS = (("proportional", "ht"), ("neyman", "ht"), ("srs", "df"))
HONESTY_BUDGETS = (100, 500, 1000)
HONESTY_REPS = 1000


def honesty_pools() -> list[tuple[str, str, np.ndarray, np.ndarray]]:
    """``(pool, model, proxy, z)`` of the fully labeled pools (module doc); ImageNet only when the file exists."""
    from evalcore.demo.sklearn_models import sklearn_models

    pools = []
    if IMAGENET.is_file():
        frame = pd.read_csv(IMAGENET, usecols=["model", "correct", "predicted_probability"])
        for model, part in frame.groupby("model", sort=True):
            pools.append(("ImageNet-X", str(model), part["predicted_probability"].to_numpy(dtype=float),
                          part["correct"].to_numpy(dtype=float)))
    demo = sklearn_models(seed=0)
    for model, part in demo.groupby("model", sort=True):
        pools.append(("sklearn demo", str(model), part["confidence"].to_numpy(dtype=float),
                      part["correct"].to_numpy(dtype=float)))
    return pools


def honesty_study(pools, budgets=HONESTY_BUDGETS, reps: int = HONESTY_REPS, seed: int = 0,
                  n_strata: int = N_STRATA, n_jobs: int = -1) -> pd.DataFrame:
    """One row per pool, model, budget and (design, estimator) of :data:`HONESTY_PAIRS` (module doc).

    Columns pool, model, N, n, design, estimator, predicted, low, high, monte_carlo, monte_carlo_se (delta method,
    as in :func:`imagenet_study`), honest. Budgets above half a pool are skipped.
    """
    from evalcore.sampling.designs import efficiency_range, kmeans_strata, monte_carlo

    rows = []
    for pool, model, proxy, z in pools:
        usable = [int(b) for b in budgets if b <= len(z) // 2]
        strata = kmeans_strata(proxy, n_strata, seed=seed)
        shown = efficiency_range(proxy, usable, strata=strata).set_index(["budget", "design", "estimator"])
        mc = monte_carlo(z, proxy, usable, reps=reps, seed=seed, strata=strata, n_jobs=n_jobs)
        mc = mc.set_index(["budget", "design", "estimator"])
        for b in usable:
            base = mc.loc[(b, "srs", "ht")]
            for design, estimator in HONESTY_PAIRS:
                sim, pred = mc.loc[(b, design, estimator)], shown.loc[(b, design, estimator)]
                rel = float(sim["relative_efficiency"])
                se = rel * float(np.hypot(sim["mse_se"] / sim["mse"], base["mse_se"] / base["mse"]))
                honest = (abs(pred["predicted"] - rel) <= 0.1 + 2 * se
                          or pred["low"] - 2 * se <= rel <= pred["high"] + 2 * se)
                rows.append({"pool": pool, "model": model, "N": int(len(z)), "n": b, "design": design,
                             "estimator": estimator, "predicted": float(pred["predicted"]),
                             "low": float(pred["low"]), "high": float(pred["high"]), "monte_carlo": rel,
                             "monte_carlo_se": se, "honest": bool(honest)})
    return pd.DataFrame(rows)


def honesty_markdown(study: pd.DataFrame, reps: int) -> str:
    """The honesty study as a Markdown table."""
    lines = ["| pool | model | n | design + estimator | predicted (range) | Monte Carlo (SE) | honest |",
             "|---|---|---:|---|---:|---:|:---:|"]
    for r in study.itertuples(index=False):
        default = " (default)" if (r.design, r.estimator) == HONESTY_PAIRS[0] else ""
        lines.append(f"| {r.pool} | {r.model} | {r.n:,} | {r.design} + {r.estimator.upper()}{default} | "
                     f"{r.predicted:.2f} ({r.low:.2f}–{r.high:.2f}) | {r.monte_carlo:.2f} ({r.monte_carlo_se:.2f}) | "
                     f"{'yes' if r.honest else 'NO'} |")
    return ("\n".join(lines) + f"\n\nRelative efficiency = MSE / MSE of SRS + HT (below 1 is a gain); predicted from "
            f"the raw proxy assuming it is calibrated, range over its recalibrations sigmoid(a + b logit p), "
            f"a in -2..2, b in 0..2; {N_STRATA} k-means strata on the proxy; {reps:,} Monte Carlo repetitions "
            "(seed 0) on the whole pool. honest: within 0.1 of Monte Carlo or Monte Carlo inside the range "
            "(tolerance 2 SE).")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sampling", description=__doc__.split("\n")[0])
    parser.add_argument("--imagenet", action="store_true", help="print the ImageNet relative-efficiency table")
    parser.add_argument("--honesty", action="store_true",
                        help="print the table of predicted (range) vs Monte Carlo relative efficiency")
    parser.add_argument("--reps", type=int, default=None, help="Monte Carlo repetitions")
    args = parser.parse_args(argv)
    if args.honesty:
        reps = args.reps or HONESTY_REPS
        start = time.perf_counter()
        print(honesty_markdown(honesty_study(honesty_pools(), reps=reps), reps))
        print(f"\n({time.perf_counter() - start:.0f} s)")
        return 0
    if not args.imagenet:
        parser.print_help()
        print("\nThe timed benchmarks run with `python -m benchmarks.run --only strata-1m sample-estimate "
              "efficiency-50`.")
        return 0
    if not IMAGENET.is_file():
        print(f"{IMAGENET} not found: the ImageNet study needs ../shared/data.", file=sys.stderr)
        return 1
    frame = pd.read_csv(IMAGENET, usecols=["model", "correct", "predicted_probability"])
    start = time.perf_counter()
    reps = args.reps or IMAGENET_REPS
    study = imagenet_study(frame, reps=reps)
    print(imagenet_markdown(study, reps))
    print(f"\n({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
