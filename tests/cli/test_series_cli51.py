"""Series from the command line under hostile use (issue 51), in subprocesses: run times a day ahead or outside
years 1-9999 are one-line refusals that save nothing, a log's own bad time is set aside with a note and the run
still joins its series; series names and metadata are bounded."""

from __future__ import annotations

import json

import pytest

from crafted import evalcore, write_series_runs
from evalcore.workspace import Workspace


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
