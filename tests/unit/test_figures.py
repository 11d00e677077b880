"""Figure builders are pure: data in, plotly figure out, uncertainty drawn next to every estimate."""

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from evalcore.calibration import estimators as calibration
from evalcore.stats import figures
from evalcore.calibration import figures as calibration_figures
from evalcore.leaderboard import figures as leaderboard_figures


@pytest.fixture
def model_data():
    rng = np.random.default_rng(0)
    conf = rng.random(2000) * 0.6 + 0.4
    return conf, (rng.random(2000) < conf).astype(float)


def test_percent_labels():
    assert figures.percent(0.95) == "95%"
    assert figures.percent(0.834) == "83.4%"
    assert figures.percent(0.8) == "80%"


def test_reliability_diagram_skips_empty_bins_and_draws_band(model_data):
    conf, correct = model_data
    table = calibration.reliability_table(conf, correct, n_bins=10)
    assert (table["count"] == 0).sum() == 4  # confidences live in [0.4, 1]
    fig = calibration_figures.reliability_diagram(table, "m", 0.9, ece="0.01 (0, 0.02)")
    assert isinstance(fig, go.Figure)
    accuracy = next(t for t in fig.data if t.name == "accuracy")
    assert len(accuracy.x) == 6
    band = next(t for t in fig.data if "Wilson band" in t.name)
    assert band.fill == "toself" and len(band.y) == 12
    assert np.allclose(band.y[:6], table.loc[table["count"] > 0, "ci_high"])
    bars = next(t for t in fig.data if isinstance(t, go.Bar))
    assert list(bars.y) == list(table.loc[table["count"] > 0, "count"])
    assert "90% Wilson" in fig.layout.title.subtitle.text and "ECE 0.01" in fig.layout.title.subtitle.text


def test_interval_dots_error_bars_match_intervals():
    frame = pd.DataFrame({"model": ["a", "b"], "estimate": [0.5, 0.7], "ci_low": [0.4, 0.65], "ci_high": [0.55, 0.8]})
    fig = figures.interval_dots(frame, "model", "t", "x", "sub", reference=0.0)
    trace = fig.data[0]
    assert list(trace.error_x.array) == pytest.approx([0.05, 0.1])
    assert list(trace.error_x.arrayminus) == pytest.approx([0.1, 0.05])
    grouped = figures.interval_dots(frame.assign(task=["x", "x"]), "task", "t", "x", "s", by="model")
    assert [t.name for t in grouped.data] == ["a", "b"]
    assert all(t.orientation == "h" for t in grouped.data)  # horizontal, so that plotly offsets the groups


def test_selective_curves_thin_long_curves_but_keep_the_end(model_data):
    conf, correct = model_data
    curve = calibration.selective_prediction_curve(conf, correct)
    assert len(curve) == 2000
    fig = calibration_figures.selective_curves({"m": curve, "n": curve.iloc[:100]})
    lines = [t for t in fig.data if t.mode == "lines" and t.fill is None]
    assert [t.name for t in lines] == ["m", "n"]
    assert len(lines[0].x) <= 400 and lines[0].x[-1] == 1.0
    assert lines[0].x[0] == pytest.approx(calibration_figures.MIN_ANSWERED / 2000)  # the first 19 points are left out
    assert len(lines[1].x) == 100 - (calibration_figures.MIN_ANSWERED - 1)
    assert np.all(np.diff(lines[0].x) > 0)


def test_rank_probability_bars_stack_to_one_and_list_the_likely_winner_first():
    probs = pd.DataFrame({"model": ["a", "a", "b", "b"], "rank": [1, 2, 1, 2], "probability": [0.3, 0.7, 0.7, 0.3]})
    fig = leaderboard_figures.rank_probability_bars(probs, "sub")
    assert [t.name for t in fig.data] == ["rank 1", "rank 2"]
    assert list(fig.data[0].y) == ["b", "a"] and list(fig.data[0].x) == [0.7, 0.3]
    assert np.allclose(np.sum([t.x for t in fig.data], axis=0), 1.0)
    assert fig.layout.barmode == "stack"
