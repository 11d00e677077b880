"""Issue 26 on the Labeling-budget and AI-assisted evaluation pages: each opens with one plain sentence that
answers its question at the sidebar's level (the first element after the title), its numbers are the table's,
method words carry their glossary line, jargon and diagnostics sit in expanders, and the AI-assisted charts' axes
start where the data are. Known answers are computed here by hand (or by hand-written formulas)."""

from __future__ import annotations

import base64
import json
import math
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from scipy.stats import norm
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Expander

from evalcore.ppi import figures as pf
from evalcore.sampling import figures as sf
from evalcore.stats import headline
from evalcore.stats.glossary import PAPERS, TERMS
from test_autoeval import hand_ppi_plus
from test_pages import assert_no_exception, charts, independent_demo, load_demo, open_app, shown, table_with, upload

#: words of the methods' jargon that must not be on the page outside an expander (issue 26)
SAMPLING_JARGON = ("SRS + HT", "SSRS", "N_h", "S_h", "eqs.", "the paper's", "PPI++-style", "HT (", "DF (")
AUTOEVAL_JARGON = (r"\blam\b", r"\bchi2", r"\bESS\b", r"the paper's")


# ------------------------------------------------------------------------------------------------------------------
# reading the page in order


def elements(at: AppTest) -> list[tuple[object, bool]]:
    """The main area's elements in page order, each with whether it sits inside an expander."""
    out: list[tuple[object, bool]] = []

    def walk(node, inside: bool) -> None:
        for child in getattr(node, "children", {}).values():
            if hasattr(child, "children") and type(child).__name__ in ("Block", "Expander", "Tab", "Column",
                                                                       "Tabs", "Columns"):
                walk(child, inside or isinstance(child, Expander))
            else:
                out.append((child, inside))

    walk(at.main, False)
    return out


def text_of(element) -> str | None:
    value = getattr(element, "value", None)
    return shown(value) if isinstance(value, str) else None


def answer_after_title(at: AppTest, title: str) -> str:
    """The first element after the title must be the page's answer (a subheader); its text."""
    items = elements(at)
    kinds = [type(e).__name__ for e, _ in items]
    assert kinds[0] == "Title" and items[0][0].value == title, kinds[:3]
    first, inside = items[1]
    assert type(first).__name__ == "Subheader" and not inside, (kinds[:4], text_of(first))
    return text_of(first)


def visible_texts(at: AppTest) -> list[str]:
    """Texts outside expanders (titles, subheaders, captions, markdown, alerts)."""
    return [t for e, inside in elements(at) if not inside and (t := text_of(e))]


def tooltips(at: AppTest) -> dict[str, str]:
    """caption text -> its help line, for the captions that carry one."""
    return {shown(c.value): c.help for c in at.caption if getattr(c, "help", None)}


def figure(chart) -> go.Figure:
    """The chart's figure with plotly's binary-encoded arrays ({"dtype", "bdata"}) decoded to lists."""
    def decode(node):
        if isinstance(node, dict):
            if set(node) >= {"dtype", "bdata"}:
                values = np.frombuffer(base64.b64decode(node["bdata"]), dtype=np.dtype(node["dtype"]))
                shape = [int(k) for k in str(node.get("shape", len(values))).split(",")]
                return values.reshape(shape).tolist()
            return {k: decode(v) for k, v in node.items()}
        if isinstance(node, list):
            return [decode(v) for v in node]
        return node

    return go.Figure(decode(json.loads(chart.proto.spec)))


def chart_named(at: AppTest, prefix: str):
    found = [c for c in charts(at) if c.key.startswith(f"chart-{prefix}")]
    assert found, [c.key for c in charts(at)]
    return found[0]


def counts_in(sentence: str) -> list[int]:
    """The whole numbers of a sentence ('3,480' -> 3480), left to right, percentages and decimals left out."""
    return [int(m.replace(",", "")) for m in re.findall(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+)(?![\d.%]|,\d)",
                                                      sentence)]


def goto(at: AppTest, script: str, title: str) -> AppTest:
    at.switch_page(f"pages/{script}.py")
    at.run()
    assert_no_exception(at)
    assert [t.value for t in at.title] == [title]
    return at


# ------------------------------------------------------------------------------------------------------------------
# Labeling budget


def test_labeling_budget_opens_with_the_labels_needed_at_the_sidebar_level():
    at = open_app()  # the synthetic demo: atlas-l first, 8,700 examples, 3,480 labeled
    at.select_slider(key="w_level").set_value(0.9)
    at.run()
    goto(at, "sampling", "Labeling budget")
    assert not at.error
    answer = answer_after_title(at, "Labeling budget")
    assert answer.startswith("About ") and "stratified by the model's confidence (proportional allocation)" in answer
    assert "atlas-l's accuracy to ±0.025 at 90% on average" in answer, answer
    assert "with simple random sampling" in answer and "give a 90% chance that one sample does" in answer

    needed = table_with(at, "plan", "labels_needed", "labels_for_probability", "design", "estimator")
    row = needed.set_index(["design", "estimator"])
    n_strat, n_srs, n_sure = counts_in(answer)[:3]
    assert n_strat == row.at[("proportional", "ht"), "labels_needed"]
    assert n_srs == row.at[("srs", "ht"), "labels_needed"]
    assert n_sure == row.at[("proportional", "ht"), "labels_for_probability"]
    assert list(needed["labels_needed"]) == sorted(needed["labels_needed"])  # fewest first, as the chart
    # hand-computed at the sidebar's 90%: SRS trusting the proxy needs the smallest n with
    # (1 - n/N) S^2 / n <= (w / (2 z))^2, S^2 = pbar (1 - pbar), z = Phi^-1(0.95): n = ceil(S^2 / (L + S^2 / N))
    frame = independent_demo("synthetic")
    proxy = frame.loc[frame["model"] == "atlas-l", "confidence"].to_numpy(float)
    s2, big_n = proxy.mean() * (1 - proxy.mean()), len(proxy)
    limit = (0.05 / (2 * norm.ppf(0.95))) ** 2
    full = table_with(at, "labels_needed_calibrated", "design")
    assert full.set_index(["design", "estimator"]).at[("srs", "ht"), "labels_needed_calibrated"] == \
        math.ceil(s2 / (limit + s2 / big_n))
    assert big_n == 8700 and math.ceil(s2 / (limit + s2 / big_n)) == 547  # the count written out once

    # the answer's chart follows it: one bar per plan, fewest labels on top, the count axis from 0 (a length)
    fig = figure(chart_named(at, "labels-needed-by-plan"))
    bars = fig.data[0]
    assert list(bars.x) == sorted(needed["labels_needed"]) and list(bars.y) == list(needed["plan"])
    assert fig.layout.xaxis.range[0] == 0 and fig.layout.xaxis.range[1] >= needed["labels_for_probability"].max()


def test_labeling_budget_plain_words_tooltips_and_expanders():
    at = goto(open_app(), "sampling", "Labeling budget")
    texts = " ".join(visible_texts(at))
    for word in SAMPLING_JARGON:
        assert word not in texts, word
    assert "**" not in texts and not re.search(r"\d\.0000\b", texts)
    assert PAPERS["sampling"] in " ".join(shown(c.value) for c in at.caption)  # the paper by name
    helps = tooltips(at)
    for term in ("SRS", "stratified", "Neyman", "proportional", "Horvitz-Thompson", "proxy"):
        assert TERMS[term] in helps.values(), term
    # the formulas and the per-stratum table with N_h live in "Allocation formulas"
    expanders = {shown(e.label): e for e in at.expander}
    assert "Allocation formulas" in expanders
    inside = [d.value for d in expanders["Allocation formulas"].dataframe]
    assert any("N_h" in frame.columns for frame in inside)
    assert "n_h ∝ N_h" in " ".join(shown(c.value) for c in expanders["Allocation formulas"].caption)
    outside = [e.value for e, inside in elements(at) if type(e).__name__ == "Dataframe" and not inside]
    assert not any("N_h" in frame.columns for frame in outside)


def test_labeling_budget_with_simple_random_sampling_chosen():
    at = goto(open_app(), "sampling", "Labeling budget")
    at.radio(key="sp_design").set_value("srs")
    at.run()
    answer = answer_after_title(at, "Labeling budget")
    row = table_with(at, "plan", "labels_needed", "design").set_index(["design", "estimator"])
    assert answer.startswith(f"About {headline.count(row.at[('srs', 'ht'), 'labels_needed'])} labels drawn by "
                             "simple random sampling"), answer
    assert f"against {headline.count(row.at[('proportional', 'ht'), 'labels_needed'])} stratified" in answer
    assert "at 95%" in answer  # the default level


# ------------------------------------------------------------------------------------------------------------------
# AI-assisted evaluation


def test_ai_assisted_opens_with_the_leader_and_the_judges_worth():
    at = open_app()
    at.select_slider(key="w_level").set_value(0.9)
    at.run()
    goto(at, "autoeval", "AI-assisted evaluation")
    assert not at.error
    answer = answer_after_title(at, "AI-assisted evaluation")
    # hand-computed PPI++ of every model (labeled / unlabeled rows of the independent demo)
    frame = independent_demo("synthetic")
    hand = {}
    for model, rows in frame.groupby("model"):
        labeled, unlabeled = rows[rows["correct"].notna()], rows[rows["correct"].isna()]
        hand[model] = hand_ppi_plus(labeled["correct"].to_numpy(float), labeled["confidence"].to_numpy(float),
                                    unlabeled["confidence"].to_numpy(float))
    order = sorted(hand, key=lambda m: -hand[m][0])
    leader, (est, se, _) = order[0], hand[order[0]]
    z = norm.ppf(0.95)
    n = int(frame[(frame["model"] == leader)]["correct"].notna().sum())
    assert answer.startswith(f"With {headline.count(n)} human labels and the AI judge, {leader} leads on accuracy at "
                             f"{headline.number(est)} (90% interval {headline.number(est - z * se)}–"
                             f"{headline.number(est + z * se)})"), answer
    assert leader == "atlas-l" and n == 3480
    table = table_with(at, "model", "method", "estimate", "ess", "ess_low", "ess_high")
    plus = table[table["method"] == "PPI++ (tuned λ)"].set_index("model")
    ess = plus.at[leader, "ess"]
    assert ess == round(ess)  # a count of labels, shown whole
    assert (f"the judge is worth about {headline.count(ess - n)} extra labels (effective sample size "
            f"{headline.count(ess)}, 90% interval {headline.count(plus.at[leader, 'ess_low'])}–"
            f"{headline.count(plus.at[leader, 'ess_high'])})") in answer, answer
    # tables and chart best first (by the PPI++ estimate), models' rows together
    assert list(dict.fromkeys(table["model"])) == order
    fig = figure(chart_named(at, "ppi-interval-comparison"))
    assert list(dict.fromkeys(fig.data[0].y)) == order
    # issue 26: the x axis starts where the data are (grouped dots made plotly include 0)
    low, high = table["ci_low"].min(), table["ci_high"].max()
    assert fig.layout.xaxis.range[0] == pytest.approx(low - 0.05 * (high - low))
    assert fig.layout.xaxis.range[1] == pytest.approx(high + 0.05 * (high - low))
    assert fig.layout.xaxis.range[0] > 0.5


def test_ai_assisted_plain_words_tooltips_and_diagnostics_in_expanders():
    at = goto(open_app(), "autoeval", "AI-assisted evaluation")
    texts = " ".join(visible_texts(at))
    for pattern in AUTOEVAL_JARGON:
        assert not re.search(pattern, texts), (pattern, re.search(pattern, texts))
    assert "**" not in texts
    captions = " ".join(shown(c.value) for c in at.caption)
    assert PAPERS["autoeval"] in captions and PAPERS["ppi++"] in captions
    helps = tooltips(at)
    for term in ("PPI", "PPI++", "lambda", "ESS"):
        assert TERMS[term] in helps.values(), term
    outside = [e.value for e, inside in elements(at) if type(e).__name__ == "Dataframe" and not inside]
    assert outside and not any({"lam", "chi2_low", "ess_plugin"} & set(frame.columns) for frame in outside)
    labels = [shown(e.label) for e in at.expander]
    diagnostics = [label for label in labels if label.startswith("Estimate diagnostics and simultaneous intervals")]
    assert len(diagnostics) == 1
    inside = [d.value for d in at.expander[labels.index(diagnostics[0])].dataframe]
    assert any("lam" in frame.columns for frame in inside) and any("chi2_low" in frame.columns for frame in inside)


def test_ai_assisted_battles_open_with_the_strongest_model():
    at = open_app()
    load_demo(at, "battles")
    goto(at, "autoeval", "AI-assisted evaluation")
    answer = answer_after_title(at, "AI-assisted evaluation")
    table = table_with(at, "model", "method", "coefficient", "se", "ci_low", "ci_high")
    plus = table[table["method"] == "PPI++ (tuned λ)"].sort_values("coefficient", ascending=False)
    top = plus.iloc[0]
    reference = at.selectbox(key="ae_reference").value
    assert answer.startswith(f"With 900 human votes and the AI judge, {top['model']} leads on strength (log-odds "
                             f"against {reference}) at {headline.number(top['coefficient'])} (95% interval "
                             f"{headline.number(top['ci_low'])}–{headline.number(top['ci_high'])})"), answer
    assert list(dict.fromkeys(table["model"])) == list(plus["model"])  # strongest first
    assert int(independent_demo("battles")["outcome"].notna().sum()) == 900
    fig = figure(chart_named(at, "bradley-terry-coefficients"))
    low, high = min(table["ci_low"].min(), 0.0), max(table["ci_high"].max(), 0.0)
    assert tuple(fig.layout.xaxis.range) == pytest.approx((low - 0.05 * (high - low), high + 0.05 * (high - low)))


def test_imagenet_x_ai_assisted_answer_and_axes_from_the_data(shared_file):
    """The real ImageNet-X log (4 models x 50,000 images, fully labeled): the answer is the judge's measured worth,
    and the split study's n runs on a log axis (on a linear one it started at 0 and piled the small n against it)."""
    at = open_app()
    upload(at, "imagenet_x_predictions.csv.gz", shared_file("imagenet_x_predictions.csv.gz").read_bytes(),
           "application/gzip")
    goto(at, "autoeval", "AI-assisted evaluation")
    assert not at.error
    answer = answer_after_title(at, "AI-assisted evaluation")
    curves = table_with(at, "n", "method", "model", "ess", "ess_empirical", "ess_low", "ess_high")
    rows = curves[(curves["model"] == "all models") & (curves["method"] == "ppi++")].sort_values("n")
    row = rows.iloc[(len(rows) - 1) // 2]
    assert answer.startswith(f"Measured on 50,000 fully labeled examples: with {headline.count(row['n'])} human "
                             f"labels and the AI judge, accuracy is as precise as with about "
                             f"{headline.count(row['ess_empirical'])} labels alone"), answer
    assert row["ess_empirical"] > 1.3 * row["n"]  # the paper's ~50% gain
    fig = figure(chart_named(at, "ess-curves"))
    assert all(fig.layout[f"xaxis{i}"].type == "log" for i in ("", 2, 3, 4))
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis3.type == "log"
    low = curves.loc[curves["model"] == "all models", ["coverage", "coverage_low"]].to_numpy(float).min()
    assert fig.layout.yaxis4.range[0] == pytest.approx(max(0.0, min(low, 0.95) - 0.05))


# ------------------------------------------------------------------------------------------------------------------
# the figures' axes with known data


def known_estimates() -> pd.DataFrame:
    rows = []
    for model, value in (("m-low", 0.60), ("m-mid", 0.70), ("m-high", 0.80)):
        for method in ("classical (labels only)", "PPI++ (tuned λ)"):
            rows.append({"model": model, "method": method, "estimate": value, "ci_low": value - 0.02,
                         "ci_high": value + 0.02})
    return pd.DataFrame(rows)


def test_estimates_figure_axis_runs_from_the_lowest_to_the_highest_bound():
    fig = pf.estimates_figure(known_estimates(), "t", "accuracy", "s")
    # bounds 0.58 .. 0.82, span 0.24, margin 5% = 0.012: the axis is [0.568, 0.832], not [0, 0.832]
    assert tuple(fig.layout.xaxis.range) == pytest.approx((0.568, 0.832))
    with_reference = pf.estimates_figure(known_estimates(), "t", "coefficient", "s", reference=0.0)
    assert tuple(with_reference.layout.xaxis.range) == pytest.approx((-0.041, 0.861))  # 0 .. 0.82, margin 0.041


def test_data_range_of_equal_values_and_of_nothing():
    assert pf.data_range([0.7, 0.7]) == pytest.approx([0.65, 0.75])  # the larger of 5% of 0.7 and 0.05
    assert pf.data_range([3.0, 3.0]) == pytest.approx([2.85, 3.15])
    assert pf.data_range([np.nan]) == [0.0, 1.0]
    assert pf.data_range([2.0, 4.0], include=(10.0,)) == pytest.approx([1.6, 10.4])


def test_projection_figure_uses_log_axes_for_n_ess_and_width():
    table = pd.DataFrame({"model": "m", "n": [2, 20, 200, 2000], "ess": [3.0, 30.0, 300.0, 3000.0],
                          "width_classical": [1.4, 0.44, 0.14, 0.044], "width_ppi": [1.2, 0.38, 0.12, 0.038]})
    fig = pf.projection_figure(table, actual_n=200, target_width=0.1)
    assert fig.layout.xaxis.type == fig.layout.xaxis2.type == "log"
    assert fig.layout.yaxis.type == fig.layout.yaxis2.type == "log"
    assert "95% intervals" in fig.layout.title.subtitle.text  # the default level is the dashboard's


def test_labels_needed_figure_fewest_first_and_count_axis_from_zero():
    needed = pd.DataFrame({"design": ["srs", "proportional", "neyman"], "estimator": "ht",
                           "labels_needed": [778, 627, 545], "labels_for_probability": [833, 677, 630]})
    fig = sf.labels_needed_figure(needed, 0.95, 0.05, 0.9)
    assert list(fig.data[0].x) == [545, 627, 778]
    assert list(fig.data[0].y) == ["stratified, Neyman, plain average", "stratified, proportional, plain average",
                                   "simple random sample, plain average (baseline)"]
    assert list(fig.data[0].error_x.array) == [85, 50, 55]  # up to the count for a 90% chance
    assert tuple(fig.layout.xaxis.range) == pytest.approx((0, 833 * 1.05))
    assert "95% interval no wider than 0.05 (±0.025)" in fig.layout.title.subtitle.text
