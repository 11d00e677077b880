"""Files combined into one log that share no example and no task get a warning naming them
(evalcore.importers.combine.unrelated_files); files of one benchmark do not. Also the upload store's bound
(pages/common/upload_store.py: least recently used out by total bytes, owners with sign-in)."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from evalcore.data.validation import load_eval_logs, report_of
from evalcore.importers import read_logs
from pages.common.upload_store import FORBIDDEN, FOUND, MISSING, UploadStore, size_of

SHARE = "share no example and no task"


def _csv(rows: dict) -> bytes:
    return pd.DataFrame(rows).to_csv(index=False).encode()


def _log(model: str, task: str | None, ids: list[str]) -> bytes:
    rows = {"model": [model] * len(ids), "example_id": ids, "correct": [i % 2 for i in range(len(ids))]}
    if task is not None:
        rows["task"] = [task] * len(ids)
    return _csv(rows)


def _warnings(files: list[tuple[str, bytes]]) -> list[str]:
    frame = load_eval_logs(files)
    return [w for w in report_of(frame).warnings if SHARE in w]


def test_two_benchmarks_without_a_shared_example_or_task_are_named_in_one_warning():
    files = [("mmlu.csv", _log("llm-a", "law", ["q1", "q2", "q3"])),
             ("imagenet.csv", _log("resnet", "fish", ["img1.jpg", "img2.jpg"]))]
    [warning] = _warnings(files)
    assert warning.startswith("mmlu.csv and imagenet.csv share no example and no task: they are analysed as one log")
    assert "Upload them separately if they are different benchmarks" in warning
    assert report_of(load_eval_logs(files)).n_models == 2  # still combined, as before: the warning says so


def test_the_warning_is_also_in_the_raw_log_of_the_import():
    raw = read_logs([("a.csv", _log("m1", "t1", ["1", "2"])), ("b.csv", _log("m2", "t2", ["3", "4"]))])
    assert len(raw.warnings) == 1 and raw.warnings[0].startswith("a.csv and b.csv " + SHARE)


@pytest.mark.parametrize("second", [
    _log("m2", "law", ["x1", "x2"]),        # the same task, other examples (another split of one benchmark)
    _log("m2", "other", ["q1", "q9"]),      # one shared example id, other task
    _log("m2", "law", ["q1", "q2", "q3"]),  # two runs of one benchmark, different models
])
def test_files_that_share_a_task_or_an_example_get_no_warning(second):
    assert _warnings([("a.csv", _log("m1", "law", ["q1", "q2", "q3"])), ("b.csv", second)]) == []


def test_without_a_task_column_categories_count_as_tasks():
    a = _csv({"model": ["m1", "m1"], "example_id": ["1", "2"], "category": ["bio", "law"], "correct": [1, 0]})
    b = _csv({"model": ["m2", "m2"], "example_id": ["7", "8"], "category": ["law", "law"], "correct": [1, 1]})
    c = _csv({"model": ["m3", "m3"], "example_id": ["7", "8"], "category": ["art", "art"], "correct": [1, 1]})
    assert _warnings([("a.csv", a), ("b.csv", b)]) == []  # they share the category (task) 'law'
    d = _csv({"model": ["m3", "m3"], "example_id": ["x", "y"], "category": ["art", "art"], "correct": [1, 1]})
    assert len(_warnings([("a.csv", a), ("d.csv", d)])) == 1
    assert _warnings([("b.csv", b), ("c.csv", c)]) == []  # shared example ids 7 and 8


def test_three_files_two_of_one_benchmark_name_the_sets():
    files = [("a1.csv", _log("m1", "law", ["q1", "q2"])), ("a2.csv", _log("m2", "law", ["q1", "q2"])),
             ("img.csv", _log("r", "fish", ["i1", "i2"]))]
    [warning] = _warnings(files)
    assert warning.startswith("a1.csv + a2.csv and img.csv share no example and no task:")


def test_three_unrelated_files_are_listed():
    files = [("a.csv", _log("m1", "t1", ["1"])), ("b.csv", _log("m2", "t2", ["2"])),
             ("c.csv", _log("m3", "t3", ["3"]))]
    [warning] = _warnings(files)
    assert warning.startswith("a.csv, b.csv and c.csv share no example and no task with each other:")


def test_one_file_gets_no_warning():
    frame = load_eval_logs([("a.csv", _log("m1", "t1", ["1", "2"]))])
    assert report_of(frame).warnings == ()


# ------------------------------------------------------------------------------------------------ the upload store

def _files(name: str, n: int) -> tuple[tuple[str, bytes], ...]:
    return ((name, b"x" * n),)


def test_size_counts_names_and_bytes():
    assert size_of((("ab.csv", b"12345"), ("c", b"")) ) == 6 + 5 + 1 + 0


def test_least_recently_used_uploads_leave_once_the_bytes_pass_the_budget():
    store = UploadStore(max_bytes=100)
    for name in "abc":
        assert store.put(name, _files(name, 29))  # 30 bytes each (1 of name, 29 of content): 90 in all
    assert store.bytes == 90 and len(store) == 3
    assert store.get("a") == (FOUND, _files("a", 29))  # 'a' is now the most recently used
    assert store.put("d", _files("d", 29))  # 120 > 100: the least recently used ('b') leaves
    assert store.bytes == 90
    assert store.get("b") == (MISSING, None)
    assert [store.get(k)[0] for k in "acd"] == [FOUND, FOUND, FOUND]
    assert store.put("e", _files("e", 69))  # 70 bytes: 160 -> 'a' (90+70-30=130) then 'c' (100) leave
    assert store.bytes == 100 and sorted(k for k in "acde" if k in store) == ["d", "e"]


def test_an_upload_larger_than_the_budget_is_not_kept():
    store = UploadStore(max_bytes=10)
    assert not store.put("big", _files("big", 20))
    assert store.get("big") == (MISSING, None) and store.bytes == 0


def test_with_sign_in_an_upload_opens_only_for_the_users_who_uploaded_it():
    store = UploadStore(max_bytes=1000)
    store.put("d", _files("f", 10), owner="ann@example.org")
    assert store.get("d", "ann@example.org")[0] == FOUND
    assert store.get("d", "bob@example.org") == (FORBIDDEN, None)
    assert store.get("d", None) == (FORBIDDEN, None)
    store.put("d", _files("f", 10), owner="bob@example.org")  # bob uploads the same bytes himself
    assert store.get("d", "bob@example.org")[0] == FOUND and store.bytes == 11  # kept once


def test_the_report_summary_ends_with_the_warning():
    from evalcore.report import Settings, build_report

    frame = load_eval_logs([("mmlu.csv", _log("llm-a", "law", ["q1", "q2", "q3", "q4"])),
                            ("imagenet.csv", _log("resnet", "fish", ["i1", "i2", "i3", "i4"]))])
    report = build_report(frame, settings=Settings(n_boot=50))
    assert report.summary[-1].startswith("Warning: mmlu.csv and imagenet.csv share no example and no task")
    same = load_eval_logs([("a.csv", _log("m1", "law", ["q1", "q2"])), ("b.csv", _log("m2", "law", ["q1", "q2"]))])
    assert not any(s.startswith("Warning:") for s in build_report(same, settings=Settings(n_boot=50)).summary)


def test_tasks_read_with_one_results_file_belong_together():
    """lm-eval: the subtasks of one run (different tasks, different example ids) come with one results file each
    names: they are one run, not different benchmarks."""
    from evalcore.importers.base import Imported
    from evalcore.importers.combine import unrelated_files

    def item(task: str, ids: list[str], files: tuple[str, ...]) -> Imported:
        frame = pd.DataFrame({"model": "m", "example_id": ids, "task": task, "correct": 1})
        return Imported(frame, "log", "lm-evaluation-harness", files)

    belief = item("tom_belief", ["1", "2"], ("samples_tom_belief.jsonl", "results.json"))
    desire = item("tom_desire", ["a", "b"], ("samples_tom_desire.jsonl", "results.json"))
    other = item("gsm8k", ["x"], ("samples_gsm8k.jsonl", "results_other.json"))
    assert unrelated_files([belief, desire]) == []
    [warning] = unrelated_files([belief, desire, other])
    assert warning.startswith("samples_tom_belief.jsonl + results.json + samples_tom_desire.jsonl and "
                              "samples_gsm8k.jsonl + results_other.json share no example and no task")


def test_models_not_evaluated_on_every_task_get_a_warning_naming_what_each_lacks():
    rows = pd.concat([pd.read_csv(io.BytesIO(_log("a", task, [task + "1", task + "2"]))) for task in ("law", "math")]
                     + [pd.read_csv(io.BytesIO(_log("b", "law", ["law1", "law2"])))])
    frame = load_eval_logs([("run.csv", rows.to_csv(index=False).encode())])
    assert report_of(frame).warnings == (
        "Not every model was evaluated on every task: b on 1 of 2 ('law'). The leaderboard's aggregate needs every "
        "model on every task (add the missing results, or choose the tasks they share); the other views compare "
        "models on different examples.",)
    full = pd.concat([rows, pd.read_csv(io.BytesIO(_log("b", "math", ["math1", "math2"])))])
    assert report_of(load_eval_logs([("run.csv", full.to_csv(index=False).encode())])).warnings == ()


def test_a_note_said_of_many_files_is_written_once_naming_them():
    from evalcore.importers.combine import merged_notes

    names = ["run1/per_instance_stats.json", "run2/per_instance_stats.json", "run3/per_instance_stats.json",
             "run4/per_instance_stats.json", "x.csv"]
    notes = ["Read HELM (5 files).", *(f"run{i}: stats.json not needed." for i in (1, 2, 3, 4)),
             "x.csv: 2 rows left out.", "run1: only here.", "run1: twice.", "run2: twice."]
    assert merged_notes(notes, names) == [
        "Read HELM (5 files).", "run1, run2, run3 and 1 more: stats.json not needed.", "x.csv: 2 rows left out.",
        "run1: only here.", "run1: twice.", "run2: twice."]
