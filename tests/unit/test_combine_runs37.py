"""Two files of one model uploaded together become two runs named after their files (issue 37, point 3;
evalcore.importers.combine): the rule, its limits (a file of several models, leaderboard summaries), the names
(unique, never another file's model) and the order (the first file, or the older run where the tool says when it
ran), and that the dashboard's combined upload gives the same runs and verdict as ``evalcore compare BASE NEW``.

Known answers, by hand: ``_log(model, right)`` scores examples 0-3 of task t; base.csv right on 0, 1, 2 (0.75),
new.csv right on 1, 2, 3 (0.75); other.csv is another model."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from evalcore.compare import compare_runs, runs_from_logs
from evalcore.data.validation import EvalDataError, load_eval_log, load_eval_logs, report_of


def _log(model: str, right: set[int]) -> bytes:
    frame = pd.DataFrame({"model": model, "task": "t", "example_id": [str(i) for i in range(4)],
                          "correct": [int(i in right) for i in range(4)]})
    return frame.to_csv(index=False).encode()


BASE, NEW = _log("m", {0, 1, 2}), _log("m", {1, 2, 3})


def test_two_files_of_one_model_that_differ_are_two_runs_named_after_them():
    frame = load_eval_logs([("runs/base.csv", BASE), ("new.csv.gz", __import__("gzip").compress(NEW)),
                            ("other.csv", _log("x", {0}))])
    report = report_of(frame)
    assert report.runs == ("base", "new")
    assert sorted(frame["model"].unique()) == ["base", "new", "x"] and len(frame) == 12
    by = frame.set_index(["model", "example_id"])["correct"]
    assert [by[("base", str(i))] for i in range(4)] == [1, 1, 1, 0]
    assert [by[("new", str(i))] for i in range(4)] == [0, 1, 1, 1]
    note = next(n for n in report.notes if "differently" in n)
    assert note.startswith("runs/base.csv, new.csv score the same examples of model 'm' differently: each file is a "
                           "run of its own, named after it ('base' is runs/base.csv; 'new' is new.csv)"), note
    assert "'base', is the base on the Compare page (the first file given)" in note


def test_the_first_file_is_the_first_run_whatever_the_names():
    frame = load_eval_logs([("zeta.csv", NEW), ("alpha.csv", BASE)])
    assert report_of(frame).runs == ("zeta", "alpha")


def test_run_names_are_unique_and_never_another_files_model():
    """other.csv holds model 'base': the run of base.csv is 'base (2)'; two files both named new.csv: 'new' and
    'new (2)'."""
    frame = load_eval_logs([("other.csv", _log("base", {0})), ("a/base.csv", BASE), ("a/new.csv", NEW),
                            ("b/new.csv", _log("m", {3}))])
    assert report_of(frame).runs == ("base (2)", "new", "new (2)")
    assert frame.groupby("model")["correct"].sum().to_dict() == {"base": 1, "base (2)": 3, "new": 3, "new (2)": 1}


def test_files_of_one_model_that_agree_or_share_no_example_stay_one_model():
    same = load_eval_logs([("a.csv", BASE), ("copy.csv", BASE)])  # the same file twice: counted once
    assert list(same["model"].unique()) == ["m"] and len(same) == 4 and report_of(same).runs == ()
    other_task = pd.read_csv(__import__("io").BytesIO(NEW)).assign(task="t2").to_csv(index=False).encode()
    split = load_eval_logs([("t1.csv", BASE), ("t2.csv", other_task)])  # one run split by task
    assert list(split["model"].unique()) == ["m"] and len(split) == 8 and report_of(split).runs == ()


def test_summaries_that_disagree_are_still_refused():
    summary = b"model,task,n,n_correct\nm,t,10,7\n"
    with pytest.raises(EvalDataError, match=r"disagree on the same row \(model='m', task='t'\).*Remove one of the "
                                            r"files or fix the row\.$"):
        load_eval_logs([("a.csv", summary), ("b.csv", summary.replace(b",7", b",8"))])


def test_the_older_lm_eval_run_is_the_base_whatever_the_order_given():
    """Two lm-evaluation-harness runs of one model (folder org__m), time stamps in their names: the older first."""
    def samples(right: list[int]) -> bytes:
        return "\n".join(json.dumps({"doc_id": i, "doc": {}, "target": 0, "arguments": {}, "resps": [],
                                     "filtered_resps": [], "filter": "none", "metrics": ["acc"], "acc": r})
                         for i, r in enumerate(right)).encode()

    newer, older = "2025-03-02T09-00-00.000001", "2025-03-01T10-00-00.123456"
    frame = load_eval_logs([(f"org__m/samples_arc_{newer}.jsonl", samples([1, 1])),
                            (f"org__m/samples_arc_{older}.jsonl", samples([0, 1]))])
    report = report_of(frame)
    assert report.runs == (f"samples_arc_{older}", f"samples_arc_{newer}")
    assert any("(the oldest run, by when each ran)" in n for n in report.notes)


def test_the_dashboards_combined_upload_and_the_cli_runs_give_one_verdict():
    """The same pair as one upload (combine's runs) and as evalcore compare BASE NEW (runs_from_logs of each file
    loaded on its own): the same runs, numbers and sentence. Paired: only base right on 0, only new right on 3:
    difference 0, exact McNemar p = 1."""
    combined = load_eval_logs([("base.csv", BASE), ("new.csv", NEW)])
    cli = runs_from_logs([("base.csv", load_eval_log(("base.csv", BASE))), ("new.csv", load_eval_log(("new.csv", NEW)))])
    base, new = report_of(combined).runs
    page, command = compare_runs(combined, base, new), compare_runs(cli, "base", "new")
    assert (base, new) == ("base", "new")
    assert page.sentence == command.sentence and page.verdict == command.verdict == "inconclusive"
    assert page.overall["difference"].iloc[0] == command.overall["difference"].iloc[0] == 0
    assert page.overall["p_value"].iloc[0] == pytest.approx(1.0)
