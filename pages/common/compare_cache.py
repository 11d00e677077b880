"""Cached computations of the Compare page (issue 28), keyed by data digest + selection + parameters, in the
dashboard's one store (:mod:`.store`): the comparison of two models (:func:`evalcore.compare.compare_runs`), the
examples of one cell and slice (:meth:`evalcore.compare.Comparison.examples`, bounded by the engine's fetch), each
model's mean, which picks the default pair, and a comparison campaign's answer (issue 48), keyed by its labels."""

from __future__ import annotations

import pandas as pd

from evalcore.compare import Comparison, compare_runs
from evalcore.engine.reductions import cell_moments
from evalcore.labeling import Campaign
from evalcore.labeling.comparison import comparison_sentence, pairs_table

from .store import cached
from .workspace_store import workspace


@cached("Scoring each model...")
def model_means(key: tuple, metric: str, _rows) -> pd.DataFrame:
    """Per model (of a per-example LazyLog): n (scored examples) and mean of ``metric``, best first (ties by name)."""
    moments = cell_moments(_rows, ["model"], metric)
    moments = moments.assign(mean=moments["total"] / moments["n"].where(moments["n"] > 0))
    return moments.sort_values(["mean", "model"], ascending=[False, True], na_position="last",
                               ignore_index=True)[["model", "n", "mean"]]


@cached("Comparing the two models example by example...")
def comparison(key: tuple, base: str, new: str, by: tuple[str, ...], level: float, margin: float, fdr: float,
               metric: str | None, min_slice: int, pairs_of_slices: bool, seed: int, _rows) -> Comparison:
    """:func:`evalcore.compare.compare_runs` of ``base`` and ``new`` on the selection's rows ``_rows``."""
    return compare_runs(_rows, base, new, by=list(by) or None, level=level, margin=margin, fdr=fdr, seed=seed,
                        pairs_of_slices=pairs_of_slices, min_slice=min_slice, metric=metric)


@cached("Reading the examples...")
def examples(key: tuple, cell: str, slice_: str | None, _comparison: Comparison) -> pd.DataFrame:
    """The examples of ``cell`` (and slice ``slice_``) of a comparison; ``key`` names the comparison (its data,
    selection and every parameter)."""
    return _comparison.examples(cell, slice_)


@cached("Looking for the dataset in the workspace...")
def saved_dataset(key: str, viewer: str | None, _frame: pd.DataFrame) -> str | None:
    """The id of the saved dataset ``viewer`` may see that holds ``_frame`` (the data of key ``key``; the Label
    page's rule: the same content), or None."""
    found = workspace().find_dataset(_frame, viewer)
    return None if found is None else found.id


@cached("Reading the labeling campaign...")
def campaign_answer(campaign_id: str, version: tuple, viewer: str | None) -> tuple[str, str, pd.DataFrame]:
    """A comparison campaign's answer with its labels at ``version`` (:meth:`ComparisonCampaign.version`): the
    sentence (:func:`evalcore.labeling.comparison.comparison_sentence`), what its interval means and every pair
    (:func:`evalcore.labeling.comparison.pairs_table`)."""
    campaign = Campaign.open(workspace(), campaign_id, viewer=viewer)
    estimate = campaign.estimate()
    return comparison_sentence(campaign.info, estimate), estimate.meaning, pairs_table(estimate)
