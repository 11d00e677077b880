"""Cached computations of the Labeling-budget page, keyed by data digest + selection + parameters.

``key`` always identifies the pool: (data digest, selection, model, task, proxy source); the pool frame and its
arrays are passed as underscore arguments so that they are not hashed.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from evalcore.sampling import designs as sampling
from evalcore.sampling.plan import LabelingPlan, labeling_plan
from evalcore.data.reading import EvalDataError
from evalcore.data.features import fill_missing
from evalcore.sampling.proxy import calibrate_crossfit, check_proxy

from .store import cached, compute_with_progress

PROXY_SOURCES = {"confidence": "the model's confidence", "proxy": "the proxy column (a surrogate's estimate)",
                 "calibrated": "the model's confidence, calibrated by isotonic regression (cross-fitted)"}
STRATA_BASES = {"proxy": "k-means on the proxy (recommended by Fogliato et al. 2024)",
                "features": "k-means on the feature columns", "groups": "the existing groups"}
DESIGNS = {"srs": "simple random sample", "proportional": "stratified, proportional allocation",
           "neyman": "stratified, Neyman allocation"}


@cached("Preparing the pool...")
def pool(key: tuple, model: str, task: str | None, source: str, seed: int, features: tuple[str, ...],
         _rows: pd.DataFrame) -> pd.DataFrame:
    """One row per example of ``model`` (and ``task``): example_id, z (0/1 label or NaN), proxy, group, and the
    ``features`` columns (the selection's default features, :func:`evalcore.data.features.default_features`).

    ``source="calibrated"`` calibrates the confidence on the rows that already have a label, cross-fitted
    (:func:`evalcore.sampling.proxy.calibrate_crossfit`): no example's calibrated value uses its own label.
    """
    rows = _rows[_rows["model"] == model]
    if task is not None:
        rows = rows[rows["task"] == task]
    z = rows["correct"].to_numpy(dtype=float)
    if source == "calibrated":
        proxy = calibrate_crossfit(rows["confidence"].to_numpy(dtype=float), z, np.isfinite(z), seed=seed).values
    else:
        proxy = rows[source].to_numpy(dtype=float)
    try:  # every example of the pool needs a probability of being correct
        check_proxy(proxy, "accuracy")
    except EvalDataError as exc:
        raise EvalDataError(f"Pool of {model} ({task or 'all tasks'}), proxy '{source}' (positions count this "
                            f"model's examples from 0): {exc}") from exc
    return pd.concat([pd.DataFrame({"example_id": rows["example_id"].astype(str).to_numpy(), "z": z, "proxy": proxy,
                                    "group": rows["group"].astype(str).to_numpy()}),
                      rows[list(features)].reset_index(drop=True)], axis=1)


@cached("Stratifying the pool...")
def strata(key: tuple, basis: str, n_strata: int, seed: int, _pool: pd.DataFrame) -> np.ndarray:
    """Stratum labels: exact 1-D k-means on the proxy, k-means on the feature columns (missing values filled by
    :func:`evalcore.data.features.fill_missing`), or the existing groups."""
    if basis == "features":
        columns = [c for c in _pool.columns if c not in ("example_id", "z", "proxy", "group")]
        return sampling.feature_strata(fill_missing(_pool[columns]).to_numpy(dtype=float), n_strata, seed=seed,
                                       proxy=_pool["proxy"].to_numpy())
    if basis == "groups":
        return sampling.group_strata(_pool["group"].to_numpy())
    return sampling.kmeans_strata(_pool["proxy"].to_numpy(), n_strata, seed=seed)


@cached("Allocating the budget...")
def allocations(key: tuple, n_strata: int, seed: int, budget: int, _pool: pd.DataFrame,
                _strata: np.ndarray) -> pd.DataFrame:
    """Labels per stratum: proportional, Neyman from the proxy (actual) and, for a fully labeled pool, from the
    labels' own spread (ideal, the paper's Figure 3 right)."""
    proxy = _pool["proxy"].to_numpy()
    n_h = np.bincount(_strata)
    table = pd.DataFrame({
        "stratum": np.arange(1, len(n_h) + 1), "N_h": n_h,
        "proxy_mean": np.bincount(_strata, weights=proxy) / n_h,
        "proportional": sampling.allocate_budget(_strata, budget, "proportional"),
        "neyman (actual, from the proxy)": sampling.allocate_budget(_strata, budget, "neyman", proxy=proxy),
    })
    z = _pool["z"].to_numpy()
    if np.isfinite(z).all():
        spread = np.sqrt(sampling.stratum_variance(_strata, z))
        table["neyman (ideal, from the labels)"] = sampling.allocate_budget(_strata, budget, "neyman",
                                                                            spread=spread)
    return table


@cached("Predicting the precision of each design...")
def efficiency(key: tuple, n_strata: int, seed: int, budgets: tuple[int, ...], _pool: pd.DataFrame,
               _strata: np.ndarray) -> pd.DataFrame:
    return sampling.design_efficiency(_pool["proxy"].to_numpy(), list(budgets), n_strata=n_strata, seed=seed,
                                      strata=_strata)


@cached("Predicting the range under proxy miscalibration...")
def efficiency_range(key: tuple, n_strata: int, seed: int, budgets: tuple[int, ...], _pool: pd.DataFrame,
                     _strata: np.ndarray) -> pd.DataFrame:
    """Relative efficiency per design: assuming a calibrated proxy, and its range over the recalibration family
    of :func:`evalcore.sampling.designs.efficiency_range`."""
    return sampling.efficiency_range(_pool["proxy"].to_numpy(), list(budgets), n_strata=n_strata, seed=seed,
                                     strata=_strata)


#: fewest labels at hand for planning from them (a Platt fit of the proxy); below, the worst case of the range
@cached("Counting the labels each design needs...")
def needed(key: tuple, n_strata: int, seed: int, width: float, alpha: float, probability: float,
           _pool: pd.DataFrame, _strata: np.ndarray) -> LabelingPlan:
    """The labeling plan (:func:`evalcore.sampling.plan.labeling_plan`, as the report states it), planned from the
    labels at hand (the pool's ``z`` where known; the worst case when there are too few or they are all alike)."""
    return labeling_plan(_pool["proxy"].to_numpy(), _pool["z"].to_numpy(dtype=float), width, alpha, n_strata, seed,
                         strata=_strata, probability=probability)


@cached("Drawing the sample...")
def sample(key: tuple, n_strata: int, seed: int, budget: int, design: str, _pool: pd.DataFrame,
           _strata: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sampled row positions, the strata the design uses): one stratum for SRS, the k-means strata otherwise."""
    if design == "srs":
        used = np.zeros(len(_pool), dtype=np.int64)
        allocation = np.array([budget])
    else:
        used = _strata
        allocation = sampling.allocate_budget(_strata, budget, design, proxy=_pool["proxy"].to_numpy())
    return sampling.draw_sample(used, allocation, seed=seed), used


def monte_carlo(key: tuple, n_strata: int, seed: int, budgets: tuple[int, ...], reps: int, alpha: float,
                pool_frame: pd.DataFrame, pool_strata: np.ndarray) -> pd.DataFrame:
    """Repeated sampling on a fully labeled pool under a progress bar (cancelled when an input changes)."""
    job = (lambda progress: sampling.monte_carlo(
        pool_frame["z"].to_numpy(), pool_frame["proxy"].to_numpy(), list(budgets), n_strata=n_strata, reps=reps,
        seed=seed, alpha=alpha, strata=pool_strata, progress=progress))
    return compute_with_progress((key, n_strata, seed, budgets, reps, alpha),
                                 f"Monte Carlo: {reps:,} samples per design and budget...", [("mc", job)])[0]


@cached("Planning the designs from a histogram of the proxy...")
def from_histogram(key: tuple, model: str, proxy: str, n_strata: int, _log) -> pd.DataFrame:
    """Predicted relative efficiency of the designs over budgets from 2 labels per stratum to half the pool, for one
    model of a log whose examples do not fit in memory (:func:`evalcore.sampling.designs.design_efficiency_of_log`)."""
    pool = _log.restrict(model=(model,)).n_rows
    budgets = np.unique(np.geomspace(max(2 * n_strata, 2), max(pool // 2, 2 * n_strata + 1), 15).astype(int))
    return sampling.design_efficiency_of_log(_log, model, [int(b) for b in budgets if b <= pool], proxy, n_strata)
