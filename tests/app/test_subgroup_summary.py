"""The Subgroups page on an uploaded per-subgroup summary: the numbers shown are evalcore.subgroups.robust_intervals.ebci's, and on the
R package's commuting-zone data they are the vignette's."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

from evalcore.data.display import literal, plotly_literal
from evalcore.subgroups.robust_intervals import ebci
from evalcore.data.export import neutralize
from test_hostile_names import FILENAME, GROUPS, MODELS, figure_strings, markdown_texts, served  # noqa: F401
from test_pages import assert_no_exception, charts, csv_bytes, goto, open_app, table_with, texts


def summary_view(at):
    goto(at, "subgroups")
    at.radio(key="sg_source").set_value("summary")
    at.run()
    assert_no_exception(at)
    return at


def upload_summary(at, name: str, content: bytes):
    at.file_uploader(key="sga_upload").set_value((name, content, "text/csv"))
    at.run()
    assert_no_exception(at)
    return at


def test_cz_vignette_uploaded_as_a_summary(shared_file):
    path = shared_file("ebci_cz.csv")
    fit = pd.read_csv(shared_file("ebci_cz_vignette_fit.csv"))
    at = summary_view(open_app())
    upload_summary(at, "ebci_cz.csv", path.read_bytes())
    assert any("Choose the columns for group, estimate, se" in t for t in texts(at.info))  # no suggested names
    at.selectbox(key="sga_role_group").set_value("cz")
    at.selectbox(key="sga_role_estimate").set_value("theta25")
    at.selectbox(key="sga_role_se").set_value("se25")
    at.select_slider(key="w_level").set_value(0.9)  # the sidebar's level is the level of the summary's intervals
    at.run()
    at.multiselect(key="sga_features").set_value(["stayer25"])
    at.run()
    assert_no_exception(at)
    assert not texts(at.error), texts(at.error)

    fits = table_with(at, "mu2", "kappa", "delta_stayer25")
    assert fits["mu2"].item() == pytest.approx(6.24386663953128e-03, rel=1e-10)
    assert fits["kappa"].item() == pytest.approx(778.533747961134, rel=1e-10)
    table = table_with(at, "group", "eb", "eb_low", "eb_high", "half_length")
    assert list(table["group"]) == [str(c) for c in fit["cz"]]
    np.testing.assert_allclose(table["eb"], fit["th_eb"], rtol=1e-8, atol=1e-13)
    np.testing.assert_allclose(table["half_length"], fit["len_eb"], rtol=1e-8)
    np.testing.assert_allclose(table["eb_high"] - table["eb_low"], 2 * fit["len_eb"], rtol=1e-8)
    [note] = texts(at.warning)
    assert "146 of 741 rows left out for a missing value" in note and "rows 54, 58, 59" in note  # file rows
    assert len(charts(at)) == 1  # the forest plot (first page of 60 of the 595 subgroups)
    assert any("on average across subgroups" in t for t in texts(at.info))


def test_generated_summary_with_models_and_synonyms():
    """Column names found by their synonyms (Subgroup, Accuracy, StdErr, System, count); per-model fits."""
    rng = np.random.default_rng(3)
    frames = []
    for model in ("m-a", "*m b*"):
        se = rng.uniform(0.02, 0.1, 40)
        frames.append(pd.DataFrame({"System": model, "Subgroup": [f"g{i}" for i in range(40)],
                                    "Accuracy": 0.7 + rng.normal(0, 0.05, 40) + se * rng.standard_normal(40),
                                    "StdErr": se, "count": rng.integers(5, 500, 40),
                                    "difficulty": rng.uniform(0, 1, 40)}))
    summary = pd.concat(frames, ignore_index=True)
    at = summary_view(open_app())
    upload_summary(at, "summary.csv", summary.to_csv(index=False).encode())
    assert not texts(at.error), texts(at.error)
    assert at.multiselect(key="sga_features").value == ["difficulty"]
    fits = table_with(at, "model", "mu2", "kappa", "delta_difficulty")
    table = table_with(at, "model", "group", "eb", "eb_low", "eb_high")
    for model, rows in summary.groupby("System"):
        expected = ebci(rows["Accuracy"], rows["StdErr"], rows[["difficulty"]], weights=1 / rows["StdErr"] ** 2)
        got = fits[fits["model"] == model]
        assert got["mu2"].item() == pytest.approx(expected.mu2, rel=1e-12)
        assert got["kappa"].item() == pytest.approx(expected.kappa, rel=1e-12)
        shown = table[table["model"] == model]
        np.testing.assert_allclose(shown["eb"], expected.table["eb"], rtol=1e-12)
        np.testing.assert_allclose(shown["eb_low"], expected.table["ci_low"], rtol=1e-12)
        np.testing.assert_allclose(shown["direct_low"], rows["Accuracy"] - 1.959963984540054 * rows["StdErr"],
                                   rtol=1e-12)
    assert at.selectbox(key="sga_model").options == sorted(["*m b*", "m-a"])
    assert any(literal("*m b*") in c.value for c in at.caption)  # shown literally, not as Markdown emphasis


def test_bad_summary_names_column_and_rows():
    bad = b"group,estimate,se\na,0.5,0.1\nb,0.6,0\nc,0.7,-0.2\n"
    at = summary_view(open_app())
    upload_summary(at, "bad.csv", bad)
    [error] = texts(at.error)
    assert "Column 'se' (se) must be positive" in error and "rows 2, 3" in error
    assert not charts(at)


def test_hostile_names_in_a_summary_are_shown_literally(served):
    """Model, group and feature names and the file name of a summary are data: escaped in Markdown and figures,
    neutralised in CSV downloads."""
    rng = np.random.default_rng(5)
    feature = "=cat $c$"
    rows = [{"model": m, "group": g, "estimate": 0.6 + rng.normal(0, 0.1), "se": 0.05 + 0.01 * j, "n": 10 + j,
             feature: float(j)} for m in MODELS for j, g in enumerate([*GROUPS, "g5", "g6", "g7"])]
    at = summary_view(open_app())
    upload_summary(at, FILENAME, csv_bytes(pd.DataFrame(rows)))
    assert not texts(at.error), texts(at.error)
    assert at.multiselect(key="sga_features").value == [feature]
    hostile = [*MODELS, *GROUPS, FILENAME, feature]
    for kind, text in markdown_texts(at):
        for name in hostile:
            assert name not in text.replace(literal(name), ""), f"raw name {name!r} in a {kind}: {text!r}"
    figure = figure_strings(at)
    assert any(plotly_literal("# g2") in s for s in figure)
    for text in figure:
        for name in hostile:
            assert name not in text.replace(plotly_literal(name), ""), f"raw {name!r} in the figure: {text!r}"
    assert any(c.value.startswith(literal(FILENAME)) for c in at.caption)
    tables = [data for data, mimetype, _ in served if mimetype == "text/csv"]
    cells = [cell for data in tables for row in csv.reader(io.StringIO(data.decode("utf-8"), newline=""))
             for cell in row]
    assert "'" + MODELS[0] in cells and "'\t=g4" in cells
    assert all(neutralize(cell) == cell for cell in cells)
