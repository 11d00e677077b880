"""The Compare page (issue 28) driven through AppTest from app.py: the verdict sentence first, the forest plot, the
2x2 table, the example browser (cell, slice, search, pages; text shown literally), and plain explanations for a
log of one model or two models without shared examples.

Known answers, counted by hand from :func:`two_models` (40 examples, ids 0-39; task t1 = ids 0-19, t2 = ids 20-39;
group g1 = even ids, g2 = odd ids):

- base model-a right on ids 0-29; new model-b right on ids 0-11 and 20-33.
- 2x2: both right 12 + 10 = 22, only base right 8 (ids 12-19), only new right 4 (ids 30-33), both wrong 6 (34-39).
- means on the 40 shared examples: base 30/40 = 0.75, new 26/40 = 0.65, difference -0.10 (-10 points).
- exact McNemar, two-sided: b = 8, c = 4: 2 * P(Bin(12, 1/2) <= 4) = 2 * 794/4096 = 0.3876953125.
- slices (each n = 20): t1 b = 8, c = 0: -0.40, p = 2/2^8 = 0.0078125; t2 b = 0, c = 4: +0.20, p = 2/2^4 = 0.125;
  g1 (even ids) b = 4 (12, 14, 16, 18), c = 2 (30, 32): -0.10, p = 2 * 22/64 = 0.6875; g2 the same by symmetry.
- Benjamini-Hochberg over the 4 slices: sorted p 0.0078125, 0.125, 0.6875, 0.6875 -> p * 4 / rank = 0.03125, 0.25,
  0.9167, 0.6875 -> running minimum from the largest: q = 0.03125 (t1), 0.25 (t2), 0.6875 (g1, g2).
- at a 10% false discovery rate t1 is flagged (worse): a regression. At 1% nothing is flagged and the overall
  interval holds 0 (p = 0.39): inconclusive.
"""

from __future__ import annotations

import pandas as pd
import pytest

from test_answer_sampling_autoeval import figure
from test_pages import assert_no_exception, charts, csv_bytes, goto, open_app, shown, table_with, texts, upload

HOSTILE_OUTPUT = "**bold** =1+1 <b>x</b> :red[red] $x$"


def two_models() -> pd.DataFrame:
    ids = range(40)
    base = [1.0 if i < 30 else 0.0 for i in ids]
    new = [1.0 if i < 12 or 20 <= i < 34 else 0.0 for i in ids]
    frames = []
    for model, correct, letter in (("model-a", base, "A"), ("model-b", new, "B")):
        frames.append(pd.DataFrame({
            "model": model, "example_id": [str(i) for i in ids], "task": ["t1" if i < 20 else "t2" for i in ids],
            "group": ["g1" if i % 2 == 0 else "g2" for i in ids], "correct": correct,
            "input": [f"question {i}" for i in ids], "target": [f"answer {i}" for i in ids],
            "output": [HOSTILE_OUTPUT if (letter, i) == ("B", 12) else f"{letter} reply {i}" for i in ids]}))
    return pd.concat(frames, ignore_index=True)


def compare_page(frame: pd.DataFrame, name: str = "two.csv"):
    at = open_app()
    upload(at, name, csv_bytes(frame))
    return goto(at, "compare")


def answer(at) -> str:
    return shown(at.main.subheader[0].value)


def examples_table(at) -> pd.DataFrame:
    return table_with(at, "example_id", "base_value", "new_value")


@pytest.fixture(scope="module")
def page():
    return compare_page(two_models())


def test_verdict_first_with_the_hand_counted_numbers(page):
    at = page
    sentence = answer(at)
    assert "model-b" in sentence and "model-a" in sentence
    assert "regression" in sentence and "40 shared examples" in sentence, sentence
    assert "10" in sentence  # 10 points worse
    assert "task=t1" in sentence  # the worst flagged slice
    # the controls: the two best models, base first
    assert at.selectbox(key="cp_base").value == "model-a" and at.selectbox(key="cp_new").value == "model-b"
    overall = table_with(at, "difference", "p_value", "method").iloc[0]
    assert overall["n"] == 40
    assert overall["base"] == pytest.approx(0.75) and overall["new"] == pytest.approx(0.65)
    assert overall["difference"] == pytest.approx(-0.10)
    assert overall["p_value"] == pytest.approx(1588 / 4096)


def test_slices_q_values_and_flags(page):
    slices = table_with(page, "slice", "q_value", "flagged").set_index("slice")
    assert list(slices.index[:1]) == ["task=t1"]  # worst first
    assert slices.loc["task=t1", "difference"] == pytest.approx(-0.40)
    assert slices.loc["task=t2", "difference"] == pytest.approx(0.20)
    assert slices.loc["group=g1", "difference"] == pytest.approx(-0.10)
    assert slices.loc["task=t1", "p_value"] == pytest.approx(2 / 256)
    assert slices.loc["task=t2", "p_value"] == pytest.approx(2 / 16)
    assert slices.loc["group=g2", "p_value"] == pytest.approx(44 / 64)
    assert slices["q_value"].to_dict() == pytest.approx(
        {"task=t1": 0.03125, "task=t2": 0.25, "group=g1": 0.6875, "group=g2": 0.6875})
    assert slices["flagged"].to_dict() == {"task=t1": True, "task=t2": False, "group=g1": False, "group=g2": False}
    assert (slices["n"] == 20).all()


def test_forest_plot_marks_the_flagged_slice_in_points(page):
    traces = {t.name: t for t in figure(charts(page)[0]).data}
    assert list(traces["flagged: new is worse"].x) == pytest.approx([-40.0])
    assert sorted(traces["not flagged"].x) == pytest.approx([-10.0, -10.0, 20.0])
    assert list(traces["no difference (0)"].x) == [0, 0]
    assert list(traces["overall -10 points"].x) == pytest.approx([-10.0, -10.0])
    captions = texts(page.caption)
    assert any("q-value is at most 10%" in c and "4 slices searched" in c for c in captions), captions
    assert any("95% interval of the paired difference" in c for c in captions), captions


def test_the_2x2_table(page):
    grid = table_with(page, "new right", "new wrong").set_index("base")
    assert grid.loc["base right", "new right"] == 22 and grid.loc["base right", "new wrong"] == 8
    assert grid.loc["base wrong", "new right"] == 4 and grid.loc["base wrong", "new wrong"] == 6


def test_examples_where_the_models_differ_with_their_text_literally(page):
    at = page
    assert at.selectbox(key="cp_cell").value == "only base right"  # the first cell where the two differ
    rows = examples_table(at)
    assert sorted(rows["example_id"].astype(int)) == list(range(12, 20))
    assert set(rows["base_value"]) == {1.0} and set(rows["new_value"]) == {0.0}
    # the first example read out (id 12: model-b's output is Markdown and HTML, shown as text)
    assert HOSTILE_OUTPUT in [t.value for t in at.text]
    assert "question 12" in [t.value for t in at.text] and "A reply 12" in [t.value for t in at.text]
    assert not any("**" in m.value for m in at.markdown if "bold" in m.value)


def test_cell_search_and_fdr_change_what_is_shown():
    at = compare_page(two_models())
    at.selectbox(key="cp_cell").set_value("only new right").run()
    assert_no_exception(at)
    assert sorted(examples_table(at)["example_id"].astype(int)) == [30, 31, 32, 33]
    at.text_input(key="cp_search").set_value("B REPLY 32").run()  # case ignored, outputs searched
    assert_no_exception(at)
    assert list(examples_table(at)["example_id"]) == ["32"]
    at.text_input(key="cp_search").set_value("nothing like this").run()
    assert "No example in this cell and slice matches the search." in texts(at.info)
    at.text_input(key="cp_search").set_value("").run()
    at.selectbox(key="cp_slice").set_value("task=t1").run()  # the flagged slice: no example of t1 is only new right
    assert_no_exception(at)
    assert "No example in this cell and slice." in texts(at.info)
    at.selectbox(key="cp_fdr").set_value(0.01).run()
    assert_no_exception(at)
    assert "inconclusive" in answer(at) and "regression" not in answer(at)
    assert not table_with(at, "slice", "flagged")["flagged"].any()
    assert at.selectbox(key="cp_slice").options == ["all examples"]


def test_margin_in_points_reaches_the_comparison():
    at = compare_page(two_models())
    at.number_input(key="cp_margin").set_value(5.0).run()
    assert_no_exception(at)
    names = [t.name for t in figure(charts(at)[0]).data]
    assert "margin −5 points" in names and "margin +5 points" in names


def test_pages_of_twenty_examples():
    frame = two_models()
    # model-b wrong everywhere: the 30 examples base got right are only base right -> pages of 20 and 10
    frame.loc[frame["model"] == "model-b", "correct"] = 0.0
    at = compare_page(frame)
    assert at.selectbox(key="cp_cell").value == "only base right"
    first = set(examples_table(at)["example_id"].astype(int))
    assert len(first) == 20
    at.number_input(key="cp_page").set_value(2).run()
    assert_no_exception(at)
    second = set(examples_table(at)["example_id"].astype(int))
    assert len(second) == 10 and first | second == set(range(30))


def test_one_model_is_explained_not_an_error():
    frame = two_models()
    at = compare_page(frame[frame["model"] == "model-a"], "one.csv")
    assert not at.error
    assert any("holds one model, model-a" in t and "nothing to compare" in t for t in texts(at.info)), texts(at.info)
    assert not charts(at)


def test_two_models_without_shared_examples_are_explained():
    frame = two_models()
    frame.loc[frame["model"] == "model-b", "example_id"] = "b" + frame["example_id"]
    at = compare_page(frame, "apart.csv")
    assert not at.error
    assert at.info and not charts(at), texts(at.info)


def test_compare_is_in_the_navigation_after_the_leaderboard_and_can_be_saved():
    from pages.common import saved_analysis

    assert saved_analysis.VIEWS["compare"] == ("pages/compare.py", "cp_")
    app = (pytest.importorskip("pathlib").Path(__file__).resolve().parents[2] / "app.py").read_text()
    assert app.index('"pages/leaderboard.py"') < app.index('"pages/compare.py"') < app.index('"pages/sampling.py"')


def test_a_score_metric_gets_a_paired_t_interval_and_the_three_cells():
    """Scores only: a 0.5, 0.6, 0.7, 0.8 (mean 0.65) and b 0.6, 0.6, 0.9, 0.7 (mean 0.7) on examples 0-3. The
    better, b, is the default base and a the new: d = a − b = -0.1, 0, -0.2, 0.1, mean -0.05, sd = sqrt(0.05 / 3),
    se = sd / 2, Student t with 3 degrees of freedom (t_0.975 = 3.182446): -0.05 ± 3.182446 * 0.0645497 =
    -0.255428 to 0.155428; new higher 1 (example 3), base higher 2, equal 1."""
    frame = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "example_id": [str(i) for i in range(4)] * 2,
                          "score": [0.5, 0.6, 0.7, 0.8, 0.6, 0.6, 0.9, 0.7],
                          "output": [f"a says {i}" for i in range(4)] + [f"b says {i}" for i in range(4)]})
    at = compare_page(frame, "scores.csv")
    assert not at.error
    assert at.selectbox(key="cp_base").value == "b" and at.selectbox(key="cp_new").value == "a"  # b: 0.7, a: 0.65
    overall = table_with(at, "difference", "p_value", "method").iloc[0]
    se = (0.05 / 3) ** 0.5 / 2
    assert overall["difference"] == pytest.approx(-0.05)  # new (a) − base (b)
    assert (overall["ci_low"], overall["ci_high"]) == pytest.approx((-0.05 - 3.182446 * se, -0.05 + 3.182446 * se),
                                                                    abs=1e-6)
    assert "paired t" in overall["method"]
    pairs = table_with(at, "cell", "n", "share").set_index("cell")["n"].to_dict()
    assert pairs == {"new higher": 1, "base higher": 2, "equal": 1}
    assert "inconclusive" in answer(at)
    assert at.selectbox(key="cp_cell").value == "new higher"
    rows = examples_table(at)
    assert list(rows["example_id"]) == ["3"]  # a 0.8 > b 0.7
    assert "a says 3" in [t.value for t in at.text] and "b says 3" in [t.value for t in at.text]


def test_downloads_of_the_slices_and_the_examples_shown(page):
    labels = [b.proto.label for b in page.get("download_button")]
    for label in ("Download slices (CSV)", "Download examples shown (CSV)", "Download paired outcomes 2x2 (CSV)",
                  "Download the comparison (JSON)"):
        assert label in labels, labels


def test_a_numeric_column_is_sliced_in_quantile_bins():
    """'length' = example id: four quantile bins of 10 examples each; slices of 10 are searched with the smallest
    slice at 10. Bin [0, 9.75): ids 0-9, all both right: difference 0."""
    frame = two_models().assign(length=lambda f: f["example_id"].astype(int))
    at = compare_page(frame, "lengths.csv")
    assert at.multiselect(key="cp_by").options == ["length"]
    at.multiselect(key="cp_by").set_value(["length"]).run()
    at.number_input(key="cp_min_slice").set_value(10).run()
    assert_no_exception(at)
    slices = table_with(at, "slice", "q_value", "flagged")
    binned = slices[slices["column"] == "length"]
    assert len(binned) == 4 and (binned["n"] == 10).all(), slices
    assert len(slices) == 8  # t1, t2, g1, g2 and the four bins


def test_hostile_model_names_are_shown_literally():
    frame = two_models()
    frame["model"] = frame["model"].map({"model-a": "=cmd|' /C calc'!A0", "model-b": "**<b>new</b>** :red[x]"})
    at = compare_page(frame, "hostile.csv")
    assert not at.error
    sentence = answer(at)
    assert "**<b>new</b>** :red[x] is worse than =cmd|' /C calc'!A0" in sentence, sentence
    assert at.selectbox(key="cp_base").value == "=cmd|' /C calc'!A0"


def test_a_saved_analysis_restores_the_pair_and_the_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    from test_workspace_page import open_link, save_analysis

    at = compare_page(two_models())
    at.selectbox(key="cp_base").set_value("model-b").run()
    at.selectbox(key="cp_new").set_value("model-a").run()
    at.selectbox(key="cp_fdr").set_value(0.05).run()
    at.number_input(key="cp_margin").set_value(2.0).run()
    assert_no_exception(at)
    before = answer(at)
    assert before.startswith("model-a is better than model-b by 10.0 points")
    analysis_id = save_analysis(at, "b vs a")
    other = open_link(analysis_id)
    assert [t.value for t in other.title] == ["Compare"]
    assert other.selectbox(key="cp_base").value == "model-b" and other.selectbox(key="cp_new").value == "model-a"
    assert other.selectbox(key="cp_fdr").value == 0.05 and other.number_input(key="cp_margin").value == 2.0
    assert answer(other) == before


def test_the_tasks_chosen_on_the_models_page_restrict_the_comparison():
    """Task t1 only (ids 0-19): base 20/20, new 12/20: -40 points on 20 shared examples; one task, so tasks are not
    searched, and the two groups (10 examples each) are below the smallest slice (20): nothing searched."""
    at = compare_page(two_models())
    goto(at, "models")
    at.multiselect(key="w_tasks").set_value(["t1"]).run()
    goto(at, "compare")
    sentence = answer(at)
    assert "worse than model-a by 40.0 points" in sentence and "20 shared examples" in sentence, sentence
    overall = table_with(at, "difference", "p_value", "method").iloc[0]
    assert overall["n"] == 20 and overall["p_value"] == pytest.approx(2 / 256)
    assert any("2 smaller ones were not searched" in c for c in texts(at.caption)), texts(at.caption)
    assert not charts(at)
