"""The Label page's cached steps: a campaign's examples with their text, looked up by the campaign's example id."""

from __future__ import annotations

import pandas as pd

from evalcore.data.schema import EXAMPLE_TEXT_ROLES

from .store import cached
from .workspace_store import workspace


@cached("Opening the examples to label...")
def example_table(dataset_id: str, model: str, owner: str | None) -> pd.DataFrame:
    """The text of each example of ``model`` in a saved dataset (``input``, ``target``, ``output``, ``explanation``
    where the log has them; battles: the two models too), indexed by the campaign's example id (the example id, or
    ``task/example_id`` where two tasks share an id; battles ``battle-<row>``), as
    :func:`evalcore.labeling.campaign.Campaign.create` names them. Cached per dataset and model: a click to the
    next example is one lookup."""
    frame = workspace().dataset(dataset_id, owner)
    text = [c for c in EXAMPLE_TEXT_ROLES if c in frame.columns]
    if "model_a" in frame.columns:  # battles
        rows = frame[[c for c in ("model_a", "model_b", *text) if c in frame.columns]]
        return rows.set_axis([f"battle-{i}" for i in frame.index])
    rows = frame[frame["model"].astype(str) == model]
    if "repeat" in rows:  # one row per example, as per_example keys the pool (the first sample's text)
        rows = rows.drop_duplicates("example_id")
    ids = rows["example_id"].astype(str)
    if ids.duplicated().any():
        ids = rows["task"].astype(str) + "/" + ids
    return rows[text].set_axis(ids.to_numpy())
