"""One bad file never blocks good ones (issue 49, item 3): in a real lm-evaluation-harness run folder
(../shared/data/ecosystem/lm_eval, one model, 10 docs of math_perturbed_full, every exact_match 0) a samples file of
another run (another time stamp, no results file of its own) is left out with a warning naming it and why, not read
as a model named after the folder; ``strict`` refuses instead. A task that one file puts in a group and another in
none takes the group, with a note; files that put a task in different groups are refused naming each file."""

from __future__ import annotations

import json
import shutil

import pytest

from crafted import evalcore
from evalcore.data.validation import EvalDataError, load_eval_logs, report_of

RUN = "2026-01-21T03-44-18.458309"
SAMPLES = f"samples_math_perturbed_full_{RUN}.jsonl"
RESULTS = f"results_{RUN}.json"
MODEL = "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"
OTHER = "2026-02-03T10-00-00.000000"
STRAY = f"samples_math_perturbed_full_{OTHER}.jsonl"


@pytest.fixture
def run_folder(tmp_path, shared_file):
    """The real run in a folder named after a model, with the first 3 lines of its samples as another run's file."""
    folder = tmp_path / "tools" / "Org__mem-model"
    shutil.copytree(shared_file("ecosystem/lm_eval"), folder)
    lines = (folder / SAMPLES).read_text().splitlines(keepends=True)
    (folder / STRAY).write_text("".join(lines[:3]))
    return folder


def test_a_stray_samples_file_of_another_run_is_left_out_naming_it(run_folder):
    log = load_eval_logs([run_folder])
    report = report_of(log)
    assert log["model"].unique().tolist() == [MODEL] and len(log) == 10 and log["correct"].sum() == 0
    [warning] = report.warnings
    assert warning.startswith(f"{run_folder.name}/{STRAY} was left out: it is from another run (time stamp {OTHER}) "
                              f"than the run read beside it ({run_folder.name}/{RESULTS})"), warning
    assert f"Upload it with its own run's results_{OTHER}.json, or on its own." in warning
    assert STRAY not in " ".join(report.files)
    with pytest.raises(EvalDataError, match=rf"{STRAY}: it is from another run .*--strict refuses"):
        load_eval_logs([run_folder], strict=True)


def test_the_tool_folder_validates_with_the_stray_left_out(run_folder, shared_file):
    shutil.copy(shared_file("ecosystem/inspect_ai/data_arc_qwen.json"), run_folder.parent)
    out = evalcore("validate", str(run_folder.parent))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "usable: a log table with 13 rows and 2 models." in out.stdout
    assert f"  - tools/Org__mem-model/{STRAY} was left out: it is from another run" in out.stdout
    strict = evalcore("validate", "--strict", str(run_folder.parent))
    assert strict.returncode == 1 and f"{STRAY}: it is from another run" in strict.stdout


def _grouped(results: dict, group: str) -> dict:
    return {**results, "group_subtasks": {group: ["math_perturbed_full"]}, "groups": {group: {}}}


def test_a_task_in_a_group_in_one_run_and_in_none_in_another_takes_the_group(tmp_path, shared_file):
    real = shared_file("ecosystem/lm_eval")
    results = json.loads((real / RESULTS).read_text())
    lines = (real / SAMPLES).read_text().splitlines(keepends=True)
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / RESULTS).write_text(json.dumps(_grouped(results, "math")))
    (a / SAMPLES).write_text("".join(lines))
    (b / f"results_{OTHER}.json").write_text(json.dumps({**results, "model_name": "org/other"}))
    (b / STRAY).write_text("".join(lines[:4]))
    log = load_eval_logs([a, b])
    assert log.groupby("model")["category"].unique().map(list).to_dict() == {MODEL: ["math"], "org/other": ["math"]}
    assert any(note.startswith(f"b/{STRAY} + b/results_{OTHER}.json: no category for 'math_perturbed_full', which "
                               "other files put in a category") for note in report_of(log).notes)
    (b / f"results_{OTHER}.json").write_text(json.dumps({**_grouped(results, "algebra"), "model_name": "org/other"}))
    with pytest.raises(EvalDataError) as refused:
        load_eval_logs([a, b])
    message = str(refused.value)
    assert message.startswith("Task 'math_perturbed_full' is in different categories in different files ('algebra' "
                              f"in b/{STRAY} + b/results_{OTHER}.json; 'math' in a/{SAMPLES} + a/{RESULTS})"), message
    assert "Fix column" not in message
