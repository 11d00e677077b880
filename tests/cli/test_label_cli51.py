"""``evalcore label`` under hostile use (issue 51), in subprocesses: imports follow the design and record the
importer's identity only, names reach the terminal neutralised, file errors are one line naming the file, and a
campaign is deleted by its owner only."""

from __future__ import annotations

import pandas as pd
import pytest

from crafted import evalcore
from evalcore.errors import EvalDataError
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


# ------------------------------------------------------------------------------------------------ item 8
def _label(campaign: Campaign) -> None:
    for k in range(10):
        campaign.record(campaign.next("ann"), "ann", k % 2)


HOSTILE = "m\x1b]0;owned\x07\x1b[31m\u202eexe.txt"


def _raw_controls(text: str) -> list[str]:
    return [c for c in text if c in "\x1b\x07\u202e\u2066\u2067\u2068\u2069"]


def test_names_reach_the_terminal_neutralised(tmp_path):
    """A file, a column and a model named with ESC, BEL and a right-to-left override: validate, label status and
    label report print each escaped (\\x1b, \\x07, \\u202e), never raw."""
    frame = pd.DataFrame({"model": HOSTILE, "example_id": [f"q{i}" for i in range(N)],
                          "confidence": 0.8, "correct": [i % 2 for i in range(N)], f"note\u202e\x1b": "x"})
    name = "log\x1b[2J\u202e.csv"
    frame.to_csv(tmp_path / name, index=False)
    checked = evalcore("validate", name, cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert not _raw_controls(checked.stdout) and "log\\x1b[2J\\u202e.csv: usable" in checked.stdout
    ws = Workspace(tmp_path / "ws")
    dataset = ws.add_dataset(frame.to_csv(index=False).encode(), "pool")
    campaign = Campaign.create(ws, dataset.id, HOSTILE, "srs", budget=10, name=HOSTILE)
    status = evalcore("label", "status", campaign.id, "--workspace", "ws", cwd=tmp_path)
    assert status.returncode == 0 and not _raw_controls(status.stdout + status.stderr), status.stdout
    assert "m\\x1b]0;owned\\x07\\x1b[31m\\u202eexe.txt: 0 labels so far" in status.stdout
    _label(campaign)
    out = "report\u202elmth.html"
    report = evalcore("label", "report", campaign.id, "-o", out, "--workspace", "ws", cwd=tmp_path)
    assert report.returncode == 0 and not _raw_controls(report.stdout + report.stderr), report.stderr
    assert (tmp_path / out).exists() and "wrote report\\u202elmth.html: " in report.stderr


def test_a_file_the_disk_refuses_is_one_line_naming_it(tmp_path):
    _, dataset = _workspace(tmp_path)
    campaign = Campaign.create(Workspace(tmp_path / "ws"), dataset, "m", "srs", budget=10)
    _label(campaign)
    (tmp_path / "a-file").write_text("not a folder")
    cases = {"missing/out.csv": "(ENOENT): its folder does not exist",
             "a-file/sub/out.csv": "(ENOTDIR): a part of its path is a file, not a folder"}
    for target, said in cases.items():
        for command in (("export", campaign.id, "-o", target), ("report", campaign.id, "-o", target),
                        ("status", campaign.id, "--json", target)):
            done = _one_line_error(evalcore("label", *command, "--workspace", "ws", cwd=tmp_path))
            assert f"{target}: cannot write" in done and said in done, done
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        (locked / "probe").write_text("")
        bites = False  # root writes anyway: the read-only case is the ENOTDIR one above
    except PermissionError:
        bites = True
    if bites:
        done = _one_line_error(evalcore("label", "export", campaign.id, "-o", "locked/out.csv", "--workspace", "ws",
                                        cwd=tmp_path))
        assert "locked/out.csv: cannot write the file (EACCES): the user running evalcore may not write" in done
    locked.chmod(0o755)


# ------------------------------------------------------------------------------------------------ item 3
def test_label_delete_is_the_owners_and_a_dataset_names_the_campaigns_that_keep_it(tmp_path):
    ws, dataset = _workspace(tmp_path, owner=BOB, shared=True)
    campaign = Campaign.create(ws, dataset, "m", "srs", budget=10, owner=ALICE, shared=True, name="alice's audit")
    campaign.record(campaign.next(ALICE), ALICE, 1)
    with pytest.raises(EvalDataError) as kept:
        ws.delete(dataset, viewer=BOB)
    assert (f"1 labeling campaign(s) use it: “alice's audit” ({campaign.id}, owner {ALICE}). Their owners delete "
            "them first") in str(kept.value)
    other = _one_line_error(evalcore("label", "delete", campaign.id, "--by", BOB, "--workspace", "ws", cwd=tmp_path))
    assert f"Only its owner ({ALICE}) can change or delete this item ({campaign.id})" in other
    nobody = _one_line_error(evalcore("label", "delete", campaign.id, "--workspace", "ws", cwd=tmp_path))
    assert "belongs to an owner, and nobody is signed in here" in nobody
    assert Campaign.open(ws, campaign.id, viewer=ALICE).history()["annotator"].tolist() == [ALICE]
    done = evalcore("label", "delete", campaign.id, "--by", "Alice@Team.org", "--workspace", "ws", cwd=tmp_path)
    assert done.returncode == 0 and "deleted the labeling campaign 'alice's audit'" in done.stderr, done.stderr
    assert "with its 1 label" in done.stderr
    with pytest.raises(LookupError):
        Campaign.open(ws, campaign.id, viewer=ALICE)
    ws.delete(dataset, viewer=BOB)  # nothing keeps it now
    assert ws.datasets(BOB) == []
