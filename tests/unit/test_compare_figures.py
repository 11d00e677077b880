"""evalcore.compare.figures: the forest plot of the slices' differences (issue 28). Known answers from a hand-made
slices table: which rows are marked flagged worse/better, the order, the lines at 0 and ±margin, the scale."""

from __future__ import annotations

import pandas as pd
import pytest

from evalcore.compare.figures import shown_slices, slice_forest


def slices(n: int = 4) -> pd.DataFrame:
    diff = [-0.2, -0.05, 0.01, 0.15, 0.02, 0.03][:n]
    return pd.DataFrame({
        "slice": ["category=<b>law</b>", "task=a", "task=b", "group=$x$", "task=c", "task=d"][:n],
        "n": [40, 50, 60, 30, 20, 20][:n], "difference": diff,
        "ci_low": [d - 0.05 for d in diff], "ci_high": [d + 0.05 for d in diff],
        "q_value": [0.01, 0.5, 0.9, 0.04, 0.9, 0.9][:n],
        "flagged": [True, False, False, True, False, False][:n],
        "direction": ["worse", "same", "same", "better", "same", "same"][:n]})


def test_flagged_slices_are_marked_and_rows_keep_the_order():
    fig = slice_forest(slices(), level=0.95, fdr=0.1, margin=0.02, scale=100, unit="points", title="a <i>vs</i> b")
    traces = {t.name: t for t in fig.data}
    worse, better, rest = (traces["flagged: new is worse"], traces["flagged: new is better"], traces["not flagged"])
    assert list(worse.x) == [-20.0] and list(worse.y) == [0.0]
    assert list(better.x) == [15.0] and list(better.y) == [3.0]
    assert list(rest.x) == [-5.0, 1.0] and list(rest.y) == [1.0, 2.0]
    assert list(worse.error_x.array) == pytest.approx([5.0]) and list(worse.error_x.arrayminus) == pytest.approx([5.0])
    # the zero line and the margin's lines at ±2 points
    assert list(traces["no difference (0)"].x) == [0.0, 0.0]
    assert list(traces["margin −2 points"].x) == [-2.0, -2.0] and list(traces["margin +2 points"].x) == [2.0, 2.0]
    # names from the data are escaped (plotly reads HTML and $...$), the axis labels carry n
    ticks = list(fig.layout.yaxis.ticktext)
    assert ticks[0] == "category=&lt;b&gt;law&lt;/b&gt; (n=40)" and ticks[3] == "group=&#36;x&#36; (n=30)"
    assert fig.layout.title.text == "a &lt;i&gt;vs&lt;/i&gt; b"
    assert "10% false discovery rate" in fig.layout.title.subtitle.text


def test_no_margin_draws_no_margin_line():
    fig = slice_forest(slices(), level=0.9, fdr=0.05)
    assert [t.name for t in fig.data if t.mode == "lines"] == ["no difference (0)"]


def test_many_slices_keep_the_flagged_and_both_ends():
    frame = slices(6)
    kept = shown_slices(frame, max_rows=4)  # 2 flagged + 1 lowest other + 1 highest other, in the original order
    assert list(kept["slice"]) == ["category=<b>law</b>", "task=a", "group=$x$", "task=d"]
    fig = slice_forest(frame, level=0.95, fdr=0.1, max_rows=4)
    assert "2 slices between the extremes not drawn" in fig.layout.title.subtitle.text
