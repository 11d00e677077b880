"""Cached computations of the AI-assisted evaluation page, keyed by data digest + selection + parameters.

``key`` identifies the examples x models matrices: (data digest, selection, task, metric, annotators, weights);
frames and matrices are passed as underscore arguments so that they are not hashed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalcore.ppi import autoeval
from evalcore.ppi import means as ppi
from evalcore.ppi import curves as ppi_curves
from evalcore.ppi.bradley_terry import bradley_terry_of_log
from evalcore.sampling.designs import kmeans_strata

from .store import cached, compute_with_progress

N_BOOT = 200  # bootstrap replicates of the ESS intervals
DESIGNS = {"random": "labels drawn at random (PPI++)",
           "groups": "stratified by the group column (stratified PPI++)",
           "annotator": "stratified by k-means on the annotator (its mean over the models), as on the Labeling-budget "
                         "page (stratified PPI++)"}


@cached("Aligning examples and models...")
def matrices(key: tuple, metric: str, annotators: tuple[str, ...], use_weight: bool,
             _rows: pd.DataFrame) -> autoeval.PPIData:
    return autoeval.log_matrices(_rows, metric, annotators, use_weight)


@cached("Estimating with and without the annotator...")
def estimates(key: tuple, annotator: str, alpha: float, weighted: bool, self_normalize: bool, design: str,
              n_strata: int, seed: int, _data: autoeval.PPIData) -> pd.DataFrame:
    strata = None
    if design == "groups":
        strata = _data.groups
    elif design == "annotator":  # the Labeling-budget page's strata (exact 1-D k-means) on the models' mean value
        strata = kmeans_strata(_data.annotators[annotator].mean(axis=1), n_strata)
    return autoeval.estimate_table(_data, annotator, alpha, weighted, self_normalize, strata, N_BOOT, seed)


@cached("Projecting the precision...")
def projection(key: tuple, annotator: str, alpha: float, _data: autoeval.PPIData) -> pd.DataFrame:
    y, yhat, yhat_u = _data.parts(annotator)
    total = _data.n + _data.N
    grid = np.unique(np.geomspace(2, max(3, total - 2), 60).astype(int))
    return ppi.projected_precision(y, yhat, yhat_u, grid, alpha, models=_data.models)


@cached("Counting labels...")
def needed(key: tuple, annotator: str, alpha: float, width: float, _data: autoeval.PPIData) -> pd.DataFrame:
    y, yhat, yhat_u = _data.parts(annotator)
    return ppi.labels_needed(y, yhat, yhat_u, width, alpha, models=_data.models)


@cached("Comparing annotators...")
def quality(key: tuple, alpha: float, seed: int, _data: autoeval.PPIData) -> pd.DataFrame:
    return autoeval.quality_table(_data, alpha, N_BOOT, seed)


def curves(key: tuple, annotator: str, grid: tuple[int, ...], splits: int, alpha: float, seed: int,
           data: autoeval.PPIData) -> pd.DataFrame:
    """ESS curves from random splits of the fully labeled log, under a progress bar (cancelled by input changes)."""
    job = (lambda progress: ppi_curves.ess_curves(data.y, data.annotators[annotator], list(grid), splits=splits,
                                                  alpha=alpha, seed=seed, models=data.models, progress=progress))
    label = f"{splits:,} random labeled/unlabeled splits at {len(grid)} sizes n..."
    return compute_with_progress((key, annotator, grid, splits, alpha, seed), label, [("curves", job)])[0]


def quality_curves(key: tuple, n: int, splits: int, alpha: float, seed: int, data: autoeval.PPIData) -> pd.DataFrame:
    """ESS/n of PPI++ at ``n`` labels for every annotator, from random splits of the fully labeled log."""
    job = (lambda progress: ppi_curves.annotator_quality(data.y, data.annotators, n, splits=splits, alpha=alpha,
                                                         seed=seed, models=data.models, progress=progress))
    label = f"{splits:,} splits at n = {n:,} for each of {len(data.annotators)} annotators..."
    return compute_with_progress((key, "quality", n, splits, alpha, seed), label, [("quality", job)])[0]


@cached("Fitting Bradley-Terry models...")
def bradley_terry(key: tuple, alpha: float, judge: str, reference: str, _frame: pd.DataFrame) -> pd.DataFrame:
    return autoeval.bradley_terry_table(_frame, alpha, judge, reference)


def bt_curves(key: tuple, grid: tuple[int, ...], splits: int, alpha: float, seed: int, judge: str, reference: str,
              frame: pd.DataFrame) -> pd.DataFrame:
    """Bradley-Terry ESS curves from random splits of fully voted battles, under a progress bar."""
    job = (lambda progress: ppi_curves.bt_ess_curves(frame, list(grid), splits=splits, alpha=alpha, seed=seed,
                                                     judge=judge, reference=reference, progress=progress))
    label = f"{splits:,} random splits at {len(grid)} sizes n, three Bradley-Terry fits each..."
    return compute_with_progress((key, "bt", grid, splits, alpha, seed, judge, reference), label,
                                 [("bt_curves", job)])[0]


@cached("Computing PPI++ from moments...")
def from_moments(key: tuple, metric: str, annotator: str, level: float, _log) -> pd.DataFrame:
    """Classical and PPI++ means per model from the log's moments (its examples do not fit in memory)."""
    return autoeval.moment_table(_log, annotator, metric, 1 - level)


@cached("Fitting Bradley-Terry from per-pair statistics...")
def battles_from_statistics(key: tuple, level: float, reference: str, _log) -> pd.DataFrame:
    """Bradley-Terry coefficients from per-pair statistics (PPI++ with the judge when there is one), for battles
    that do not fit in memory."""
    return bradley_terry_of_log(_log, alpha=1 - level, reference=reference)
