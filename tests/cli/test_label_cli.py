"""``evalcore label`` in subprocesses: create a campaign on a saved dataset, export its queue, import the labels
filled in, read the estimate as JSON; refusals are one line naming the file and what to fix."""

from __future__ import annotations

import json

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
