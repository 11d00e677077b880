"""The Label page for comparison campaigns (issue 48): started from the page's form (refusals shown literally), then
labeled through the page's buttons, each distinct output once, in a random order, without the models' names (class
outputs: the right answer once; text outputs: a verdict per output), to the stop, with the answer first. Hostile
output text is shown literally (EVALCORE_WORKSPACE in tmp)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from evalcore.labeling import Campaign
from evalcore.labeling.comparison import comparison_sentence
from evalcore.workspace import Workspace
from test_pages import assert_no_exception, open_page, shown, texts

N = 40
HOSTILE = ["<b>x</b>", "=cmd|' /C calc'!A0", "\u202egnp.exe"]


def _classes() -> tuple[pd.DataFrame, dict[str, str]]:
    """Class outputs of models A and B and each example's right class: they agree on the first 16 examples; on the
    others B is wrong with hostile text, and on every seventh A is wrong too (neither output is right); one more
    example has an output of A only."""
    rows, truth = [], {}
    for i in range(N):
        right = "cat" if i % 2 else "dog"
        a, b = right, right if i < 16 else HOSTILE[i % 3]
        if i >= 16 and i % 7 == 0:
            a = "fish"
        truth[f"q{i}"] = right
        rows += [{"model": m, "example_id": f"q{i}", "input": f"What is in picture **{i}**?", "output": o}
                 for m, o in (("A", a), ("B", b))]
    rows.append({"model": "A", "example_id": "only-A", "input": "B has no output here", "output": "cat"})
    return pd.DataFrame(rows), truth


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    return tmp_path / "ws"


def _save(folder, frame: pd.DataFrame, name: str = "outputs") -> tuple[Workspace, str]:
    ws = Workspace(folder)
    return ws, ws.add_dataset(frame.to_csv(index=False).encode(), name).id


def _comparison_form(dataset: str):
    """The Label page's form for a new comparison, on ``dataset``."""
    at = open_page("label")
    at.radio(key="label_kind").set_value("comparison")
    at.run()
    at.selectbox(key="compare_dataset").set_value(dataset)
    at.run()
    return at


def _start(at) -> None:
    """Click "Start the comparison" and draw the page again."""
    next(b for b in at.button if b.label == "Start the comparison").click()
    at.run()
    assert_no_exception(at)


def _named(at) -> dict[int, list[str]]:
    """Output number -> the models that gave it, from the section "Which model gave which output"."""
    found = {}
    for text in (t.value for t in at.text):
        match = re.fullmatch(r"Output (\d+): (.+)", text)
        if match:
            found[int(match[1])] = match[2].split(", ")
    return found


def _labeling(at, name: str = "alice"):
    at.text_input(key="label_annotator").set_value(name)
    at.run()
    assert_no_exception(at)
    return at


def test_a_class_comparison_is_labeled_on_the_page_until_decided(folder):
    frame, truth = _classes()
    ws, dataset = _save(folder, frame)
    campaign = Campaign.create(ws, dataset, models=["A", "B"], decide=True, seed=1)
    assert campaign.info.outputs == "class" and campaign.info.design == "disagreement"
    at = _labeling(open_page("label", campaign=campaign.id))
    shown_texts, orders, labeled = set(), {}, []
    for _ in range(N):
        example = campaign.next("alice")  # the page's claim for alice
        assert shown(at.subheader[1].value) == f"Example {example}"
        outputs = campaign.outputs(example)
        named = _named(at)
        assert sorted(m for ms in named.values() for m in ms) == ["A", "B"]  # each model once, names in the section
        assert len(named) == len({o.strip() for o in outputs.values()})  # each distinct output once
        values = [t.value for t in at.text]
        shown_texts.update(values)
        orders[example] = named
        assert f"What is in picture **{example[1:]}**?" in values  # the input, literally
        right = [k for k, models in named.items() if outputs[models[0]] == truth[example]]
        if right:
            at.button(key=f"compare_right_{right[0]}").click()
        else:  # neither output is right: the class typed
            at.text_input(key=f"compare_answer_{example}").set_value(truth[example])
            at.button(key="compare_none").click()
        at.run()
        assert_no_exception(at)
        assert not texts(at.error)
        labeled.append(example)
        if campaign.estimate().stop:
            break
    else:
        pytest.fail("the decided rule never stopped the campaign")
    estimate = campaign.estimate()
    assert estimate.decided == "A" and estimate.labels == len(labeled)
    history = campaign.history()
    assert history["example_id"].tolist() == labeled and history["answer"].tolist() == [truth[e] for e in labeled]
    answer = shown(at.subheader[0].value)
    assert answer == comparison_sentence(campaign.info, estimate)
    assert answer.startswith("A is better than B by ") and f"decided after {len(labeled)} labels" in answer
    assert any("You can stop: the comparison is decided." in t for t in texts(at.success))
    drawn = {v for e in labeled for v in campaign.outputs(e).values()}
    assert set(HOSTILE) <= drawn and set(HOSTILE) <= shown_texts  # literally: st.text, never Markdown or HTML
    assert len(at.get("plotly_chart")) == 1
    assert "1 example lacks an output of 'B' (another model has one): left out, not guessed." in texts(at.caption)
    table = at.dataframe[0].value.set_index("agreement pattern")
    assert table.loc["all agree", ["examples", "labeled"]].tolist() == [16, 0]
    assert table.loc["A ≠ B", ["examples", "labeled"]].tolist() == [24, len(labeled)]
    # a reload shows the same example with its outputs in the same order
    example = campaign.next("alice")
    if example is not None:
        first = _named(at)
        again = open_page("label", campaign=campaign.id, annotator="alice")
        assert shown(again.subheader[1].value) == f"Example {example}" and _named(again) == first


def _texts() -> pd.DataFrame:
    """Free-text outputs of A, B and C on 30 questions: A and C give the same text (C with spaces around it)."""
    rows = []
    for i in range(30):
        a = f"The capital is Paris, because question {i} asks about France (correct)."
        b = f"The capital is Lyon; question {i} is about France but this answer is wrong." if i % 2 else a
        rows += [{"model": m, "example_id": f"t{i}", "input": f"Question {i}: the capital of France?",
                  "target": "Paris", "output": o} for m, o in (("A", a), ("B", b), ("C", f"  {a} "))]
    return pd.DataFrame(rows)


def test_a_text_comparison_takes_a_verdict_per_distinct_output(folder):
    ws, dataset = _save(folder, _texts(), "texts")
    campaign = Campaign.create(ws, dataset, models=["A", "B", "C"], design="srs", budget=4, seed=2)
    assert campaign.info.outputs == "text"
    at = _labeling(open_page("label", campaign=campaign.id))
    example = campaign.next("alice")
    named = _named(at)
    assert sorted(sorted(ms) for ms in named.values()) == ([["A", "B", "C"]] if len(named) == 1 else
                                                           [["A", "C"], ["B"]])
    assert [t.value for t in at.text].count(campaign.outputs(example)["A"]) == 1  # A and C's output shown once
    assert "Paris" in [t.value for t in at.text]  # the reference
    if len(named) == 2:  # a verdict missing: refused, nothing recorded
        at.radio(key=f"compare_verdict_{example}_1").set_value("right")
        at.button(key="compare_save").click()
        at.run()
        assert any("Give a verdict for every output (none yet for output 2)" in t for t in texts(at.error))
        assert campaign.history().empty
    at.button(key="compare_skip").click()
    at.run()
    expected = {}
    while (example := campaign.next("alice")) is not None and not campaign.estimate().stop:
        outputs = campaign.outputs(example)
        for k, models in _named(at).items():
            verdict = "right" if "(correct)" in outputs[models[0]] else "wrong"
            at.radio(key=f"compare_verdict_{example}_{k}").set_value(verdict)
        at.text_input(key="label_note").set_value("<i>checked</i>")
        at.button(key="compare_save").click()
        at.run()
        assert_no_exception(at)
        assert not texts(at.error)
        expected[example] = {m: int("(correct)" in o) for m, o in outputs.items()}
    history = campaign.history()
    assert history["skipped"].tolist() == [1, 0, 0, 0]
    assert dict(zip(history["example_id"][1:], history["verdicts"][1:])) == expected
    assert history["note"].tolist()[1:] == ["<i>checked</i>"] * 3
    estimate = campaign.estimate()
    assert estimate.stop and estimate.labels == 3 and estimate.skipped == 1
    assert shown(at.subheader[0].value) == comparison_sentence(campaign.info, estimate)
    assert "You can stop: the budget of 4 labels is used." in texts(at.success)


def test_a_comparison_is_started_on_the_page_and_refusals_are_said(folder):
    frame, _ = _classes()
    ws, dataset = _save(folder, frame)
    few = pd.DataFrame([{"model": m, "example_id": f"{m}{i}" if i >= 5 else f"x{i}", "output": "cat"}
                        for m in ("A", "B") for i in range(30)])
    _, apart = _save(folder, few, "ids apart")
    at = _comparison_form(apart)
    assert at.multiselect(key=f"compare_models_{apart}").value == ["A", "B"]  # the first two models of the dataset
    _start(at)
    assert any(t.startswith("The models share 5 examples (with an output from each); a comparison campaign needs at "
                            "least 20.") for t in texts(at.error)), texts(at.error)
    assert Campaign.list(ws) == []
    at.selectbox(key="compare_dataset").set_value(dataset)
    at.run()
    at.multiselect(key=f"compare_models_{dataset}").set_value(["B", "A"])
    at.radio(key="compare_rule").set_value("decide")
    at.number_input(key="compare_margin").set_value(0.01)
    seed = next(n for n in at.number_input if n.label == "Seed").value
    _start(at)
    [record] = Campaign.list(ws)
    assert (record.models, record.design, record.decide, record.margin, record.target, record.seed) == (
        ("B", "A"), "disagreement", True, 0.01, 0.02, seed)
    assert at.query_params["campaign"] in (record.id, [record.id])
    assert "B vs A" in shown(at.subheader[0].value) and "0 labels so far" in shown(at.subheader[0].value)


def test_an_annotator_changes_one_of_their_comparison_labels_on_the_page(folder):
    """Class outputs: alice labels two examples, then changes the first one's answer in "Change one of your labels"
    (the right output becomes "none of these", a typed class); the estimate reads the new label, the history keeps
    both. Text outputs: a verdict per output, refused while one is missing."""
    frame, truth = _classes()
    ws, dataset = _save(folder, frame)
    campaign = Campaign.create(ws, dataset, models=["A", "B"], budget=6, seed=3)
    at = _labeling(open_page("label", campaign=campaign.id))
    first = None
    for _ in range(2):
        example = campaign.next("alice")
        first = first or example
        at.text_input(key=f"compare_answer_{example}").set_value(truth[example])
        at.button(key="compare_none").click()
        at.run()
        assert_no_exception(at)
    before = campaign.verdicts().loc[first, ["A", "B"]].tolist()
    at.selectbox(key="compare_relabel_example").set_value(first)
    at.run()
    at.radio(key="compare_relabel_right").set_value("None of these")
    at.text_input(key="compare_relabel_typed").set_value("neither")
    at.button(key="compare_relabel_save").click()
    at.run()
    assert_no_exception(at)
    assert not texts(at.error)
    history = campaign.history()
    assert len(history) == 3 and history["replaced_by"].notna().sum() == 1
    assert history.iloc[-1]["example_id"] == first and history.iloc[-1]["answer"] == "neither"
    assert campaign.verdicts().loc[first, ["A", "B"]].tolist() == [0.0, 0.0] != before

    _, texts_id = _save(folder, _texts(), "texts")
    campaign = Campaign.create(ws, texts_id, models=["A", "B"], design="disagreement", budget=4, seed=2)
    assert campaign.info.outputs == "text"
    at = _labeling(open_page("label", campaign=campaign.id))
    example = campaign.next("alice")
    for k in _named(at):
        at.radio(key=f"compare_verdict_{example}_{k}").set_value("right")
    at.button(key="compare_save").click()
    at.run()
    assert campaign.verdicts().loc[example, ["A", "B"]].tolist() == [1.0, 1.0]
    at.selectbox(key="compare_relabel_example").set_value(example)
    at.run()
    at.radio(key="compare_relabel_verdict_1").set_value("wrong")
    at.button(key="compare_relabel_save").click()
    at.run()
    assert "Give a verdict for every output of the label you change." in texts(at.error)
    assert len(campaign.history()) == 1
    named = [t.value for t in at.text if re.match(r"Output \d+ as shown: ", t.value)]
    assert len(named) >= 2
    at.radio(key="compare_relabel_verdict_1").set_value("wrong")
    at.radio(key="compare_relabel_verdict_2").set_value("right")
    at.button(key="compare_relabel_save").click()
    at.run()
    assert_no_exception(at)
    verdicts = campaign.verdicts().loc[example, ["A", "B"]].tolist()
    assert sorted(verdicts) == [0.0, 1.0] and len(campaign.history()) == 2


def test_the_owner_settles_a_disputed_comparison_example_on_the_page(tmp_path, monkeypatch):
    """Signed in: alice and bob (overlap 2) judge two text outputs differently; the example is unknown in the
    estimate and waits in the owner's adjudication queue with both labels (notes literally); bob, no adjudicator,
    sees no queue; the owner decides the verdicts, and the example counts as adjudicated."""
    from test_label_page import _signed_in

    owner, alice, bob = "olivia@team.example", "alice@team.example", "bob@team.example"
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    ws = Workspace(tmp_path / "ws")
    dataset = ws.add_dataset(_texts().to_csv(index=False).encode(), "texts", owner=owner, shared=True).id
    campaign = Campaign.create(ws, dataset, models=["A", "B"], design="disagreement", budget=4, seed=2, owner=owner,
                               shared=True, overlap=2)
    example = campaign.next(alice)
    assert campaign.next(bob) == example
    campaign.record(example, alice, {"A": 1, "B": 0})
    campaign.record(example, bob, {"A": 0, "B": 0}, note="**both** <b>wrong</b>")
    assert campaign.verdicts().at[example, "status"] == "disputed"
    annotator = _signed_in(bob, campaign.id)
    assert not [s for s in annotator.subheader if s.value.startswith("Adjudication queue")]
    at = _signed_in(owner, campaign.id)
    assert_no_exception(at)
    assert [s.value for s in at.subheader if s.value.startswith("Adjudication queue")] == [
        "Adjudication queue (1 pending)"]
    lines = [t.value for t in at.text]
    position = int(campaign.example(example)["position"])
    said = [t for t in lines if t.startswith((alice, bob))]
    assert any(t.startswith(f"{bob}: output ") and t.endswith("(note: **both** <b>wrong</b>)") for t in said), said
    groups = {}
    for text in lines:  # the outputs as the adjudicator sees them, numbered
        match = re.fullmatch(r"Output (\d+) as shown: (.+)", text)
        if match:
            groups[int(match[1])] = match[2]
    right = {k: "right" if "(correct)" in text else "wrong" for k, text in groups.items()}
    for k, verdict in right.items():
        at.radio(key=f"compare_adjudicate_{position}_verdict_{k}").set_value(verdict)
    at.text_input(key=f"adjudicate_note_{position}").set_value("read both")
    at.button(key=f"adjudicate_save_{position}").click()
    at.run()
    assert_no_exception(at)
    assert not texts(at.error)
    drawn = campaign.verdicts()
    outputs = campaign.outputs(example)
    assert drawn.at[example, "status"] == "adjudicated"
    assert drawn.loc[example, ["A", "B"]].tolist() == [float("(correct)" in outputs[m]) for m in ("A", "B")]
    assert campaign.adjudications()[["adjudicator", "note"]].values.tolist() == [[owner, "read both"]]
    assert [s.value for s in at.subheader if s.value.startswith("Adjudication queue")] == [
        "Adjudication queue (0 pending)"]


def test_a_neyman_comparison_is_started_on_the_page_and_the_decided_rule_refused_for_it(folder):
    """A log with each model's confidence: the design "neyman" with the decided rule is refused, saying why and what
    to choose; with the width rule it starts, and the page shows its answer and the first example of a stratum."""
    frame, _ = _classes()
    frame["confidence"] = np.round(np.random.default_rng(1).uniform(0.05, 0.95, len(frame)), 3)
    ws, dataset = _save(folder, frame, "with confidences")
    at = _comparison_form(dataset)
    at.selectbox(key="compare_design").set_value("neyman")
    at.radio(key="compare_rule").set_value("decide")
    _start(at)
    assert any("decided rule reads a confidence sequence" in t and "'disagreement'" in t for t in texts(at.error))
    assert Campaign.list(ws) == []
    at.radio(key="compare_rule").set_value("target")
    _start(at)
    [record] = Campaign.list(ws)
    assert record.design == "neyman" and len(record.pool["strata"]) >= 2
    assert "A vs B" in shown(at.subheader[0].value) and "in each of the design's" in shown(at.subheader[0].value)
