"""evalcore.workspace: datasets and analyses saved in a folder, owners, several writers, killed writers."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import numpy as np
import pandas as pd
import pytest

from evalcore.data import EvalDataError, report_of
from evalcore.workspace import Workspace, access, storage

CSV = b"model,example_id,correct\na,1,1\na,2,0\nb,1,1\nb,2,1\n"


def test_add_list_open_rename_delete(tmp_path):
    ws = Workspace(tmp_path / "ws")
    record = ws.add_dataset(CSV, "tiny", owner=None)
    assert (record.name, record.rows, record.models, record.kind) == ("tiny", 4, 2, "log")
    frame = ws.dataset(record.id)
    assert frame["correct"].tolist() == [1.0, 0.0, 1.0, 1.0] and report_of(frame).n_models == 2
    ws.rename(record.id, "renamed")
    assert [d.name for d in ws.datasets()] == ["renamed"]
    analysis = ws.save_analysis(record.id, "models", settings={"level": 0.9}, selection={"models": ["a"]})
    assert len(analysis.id) >= 32 and ws.analysis(analysis.id).settings == {"level": 0.9}
    with pytest.raises(EvalDataError, match="1 saved analyses of its owner use this dataset"):
        ws.delete(record.id)
    assert ws.delete(record.id, with_analyses=True) == 1
    assert ws.datasets() == [] and ws.analyses() == []
    assert list((tmp_path / "ws" / "data").glob("*.parquet")) == []
    with pytest.raises(LookupError):
        ws.dataset(record.id)


def test_the_same_data_is_stored_once(tmp_path):
    ws = Workspace(tmp_path)
    first, second = ws.add_dataset(CSV, "one"), ws.add_dataset(CSV, "two")
    assert len(list((tmp_path / "data").glob("*.parquet"))) == 1
    ws.delete(first.id)
    assert ws.dataset(second.id)["model"].tolist() == ["a", "a", "b", "b"]


def test_private_items_are_refused_to_others_and_shared_ones_are_not(tmp_path):
    ws = Workspace(tmp_path)
    mine = ws.add_dataset(CSV, "mine", owner="ann@team.org")
    analysis = ws.save_analysis(mine.id, "models", owner="ann@team.org")
    with pytest.raises(PermissionError):
        ws.analysis(analysis.id, viewer="bob@team.org")
    with pytest.raises(PermissionError):
        ws.dataset(mine.id, viewer="bob@team.org")
    with pytest.raises(PermissionError):
        ws.rename(mine.id, "x", viewer="bob@team.org")
    assert ws.datasets(viewer="bob@team.org") == []
    ws.share(analysis.id, viewer="ann@team.org")
    ws.share(mine.id, viewer="ann@team.org")
    assert ws.analysis(analysis.id, viewer="bob@team.org").page == "models"
    with pytest.raises(PermissionError):
        ws.delete(mine.id, viewer="bob@team.org", with_analyses=True)
    with pytest.raises(LookupError):
        ws.analysis("not-an-id", viewer="ann@team.org")


def test_sharing_an_analysis_shares_its_dataset_so_that_its_link_opens(tmp_path):
    ws = Workspace(tmp_path)
    mine = ws.add_dataset(CSV, "mine", owner="ann@team.org")
    private = ws.save_analysis(mine.id, "models", owner="ann@team.org")
    with pytest.raises(PermissionError):
        ws.dataset(mine.id, viewer="bob@team.org")
    shared = ws.save_analysis(mine.id, "calibration", owner="ann@team.org", shared=True)
    assert ws.dataset_record(mine.id, viewer="bob@team.org").shared
    assert ws.analysis(shared.id, viewer="bob@team.org").page == "calibration"
    with pytest.raises(PermissionError):
        ws.analysis(private.id, viewer="bob@team.org")
    ws.share(private.id, viewer="ann@team.org")
    assert ws.analysis(private.id, viewer="bob@team.org").page == "models"
    with pytest.raises(PermissionError):
        ws.share(private.id, False, viewer="bob@team.org")


@pytest.mark.parametrize(("email", "member"), [
    ("ann@team.org", True), ("ANN@Team.org", True), ("bob@lab.net", True), ("eve@lab.net.evil.com", False),
    ("eve@evil.com", False), ("eve@sub.team.org", False), ("", False), (None, False), ("team.org", False),
    ("eve@team.org@evil.com", False),
])
def test_team_membership_by_domain_or_address(email, member):
    assert access.team_member(email, emails=["bob@lab.net"], domains=["team.org", "@Team.org"]) is member


def test_no_team_configured_admits_nobody():
    assert not access.team_member("ann@team.org", emails=[], domains=[])


def _writer(root: str, worker: int, count: int) -> None:
    ws = Workspace(root)
    for i in range(count):
        data = f"model,example_id,correct\nm{worker},{i},1\nm{worker},{i + 1},0\n".encode()
        record = ws.add_dataset(data, f"w{worker}-{i}")
        ws.save_analysis(record.id, "models", name=f"a{worker}-{i}")


def test_several_processes_writing_at_once_lose_nothing(tmp_path):
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(tmp_path), w, 15)) for w in range(4)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(120)
        assert p.exitcode == 0
    ws = Workspace(tmp_path)
    assert len(ws.datasets()) == 60 and len(ws.analyses()) == 60
    assert sorted(d.name for d in ws.datasets()) == sorted(f"w{w}-{i}" for w in range(4) for i in range(15))


def _slow_writer(root: str) -> None:
    big = pd.DataFrame({"model": np.repeat(["a", "b"], 1_000_000), "example_id": np.tile(np.arange(1_000_000), 2),
                        "correct": np.random.default_rng(0).integers(0, 2, 2_000_000)})
    from evalcore.data import validate
    frame = validate(big)
    ws = Workspace(root)
    while True:
        ws.add_dataset(frame.assign(correct=frame["correct"].sample(frac=1, random_state=int(time.time() * 1e6) % 2**31)
                                    .to_numpy()), "big")


def test_a_writer_killed_mid_write_leaves_no_half_dataset(tmp_path):
    context = multiprocessing.get_context("spawn")
    process = context.Process(target=_slow_writer, args=(str(tmp_path),))
    process.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list((tmp_path / "data").glob(".tmp-*")):
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.join(10)
    ws = Workspace(tmp_path)  # every listed dataset is whole; the killed writer's temporary file is not listed
    for record in ws.datasets():
        assert len(ws.dataset(record.id)) == record.rows == 2_000_000
    assert list((tmp_path / "data").glob(".tmp-*"))  # young: it might belong to a writer at work
    ws.sweep(older_than=0)
    assert not list((tmp_path / "data").glob(".tmp-*"))


def test_a_read_only_folder_gets_a_clear_message(tmp_path, monkeypatch):
    import errno

    from evalcore.workspace import storage

    ws = Workspace(tmp_path)

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(storage.tempfile, "mkstemp", read_only)
    with pytest.raises(EvalDataError, match="is on a read-only file system \\(EROFS\\).*EVALCORE_WORKSPACE"):
        ws.add_dataset(CSV, "x")
    assert ws.datasets() == []


def test_a_full_disk_gets_a_clear_message(tmp_path, monkeypatch):
    import errno

    from evalcore.workspace import storage

    ws = Workspace(tmp_path)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(storage.os, "fsync", full)
    with pytest.raises(EvalDataError, match="is full"):
        ws.add_dataset(CSV, "x")
    assert ws.datasets() == [] and not list((tmp_path / "data").glob("*"))
