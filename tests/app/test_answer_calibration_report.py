"""Answer first on the Calibration and Report pages (issue 26): each opens with one plain sentence whose numbers are
the page's own table's, the rest follows; large logs get their slow parts on request (first screens stay fast).

Known answers: model "steady" says 0.75 on 40 examples and is right on 30 of them (ECE 0: every bin's accuracy equals
its confidence); model "boastful" says 0.9 on 40 examples and is right on 20 (ECE |0.5 - 0.9| = 0.4). With every
confidence tied, the area under the selective-accuracy curve is the accuracy (0.75 and 0.5), and accuracy at 80%
coverage takes the whole tie (coverage 1).
"""

from __future__ import annotations

import base64
import json

import numpy as np
import pandas as pd
import pytest

from evalcore.calibration import answer
from evalcore.data.export import csv_bytes
from evalcore.stats.headline import DASH, number
from pages.common import calibration_cache as cc
from pages.common import report_cache as rc
from pages.common.store import store
from test_pages import assert_no_exception, charts, goto, open_app, shown, table_with, texts, upload
from test_report_page import last_report


def tied_log() -> pd.DataFrame:
    steady = pd.DataFrame({"model": "steady", "example_id": np.arange(40), "confidence": 0.75,
                           "correct": [1] * 30 + [0] * 10})
    boastful = pd.DataFrame({"model": "boastful", "example_id": np.arange(40), "confidence": 0.9,
                             "correct": [1] * 20 + [0] * 20})
    return pd.concat([steady, boastful], ignore_index=True)


def answer_text(at) -> str:
    """The page's answer: the first subheader, right under the title."""
    return shown(at.subheader[0].value)


def decoded(values) -> list[float]:
    """A plotly spec's array (a list, or plotly's base64 typed array)."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).tolist()
    return list(values)


def span(row, level: str = "95%") -> str:
    return f"{number(row['debiased'])} ({level} interval {number(row['ci_low'])}{DASH}{number(row['ci_high'])})"


# ------------------------------------------------------------------------------------------------------------------
# the sentence itself


def test_sentence_names_best_and_least_calibrated_with_the_tables_numbers():
    table = pd.DataFrame({"model": ["b", "a", "c"], "ece": [0.05, 0.02, 0.2], "debiased": [0.04, 0.0125, 0.18],
                          "ci_low": [0.03, 0.0, 0.15], "ci_high": [0.05, 0.0301, 0.21]})
    assert answer.sentence(table, 0.9) == (
        "a is best calibrated: expected calibration error 0.0125 (90% interval 0.00\u20130.0301); its interval "
        "reaches 0: no measurable miscalibration; c is the least, its confidence off by 0.180 (90% interval "
        "0.150\u20130.210) on average.")
    assert list(answer.ranked(table)["model"]) == ["a", "b", "c"]
    one = table[table["model"] == "c"]
    assert answer.sentence(one, 0.95) == "c: expected calibration error 0.180 (95% interval 0.150\u20130.210)."
    tie = pd.DataFrame({"model": ["z", "y"], "debiased": [0.1, 0.1], "ci_low": [0.05, 0.05], "ci_high": [0.2, 0.2]})
    assert answer.sentence(tie, 0.95).startswith("y is best calibrated")  # ties by name
    assert answer.sentence(table.iloc[:0], 0.95) == "No model's calibration error can be estimated from the selection."


# ------------------------------------------------------------------------------------------------------------------
# Calibration page


def test_calibration_opens_with_the_answer_then_the_chart_best_first():
    at = upload(open_app(), "tied.csv", csv_bytes(tied_log()))
    goto(at, "calibration")
    assert not texts(at.error) and not texts(at.warning)
    table = table_with(at, "model", "ece", "debiased", "ci_low", "ci_high").set_index("model")
    assert table.loc["steady", "ece"] == pytest.approx(0.0, abs=1e-12)
    assert table.loc["boastful", "ece"] == pytest.approx(0.4, abs=1e-12)
    assert table.loc["steady", "ci_low"] == 0.0  # no measurable miscalibration
    sentence = answer_text(at)
    assert sentence == (f"steady is best calibrated: expected calibration error {span(table.loc['steady'])}; its "
                        f"interval reaches 0: no measurable miscalibration; boastful is the least, its confidence "
                        f"off by {span(table.loc['boastful'])} on average.")
    assert number(table.loc["boastful", "debiased"]).startswith("0.3") or \
        number(table.loc["boastful", "debiased"]).startswith("0.4")  # the debiased ECE sits near the plug-in 0.4
    # the first chart is the ECE by model, best calibrated on top
    first = charts(at)[0]
    assert first.key.startswith("chart-ece-by-model")
    spec = json.loads(first.proto.spec)
    assert list(spec["data"][0]["y"]) == ["steady", "boastful"]
    assert decoded(spec["data"][0]["x"]) == pytest.approx([table.loc[m, "debiased"] for m in ("steady", "boastful")])
    # details in named expanders, method names with their glossary line
    labels = [e.label for e in at.expander]
    assert any(label.startswith("ECE table by model") for label in labels)
    assert any(label.startswith("Bins of steady") for label in labels)  # the open tab: the leader (30 of 40 right)
    helps = {h.value: h.proto.help for h in at.subheader}
    assert "Expected calibration error" in helps["Calibration error by model"]
    assert "diagonal" in helps["Reliability diagrams"]
    assert "Holistic Evaluation of Language Models" in " ".join(texts(at.caption))
    # small log: selective prediction and the breakdown come with the first screen
    selective = table_with(at, "model", "area", "accuracy_at_coverage", "coverage").set_index("model")
    assert selective["area"].to_dict() == pytest.approx({"steady": 0.75, "boastful": 0.5}, abs=1e-12)
    assert selective["accuracy_at_coverage"].to_dict() == pytest.approx({"steady": 0.75, "boastful": 0.5})
    assert selective["coverage"].tolist() == [1.0, 1.0]
    assert len(charts(at)) == 4  # ECE by model, the open tab's diagram, selective curves, breakdown


def test_a_large_log_gets_selective_prediction_and_breakdown_when_opened(monkeypatch):
    monkeypatch.setattr(cc, "AT_ONCE", 10)  # 80 examples x 500 replicates: "large"
    at = upload(open_app(), "tied.csv", csv_bytes(tied_log()))
    goto(at, "calibration")
    assert answer_text(at).startswith("steady is best calibrated")
    assert [c.key.split("-")[1] for c in charts(at)] == ["ece", "reliability"]  # the first screen: no bootstrap yet
    assert not any("area" in d.value.columns for d in at.dataframe)
    assert any("Computed when opened: 80 examples x 500 bootstrap replicates" in c for c in texts(at.caption))
    at.session_state["cal_selective_on_demand"] = True  # the user opens the expander
    at.run()
    assert_no_exception(at)
    selective = table_with(at, "model", "area").set_index("model")
    assert selective["area"].to_dict() == pytest.approx({"steady": 0.75, "boastful": 0.5}, abs=1e-12)
    assert len(charts(at)) == 3
    at.session_state["cal_breakdown_on_demand"] = True
    at.run()
    assert_no_exception(at)
    breakdown = table_with(at, "model", "task", "ece").set_index("model")
    assert breakdown["ece"].to_dict() == pytest.approx({"steady": 0.0, "boastful": 0.4}, abs=1e-12)


# ------------------------------------------------------------------------------------------------------------------
# Report page


def exact_three() -> pd.DataFrame:
    """Accuracies exactly 0.5, 0.7 and 0.9 on 80 examples each."""
    return pd.concat([pd.DataFrame({"model": m, "example_id": np.arange(80), "correct": [1] * k + [0] * (80 - k),
                                    "confidence": 0.8})
                      for m, k in (("alpha", 40), ("beta", 56), ("gamma", 72))], ignore_index=True)


def test_report_opens_with_what_it_holds_and_its_headline():
    at = upload(open_app(), "three.csv", csv_bytes(exact_three()))
    goto(at, "report")
    built = last_report()
    sentence = answer_text(at)
    assert sentence == rc.sentence(built, 240, 3)
    assert sentence.startswith(f"The report holds {', '.join(built.sections[:-1])} and {built.sections[-1]} for 240 "
                               "rows of 3 models. Top model: gamma, overall accuracy")
    assert "Accuracy by model" in built.sections and "Calibration" in built.sections
    assert " 0.900 (" in sentence  # gamma's accuracy, 72 of 80
    html = built.html.decode("utf-8")
    board = json.loads(html.split('id="evalcore-numbers">')[1].split("</script>")[0])
    overall = pd.DataFrame(board["sections"]["leaderboard"]["tables"]["overall"]).set_index("model")
    assert overall.loc["gamma", "estimate"] == pytest.approx(0.9)
    low, high = overall.loc["gamma", ["ci_low", "ci_high"]]
    assert f"0.900 ({low:.3f} to {high:.3f})" in sentence  # the sentence's interval is the leaderboard table's
    assert [t.value for t in at.text][0] == f"• {built.summary[0]}"


def test_a_large_selection_builds_its_report_on_the_button(monkeypatch):
    monkeypatch.setattr(rc, "AT_ONCE_ROWS", 100)  # 240 rows: "large"
    store().clear()  # not built by another test of this process
    at = upload(open_app(), "three.csv", csv_bytes(exact_three()))
    goto(at, "report")
    assert answer_text(at).startswith("The report of these 240 rows of 3 models is built when you ask for it")
    assert not at.get("download_button")
    [build] = [b for b in at.button if b.label == "Build the report"]
    build.click()
    at.run()
    assert_no_exception(at)
    assert [b.proto.label for b in at.get("download_button")] == ["Download the report (HTML)"]
    assert answer_text(at) == rc.sentence(last_report(), 240, 3)
    at.run()  # a rerun keeps the built report (the button's click is gone)
    assert_no_exception(at)
    assert [b.proto.label for b in at.get("download_button")] == ["Download the report (HTML)"]
    assert not [b for b in at.button if b.label == "Build the report"]
