"""The Label page: a campaign opened from its address, one example at a time with its text shown literally, each
click recorded and the estimate moving, and a new campaign started from the page (EVALCORE_WORKSPACE in tmp)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.labeling.campaign import Campaign
from evalcore.workspace import Workspace
from test_pages import assert_no_exception, goto, open_page, shown, texts

N = 200


def _pool_csv() -> bytes:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"model": "m", "example_id": [f"q{i}" for i in range(N)],
                          "confidence": rng.uniform(0.3, 0.99, N).round(3), "correct": np.nan,
                          "question": [f"What is **{i}** + <b>1</b>?" for i in range(N)],
                          "response": [f"{i + 1}" for i in range(N)]})
    return frame.to_csv(index=False).encode()


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    return tmp_path / "ws"


def _label_page(campaign_id: str | None):
    return open_page("label", **({"campaign": campaign_id} if campaign_id else {}))


def test_a_campaign_opens_from_its_address_and_each_click_is_a_label(folder):
    ws = Workspace(folder)
    record = ws.add_dataset(_pool_csv(), "pool without labels")
    campaign = Campaign.create(ws, record.id, "m", "srs", budget=40, seed=3)
    at = _label_page(campaign.id)
    assert "0 labels so far" in shown(at.subheader[0].value)
    at.text_input(key="label_annotator").set_value("alice")
    at.run()
    first = campaign.next("alice")  # the example the page claimed for alice: the queue's first
    assert first == campaign.export()["example_id"].iloc[0]
    shown_text = [t.value for t in at.text]
    i = int(first[1:])
    assert f"What is **{i}** + <b>1</b>?" in shown_text  # literally: no Markdown, no HTML
    at.button(key="label_correct").click()
    at.run()
    assert_no_exception(at)
    history = campaign.history()
    assert history[["example_id", "annotator", "value"]].values.tolist() == [[first, "alice", 1.0]]
    second = campaign.next("alice")
    assert second != first and second == campaign.export()["example_id"].iloc[1]
    for _ in range(3):
        at.button(key="label_incorrect").click()
        at.run()
    at.button(key="label_skip").click()
    at.run()
    assert_no_exception(at)
    estimate = campaign.estimate()
    assert estimate.labels == 4 and estimate.skipped == 1
    assert estimate.estimate == pytest.approx(0.25)  # one correct of four: the simple random sample's mean
    answer = shown(at.subheader[0].value)
    assert "accuracy is 0.250" in answer and "from 4 labels" in answer
    assert "1 skipped example count at their worst and best values" in answer
    assert any(e.label.startswith("Skipped examples: 1 (20% of those drawn)") for e in at.expander)


def test_a_campaign_is_started_on_the_page_from_the_session_data(folder):
    at = _label_page(None)
    assert "0 labeling campaigns" in shown(at.subheader[0].value)
    at.text_input[0].set_value("atlas-l")
    at.button[0].click()  # the form's submit button: the current data (the demo), Neyman, ±0.02
    at.run()
    assert_no_exception(at)
    [record] = Campaign.list(Workspace(folder))
    assert (record.model, record.design, record.target) == ("atlas-l", "neyman", 0.02)
    assert at.query_params["campaign"] == [record.id] or at.query_params["campaign"] == record.id


def test_an_unknown_campaign_says_so(folder):
    at = _label_page("no-such-campaign")
    assert any("No labeling campaign with id" in t for t in texts(at.error))


def test_changing_a_label_on_the_page_keeps_the_earlier_one(folder):
    ws = Workspace(folder)
    record = ws.add_dataset(_pool_csv(), "pool without labels")
    campaign = Campaign.create(ws, record.id, "m", "srs", budget=40, seed=3)
    at = _label_page(campaign.id)
    at.text_input(key="label_annotator").set_value("alice")
    at.run()
    first = campaign.next("alice")
    at.button(key="label_correct").click()
    at.run()
    at.selectbox(key="relabel_example").set_value(first)
    at.radio(key="relabel_value").set_value("incorrect")
    at.button(key="relabel_save").click()
    at.run()
    assert_no_exception(at)
    history = campaign.history()
    assert history["value"].tolist() == [1.0, 0.0] and history["replaced_by"].iloc[0] == history["id"].iloc[1]
    assert campaign.current_labels()[["example_id", "value"]].values.tolist() == [[first, 0.0]]


def test_the_campaigns_estimate_flows_to_the_models_page_and_the_report(folder):
    """"Use this estimate in every view": the Models page and the Report page show the design's estimate and
    interval for the campaign's model, and say which design it comes from."""
    ws = Workspace(folder)
    record = ws.add_dataset(_pool_csv(), "pool without labels")
    campaign = Campaign.create(ws, record.id, "m", "neyman", budget=60, seed=1)
    rng = np.random.default_rng(2)
    for _ in range(60):
        campaign.record(campaign.next("alice"), "alice", int(rng.random() < 0.7))
    estimate = campaign.estimate()
    at = _label_page(campaign.id)
    at.button[[b.label for b in at.button].index("Use this estimate in every view")].click()
    at.run()
    assert_no_exception(at)
    assert [t.value for t in at.title] == ["Models"]
    sidebar = " ".join(texts(at.sidebar.caption))
    assert "estimated from 60 labels, stratified, Neyman allocation" in sidebar
    answer = shown(at.subheader[0].value)
    assert f"{estimate.estimate:.3f}" in answer or f"{estimate.estimate:.2f}" in answer, answer
    named = "stratified Horvitz-Thompson, design's interval"  # the design's estimator names its interval, not Wilson
    assert any(named in t for t in texts(at.caption)) and not any("Wilson" in t for t in texts(at.caption))
    goto(at, "leaderboard")
    assert any(named in t for t in texts(at.caption)) and not any("Wilson" in t for t in texts(at.caption))
    goto(at, "report")
    assert any("estimated from 60 labels" in t.value for t in at.text)  # the summary's first line
    from evalcore.report import build_report

    html = build_report(campaign.summary()).html()
    assert f"{named}: over repeated samples" in html and "Wilson" not in html


def test_a_pairwise_campaign_on_battles_maps_left_and_right_back_to_a_and_b(folder):
    from evalcore.demo import synthetic

    ws = Workspace(folder)
    battles = synthetic.pairwise_battles(seed=0).battles
    record = ws.add_dataset(battles.to_csv(index=False).encode(), "battles")
    campaign = Campaign.create(ws, record.id, "all", "ppi", budget=30, seed=5)
    assert campaign.info.metric == "pairwise"
    at = _label_page(campaign.id)
    at.text_input(key="label_annotator").set_value("alice")
    at.run()
    example = campaign.next("alice")
    line = next(t.value for t in at.text if t.value.startswith("Left: "))
    row = battles.loc[int(example.removeprefix("battle-"))]
    left = line.removeprefix("Left: ").split("    Right: ")[0]
    at.button(key="label_left").click()
    at.run()
    assert_no_exception(at)
    value = campaign.current_labels()["value"].tolist()
    assert value == [0.0 if left == row["model_a"] else 1.0]  # "left is better" is a win of the model shown left


def _start(at, model: str = "atlas-l"):
    """Submit the new-campaign form for ``model`` on the current data (the demo), Neyman, ±0.02."""
    at.text_input[0].set_value(model)
    at.button[0].click()
    at.run()
    assert_no_exception(at)
    return at


def _seed_shown(at) -> int:
    return int(next(n for n in at.number_input if n.label == "Seed").value)


def test_campaigns_on_the_session_data_save_it_once_and_not_when_refused(folder):
    """The session's data (the demo) is saved with its first campaign only: a refused campaign saves nothing, a
    second campaign reuses the dataset of the same content; each new campaign's default seed (shown in the form)
    is one more than the last one's, so their queues differ."""
    at = _label_page(None)
    assert _seed_shown(at) == 0
    _start(at, "no-such-model")
    assert any("no model 'no-such-model'" in t for t in texts(at.error))
    assert Workspace(folder).datasets() == [] and Campaign.list(Workspace(folder)) == []
    _start(_label_page(None))
    again = _label_page(None)  # another session on the same demo
    assert _seed_shown(again) == 1
    _start(again)
    ws = Workspace(folder)
    [dataset] = ws.datasets()
    second, first = Campaign.list(ws)
    assert first.dataset_id == second.dataset_id == dataset.id
    assert (first.seed, second.seed) == (0, 1)
    assert Campaign.open(ws, first.id).export()["example_id"].tolist() != \
        Campaign.open(ws, second.id).export()["example_id"].tolist()
    _start(_label_page(None), "no-such-model")  # refused on data saved already: the dataset stays, once
    assert [d.id for d in Workspace(folder).datasets()] == [dataset.id]
    assert _seed_shown(_label_page(None)) == 2


def test_the_annotators_name_survives_a_reload(folder):
    """Without sign-in the name typed is kept in the page's address, so a reload (a new session on that address)
    labels as the same annotator, the name shown as typed."""
    ws = Workspace(folder)
    record = ws.add_dataset(_pool_csv(), "pool without labels")
    campaign = Campaign.create(ws, record.id, "m", "srs", budget=40)
    at = _label_page(campaign.id)
    name = "**alice** <b>"
    at.text_input(key="label_annotator").set_value(name)
    at.run()
    assert at.query_params["annotator"] in (name, [name])
    claimed = campaign.next(name)
    reloaded = open_page("label", campaign=campaign.id, annotator=name)
    assert reloaded.text_input(key="label_annotator").value == name
    assert shown(reloaded.subheader[1].value) == f"Example {claimed}"  # the same claim: the same annotator
    reloaded.button(key="label_correct").click()
    reloaded.run()
    assert campaign.history()[["example_id", "annotator"]].values.tolist() == [[claimed, name]]


def test_the_first_estimate_needs_2_labels_or_2_in_every_stratum(folder):
    ws = Workspace(folder)
    record = ws.add_dataset(_pool_csv(), "pool without labels")
    simple = Campaign.create(ws, record.id, "m", "srs", budget=40)
    stratified = Campaign.create(ws, record.id, "m", "neyman", budget=40)
    assert simple.info.seed == 0 and stratified.info.seed == 1  # Campaign.create's default: the next seed
    assert "the first estimate needs 2 labels, and" in shown(_label_page(simple.id).subheader[0].value)
    assert "needs 2 labels in every stratum" in shown(_label_page(stratified.id).subheader[0].value)


def _signed_in(member: str, campaign_id: str):
    """A session of an instance with sign-in for the team.example domain, as ``member``, on the campaign's page."""
    from streamlit.testing.v1 import AppTest

    from test_pages import APP, TIMEOUT
    from test_workspace_page import AUTH

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["auth"] = AUTH
    at.secrets["team"] = {"domains": ["team.example"]}
    at.user = {"is_logged_in": True, "email": member, "email_verified": True}
    at.query_params["campaign"] = campaign_id
    return goto(at, "label")


def test_two_annotators_disagree_with_overlap_2_and_the_owner_clears_the_adjudication_queue(folder):
    owner, alice, bob = "olivia@team.example", "alice@team.example", "bob@team.example"
    ws = Workspace(folder)
    record = ws.add_dataset(_pool_csv(), "pool without labels", owner=owner, shared=True)
    campaign = Campaign.create(ws, record.id, "m", "srs", budget=40, seed=3, owner=owner, shared=True, overlap=2)
    given = {}
    for a, b in ((1, 1), (1, 0), (0, 0), (0, 1), (1, 1)):
        example = campaign.next(alice)
        assert campaign.next(bob) == example
        campaign.record(example, alice, a)
        campaign.record(example, bob, b, note="**bold** <b>guess</b>" if a != b else None)
        given[example] = (a, b)
    disputed = [e for e, (a, b) in given.items() if a != b]

    annotator = _signed_in(bob, campaign.id)  # not an adjudicator: no queue
    assert not [s for s in annotator.subheader if s.value.startswith("Adjudication queue")]
    at = _signed_in(owner, campaign.id)
    assert "2 examples await adjudication" in shown(at.subheader[0].value)
    assert [s.value for s in at.subheader if s.value.startswith("Adjudication queue")] == [
        "Adjudication queue (2 pending)"]
    lines = [t.value for t in at.text]
    assert f"{bob}: incorrect (note: **bold** <b>guess</b>)" in lines  # literally: no Markdown, no HTML
    assert f"{alice}: correct" in lines
    for example in disputed:
        position = int(campaign.example(example)["position"])
        at.radio(key=f"adjudicate_value_{position}").set_value("correct")
        at.text_input(key=f"adjudicate_note_{position}").set_value("checked the answer")
        at.button(key=f"adjudicate_save_{position}").click()
        at.run()
        assert_no_exception(at)
        assert not texts(at.error)
    assert [s.value for s in at.subheader if s.value.startswith("Adjudication queue")] == [
        "Adjudication queue (0 pending)"]
    assert "await adjudication" not in shown(at.subheader[0].value)
    assert campaign.pending().empty
    table = campaign.export().set_index("example_id")
    assert table.loc[disputed, "status"].tolist() == ["adjudicated"] * 2
    assert table.loc[disputed, "label"].tolist() == [1.0, 1.0] and table.loc[disputed, "adjudicator"].eq(owner).all()
    assert campaign.adjudications()["note"].tolist() == ["checked the answer"] * 2
