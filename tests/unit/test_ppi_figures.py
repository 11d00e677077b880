"""evalcore.ppi.figures: pure plotly builders of the prediction-powered inference views."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from evalcore.ppi import figures as pf

METRICS = ("ess", "mse", "width", "coverage")
LABELS = [label for _, label in pf.METHOD_STYLE.values()]


def _curves(models=("all models", "resnet18"), ns=(50, 100, 200)) -> pd.DataFrame:
    """Known values: metric X of (model k, method j, n) = base + j, bands at X - 0.1 and X + 0.1 (+ model offset)."""
    rows = []
    for k, model in enumerate(models):
        for j, method in enumerate(pf.METHOD_STYLE):
            for n in ns:
                row = {"n": n, "method": method, "model": model, "ess_empirical": n * (1 + 0.4 * j) + 1,
                       "lam": [np.nan, 1.0, 0.7][j]}
                base = {"ess": n * (1 + 0.5 * j) + 100 * k, "mse": 1e-3 / (n * (1 + j)) * (1 + k),
                        "width": 0.3 / np.sqrt(n) / (1 + 0.2 * j) + k, "coverage": 0.88 + 0.01 * j - 0.1 * k}
                for metric, value in base.items():
                    row[metric] = value
                    row[f"{metric}_low"] = value * 0.9
                    row[f"{metric}_high"] = value * 1.1
                row["rank_corr"] = 0.2 * (j + 1) + n / 1000
                row["rank_corr_low"], row["rank_corr_high"] = row["rank_corr"] - 0.1, row["rank_corr"] + 0.1
                rows.append(row)
    return pd.DataFrame(rows)


def _axis_traces(fig: go.Figure, xaxis: str, yaxis: str) -> list:
    return [t for t in fig.data if (t.xaxis or "x") == xaxis and (t.yaxis or "y") == yaxis]


def _bands(traces: list) -> list:
    return [t for t in traces if t.fill == "toself"]


def test_ess_figure_panels_traces_and_legend():
    fig = pf.ess_curves_figure(_curves())
    ess = _axis_traces(fig, "x", "y")
    # diagonal + per method (band, line, empirical markers)
    assert len(ess) == 1 + 3 * 3
    assert [t.name for t in ess if t.mode == "lines+markers"] == LABELS
    for xa, ya in (("x2", "y2"), ("x3", "y3"), ("x4", "y4")):
        panel = _axis_traces(fig, xa, ya)
        assert len(panel) == 6 and len(_bands(panel)) == 3
        assert [t.name for t in panel if t.mode == "lines+markers"] == LABELS
    legend = [t.name for t in fig.data if t.showlegend is not False]
    assert legend == ["ESS = n (labels only)", *LABELS, "empirical ESS (MSE ratio)"]
    # every method line in every panel belongs to its method's legend group
    for method, (c, label) in pf.METHOD_STYLE.items():
        lines = [t for t in fig.data if t.name == label]
        assert len(lines) == 4 and {t.legendgroup for t in lines} == {method}
        assert {t.line.color for t in lines} == {c}
    empirical = [t for t in fig.data if t.name == "empirical ESS (MSE ratio)"]
    assert [t.marker.color for t in empirical] == [c for c, _ in pf.METHOD_STYLE.values()]
    assert fig.layout.height == 640


def test_ess_bands_carry_exactly_the_low_and_high_values():
    curves = _curves()
    fig = pf.ess_curves_figure(curves)
    rows = curves[(curves["model"] == "all models") & (curves["method"] == "ppi")].sort_values("n")
    for metric, (xa, ya) in zip(METRICS, (("x", "y"), ("x2", "y2"), ("x3", "y3"), ("x4", "y4"))):
        band = [t for t in _bands(_axis_traces(fig, xa, ya)) if t.legendgroup == "ppi"]
        assert len(band) == 1
        k = len(rows)
        np.testing.assert_array_equal(band[0].x, np.concatenate([rows["n"], rows["n"][::-1]]))
        np.testing.assert_array_equal(band[0].y[:k], rows[f"{metric}_high"])
        np.testing.assert_array_equal(band[0].y[k:], rows[f"{metric}_low"][::-1])
        assert band[0].fillcolor == pf._rgba(pf.METHOD_STYLE["ppi"][0], 0.15)


def test_ess_diagonal_nominal_line_and_log_mse_axis():
    fig = pf.ess_curves_figure(_curves(), level=0.8)
    diagonal = [t for t in fig.data if t.name == "ESS = n (labels only)"]
    assert len(diagonal) == 1 and diagonal[0].line.dash == "dash"
    np.testing.assert_array_equal(diagonal[0].x, [50, 100, 200])
    np.testing.assert_array_equal(diagonal[0].y, diagonal[0].x)
    nominal = [s for s in fig.layout.shapes if s.y0 == s.y1 == 0.8]
    assert len(nominal) == 1 and nominal[0].yref == "y4" and nominal[0].line.dash == "dot"
    assert any(a.text == "nominal 80%" for a in fig.layout.annotations)
    assert fig.layout.yaxis2.type == "log"
    # n is roughly geometric: log x axes, and ESS and width on log axes too (issue 26: axes start where the data are)
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis3.type == "log" and fig.layout.yaxis4.type != "log"
    assert all(fig.layout[f"xaxis{i}"].type == "log" for i in ("", 2, 3, 4))
    assert fig.layout.yaxis4.range[0] <= 0.8 - 0.05 + 1e-9


def test_ess_draws_only_the_selected_model():
    curves = _curves()
    fig = pf.ess_curves_figure(curves, model="resnet18")
    assert "resnet18" in fig.layout.title.subtitle.text
    chosen = curves[(curves["model"] == "resnet18") & (curves["method"] == "classical")].sort_values("n")
    line = [t for t in fig.data if t.name == LABELS[0] and t.xaxis in (None, "x")][0]
    np.testing.assert_array_equal(line.y, chosen["ess"])  # model offset: 100 more than 'all models'
    coverage = [t for t in fig.data if t.name == LABELS[0] and t.xaxis == "x4"][0]
    np.testing.assert_allclose(coverage.y, chosen["coverage"])
    default = pf.ess_curves_figure(curves)
    line_all = [t for t in default.data if t.name == LABELS[0] and t.xaxis in (None, "x")][0]
    assert not np.allclose(line_all.y, line.y)


def test_ess_unknown_model_raises_with_the_available_ones():
    with pytest.raises(ValueError, match=r"'vit-b'.*available: 'all models', 'resnet18'"):
        pf.ess_curves_figure(_curves(), model="vit-b")
    with pytest.raises(ValueError, match="lam"):
        pf.ess_curves_figure(_curves().drop(columns="lam"))


def test_ess_missing_band_rows_are_left_out_and_methods_may_be_absent():
    curves = _curves(models=("all models",))
    curves = curves[curves["method"] != "ppi"].copy()
    curves.loc[(curves["method"] == "ppi++") & (curves["n"] == 100), "width_low"] = np.nan
    fig = pf.ess_curves_figure(curves)
    assert [t.name for t in fig.data if t.showlegend is not False] == [
        "ESS = n (labels only)", LABELS[0], LABELS[2], "empirical ESS (MSE ratio)"]
    band = [t for t in _bands(_axis_traces(fig, "x3", "y3")) if t.legendgroup == "ppi++"][0]
    assert list(band.x) == [50, 200, 200, 50]


def test_rank_correlation_figure_uses_all_models_rows_and_bands():
    curves = _curves()
    curves.loc[curves["model"] == "resnet18", "rank_corr"] = -0.9  # must not be drawn
    fig = pf.rank_correlation_figure(curves)
    assert len(fig.data) == 6 and len(_bands(fig.data)) == 3
    assert [t.name for t in fig.data if t.showlegend is not False] == LABELS
    rows = curves[(curves["model"] == "all models") & (curves["method"] == "ppi++")].sort_values("n")
    line = [t for t in fig.data if t.name == LABELS[2]][0]
    np.testing.assert_allclose(line.y, rows["rank_corr"])
    band = [t for t in _bands(fig.data) if t.legendgroup == "ppi++"][0]
    np.testing.assert_allclose(band.y, np.concatenate([rows["rank_corr_high"], rows["rank_corr_low"][::-1]]))
    assert tuple(fig.layout.yaxis.range) == (-0.05, 1.05)


def test_rank_correlation_axis_widens_for_negative_values():
    curves = _curves(models=("all models",))
    curves.loc[0, ["rank_corr", "rank_corr_low"]] = [-0.3, -0.5]
    fig = pf.rank_correlation_figure(curves)
    assert fig.layout.yaxis.range[0] < -0.5 and fig.layout.yaxis.range[1] == 1.05
    with pytest.raises(ValueError, match="all models"):
        pf.rank_correlation_figure(_curves(models=("resnet18",)))


def _annotators() -> pd.DataFrame:
    return pd.DataFrame({
        "model": ["esm", "esm", "vespa", "vespa"],
        "annotator": ["CARP", "VESPA", "CARP", "VESPA"],
        "quality": [0.2, 0.6, 0.25, 0.65],
        "ess_ratio": [1.1, 1.5, 1.05, 1.6],
        "ess_ratio_low": [1.0, 1.4, np.nan, 1.5],
        "ess_ratio_high": [1.2, 1.6, np.nan, 1.7],
        "n": [500, 500, 500, 500],
    })


def test_annotator_quality_error_bars_and_reference_line():
    fig = pf.annotator_quality_figure(_annotators())
    carp = [t for t in fig.data if t.name == "CARP"]
    assert len(carp) == 2 and [t.showlegend for t in carp] == [True, False]
    with_bars, without = carp
    np.testing.assert_allclose(with_bars.x, [0.2])
    np.testing.assert_allclose(with_bars.error_y.array, [0.1])
    np.testing.assert_allclose(with_bars.error_y.arrayminus, [0.1])
    np.testing.assert_allclose(without.x, [0.25])
    assert without.error_y.array is None  # NaN bounds: no error bar at all
    vespa = [t for t in fig.data if t.name == "VESPA"]
    assert len(vespa) == 1 and len(vespa[0].error_y.array) == 2
    assert with_bars.marker.color != vespa[0].marker.color
    assert list(with_bars.marker.symbol) != list(without.marker.symbol)  # esm vs vespa symbols
    assert [t.name for t in fig.data if t.name.startswith("model ")] == ["model esm", "model vespa"]
    ref = [s for s in fig.layout.shapes if s.y0 == s.y1 == 1.0]
    assert len(ref) == 1 and ref[0].line.dash == "dash"
    assert any(a.text == "classical (labels only)" for a in fig.layout.annotations)
    assert "n = 500" in fig.layout.title.subtitle.text
    assert "%{customdata[4]:,}" in with_bars.hovertemplate and "ESS / n" in with_bars.hovertemplate


def test_annotator_quality_single_model_has_no_symbol_legend():
    table = _annotators()
    fig = pf.annotator_quality_figure(table[table["model"] == "esm"])
    assert [t.name for t in fig.data] == ["CARP", "VESPA"]
    with pytest.raises(ValueError, match="quality"):
        pf.annotator_quality_figure(table.drop(columns="quality"))


def _projection() -> pd.DataFrame:
    ns = np.array([100, 200, 400])
    return pd.concat([pd.DataFrame({"model": m, "n": ns, "ess": ns * f, "width_classical": 1 / np.sqrt(ns),
                                    "width_ppi": 1 / np.sqrt(ns * f)}) for m, f in (("a", 1.5), ("b", 1.2))])


def test_projection_figure_panels_and_optional_lines():
    fig = pf.projection_figure(_projection())
    left, right = _axis_traces(fig, "x", "y"), _axis_traces(fig, "x2", "y2")
    assert [t.name for t in left] == ["ESS = n (labels only)", "a", "b"]
    np.testing.assert_array_equal(left[0].y, left[0].x)
    np.testing.assert_array_equal(left[0].x, [100, 200, 400])
    np.testing.assert_allclose(left[1].y, [150, 300, 600])
    assert [(t.name, t.line.dash) for t in right] == [
        ("a PPI++", "solid"), ("a classical", "dot"), ("b PPI++", "solid"), ("b classical", "dot"),
        ("solid: PPI++", "solid"), ("dotted: classical (labels only)", "dot")]
    assert right[0].line.color == right[1].line.color == left[1].line.color == pf.color(0)
    assert right[2].line.color == pf.color(1)
    assert [t.name for t in fig.data if t.showlegend is not False] == [
        "ESS = n (labels only)", "a", "b", "solid: PPI++", "dotted: classical (labels only)"]
    assert len(fig.layout.shapes) == 0


def test_projection_lines_at_actual_n_and_target_width_when_given():
    fig = pf.projection_figure(_projection(), actual_n=150)
    vertical = [s for s in fig.layout.shapes if s.x0 == s.x1 == 150]
    assert len(vertical) == 2 and len(fig.layout.shapes) == 2
    assert any(a.text == "labels so far" for a in fig.layout.annotations)
    fig = pf.projection_figure(_projection(), target_width=0.05)
    assert len(fig.layout.shapes) == 1
    shape = fig.layout.shapes[0]
    assert shape.y0 == shape.y1 == 0.05 and shape.yref == "y2" and shape.line.dash == "dashdot"
    assert any(a.text == "target width" for a in fig.layout.annotations)
    both = pf.projection_figure(_projection(), actual_n=150, target_width=0.05)
    assert len(both.layout.shapes) == 3


def test_all_figures_serialize():
    curves = _curves()
    figures = [pf.ess_curves_figure(curves), pf.rank_correlation_figure(curves),
               pf.annotator_quality_figure(_annotators()),
               pf.projection_figure(_projection(), actual_n=150, target_width=0.05)]
    for fig in figures:
        assert isinstance(fig, go.Figure)
        payload = json.loads(fig.to_json())
        assert payload["data"] and payload["layout"]["template"]
        assert payload["layout"]["title"]["subtitle"]["text"]
        assert payload["layout"]["legend"]["orientation"] == "h"
