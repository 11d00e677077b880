"""A comparison campaign's labels on the Compare page (issue 48): a saved dataset with a campaign over the two models
compared shows "From the labeling campaign <name>" with the campaign's own sentence and pairs (the numbers of
``ComparisonCampaign.estimate()``, as the Label page and ``evalcore label status`` give them) and a link to the
campaign on the Label page; a pair the campaign does not compare shows none; a log of outputs alone, which Compare
cannot pair, shows every campaign of its dataset under the explanation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.labeling import Campaign
from evalcore.labeling.comparison import comparison_sentence
from evalcore.workspace import Workspace
from test_pages import assert_no_exception, goto, open_app, shown, texts

N = 200


def _log(with_correct: bool) -> tuple[pd.DataFrame, dict]:
    """Three models' class outputs (A-D) on N examples and the right answers; ``correct`` from them where asked."""
    rng = np.random.default_rng(3)
    truth = rng.choice(list("ABCD"), N)
    vit = np.where(rng.random(N) < 0.85, truth, rng.choice(list("ABCD"), N))
    dino = np.where(rng.random(N) < 0.5, vit, np.where(rng.random(N) < 0.5, truth, rng.choice(list("ABCD"), N)))
    clip = np.where(rng.random(N) < 0.6, truth, rng.choice(list("ABCD"), N))
    ids = [f"q{i}" for i in range(N)]
    frame = pd.concat([pd.DataFrame({"model": m, "example_id": ids, "output": out})
                       for m, out in (("vit", vit), ("dino", dino), ("clip", clip))], ignore_index=True)
    if with_correct:
        frame["correct"] = (frame["output"].to_numpy() == np.tile(truth, 3)).astype(float)
    return frame, dict(zip(ids, truth))


def _opened(tmp_path, monkeypatch, with_correct: bool):
    """A saved dataset with a comparison campaign of vit and dino (40 examples labeled), opened from the Workspace
    page; the app and the campaign."""
    monkeypatch.setenv("EVALCORE_WORKSPACE", str(tmp_path / "ws"))
    ws = Workspace(tmp_path / "ws")
    frame, truth = _log(with_correct)
    dataset = ws.add_dataset(frame.to_csv(index=False).encode(), "outputs")
    campaign = Campaign.create(ws, dataset.id, models=["vit", "dino"], design="disagreement", decide=True, seed=0)
    for _ in range(40):
        example = campaign.next("carol")
        campaign.record(example, "carol", truth[example])
    at = open_app()
    goto(at, "workspace")
    at.button(key="ws_open").click()
    at.run()
    assert_no_exception(at)
    return goto(at, "compare"), campaign


def _section(at, campaign) -> None:
    """The campaign's section as the page shows it: its sentence, its pairs and the link to it."""
    name = f"From the labeling campaign {campaign.info.name}"
    assert [shown(h.value) for h in at.subheader if h.value.startswith("From")] == [name]
    estimate = campaign.estimate()
    said = comparison_sentence(campaign.info, estimate)
    assert said in [shown(m.value) for m in at.markdown], [m.value for m in at.markdown]
    [pairs] = [d.value for d in at.dataframe if "sequence_low" in d.value.columns]
    row = pairs.iloc[0]
    assert (row["model_a"], row["model_b"]) == ("vit", "dino")
    assert row["difference"] == pytest.approx(estimate.difference)
    assert (row["sequence_low"], row["sequence_high"]) == pytest.approx((estimate.ci_low, estimate.ci_high))
    [link] = [p for p in at.get("page_link") if "on the Label page" in p.proto.label]
    assert link.proto.page.endswith("label.py") or "label" in link.proto.page
    assert f"campaign={campaign.id}" in link.proto.query_string


def test_the_two_models_of_a_campaign_show_its_answer_beside_the_paired_comparison(tmp_path, monkeypatch):
    at, campaign = _opened(tmp_path, monkeypatch, with_correct=True)
    at.selectbox(key="cp_base").set_value("dino").run()
    at.selectbox(key="cp_new").set_value("vit").run()
    assert_no_exception(at)
    assert at.subheader[0].value.startswith("vit is better than dino")  # the log's own paired answer first
    _section(at, campaign)
    at.selectbox(key="cp_new").set_value("clip").run()  # a pair the campaign does not compare
    assert not [h for h in at.subheader if h.value.startswith("From")]


def test_a_log_of_outputs_alone_shows_its_campaigns_under_the_explanation(tmp_path, monkeypatch):
    at, campaign = _opened(tmp_path, monkeypatch, with_correct=False)
    [said] = [t for t in texts(at.info) if "this log has neither" in t]
    assert "What its labeling campaigns found is below." in said
    _section(at, campaign)
