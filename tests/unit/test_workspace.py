"""evalcore.workspace: datasets and analyses saved in a folder, owners, several writers, killed writers."""

from __future__ import annotations

import errno
import multiprocessing
import os
import re
import signal
import sqlite3
import threading
import time

import numpy as np
import pandas as pd
import pytest

from evalcore.data.validation import EvalDataError, report_of
from evalcore.workspace import Workspace, access, catalog, storage

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
    from evalcore.data.validation import validate
    frame = validate(big)
    ws = Workspace(root)
    while True:
        ws.add_dataset(frame.assign(correct=frame["correct"].sample(frac=1, random_state=int(time.time() * 1e6) % 2**31)
                                    .to_numpy()), "big")


def test_a_writer_killed_mid_write_leaves_no_half_dataset(tmp_path):
    context = multiprocessing.get_context("spawn")
    for _ in range(3):  # the writer may finish its file between the look and the kill: then kill it again later
        process = context.Process(target=_slow_writer, args=(str(tmp_path),))
        process.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list((tmp_path / "data").glob(".tmp-*")):
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
        process.join(10)
        if list((tmp_path / "data").glob(".tmp-*")):
            break
    ws = Workspace(tmp_path)  # every listed dataset is whole; the killed writer's temporary file is not listed
    for record in ws.datasets():
        assert len(ws.dataset(record.id)) == record.rows == 2_000_000
    assert list((tmp_path / "data").glob(".tmp-*"))  # young: it might belong to a writer at work
    ws.sweep(older_than=0)
    assert not list((tmp_path / "data").glob(".tmp-*"))


def test_a_full_disk_gets_a_clear_message(tmp_path, monkeypatch):
    ws = Workspace(tmp_path)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(storage.os, "fsync", full)
    with pytest.raises(EvalDataError, match=f"disk holding the workspace folder {tmp_path / 'data'} is full "
                                            "\\(ENOSPC"):
        ws.add_dataset(CSV, "x")
    assert ws.datasets() == [] and not list((tmp_path / "data").glob("*"))


def test_a_full_disk_under_the_engine_gets_the_same_message(tmp_path, monkeypatch):
    """``workspace add --engine always``: DuckDB's write fails with its own IOException (issue 38: it reached the
    user as "internal error: IOException ... No space left on device"); the message is the in-memory path's."""
    import duckdb

    from evalcore.engine import connection

    (tmp_path / "log.csv").write_bytes(CSV)
    ws = Workspace(tmp_path / "ws")

    def full(table, path, **options):
        open(path, "wb").write(b"PAR1")  # a partial file, as a write cut short leaves it
        raise duckdb.IOException(f'IO Error: Could not write file "{path}": No space left on device')

    monkeypatch.setattr(connection, "write_parquet", full)
    with pytest.raises(EvalDataError) as refused:
        ws.add_log(str(tmp_path / "log.csv"), "big")
    folder = tmp_path / "ws" / "data"
    assert str(refused.value) == (f"The disk holding the workspace folder {folder} is full (ENOSPC: No space left on "
                                  "device): free space on it, or set EVALCORE_WORKSPACE to a folder on another disk.")
    assert str(refused.value) == storage.storage_problem(folder, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    assert ws.datasets() == [] and not list(folder.glob("*"))

    def broken(table, path, **options):  # an engine failure the disk does not explain stays what it is
        raise duckdb.IOException("IO Error: something else")

    monkeypatch.setattr(connection, "write_parquet", broken)
    with pytest.raises(duckdb.IOException, match="something else"):
        ws.add_log(str(tmp_path / "log.csv"), "big")


# ----------------------------------------------------------------------------------------- sharing and deleting
ALICE, BOB = "alice@team.org", "bob@team.org"


def two_owners(tmp_path):
    """Alice's shared dataset, her analysis of it and bob's."""
    ws = Workspace(tmp_path)
    dataset = ws.add_dataset(CSV, "alice's run", owner=ALICE, shared=True)
    hers = ws.save_analysis(dataset.id, "models", name="alice's view", owner=ALICE)
    his = ws.save_analysis(dataset.id, "calibration", name="bob's view", owner=BOB)
    return ws, dataset, hers, his


def snapshot(ws):
    return ([(d.id, d.name, d.owner, d.shared) for d in ws.datasets(viewer=ALICE)],
            sorted((a.id, a.name, a.owner, a.shared) for a in ws.analyses(viewer=ALICE) + ws.analyses(viewer=BOB)))


def test_sharing_an_analysis_of_a_teammates_shared_dataset_changes_only_the_analysis(tmp_path):
    ws, dataset, _, his = two_owners(tmp_path)
    ws.share(his.id, viewer=BOB)
    assert ws.analysis(his.id, viewer=ALICE).shared
    assert ws.dataset_record(dataset.id, viewer=ALICE) == dataset  # still alice's, shared, unchanged
    also = ws.save_analysis(dataset.id, "leaderboard", owner=BOB, shared=True)
    assert ws.analysis(also.id, viewer=ALICE).shared


def test_sharing_an_analysis_of_a_teammates_private_dataset_is_refused_and_changes_nothing(tmp_path):
    ws, dataset, _, his = two_owners(tmp_path)
    ws.share(dataset.id, False, viewer=ALICE)
    before = snapshot(ws)
    with pytest.raises(PermissionError, match=f"“alice's run” of {ALICE}, which is private: {ALICE} must share "
                                              "that dataset before the analysis can be shared"):
        ws.share(his.id, viewer=BOB)
    assert snapshot(ws) == before and not ws.analysis(his.id, viewer=BOB).shared
    ws.share(dataset.id, viewer=ALICE)  # once its owner shares it, his analysis can be shared
    ws.share(his.id, viewer=BOB)
    assert ws.analysis(his.id, viewer=ALICE).shared


def test_a_share_is_one_transaction(tmp_path, monkeypatch):
    ws = Workspace(tmp_path)
    dataset = ws.add_dataset(CSV, "mine", owner=ALICE)
    analysis = ws.save_analysis(dataset.id, "models", owner=ALICE)
    real = Workspace._share_for_analysis

    def share_then_fail(db, row, viewer):
        real(db, row, viewer)
        raise sqlite3.OperationalError("database or disk is full")  # after the dataset's update, before the analysis's

    monkeypatch.setattr(Workspace, "_share_for_analysis", staticmethod(share_then_fail))
    with pytest.raises(EvalDataError):
        ws.share(analysis.id, viewer=ALICE)
    assert not ws.dataset_record(dataset.id, viewer=ALICE).shared and not ws.analysis(analysis.id, ALICE).shared


def test_deleting_a_dataset_never_deletes_other_peoples_analyses(tmp_path):
    ws, dataset, hers, his = two_owners(tmp_path)
    use = ws.dataset_use(dataset.id, viewer=ALICE)
    assert (use.own, use.others) == (1, (("bob's view", BOB),))
    before = snapshot(ws)
    with pytest.raises(PermissionError, match=f"other people's saved analyses use it: “bob's view” \\({BOB}\\)"):
        ws.delete(dataset.id, viewer=ALICE, with_analyses=True)
    assert snapshot(ws) == before
    ws.delete(his.id, viewer=BOB)
    assert ws.dataset_use(dataset.id, viewer=ALICE).refusal() is None
    assert ws.delete(dataset.id, viewer=ALICE, with_analyses=True) == 1  # her own analysis goes with it
    assert ws.analyses(viewer=ALICE) == [] and ws.datasets(viewer=ALICE) == []


# ----------------------------------------------------------------------------------------- identities and owners
def test_owners_and_viewers_are_canonical(tmp_path):
    ws = Workspace(tmp_path)
    dataset = ws.add_dataset(CSV, "mine", owner="  BOB@Team.ORG ")
    assert dataset.owner == BOB and access.canonical(" issuer#Sub ") == "issuer#Sub"
    assert [d.id for d in ws.datasets(viewer="Bob@TEAM.org")] == [dataset.id]
    ws.rename(dataset.id, "renamed", viewer="BOB@TEAM.ORG")
    analysis = ws.save_analysis(dataset.id, "models", owner="Bob@Team.Org")
    assert analysis.owner == BOB and ws.analysis(analysis.id, viewer=BOB).owner == BOB
    ws.delete(analysis.id, viewer=" bob@team.org")


OLD_SCHEMA = """
CREATE TABLE datasets (id TEXT PRIMARY KEY, name TEXT NOT NULL, owner TEXT, shared INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL, rows INTEGER NOT NULL, models INTEGER NOT NULL, kind TEXT NOT NULL,
    digest TEXT NOT NULL, bytes INTEGER NOT NULL, mapping TEXT);
CREATE TABLE analyses (id TEXT PRIMARY KEY, dataset_id TEXT NOT NULL REFERENCES datasets(id), page TEXT NOT NULL,
    settings TEXT NOT NULL, selection TEXT NOT NULL, name TEXT NOT NULL, owner TEXT,
    shared INTEGER NOT NULL DEFAULT 0, created TEXT NOT NULL);
"""


def test_an_old_catalogs_owners_are_migrated_once(tmp_path):
    key, size = storage.store(tmp_path, report_frame())
    db = sqlite3.connect(tmp_path / "catalog.sqlite")
    db.executescript(OLD_SCHEMA)
    db.execute("INSERT INTO datasets VALUES ('d1','run','BOB@TEAM.ORG',0,'2024-01-01',4,2,'log',?,?,NULL)", (key, size))
    db.execute("INSERT INTO analyses VALUES ('a1','d1','models','{}','{}','view',' Bob@Team.org ',0,'2024-01-01')")
    db.commit()
    db.close()
    ws = Workspace(tmp_path)
    db = sqlite3.connect(tmp_path / "catalog.sqlite")
    assert db.execute("PRAGMA user_version").fetchone()[0] == catalog.SCHEMA_VERSION == 7
    assert db.execute("SELECT owner FROM datasets UNION ALL SELECT owner FROM analyses").fetchall() == [(BOB,), (BOB,)]
    db.close()
    ws.rename("d1", "mine", viewer=BOB)
    assert ws.analysis("a1", viewer=BOB).owner == BOB


def report_frame():
    from evalcore.data.validation import load_eval_log

    return load_eval_log(CSV)


def test_an_item_without_an_owner_is_read_only_for_signed_in_viewers(tmp_path):
    ws = Workspace(tmp_path)
    dataset = ws.add_dataset(CSV, "from the command line")
    assert [d.id for d in ws.datasets(viewer=BOB)] == [dataset.id]  # visible to all
    analysis = ws.save_analysis(dataset.id, "models", owner=BOB, shared=True)  # using it changes nothing of it
    for change in (lambda: ws.rename(dataset.id, "x", viewer=BOB), lambda: ws.share(dataset.id, viewer=BOB),
                   lambda: ws.delete(dataset.id, viewer=BOB, with_analyses=True)):
        with pytest.raises(PermissionError, match="has no owner.*signed-in members see it read-only"):
            change()
    ws.rename(dataset.id, "renamed")  # nobody signed in (an instance without sign-in, the command line)
    assert ws.dataset_record(dataset.id, viewer=BOB).name == "renamed"
    with pytest.raises(PermissionError, match=f"“{analysis.name}” \\({BOB}\\)"):
        ws.delete(dataset.id, with_analyses=True)  # bob's analysis keeps it, whoever asks


@pytest.mark.parametrize(("options", "owner", "said"), [
    ([], None, "Owner: none. Everyone who can open the dashboard sees it; signed-in team members see it read-only"),
    (["--owner", "Ann@Team.org"], "ann@team.org", "Owner: ann@team.org. Private: only ann@team.org sees it"),
    (["--owner", "ann@team.org", "--shared"], "ann@team.org", "Shared: every signed-in team member sees it"),
])
def test_workspace_add_says_who_owns_and_who_sees_the_dataset(tmp_path, capsys, options, owner, said):
    from evalcore.cli import main

    (tmp_path / "log.csv").write_bytes(CSV)
    assert main(["workspace", "add", str(tmp_path / "log.csv"), "--name", "run", "--workspace", str(tmp_path / "ws"),
                 *options]) == 0
    assert said in capsys.readouterr().out
    assert Workspace(tmp_path / "ws").datasets(viewer=owner)[0].owner == owner


# ----------------------------------------------------------------------------------------- disks that refuse writes
def refusing_disk(monkeypatch, code: int, catalog_opens: str) -> None:
    """Simulate a full (ENOSPC) or read-only (EROFS, EACCES) disk under the workspace (the tests run as root, which
    ignores permissions): every new file is refused with ``code``, and SQLite either reads the catalog only as an
    immutable file, as where its ``-shm`` file cannot be created ("immutable"), or opens it read-only, so that its
    writes get SQLite's own "attempt to write a readonly database" ("read-only")."""
    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(storage.tempfile, "mkstemp", refuse)
    real = sqlite3.connect

    def connect(database, *args, **kwargs):
        uri = str(database)
        if catalog_opens == "read-only":
            return real(uri.replace("mode=rwc", "mode=ro"), *args, **kwargs)
        if "immutable=1" not in uri:
            exc = sqlite3.OperationalError("unable to open database file")
            exc.sqlite_errorcode = sqlite3.SQLITE_CANTOPEN
            raise exc
        return real(database, *args, **kwargs)

    monkeypatch.setattr(catalog.sqlite3, "connect", connect)


SAID = {errno.ENOSPC: "is full \\(ENOSPC", errno.EROFS: "is on a read-only file system \\(EROFS\\)",
        errno.EACCES: "is read-only for the user running evalcore \\(EACCES"}


@pytest.mark.parametrize("catalog_opens", ["immutable", "read-only"])
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_a_refusing_disk_still_reads_and_every_write_says_what_happened(tmp_path, monkeypatch, code, catalog_opens):
    ws, dataset, hers, his = two_owners(tmp_path)
    before = snapshot(ws)
    refusing_disk(monkeypatch, code, catalog_opens)
    ws = Workspace(tmp_path)  # opens for reading
    assert snapshot(ws) == before
    assert ws.dataset(dataset.id, viewer=BOB)["correct"].tolist() == [1.0, 0.0, 1.0, 1.0]
    assert ws.analysis(his.id, viewer=BOB).name == "bob's view"
    said = f"{SAID[code]}.*EVALCORE_WORKSPACE" if code != errno.ENOSPC else SAID[code]
    assert re.search(said, ws.write_problem()) and str(tmp_path) in ws.write_problem()
    writes = {"save dataset": lambda: ws.add_dataset(CSV, "x", owner=ALICE),
              "save analysis": lambda: ws.save_analysis(dataset.id, "models", owner=ALICE),
              "rename": lambda: ws.rename(hers.id, "x", viewer=ALICE),
              "share": lambda: ws.share(hers.id, viewer=ALICE),
              "delete": lambda: ws.delete(hers.id, viewer=ALICE)}
    for what, write in writes.items():
        with pytest.raises(EvalDataError, match=said) as refused:
            write()
        assert str(tmp_path) in str(refused.value), what
    monkeypatch.undo()
    assert snapshot(Workspace(tmp_path)) == before


def test_a_workspace_that_was_never_created_on_a_read_only_disk_lists_nothing(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(catalog.Path, "mkdir", refuse)
    monkeypatch.setattr(storage.tempfile, "mkstemp", refuse)
    ws = Workspace(tmp_path / "ws")
    assert ws.datasets() == [] and ws.analyses() == []
    assert "read-only file system (EROFS)" in ws.write_problem()


# ----------------------------------------------------------------------------------------- lock scope and sweeping
def test_other_saves_go_on_while_add_log_writes_its_file(tmp_path, monkeypatch):
    ws = Workspace(tmp_path)
    dataset = ws.add_dataset(CSV, "small")
    (tmp_path / "log.csv").write_bytes(CSV)
    monkeypatch.setattr(catalog, "BUSY_TIMEOUT_MS", 2000)  # a save that waited for the lock would fail in 2 s
    writing, saved = threading.Event(), threading.Event()
    real = storage.store_table

    def slow_store_table(root, table):
        writing.set()
        saved.wait(20)  # the file is being written until the other save is done
        return real(root, table)

    monkeypatch.setattr(storage, "store_table", slow_store_table)
    added = []
    writer = threading.Thread(target=lambda: added.append(Workspace(tmp_path).add_log(str(tmp_path / "log.csv"),
                                                                                      "big")))
    writer.start()
    assert writing.wait(20)
    started = time.monotonic()
    ws.save_analysis(dataset.id, "models", name="meanwhile")  # refused after 2 s if add_log held the lock
    ws.rename(dataset.id, "renamed meanwhile")
    assert time.monotonic() - started < 1.5 and writer.is_alive()
    saved.set()
    writer.join(20)
    assert [r.name for r in added] == ["big"] and ws.lazy_dataset(added[0].id).n_rows == 4


def test_a_file_removed_before_its_row_is_saved_is_written_again(tmp_path, monkeypatch):
    ws = Workspace(tmp_path)
    real = storage.store

    def store_then_lose(root, frame):  # a delete of another dataset with the same content, in between
        key, size = real(root, frame)
        storage.path_of(root, key).unlink()
        monkeypatch.setattr(storage, "store", real)
        return key, size

    monkeypatch.setattr(storage, "store", store_then_lose)
    record = ws.add_dataset(CSV, "x")
    assert ws.dataset(record.id)["model"].tolist() == ["a", "a", "b", "b"]


def test_the_sweep_removes_old_orphans_only(tmp_path):
    ws = Workspace(tmp_path)
    kept = ws.add_dataset(CSV, "kept")
    data = tmp_path / "data"
    [referenced] = list(data.glob("*.parquet"))
    old_orphan, young_orphan = data / f"{'a' * 64}.parquet", data / f"{'b' * 64}.parquet"
    old_tmp, young_tmp = data / ".tmp-old.parquet", data / ".tmp-young.parquet"
    for path in (old_orphan, young_orphan, old_tmp, young_tmp):
        path.write_bytes(b"x")
    hour_ago = time.time() - storage.GRACE_S - 60
    for path in (old_orphan, old_tmp, referenced):
        os.utime(path, (hour_ago, hour_ago))
    Workspace(tmp_path)  # opening sweeps
    assert sorted(p.name for p in data.iterdir()) == sorted(p.name for p in (young_orphan, young_tmp, referenced))
    assert ws.dataset(kept.id)["model"].tolist() == ["a", "a", "b", "b"]


def test_ids_never_start_with_a_dash(monkeypatch):
    """One random id in 64 would start with "-", which the command line reads as an option."""
    from evalcore.workspace import access

    draws = iter(["-starts-with-a-dash", "-again", "fine-id"])
    monkeypatch.setattr(access.secrets, "token_urlsafe", lambda n: next(draws))
    assert access.new_id() == "fine-id"
