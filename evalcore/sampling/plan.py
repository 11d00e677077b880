"""The labeling plan: how many labels a stratified sample needs for a target interval width, against a simple random
sample. The Labeling budget page opens with it and the report's labeling section states it; both call
:func:`labeling_plan` with the defaults below, so that on the same data and settings they give the same numbers.

The designs (:mod:`.designs`: scipy.stats, the k-means) are imported when a plan is made: the report's settings
read the defaults below whether or not the log supports a plan.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalcore.stats.level import DEFAULT_ALPHA

#: the proxy of correctness, in order of preference: the model's confidence, else a surrogate's ``proxy`` column
SOURCES = ("confidence", "proxy")
#: the full width of the interval the plan aims at
WIDTH = 0.05
#: strata by exact 1-D k-means on the proxy
N_STRATA = 10
#: the stratified design said first: proportional allocation (Fogliato et al. 2024: never worse than simple random
#: sampling in expectation; Neyman allocation pays off only if the proxy is calibrated)
DESIGN = "proportional"
#: the chance that one sample meets the target that ``labels_for_probability`` is counted for
PROBABILITY = 0.9


@dataclass(frozen=True)
class LabelingPlan:
    """``needed``: :func:`evalcore.sampling.designs.labels_needed`'s table (every design and estimator; ``attrs``
    say the basis of the plan); ``strata``: the stratum of each example; ``design``: the stratified design said
    first."""

    needed: pd.DataFrame
    strata: np.ndarray
    design: str = DESIGN

    def row(self, design: str) -> pd.Series:
        """The labels-needed row of ``design`` with the plain average (Horvitz-Thompson), the estimate shown first
        after labeling."""
        return self.needed[(self.needed["design"] == design) & (self.needed["estimator"] == "ht")].iloc[0]

    @property
    def srs(self) -> pd.Series:
        return self.row("srs")

    @property
    def stratified(self) -> pd.Series:
        return self.row(self.design)


def labeling_plan(proxy, labels=None, width: float = WIDTH, alpha: float = DEFAULT_ALPHA, n_strata: int = N_STRATA,
                  seed: int = 0, strata=None, probability: float = PROBABILITY, design: str = DESIGN
                  ) -> LabelingPlan:
    """The plan for one model's pool: ``proxy`` (one value in [0, 1] per example) and ``labels`` (the 0/1 label
    where known, NaN elsewhere; None: none), strata by k-means on the proxy unless ``strata`` are given (the page
    may stratify on features or groups), and the labels each design needs for a ``1 - alpha`` interval no wider
    than ``width`` (:func:`evalcore.sampling.designs.labels_needed`)."""
    from evalcore.sampling.designs import kmeans_strata, labels_needed

    proxy = np.asarray(proxy, dtype=float)
    strata = kmeans_strata(proxy, n_strata, seed=seed) if strata is None else strata
    needed = labels_needed(proxy, width, alpha=alpha, n_strata=n_strata, seed=seed, strata=strata,
                           probability=probability, labels=labels)
    return LabelingPlan(needed, strata, design)
