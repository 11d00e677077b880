"""``evalcore label`` under hostile use (issue 51), in subprocesses: imports follow the design and record the
importer's identity only, names reach the terminal neutralised, file errors are one line naming the file, and a
campaign is deleted by its owner only."""

from __future__ import annotations

import pandas as pd

from crafted import evalcore
from evalcore.labeling.campaign import Campaign
from evalcore.workspace import Workspace, catalog

N = 300
BOB, ALICE = "bob@team.org", "alice@team.org"


def _workspace(tmp_path, owner: str | None = None, shared: bool = False) -> tuple[Workspace, str]:
    ws = Workspace(tmp_path / "ws")
    frame = pd.DataFrame({"model": "m", "example_id": [f"q{i}" for i in range(N)],
                          "confidence": [0.3 + 0.6 * (i % 7) / 6 for i in range(N)], "correct": ""})
    return ws, ws.add_dataset(frame.to_csv(index=False).encode(), "pool", owner=owner, shared=shared).id


def _queue(campaign: Campaign) -> list[str]:
    return [r["example_id"] for r in catalog.rows(campaign.workspace.catalog, "SELECT example_id FROM queue WHERE "
                                                  "campaign_id = ? ORDER BY position", (campaign.id,))]


def _one_line_error(done) -> str:
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "internal error" not in done.stderr
    return done.stderr


# ------------------------------------------------------------------------------------------------ item 6
def test_label_import_follows_the_design_and_records_the_importer_only(tmp_path):
    ws, dataset = _workspace(tmp_path, owner=BOB, shared=True)
    campaign = Campaign.create(ws, dataset, "m", "neyman", target=0.05, seed=1, owner=BOB, shared=True)
    queue = _queue(campaign)
    pd.DataFrame({"example_id": queue[-120:], "label": 1}).to_csv(tmp_path / "end.csv", index=False)
    said = _one_line_error(evalcore("label", "import", campaign.id, "end.csv", "--by", ALICE, "--workspace", "ws",
                                    cwd=tmp_path))
    assert "end.csv" in said and "nothing was recorded" in said and f"position {N - 119} of the queue" in said
    assert campaign.estimate().labels == 0
    pd.DataFrame({"example_id": queue[:3], "label": 1, "annotator": ["eve@outside.org", ALICE, ""]}).to_csv(
        tmp_path / "who.csv", index=False)
    said = _one_line_error(evalcore("label", "import", campaign.id, "who.csv", "--by", ALICE, "--workspace", "ws",
                                    cwd=tmp_path))
    assert "line 2: the file names 'eve@outside.org' as the annotator" in said
    nobody = _one_line_error(evalcore("label", "import", campaign.id, "who.csv", "--workspace", "ws", cwd=tmp_path))
    assert "belongs to an owner, and nobody is signed in here" in nobody
    pd.DataFrame({"example_id": queue[:3], "label": 1, "annotator": ["", ALICE, ""]}).to_csv(
        tmp_path / "mine.csv", index=False)
    done = evalcore("label", "import", campaign.id, "mine.csv", "--by", ALICE, "--workspace", "ws", cwd=tmp_path)
    assert done.returncode == 0 and "recorded 3 labels" in done.stderr, done.stderr
    assert campaign.history()["annotator"].tolist() == [ALICE] * 3
