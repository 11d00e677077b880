"""Series from the command line under hostile use (issue 51), in subprocesses: run times a day ahead or outside
years 1-9999 are one-line refusals that save nothing, a log's own bad time is set aside with a note and the run
still joins its series; series names and metadata are bounded; ``workspace series pin``/``unpin`` follow the History
page's rule, naming the owner; ``compare --series`` sees a series whose runs have an owner as that member's page
does; ``compare --json`` into a missing folder is a one-line error naming the file."""

from __future__ import annotations

import json
import os

import pytest

from crafted import evalcore, write_series_runs
from evalcore.workspace import Workspace

ALICE, BOB = "alice@team.org", "bob@team.org"


def _one_line_error(done) -> str:
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stdout + done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    return done.stderr


def _inspect_log(path, created: str) -> None:
    samples = [{"id": i, "epoch": 1, "scores": {"match": {"value": "C" if i % 3 else "I"}}} for i in range(30)]
    path.write_text(json.dumps({"version": 2, "status": "success",
                                "eval": {"task": "t", "model": "m/x", "created": created,
                                         "scorers": [{"name": "match"}]},
                                "results": {"scores": [{"name": "match", "scorer": "match"}]}, "samples": samples}))


@pytest.mark.parametrize("time, said", [("9999-12-31", "more than a day in the future"),
                                        ("2999-01-01T00:00:00Z", "more than a day in the future"),
                                        ("0001-01-01T00:00:00+14:00", "outside the times that can be kept")])
def test_a_bad_run_time_is_a_one_line_refusal_that_saves_nothing(tmp_path, time, said):
    [path] = write_series_runs(tmp_path)[:1]
    done = evalcore("workspace", "add", str(path), "--name", "r", "--series", "s", "--time", time,
                    "--workspace", "ws", cwd=tmp_path)
    assert said in _one_line_error(done) and time in done.stderr
    assert Workspace(tmp_path / "ws").datasets() == []


@pytest.mark.parametrize("created", ["2999-01-01T00:00:00+00:00", "0001-01-01T00:00:00+14:00"])
def test_a_logs_own_bad_time_is_set_aside_with_a_note_and_the_run_joins_its_series(tmp_path, created):
    _inspect_log(tmp_path / "log.json", created)
    done = evalcore("workspace", "add", "log.json", "--name", "r", "--series", "s", "--workspace", "ws",
                    cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "added as a run of the series 's'" in done.stdout and "note: The log's own run time" in done.stderr
    ws = Workspace(tmp_path / "ws")
    [record] = ws.datasets()
    assert [(r.dataset_id, r.run_time) for r in ws.series_runs("s")] == [(record.id, record.created)]


def test_a_summary_table_for_a_series_is_not_kept(tmp_path):
    (tmp_path / "summary.csv").write_text("model,task,accuracy,n\na,t,0.7,100\nb,t,0.6,100\n")
    done = evalcore("workspace", "add", "summary.csv", "--name", "r", "--series", "s", "--workspace", "ws",
                    cwd=tmp_path)
    assert "Nothing was saved" in _one_line_error(done) and Workspace(tmp_path / "ws").datasets() == []


@pytest.mark.parametrize("option, said", [(["--series", "s" * 201], "The series' name has 201 characters"),
                                          (["--series", "s", "--meta", "k" * 201 + "=v"], "The metadata key"),
                                          (["--series", "s", "--meta", "note=" + "x" * 10_000], "The run's metadata")])
def test_series_names_and_metadata_are_bounded(tmp_path, option, said):
    [path] = write_series_runs(tmp_path)[:1]
    done = evalcore("workspace", "add", str(path), "--name", "r", *option, "--workspace", "ws", cwd=tmp_path)
    error = _one_line_error(done)
    assert said in error and "EVALCORE_MAX_" in error and Workspace(tmp_path / "ws").datasets() == []


def _owned_series(tmp_path, owner: str | None, shared: bool = False) -> list:
    paths = write_series_runs(tmp_path)
    for i in range(3):
        done = evalcore("workspace", "add", str(paths[i]), "--name", f"n{i}", "--series", "s", "--time",
                        f"2026-11-1{i}T00:00:00Z", "--workspace", "ws", *(["--owner", owner] if owner else []),
                        *(["--shared"] if shared else []), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    return paths


def test_pin_and_unpin_are_the_owners_naming_the_owner_when_refused(tmp_path):
    _owned_series(tmp_path, ALICE)
    ws = Workspace(tmp_path / "ws")
    hidden = evalcore("workspace", "series", "pin", "s", "n1", "--workspace", "ws", "--by", BOB, cwd=tmp_path)
    assert ALICE in _one_line_error(hidden) and "No series named" not in hidden.stderr
    pinned = evalcore("workspace", "series", "pin", "s", "n1", "--workspace", "ws", "--by", ALICE, cwd=tmp_path)
    assert pinned.returncode == 0 and "pinned n1" in pinned.stdout, pinned.stderr
    assert ws.series_baseline("s") == ws.series_runs("s", ALICE)[1].dataset_id
    gate = evalcore("compare", "--series", "s", "run3.csv", "--workspace", "ws", "--as", ALICE, cwd=tmp_path)
    assert "run3 against its pinned run n1" in gate.stdout, gate.stderr
    assert ALICE in _one_line_error(evalcore("workspace", "series", "unpin", "s", "--workspace", "ws", "--by", BOB,
                                             cwd=tmp_path))
    unpinned = evalcore("workspace", "series", "unpin", "s", "--workspace", "ws", "--by", ALICE, cwd=tmp_path)
    assert unpinned.returncode == 0 and ws.series_baseline("s") is None, unpinned.stderr


def test_a_shared_series_is_pinned_by_a_member_an_ownerless_one_only_without_an_identity(tmp_path):
    _owned_series(tmp_path, ALICE, shared=True)
    assert evalcore("workspace", "series", "pin", "s", "n1", "--workspace", "ws", "--by", BOB,
                    cwd=tmp_path).returncode == 0  # a signed-in member, on runs shared with the team
    other = tmp_path / "ownerless"
    other.mkdir()
    _owned_series(other, None)
    refused = evalcore("workspace", "series", "pin", "s", "n1", "--workspace", "ws", "--by", BOB, cwd=other)
    assert "has no owner" in _one_line_error(refused)
    assert evalcore("workspace", "series", "pin", "s", "n1", "--workspace", "ws", cwd=other).returncode == 0


def test_compare_series_sees_owned_runs_as_their_members_page_does(tmp_path):
    _owned_series(tmp_path, ALICE)
    anonymous = evalcore("compare", "--series", "s", "run3.csv", "--workspace", "ws", cwd=tmp_path)
    error = _one_line_error(anonymous)
    assert "has runs, but none you may see" in error and ALICE in error and "--as EMAIL" in error
    assert "none yet" not in error
    gate = evalcore("compare", "--series", "s", "run3.csv", "--workspace", "ws", "--as", ALICE, cwd=tmp_path)
    assert gate.returncode == 3, gate.stdout + gate.stderr  # run3's planted regression
    assert "run3 against its baseline n2 (the latest accepted run" in gate.stdout
    report = evalcore("report", "run3.csv", "--series", "s", "--workspace", "ws", "--owner", ALICE, "-o", "r.html",
                      "--quiet", cwd=tmp_path)
    assert report.returncode == 0 and (tmp_path / "r.html").is_file(), report.stderr


def test_compare_json_into_a_missing_folder_is_one_line_naming_the_file(tmp_path):
    paths = write_series_runs(tmp_path)
    done = evalcore("compare", str(paths[0]), str(paths[1]), "--json", "missing/out.json", cwd=tmp_path)
    error = _one_line_error(done)
    assert "missing/out.json" in error and "its folder does not exist" in error
    under_a_file = evalcore("compare", str(paths[0]), str(paths[1]), "--junit", "run0.csv/out.xml", cwd=tmp_path)
    assert "run0.csv/out.xml" in _one_line_error(under_a_file)
    if os.path.exists("/dev/full"):  # a full disk: every write fails with ENOSPC
        full = evalcore("compare", str(paths[0]), str(paths[1]), "--json", "/dev/full", cwd=tmp_path)
        assert "/dev/full" in _one_line_error(full) and "the disk is full" in full.stderr
