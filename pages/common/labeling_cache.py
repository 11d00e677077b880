"""The Label page's cached steps: a campaign's examples with their text, looked up by the campaign's example id; its
estimate, chart and adjudication queue (a comparison campaign's: its estimate and chart), and its agreement
statistics, each keyed by the campaign's version (its largest label and adjudication ids,
:meth:`evalcore.labeling.campaign.Campaign.version`): computed at most once per new label or adjudication, however
many reruns and sessions ask; the models of a saved dataset, for the form that starts a comparison."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from evalcore.data.schema import EXAMPLE_TEXT_ROLES
from evalcore.labeling.campaign import Campaign, CampaignAgreement, examples_of
from evalcore.labeling.comparison import ComparisonCampaign
from evalcore.labeling.difference import ComparisonEstimate
from evalcore.labeling.estimate import LiveEstimate
from evalcore.labeling.figures import comparison_figure, estimate_figure

from .store import cached
from .workspace_store import workspace


@cached("Opening the examples to label...")
def example_table(dataset_id: str, model: str, owner: str | None, metric: str) -> pd.DataFrame:
    """The text of each example of a campaign (its ``example_id`` and ``input``, ``target``, ``output``,
    ``explanation``, ``options``, ``image`` where the log has them; battles: the two models too), indexed by the
    campaign's example id
    (:func:`evalcore.labeling.campaign.examples_of`). Cached per dataset and model: a click to the next example is
    one lookup."""
    rows = examples_of(workspace().dataset(dataset_id, owner), model, metric)
    return rows[[c for c in ("example_id", "model_a", "model_b", *EXAMPLE_TEXT_ROLES) if c in rows.columns]]


@dataclass(frozen=True)
class CampaignState:
    """What the Label page opens with: the ``estimate``, its ``figure`` (None before the first estimate) and the
    adjudication queue (``pending``, :meth:`evalcore.labeling.campaign.Campaign.pending`) and who the skipped
    examples are (``skips``, :meth:`evalcore.labeling.campaign.Campaign.skip_profile`)."""

    estimate: LiveEstimate
    figure: go.Figure | None
    pending: pd.DataFrame
    skips: pd.DataFrame


@cached("Reading the labels...")
def campaign_state(campaign_id: str, version: tuple[int, int], what: str, _campaign: Campaign) -> CampaignState:
    """The campaign's estimate, chart and adjudication queue at ``version`` (``what`` names the metric on the
    chart's axis)."""
    estimate, pending, skips = _campaign.page_state()
    figure = None if estimate.estimate != estimate.estimate else estimate_figure(estimate, _campaign.info.model, what)
    return CampaignState(estimate, figure, pending, skips)


@cached("Measuring agreement (bootstrap intervals)...")
def campaign_agreement(campaign_id: str, version: tuple[int, int], _campaign: Campaign) -> CampaignAgreement:
    """The campaign's agreement statistics at ``version`` (:meth:`evalcore.labeling.campaign.Campaign.agreement`)."""
    return _campaign.agreement()


@dataclass(frozen=True)
class ComparisonState:
    """What the Label page opens a comparison campaign with: the ``estimate``, its ``figure`` (every model against
    the leader; None before the first estimate) and the adjudication queue (``pending``)."""

    estimate: ComparisonEstimate
    figure: go.Figure | None
    pending: pd.DataFrame


@cached("Reading the labels...")
def comparison_state(campaign_id: str, version: tuple[int, int], _campaign: ComparisonCampaign) -> ComparisonState:
    """The comparison campaign's estimate, chart and adjudication queue at ``version``."""
    estimate, pending = _campaign.page_state()
    return ComparisonState(estimate, None if estimate.leader is None else comparison_figure(estimate), pending)


@cached("Reading the dataset's models...")
def dataset_models(dataset_id: str, viewer: str | None) -> list[str]:
    """The models of a saved dataset ``viewer`` may see, sorted (saved datasets never change: the id is the key)."""
    return sorted(workspace().dataset(dataset_id, viewer)["model"].astype(str).unique())
