"""Cached subgroup computations for the subgroups page, keyed by data digest + selection + parameters."""

from __future__ import annotations

import pandas as pd

from evalcore.subgroups.area import AreaEstimates, AreaSummary, area_estimates
from evalcore.subgroups.clustering import auto_groups
from evalcore.errors import EvalDataError
from evalcore.data.features import FeatureScreen, screen_features
from evalcore.subgroups.holdout import HoldoutResult, holdout_study
from evalcore.subgroups.estimates import empirical_bayes
from evalcore.stats.summaries import mean_table

from .data_source import read_upload
from .store import cached, compute_with_progress


@cached("Screening the feature columns...")
def feature_screen(key: tuple, metric: str | None, _rows: pd.DataFrame) -> FeatureScreen:
    """Which numeric columns are default features of the selection's rows, and why the others are set aside."""
    return screen_features(_rows, metric)


def grouped(key: tuple, features: tuple[str, ...], seed: int, rows: pd.DataFrame) -> pd.DataFrame:
    """The rows with ``group`` replaced by automatic k-means subgroups, under a progress bar (the labels are
    stored by key, as categories)."""
    job = (lambda progress: auto_groups(rows, list(features), seed=seed, progress=progress).astype("category"))
    groups = compute_with_progress((key, features, seed), "Forming subgroups by k-means on the feature columns...",
                                   [("auto_groups", job)])[0]
    return rows.assign(group=groups.astype(str))


@cached("Estimating each subgroup directly...")
def direct(key: tuple, metric: str, level: float, _rows) -> pd.DataFrame:
    """Direct estimate of each (model, group) with its ``level`` interval (Wilson or Student-t)."""
    return mean_table(_rows, ["model", "group"], metric, 1 - level)


@cached("Fitting synthetic regression and empirical Bayes...")
def estimates(key: tuple, metric: str, regressor: str, level: float, seed: int, features: tuple[str, ...] | None,
              _rows: pd.DataFrame) -> pd.DataFrame:
    """DT, SR and EB estimates per (model, group)."""
    return empirical_bayes(_rows, metric=metric, regressor=regressor, alpha=1 - level, seed=seed,
                           features=None if features is None else list(features))


def holdout(key: tuple, metric: str, regressor: str, level: float, seed: int, reps: int, design,
            rows: pd.DataFrame, features: tuple[str, ...]) -> HoldoutResult:
    """The holdout study under a progress bar (cancelled when an input changes), stored by key."""
    job = (lambda progress: holdout_study(rows, metric=metric, regressor=regressor, n_repetitions=reps,
                                          design=design, alpha=1 - level, seed=seed, progress=progress,
                                          features=list(features)))
    return compute_with_progress((key, metric, regressor, level, seed, reps, design, features),
                                 f"Holdout study: {reps} repetitions...", [("holdout", job)])[0]


@cached("Reading the per-subgroup summary in a separate worker...")
def summary_table(digest: str, _data: bytes) -> pd.DataFrame | EvalDataError:
    """An uploaded per-subgroup summary as a raw table (read in a bounded worker), or why it cannot be read; keyed
    by the digest of the bytes (an unreadable file is not read again on every rerun)."""
    try:
        return read_upload(_data)
    except EvalDataError as exc:
        return exc


@cached("Robust empirical Bayes on the per-subgroup summary...")
def area_fit(digest: str, roles: tuple[tuple[str, str | None], ...], features: tuple[str, ...], level: float,
             weights: str, _summary: AreaSummary) -> AreaEstimates:
    """Robust EB estimates (R package ebci's procedure) per model of a checked summary."""
    return area_estimates(_summary, alpha=1 - level, weights=weights)
