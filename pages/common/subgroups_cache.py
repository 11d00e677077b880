"""Cached subgroup computations for the subgroups page, keyed by data digest + selection + parameters."""

from __future__ import annotations

import pandas as pd

from evalcore.clustering import auto_groups
from evalcore.features import FeatureScreen, screen_features
from evalcore.holdout import HoldoutResult, holdout_study
from evalcore.subgroups import empirical_bayes

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
