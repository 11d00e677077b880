"""The Label page's cached steps: a campaign's examples with their text, looked up by the campaign's example id."""

from __future__ import annotations

import pandas as pd

from evalcore.data.schema import EXAMPLE_TEXT_ROLES
from evalcore.labeling.campaign import examples_of

from .store import cached
from .workspace_store import workspace


@cached("Opening the examples to label...")
def example_table(dataset_id: str, model: str, owner: str | None, metric: str) -> pd.DataFrame:
    """The text of each example of a campaign (``input``, ``target``, ``output``, ``explanation`` where the log has
    them; battles: the two models too), indexed by the campaign's example id
    (:func:`evalcore.labeling.campaign.examples_of`). Cached per dataset and model: a click to the next example is
    one lookup."""
    rows = examples_of(workspace().dataset(dataset_id, owner), model, metric)
    return rows[[c for c in ("model_a", "model_b", *EXAMPLE_TEXT_ROLES) if c in rows.columns]]
