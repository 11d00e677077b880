"""Every figure builder draws names from the data literally: escaped for plotly (or matplotlib), shortened on axes
and in legends, in full on hover."""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from evalcore.calibration import estimators as calibration
from evalcore.stats import figures
from evalcore.calibration import figures as calibration_figures
from evalcore.leaderboard import figures as leaderboard_figures
from evalcore.subgroups import figures as subgroups_figures
from evalcore.ppi import figures as ppi_figures
from evalcore.leaderboard import publication
from evalcore.sampling import figures as sampling_figures
from evalcore.data.display import ELLIPSIS, plotly_literal

BOLD = "<b>bold</b>"
LINK = '<a href="http://example.invalid/">link</a>'
TEMPLATE = "%{x} $x$ &lt;"
LONG = "a-very-long-model-name-" + "x" * 40 + "-v1"
LONG2 = "a-very-long-model-name-" + "x" * 40 + "-v2"
NAMES = [BOLD, LINK, TEMPLATE, LONG, LONG2]
RAW = [BOLD, LINK, TEMPLATE, "<br>", "<a "]  # must never reach plotly as they are


def strings(node) -> list[str]:
    """Every string anywhere in a figure's JSON (layout, traces, arrays of hover data)."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in strings(v)]
    if isinstance(node, (list, tuple, np.ndarray, pd.Series, pd.Index)):
        return [s for v in list(node) for s in strings(v)]
    return []


def assert_literal(fig: go.Figure, names: list[str], shortened: bool = True) -> None:
    texts = strings(fig.to_plotly_json())
    user_text = [t for t in texts if "hovertemplate" not in t]
    for raw in RAW:
        if raw in ("<br>", "<a "):  # the builders' own hover templates use <br>: look in the data's text only
            continue
        assert not any(raw in t for t in user_text), f"{raw!r} reached the figure unescaped"
    for name in names:
        assert any(plotly_literal(name) in t for t in texts), f"full name {name!r} missing (hover)"
    if shortened:
        labels = [t for t in texts if re.search(f"{ELLIPSIS}( \\(\\d+\\))?$", t)]
        assert labels, "no shortened label"
        # plotly shows the entities decoded; the symbol legend of the ESS-quality chart says "model <label>"
        assert all(len(html.unescape(t).removeprefix("model ")) <= 40 for t in labels), labels
        assert len(set(labels)) >= 2, f"the two long names must get different labels: {labels}"


def no_raw_anywhere(fig: go.Figure) -> None:
    """The hostile strings appear nowhere, not even inside hover templates."""
    texts = strings(fig.to_plotly_json())
    for raw in (BOLD, LINK, TEMPLATE):
        assert not any(raw in t for t in texts), raw


def dots_frame(names: list[str]) -> pd.DataFrame:
    k = len(names)
    return pd.DataFrame({"model": names, "estimate": np.linspace(0.5, 0.9, k), "ci_low": np.linspace(0.4, 0.8, k),
                         "ci_high": np.linspace(0.6, 1.0, k)})


def test_interval_dots_rows_and_series():
    fig = figures.interval_dots(dots_frame(NAMES), "model", f"title {BOLD}", f"x {LINK}", f"sub {TEMPLATE}")
    assert_literal(fig, NAMES)
    no_raw_anywhere(fig)
    assert fig.data[0].y[0] == "&lt;b&gt;bold&lt;/b&gt;"
    assert fig.layout.title.text == "title &lt;b&gt;bold&lt;/b&gt;"
    assert fig.data[0].customdata[3][2] == plotly_literal(LONG)  # the full name, for the hover
    assert fig.data[0].customdata[0][0] == pytest.approx(0.4)      # numbers stay numbers
    long_rows = pd.concat([dots_frame(NAMES).assign(task=t) for t in ("t1", "t2")])
    by = figures.interval_dots(long_rows, "task", "t", "x", "s", by="model")
    assert_literal(by, NAMES)
    no_raw_anywhere(by)


def test_reliability_diagram_and_selective_curves():
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.5, 1, 400)
    correct = (rng.uniform(size=400) < conf).astype(float)
    fig = calibration_figures.reliability_diagram(calibration.reliability_table(conf, correct), BOLD)
    assert fig.layout.title.text == plotly_literal(BOLD)
    curve = calibration.selective_prediction_curve(conf, correct)
    curves = calibration_figures.selective_curves({name: curve for name in NAMES})
    assert_literal(curves, NAMES)
    no_raw_anywhere(curves)


def subgroup_table(models: list[str], groups: list[str]) -> pd.DataFrame:
    rows = [{"model": m, "group": g, "n": 10 + 5 * j, "direct": 0.5, "direct_low": 0.3, "direct_high": 0.7,
             "eb": 0.55, "eb_low": 0.4, "eb_high": 0.7, "synthetic": 0.6, "shrinkage": 0.3}
            for m in models for j, g in enumerate(groups)]
    return pd.DataFrame(rows)


def test_forest_and_shrinkage_plots():
    table = subgroup_table(["m1"], NAMES)
    truth = pd.Series(0.5, index=NAMES)
    forest = subgroups_figures.forest_plot(table, truth=truth, title=f"{BOLD}: subgroup estimates")
    assert_literal(forest, NAMES, shortened=False)  # its tick labels add the size: checked below
    no_raw_anywhere(forest)
    ticks = list(forest.layout.yaxis.ticktext)
    assert ticks[0] == "&lt;b&gt;bold&lt;/b&gt; (n=10)"
    assert ticks[3] != ticks[4] and all(len(html.unescape(t)) <= 40 + len(" (n=30)") for t in ticks)
    assert list(forest.data[-1].x) == [0.5] * len(NAMES)  # the truth is looked up by the full names
    shrink = subgroups_figures.shrinkage_plot(subgroup_table(NAMES, NAMES))
    assert_literal(shrink, NAMES)
    no_raw_anywhere(shrink)


def test_holdout_charts():
    rows = pd.DataFrame([{"model": m, "method": meth, "mse_ratio_vs_DT": 0.8, "mse": 0.01, "mse_small": 0.02,
                          "mse_large": 0.005, "width": 0.2, "coverage": 0.94}
                         for m in NAMES for meth in ("DT", "SR", "EB")])
    mse = subgroups_figures.holdout_mse_chart(rows)
    assert_literal(mse, NAMES)
    no_raw_anywhere(mse)
    assert list(mse.layout.yaxis.categoryarray) == list(mse.data[0].y)
    cover = subgroups_figures.holdout_coverage_width(rows)
    assert_literal(cover, NAMES, shortened=False)
    no_raw_anywhere(cover)


def test_ternary_and_rank_probabilities():
    grid = pd.DataFrame({"w1": [1.0, 0.5, 0.0, 0.2, 0.3], "w2": [0.0, 0.5, 1.0, 0.4, 0.3],
                         "w3": [0.0, 0.0, 0.0, 0.4, 0.4], "winner": NAMES, "runner_up": NAMES[::-1],
                         "diff": 0.1, "se": 0.01, "gray": [False, False, False, False, True]})
    grid.attrs.update(categories=(BOLD, "$cat$", TEMPLATE), z=2.0)
    fig = leaderboard_figures.ternary_figure(grid)
    assert_literal(fig, NAMES[:4], shortened=False)
    no_raw_anywhere(fig)
    assert fig.layout.ternary.aaxis.title.text == "w &lt;b&gt;bold&lt;/b&gt;"
    assert fig.layout.ternary.baxis.title.text == "w &#36;cat&#36;"
    probs = pd.DataFrame([{"model": m, "rank": r, "probability": 1 / len(NAMES)}
                          for m in NAMES for r in range(1, len(NAMES) + 1)])
    bars = leaderboard_figures.rank_probability_bars(probs, subtitle=f"weights {BOLD} 0.5")
    assert_literal(bars, NAMES)
    no_raw_anywhere(bars)


def test_ppi_figures():
    quality = pd.DataFrame([{"model": m, "annotator": a, "quality": 0.5, "ess_ratio": 1.2, "ess_ratio_low": 1.1,
                             "ess_ratio_high": 1.3, "n": 100} for m in NAMES[:2] for a in NAMES])
    fig = ppi_figures.annotator_quality_figure(quality)
    assert_literal(fig, NAMES)
    no_raw_anywhere(fig)
    proj = pd.DataFrame([{"model": m, "n": n, "ess": 2.0 * n, "width_classical": 1 / n, "width_ppi": 0.5 / n}
                         for m in NAMES for n in (10, 20)])
    fig = ppi_figures.projection_figure(proj)
    assert_literal(fig, NAMES)
    no_raw_anywhere(fig)
    metrics = {f"{m}{s}": v for m in ("ess", "mse", "width", "coverage") for s, v in (("", 1.0), ("_low", 0.9),
                                                                                        ("_high", 1.1))}
    curves = pd.DataFrame([{"n": n, "method": meth, "model": BOLD, "ess_empirical": n, "lam": 0.5, **metrics}
                           for n in (10, 20) for meth in ("classical", "ppi", "ppi++")])
    fig = ppi_figures.ess_curves_figure(curves, model=BOLD)
    assert fig.layout.title.subtitle.text.startswith("&lt;b&gt;bold&lt;/b&gt; · ")


def test_allocation_bars_column_names():
    table = pd.DataFrame({"stratum": [1, 2], "N_h": [10, 20], BOLD: [2, 3]})
    fig = sampling_figures.allocation_bars(table)
    assert fig.data[0].name == plotly_literal(BOLD)
    no_raw_anywhere(fig)


def test_publication_map_draws_names_without_mathtext():
    grid = pd.DataFrame({"w1": [1.0, 0.0, 0.0], "w2": [0.0, 1.0, 0.0], "w3": [0.0, 0.0, 1.0],
                         "winner": ["$\\alpha$", "$x$", "plain"], "runner_up": "plain", "diff": 0.1, "se": 0.01,
                         "gray": False})
    grid.attrs.update(categories=("$c_1$", "b", "c"), z=2.0)
    fig = publication.ternary_static(grid, title="$T$")
    assert publication.figure_bytes(fig, "svg").startswith(b"<?xml")  # drawing places python-ternary's labels
    texts = [t for ax in fig.axes for t in ax.texts] + [t for ax in fig.axes for t in ax.get_legend().get_texts()]
    drawn = {t._preprocess_math(t.get_text()) for t in texts}
    assert ("$\\alpha$", False) in drawn and ("$x$", False) in drawn      # legend: literal, not maths
    assert ("$c_1$ weight", False) in drawn
    assert ("$T$", False) in {(t._preprocess_math(t.get_text())) for ax in fig.axes for t in [ax.title]}
    assert all(not is_math for _, is_math in drawn)
