"""``evalcore label`` in subprocesses: create a campaign on a saved dataset, export its queue, import the labels
filled in, read the estimate as JSON; refusals are one line naming the file and what to fix."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from evalcore.labeling.campaign import Campaign
from crafted import evalcore
from evalcore.workspace import Workspace

N = 500


def test_create_export_import_status_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    pool = pd.DataFrame({"model": "m", "example_id": [f"q{i}" for i in range(N)],
                         "confidence": rng.uniform(0.2, 1.0, N).round(3), "correct": ""})
    pool.to_csv(tmp_path / "pool.csv", index=False)
    saved = evalcore("workspace", "add", "pool.csv", "--name", "pool", "--workspace", "ws", cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    [dataset] = Workspace(tmp_path / "ws").datasets()
    created = evalcore("label", "create", dataset.id, "--model", "m", "--design", "neyman", "--budget", "60",
                       "--workspace", "ws", cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    campaign_id = created.stdout.strip()
    assert Campaign.open(Workspace(tmp_path / "ws"), campaign_id).info.design == "neyman"

    assert evalcore("label", "export", campaign_id, "-o", "labels.csv", "--workspace", "ws", cwd=tmp_path).returncode == 0
    table = pd.read_csv(tmp_path / "labels.csv")
    assert {"example_id", "inclusion_probability", "stratum", "label", "annotator"} <= set(table.columns)
    assert len(table) == 60 and table["label"].isna().all()
    table["label"] = (rng.random(60) < 0.75).astype(int)
    table["annotator"] = "carol"
    table.to_csv(tmp_path / "filled.csv", index=False)
    imported = evalcore("label", "import", campaign_id, "filled.csv", "--workspace", "ws", cwd=tmp_path)
    assert imported.returncode == 0 and "recorded 60 labels" in imported.stderr

    status = evalcore("label", "status", campaign_id, "--json", "status.json", "--workspace", "ws", cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    numbers = json.loads((tmp_path / "status.json").read_text())
    expected = float((table["label"] / table["inclusion_probability"]).sum()) / N  # Horvitz-Thompson by hand
    assert numbers["labels"] == 60 and numbers["stop"] is True
    assert abs(numbers["estimate"] - expected) < 1e-9 and numbers["ci_low"] < expected < numbers["ci_high"]
    assert "accuracy is" in status.stdout

    report = evalcore("label", "report", campaign_id, "-o", "campaign.html", "--workspace", "ws", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "campaign.html").read_text()
    assert "estimated from 60 labels, stratified, Neyman allocation" in html
    assert f"{numbers['ci_low']:.3f} to {numbers['ci_high']:.3f}" in html  # the design's interval, not another

    table.loc[3, "label"] = 5
    table.to_csv(tmp_path / "bad.csv", index=False)
    bad = evalcore("label", "import", campaign_id, "bad.csv", "--workspace", "ws", cwd=tmp_path)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1
    assert "bad.csv" in bad.stderr and "line 5" in bad.stderr and "nothing was recorded" in bad.stderr
    unknown = evalcore("label", "status", "nope", "--workspace", "ws", cwd=tmp_path)
    assert unknown.returncode == 1 and "No labeling campaign with id 'nope'" in unknown.stderr


def test_the_command_line_and_the_dashboard_share_one_default_workspace(tmp_path, monkeypatch):
    """Without --workspace and EVALCORE_WORKSPACE, a dataset and a campaign made from two different folders land in
    the per-user workspace, which is the dashboard's (pages.common.workspace_store.root); every message about a
    missing item names that folder; each new campaign gets its own seed, printed."""
    data_home = tmp_path / "data-home"
    env = {"EVALCORE_WORKSPACE": "", "XDG_DATA_HOME": str(data_home)}  # empty: not set
    default = data_home / "evalcore" / "workspace"
    pool = pd.DataFrame({"model": "m", "example_id": [f"q{i}" for i in range(N)], "confidence": 0.8, "correct": ""})
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    pool.to_csv(tmp_path / "a" / "pool.csv", index=False)
    saved = evalcore("workspace", "add", "pool.csv", "--name", "pool", cwd=tmp_path / "a", **env)
    assert saved.returncode == 0, saved.stderr
    assert f"in {default}" in saved.stdout
    [dataset] = Workspace(default).datasets()
    first = evalcore("label", "create", dataset.id, "--model", "m", "--design", "srs", "--budget", "40",
                     cwd=tmp_path / "b", **env)  # another folder: the same workspace
    assert first.returncode == 0, first.stderr
    assert "seed 0 (--seed 0 draws this queue again)" in first.stderr
    second = evalcore("label", "create", dataset.id, "--model", "m", "--design", "srs", "--budget", "40",
                      cwd=tmp_path, **env)
    assert second.returncode == 0 and "seed 1 (--seed 1" in second.stderr, second.stderr  # not the last one's

    monkeypatch.delenv("EVALCORE_WORKSPACE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(data_home))
    from pages.common.workspace_store import root

    assert root() == default
    seen = {c.id: c.seed for c in Campaign.list(Workspace(root()))}
    assert seen == {first.stdout.strip(): 0, second.stdout.strip(): 1}

    status = evalcore("label", "status", first.stdout.strip(), cwd=tmp_path / "a", **env)
    assert status.returncode == 0 and "0 labels so far; the first estimate needs 2 labels," in status.stdout
    unknown = evalcore("label", "status", "nope", cwd=tmp_path, **env)
    assert unknown.returncode == 1 and unknown.stderr.count("\n") == 1
    assert "No labeling campaign with id 'nope'" in unknown.stderr and f"searched is {default};" in unknown.stderr
    assert "--workspace or EVALCORE_WORKSPACE" in unknown.stderr
    no_dataset = evalcore("label", "create", "no-such-dataset", "--model", "m", "--design", "srs", cwd=tmp_path, **env)
    assert no_dataset.returncode == 1 and "No dataset with id 'no-such-dataset'" in no_dataset.stderr
    assert str(default) in no_dataset.stderr
    no_series = evalcore("compare", "--series", "nightly", "a/pool.csv", cwd=tmp_path, **env)
    assert no_series.returncode == 1 and "No series named 'nightly'" in no_series.stderr
    assert f"searched is {default};" in no_series.stderr


def test_export_gives_settled_labels_only_and_each_annotators_quality(tmp_path):
    """Overlap 2: one example the annotators agree on, one they dispute: the export has the first's label and the
    second pending (empty, never 0.5); after the owner settles it, its label and adjudicator; beside it, one row per
    annotator with their agreement with the settled labels."""
    ws = Workspace(tmp_path / "ws")
    pool = pd.DataFrame({"model": "m", "example_id": [f"q{i}" for i in range(N)], "confidence": 0.8, "correct": ""})
    dataset = ws.add_dataset(pool.to_csv(index=False).encode(), "pool")
    campaign = Campaign.create(ws, dataset.id, "m", "srs", budget=20, overlap=2)
    examples = []
    for a, b in ((1, 1), (1, 0)):
        examples.append(campaign.next("ann"))
        campaign.next("bea")
        campaign.record(examples[-1], "ann", a)
        campaign.record(examples[-1], "bea", b)
    done = evalcore("label", "export", campaign.id, "-o", "labels.csv", "--workspace", "ws", cwd=tmp_path)
    assert done.returncode == 0 and "1 settled, 1 awaiting adjudication" in done.stderr, done.stderr
    table = pd.read_csv(tmp_path / "labels.csv").set_index("example_id")
    assert table.loc[examples, "label"].tolist()[0] == 1 and math.isnan(table.loc[examples[1], "label"])
    assert table.loc[examples, "status"].tolist() == ["labeled", "pending"]
    campaign.adjudicate(examples[1], 0, "owner-at-the-terminal")
    assert evalcore("label", "export", campaign.id, "-o", "labels.csv", "--workspace", "ws", cwd=tmp_path).returncode == 0
    table = pd.read_csv(tmp_path / "labels.csv").set_index("example_id")
    assert table.loc[examples[1], ["label", "status", "adjudicator"]].tolist() == [0, "adjudicated",
                                                                                   "owner-at-the-terminal"]
    quality = pd.read_csv(tmp_path / "labels.annotators.csv").set_index("annotator")
    assert quality.loc[["ann", "bea"], "n_settled"].tolist() == [2, 2]
    assert quality.loc[["ann", "bea"], "agree_settled"].tolist() == [0.5, 1.0]
