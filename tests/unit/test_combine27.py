"""Combining the logs of several tools safely (issue 27, points 1, 4, 5 and 8): rows without a repeat are repeat 1
next to files that number repeats, a file given by path keeps its folder, unknown JSON names the logs evalcore
reads, and a bad file among good ones is left out with a warning (strict: refused)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalcore.data.validation import EvalDataError, load_eval_log, load_eval_logs, report_of
from evalcore.importers.detect import tools

GOOD_CSV = b"model,example_id,correct\nm,1,1\nm,2,0\nm,3,1\n"


@pytest.fixture
def lm_eval(shared_file) -> Path:
    return shared_file("ecosystem/lm_eval")


@pytest.fixture
def inspect(shared_file) -> Path:
    return shared_file("ecosystem/inspect_ai/data_arc_qwen.json")


def test_lm_eval_without_repeat_combines_with_inspect_which_numbers_epochs(lm_eval, inspect):
    frame = load_eval_logs([lm_eval, inspect])
    lm_rows = frame[frame["model"].str.startswith("RylanSchaeffer")]
    inspect_rows = frame[~frame["model"].str.startswith("RylanSchaeffer")]
    assert len(lm_rows) == 10 and len(inspect_rows) == 3
    assert set(lm_rows["repeat"]) == {"1"} and set(inspect_rows["repeat"]) == {"1"}  # Inspect's epoch 1
    assert lm_rows["correct"].sum() == 0 and inspect_rows["correct"].sum() == 1  # the numbers of each file alone
    assert any("have no repeat column (one sample per example): their rows are repeat 1" in n
               for n in report_of(frame).notes)


def test_a_file_given_by_path_keeps_its_folder_for_the_model(tmp_path, lm_eval):
    folder = tmp_path / "outputs" / "org__model-7b"
    folder.mkdir(parents=True)
    samples = next(lm_eval.glob("samples_*.jsonl"))
    shutil.copy(samples, folder / samples.name)
    frame = load_eval_log(folder / samples.name)
    assert set(frame["model"]) == {"org/model-7b"} and len(frame) == 10


def test_unknown_json_names_the_logs_evalcore_reads():
    with pytest.raises(EvalDataError) as error:
        load_eval_log(("config.json", b'{\n  "name": "my run",\n  "settings": {"lr": 0.1}\n}\n'))
    message = str(error.value)
    assert message.startswith("config.json: this JSON is not a log evalcore recognises. evalcore reads the logs of ")
    assert "README, \"Logs written by evaluation tools\"" in message and "-m COLUMN=ROLE" in message
    assert all(module.TOOL in message for module in tools())
    assert "JSON Lines need" not in message


def test_a_bad_file_among_good_ones_is_left_out_with_a_warning_and_strict_refuses():
    errored_inspect = (b'{"version": 2, "status": "error", "eval": {"task": "t", "model": "m2", "run_id": "r", '
                       b'"task_id": "x"}, "samples": [{"id": 1, "epoch": 1, "input": "q", "target": "a", '
                       b'"error": {"message": "timeout"}}]}')
    sources = [("good.csv", GOOD_CSV), ("broken.json", errored_inspect), ("other.json", b'{"a": {"b": 1}}')]
    frame = load_eval_logs(sources)
    assert len(frame) == 3 and set(frame["model"]) == {"m"}
    warnings = report_of(frame).warnings
    assert any(w.startswith("broken.json was left out: ") for w in warnings)
    assert any(w.startswith("other.json was left out: this JSON is not a log evalcore recognises") for w in warnings)
    assert report_of(frame).files == ("good.csv",) and report_of(frame).tools == ("table",)
    with pytest.raises(EvalDataError, match=r"^broken\.json"):
        load_eval_logs(sources, strict=True)


def test_when_every_file_is_bad_the_load_is_refused_naming_the_first():
    with pytest.raises(EvalDataError, match=r"^a\.json: this JSON is not a log"):
        load_eval_logs([("a.json", b'{"x": {"y": 1}}'), ("b.json", b'{"z": [1]}')])


def test_the_report_names_the_tool_of_every_file(lm_eval, inspect):
    frame = load_eval_logs([lm_eval, inspect, ("extra.csv", b"model,example_id,correct\nz,1,1\n")])
    tools_of = dict(zip(report_of(frame).files, report_of(frame).tools))
    assert tools_of["data_arc_qwen.json"] == "Inspect AI" and tools_of["extra.csv"] == "table"
    assert {tool for name, tool in tools_of.items() if name.startswith("lm_eval/")} == {"lm-evaluation-harness"}


def test_a_git_lfs_pointer_is_named_as_one():
    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:0123\nsize 2048\n"
    with pytest.raises(EvalDataError, match=r"^details\.parquet: a Git LFS pointer, not the file itself .*git lfs pull"):
        load_eval_log(("details.parquet", pointer))


def test_rows_two_files_share_with_the_same_numbers_but_other_text_are_counted_once():
    a = b"model,example_id,correct,response\nm,1,1,hedgehog\nm,2,0,cat\n"
    b = b"model,example_id,correct,response\nm,1,1,abstract\n"
    frame = load_eval_logs([("a.csv", a), ("b.csv", b)])
    assert len(frame) == 2 and frame["output"].tolist() == ["hedgehog", "cat"]  # the first file's text is kept


def test_rows_labelled_by_another_tasks_metric_are_not_called_unlabeled():
    data = b"model,example_id,task,correct,score\nm,1,qa,1,\nm,2,qa,0,\nm,3,summ,,0.4\n"
    notes = report_of(load_eval_log(("mixed.csv", data))).notes
    assert "1 of 3 rows have no 'correct' label: they carry 'score' instead (their task's metric); views of " \
           "'correct' leave them out." in notes
    assert "2 of 3 rows have no 'score' label: they carry 'correct' instead (their task's metric); views of " \
           "'score' leave them out." in notes


def test_a_text_role_the_tool_left_empty_is_no_column():
    frame = load_eval_log(("t.csv", b"model,example_id,correct,prompt,reference\nm,1,1,q,\nm,2,0,q2,\n"))
    assert "input" in frame.columns and "target" not in frame.columns
    assert "Example text kept (input): shown as written, never used by a method." in report_of(frame).notes


def test_a_tools_json_lines_evalcore_does_not_read_lists_what_it_reads():
    """An export of a tracing platform's results (JSON Lines with nested spans and feedback): not a table, not a
    log of a tool evalcore reads: the message lists the tools, names the README section and the mapping option."""
    line = b'{"trace_id": "t1", "spans": [{"input": "q", "output": "a"}], "feedback": {"g": 1}}\n'
    with pytest.raises(EvalDataError) as error:
        load_eval_log(("export.jsonl", line * 3))
    message = str(error.value)
    assert all(module.TOOL in message for module in tools() if getattr(module, "READS_LOGS", True))
    assert "README, \"Logs written by evaluation tools\"" in message and "-m COLUMN=ROLE" in message
