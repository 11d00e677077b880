"""Static ternary map (python-ternary) and its PNG/SVG/PDF bytes."""

import pandas as pd
import pytest

from evalcore.leaderboard.publication import figure_bytes, ternary_static
from evalcore.leaderboard.weighting import ternary_winner_map


@pytest.fixture(scope="module")
def weighting_map():
    summary = pd.DataFrame({
        "model": ["A"] * 3 + ["B"] * 3, "task": ["t1", "t2", "t3"] * 2, "category": ["x", "y", "z"] * 2,
        "n": [400] * 6, "n_correct": [360, 200, 120, 200, 210, 340],
    })
    return ternary_winner_map(summary, step=0.05, z=2.0)


def test_static_map_has_one_legend_entry_per_region_and_the_axis_labels(weighting_map):
    fig = ternary_static(weighting_map)
    figure_bytes(fig, "png")  # python-ternary places its axis labels when the figure is drawn
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    winners = weighting_map.loc[~weighting_map["gray"], "winner"].value_counts().index.tolist()
    assert labels[:len(winners)] == winners
    assert any("too close to call" in t for t in labels) == bool(weighting_map["gray"].any())
    texts = " ".join(t.get_text() for t in ax.texts)
    assert all(f"{c} weight" in texts for c in ("x", "y", "z"))
    assert sum(len(c.get_offsets()) for c in ax.collections) >= len(weighting_map)


@pytest.mark.parametrize("fmt, magic", [("png", b"\x89PNG"), ("svg", b"<?xml"), ("pdf", b"%PDF")])
def test_bytes_in_each_format(weighting_map, fmt, magic):
    assert figure_bytes(ternary_static(weighting_map), fmt).startswith(magic)


def test_unknown_format_is_refused(weighting_map):
    with pytest.raises(ValueError, match="format must be one of"):
        figure_bytes(ternary_static(weighting_map), "gif")
