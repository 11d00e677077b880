"""The Label page's comparison chart and table (evalcore.labeling.figures): every pair turned to "leader − other"
with the interval the campaign shows, sorted by the difference; the margin line; model names drawn literally; the
labels per agreement pattern (issue 48)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from evalcore.labeling.difference import ComparisonEstimate
from evalcore.labeling.figures import against_leader, comparison_figure, labels_per_pattern

HOSTILE = "<b>C</b>"


def _estimate(interval: str = "fixed-n interval", margin: float = 0.0, design: str = "disagreement"):
    """Three models, B the leader: A − B = -0.10, A − C = 0.05, B − C = 0.15 (fixed-n and sequence bounds apart)."""
    pairs = pd.DataFrame([
        {"model_a": "A", "model_b": "B", "difference": -0.10, "ci_low": -0.20, "ci_high": 0.00, "cs_low": -0.30,
         "cs_high": 0.10, "se": 0.05},
        {"model_a": "A", "model_b": HOSTILE, "difference": 0.05, "ci_low": -0.05, "ci_high": 0.15, "cs_low": -0.15,
         "cs_high": 0.25, "se": 0.05},
        {"model_a": "B", "model_b": HOSTILE, "difference": 0.15, "ci_low": 0.05, "ci_high": 0.25, "cs_low": 0.00,
         "cs_high": 0.30, "se": 0.05}])
    per_pattern = {"A ≠ B = <b>C</b>": 30, "A = B ≠ <b>C</b>": 12}
    return ComparisonEstimate(("A", "B", HOSTILE), -0.10, -0.20, 0.00, 40, 2, False, None, "B", pairs, 10, math.nan,
                              interval, "", 0.95, design, 0.02, margin, False, per_pattern)


def test_every_model_against_the_leader_with_the_interval_shown():
    fixed = against_leader(_estimate())
    assert fixed["model"].tolist() == ["A", HOSTILE]  # the closest first
    assert fixed[["difference", "low", "high"]].to_numpy().ravel() == pytest.approx([0.10, 0.0, 0.20,
                                                                                     0.15, 0.05, 0.25])
    sequence = against_leader(_estimate("confidence sequence"))
    assert sequence[["difference", "low", "high"]].to_numpy().ravel() == pytest.approx([0.10, -0.10, 0.30,
                                                                                        0.15, 0.0, 0.30])


def test_the_figure_in_points_with_its_margin_and_names_drawn_literally():
    fig = comparison_figure(_estimate("confidence sequence", margin=0.01))
    [trace] = fig.data
    assert list(trace.x) == pytest.approx([10.0, 15.0])
    assert list(trace.error_x.arrayminus) == pytest.approx([20.0, 15.0])
    assert list(trace.y) == ["B − A", "B − &lt;b&gt;C&lt;/b&gt;"]  # plotly shows the entity as the characters
    assert [shape.x0 for shape in fig.layout.shapes] == [0, -1.0]
    assert "confidence sequence" in fig.layout.xaxis.title.text
    assert len(comparison_figure(_estimate()).layout.shapes) == 1  # no margin: the zero line only


def test_the_labels_per_agreement_pattern():
    pool = {"patterns": ["all agree", "A = B ≠ <b>C</b>", "A ≠ B = <b>C</b>"], "pattern_sizes": [50, 20, 30]}
    table = labels_per_pattern(pool, _estimate())
    assert table["labeled"].tolist() == [0, 12, 30] and table["examples"].tolist() == [50, 20, 30]
    assert table["drawn by the design"].tolist()[0] == "no: the difference is 0 there"
    assert set(labels_per_pattern(pool, _estimate(design="srs"))["drawn by the design"]) == {"yes"}
