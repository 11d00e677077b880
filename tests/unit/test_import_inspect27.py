"""Inspect AI logs, issue 27: logs without ``version`` or samples (a summary), the scorer's declared metrics
deciding ``correct`` vs ``score``, LLM-judge labels, and the example's text (input, target, output, explanation).

Fixtures are written after Inspect's log format (UKGovernmentBEIS/inspect_ai ``src/inspect_ai/log/_log.py``:
``EvalSpec.scorers[]{name, options, metrics[{name, options}]}``, ``EvalResults{total_samples, completed_samples,
scores[{name, scorer, scored_samples, metrics{accuracy, stderr}}]}``) and after the shape of the real log
evaleval/every_eval_ever ``tests/data/inspect/data_with_llm_scoring.json`` (no ``version``, no ``samples``, a custom
LLM-judge scorer with ``options.grader_model``); the values are our own.
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from evalcore.data.validation import EvalDataError, load_eval_log, load_eval_logs, report_of
from evalcore.importers import inspect
from evalcore.importers.base import LogFile
from evalcore.importers.detect import tool_of

ACC_STDERR = [{"name": "inspect_ai/accuracy", "options": {}}, {"name": "inspect_ai/stderr", "options": {}}]
MEAN_STDERR = [{"name": "inspect_ai/mean", "options": {}}, {"name": "inspect_ai/stderr", "options": {}}]


def _no_version_summary_log(scores=None, **results) -> bytes:
    """A log like every_eval_ever's data_with_llm_scoring.json: status, eval, plan, results, stats; no version, no
    samples; a custom scorer judged by a grader model."""
    spec = {"eval_id": "E1", "run_id": "R1", "created": "2026-02-06T02:15:41+00:00", "task": "simpleqa_verified",
            "task_id": "T1", "task_version": 0, "dataset": {"name": "qa", "samples": 200},
            "model": "anthropic/claude-x",
            "scorers": [{"name": "qa_judge", "options": {"grader_model": {"model": "google/gemini-flash",
                                                                          "config": {}}},
                         "metrics": ACC_STDERR}]}
    scores = scores if scores is not None else [
        {"name": "qa_judge", "scorer": "qa_judge", "scored_samples": 200, "unscored_samples": 0,
         "metrics": {"accuracy": {"name": "accuracy", "value": 0.455, "params": {}},
                     "stderr": {"name": "stderr", "value": 0.0352, "params": {}}}}]
    doc = {"status": "success", "eval": spec, "plan": {"name": "plan", "steps": []},
           "results": {"total_samples": 200, "completed_samples": 200, "scores": scores, **results},
           "stats": {"started_at": "2026-02-06T02:15:41+00:00"}}
    return json.dumps(doc, indent=4).encode()


def _log(samples, scorers, *, model_roles=None, version=2) -> bytes:
    spec = {"task": "t", "model": "m/x", "scorers": scorers}
    if model_roles is not None:
        spec["model_roles"] = model_roles
    return json.dumps({"version": version, "status": "success", "eval": spec, "results": {}, "samples": samples})\
        .encode()


def _texts(column) -> list:
    """A text column's values, None where empty."""
    return [v if isinstance(v, str) else None for v in column]


def _sample(i, value, scorer="s", explanation=None, **extra) -> dict:
    return {"id": i, "epoch": 1, "scores": {scorer: {"value": value, "explanation": explanation}}, **extra}


def test_log_without_version_and_samples_is_recognised_as_a_summary():
    data = _no_version_summary_log()
    assert not {"version", "samples"} & set(json.loads(data))
    assert tool_of(LogFile("run.json", data)) == "Inspect AI"
    frame = load_eval_log(("run.json", data))
    assert frame[["model", "task", "n", "n_correct"]].values.tolist() == [["anthropic/claude-x", "simpleqa_verified",
                                                                          200, 91]]  # round(0.455 x 200)
    assert frame["se"].tolist() == pytest.approx([0.0352])
    notes = " ".join(report_of(frame).notes)
    assert "read as a summary, n = 200 (its scored_samples)" in notes
    assert "accuracy comes from an LLM judge (google/gemini-flash)" in notes


def test_summary_counts_completed_samples_when_the_score_has_no_count():
    scores = [{"name": "match", "scorer": "match",
               "metrics": {"accuracy": {"value": 0.25}, "stderr": {"value": 0.1}}}]
    frame = load_eval_log(("r.json", _no_version_summary_log(scores, completed_samples=40)))
    assert frame[["n", "n_correct"]].values.tolist() == [[40, 10]]
    assert "results.completed_samples" in " ".join(report_of(frame).notes)


def test_summary_without_accuracy_is_refused_saying_samples_are_needed():
    scores = [{"name": "f1", "scorer": "f1", "scored_samples": 50, "metrics": {"mean": {"value": 0.61}}}]
    with pytest.raises(EvalDataError, match=r"r\.json: this Inspect AI log has no per-sample results.*no accuracy "
                                            r"\(only mean\): samples are needed for per-example analysis"):
        load_eval_log(("r.json", _no_version_summary_log(scores)))


def test_a_header_only_eval_zip_is_a_summary_too():
    buffer = io.BytesIO()
    header = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m", "scorers": []},
              "results": {"completed_samples": 8, "scores": [{"name": "choice", "scorer": "choice",
                                                              "metrics": {"accuracy": {"value": 0.75}}}]}}
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("header.json", json.dumps(header))
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": header["eval"]}))
    frame = load_eval_log(("nos.eval", buffer.getvalue()))
    assert frame[["n", "n_correct"]].values.tolist() == [[8, 6]] and "se" not in frame


def test_a_log_without_samples_among_logs_with_samples_is_left_out_with_a_note():
    with_samples = _log([_sample(1, "C"), _sample(2, "I")], [{"name": "s", "metrics": ACC_STDERR}])
    frame = load_eval_logs([("full.json", with_samples), ("agg.json", _no_version_summary_log())])
    assert frame["correct"].tolist() == [1.0, 0.0] and set(frame["model"]) == {"m/x"}
    assert any("1 of 2 Inspect AI logs were left out: agg.json has no per-sample results" in n
               for n in report_of(frame).notes)


def test_declared_mean_is_a_score_even_when_every_value_is_0_or_1():
    samples = [_sample(1, 1), _sample(2, 0), _sample(3, 1)]
    frame = load_eval_log(("m.json", _log(samples, [{"name": "s", "options": {}, "metrics": MEAN_STDERR}])))
    assert "correct" not in frame and frame["score"].tolist() == [1.0, 0.0, 1.0]
    assert any("declares mean, stderr without accuracy" in n and "although every value is 0 or 1" in n
               for n in report_of(frame).notes)


def test_declared_accuracy_is_correct_and_partial_credit_a_score():
    frame = load_eval_log(("a.json", _log([_sample(1, "C"), _sample(2, "I")],
                                           [{"name": "s", "metrics": ACC_STDERR}])))
    assert frame["correct"].tolist() == [1.0, 0.0]
    partial = load_eval_log(("p.json", _log([_sample(1, "C"), _sample(2, "P")],
                                             [{"name": "s", "metrics": ACC_STDERR}])))
    assert partial["score"].tolist() == [1.0, 0.5]
    assert any("declares accuracy (accuracy, stderr) but gives values other than 0 and 1" in n
               for n in report_of(partial).notes)


def test_declarations_per_key_of_a_dict_score_and_from_results():
    samples = [{"id": 1, "epoch": 1, "scores": {"s": {"value": {"ok": 1, "len": 0}}}},
               {"id": 2, "epoch": 1, "scores": {"s": {"value": {"ok": 0, "len": 1}}}}]
    frame = load_eval_log(("d.json", _log(samples, [{"name": "s", "metrics": {"ok": MEAN_STDERR,
                                                                              "len": ACC_STDERR}}])))
    assert frame["score"].tolist() == [1.0, 0.0] and frame["score_s/len"].tolist() == [0.0, 1.0]
    # no declaration in eval.scorers: the results' metrics (mean) decide
    doc = json.loads(_log([_sample(1, 1), _sample(2, 0)], [{"name": "s"}]))
    doc["results"] = {"scores": [{"name": "s", "scorer": "s", "metrics": {"mean": {"name": "mean", "value": 0.5}}}]}
    assert "score" in load_eval_log(("r.json", json.dumps(doc).encode()))


def test_undeclared_scorer_is_read_from_its_values():
    frame = load_eval_log(("u.json", _log([_sample(1, 1), _sample(2, 0)], [{"name": "s"}])))
    assert frame["correct"].tolist() == [1.0, 0.0]
    assert any("the log declares no metric for it, so its values decide" in n for n in report_of(frame).notes)


@pytest.mark.parametrize("scorer, roles, grader", [
    ({"name": "model_graded_fact", "options": {"model": None, "model_role": "grader"}, "metrics": ACC_STDERR},
     {"grader": {"model": "openai/gpt-4o"}}, "openai/gpt-4o"),
    ({"name": "custom", "options": {"grader_model": "anthropic/claude-3"}, "metrics": ACC_STDERR}, None,
     "anthropic/claude-3"),
    ({"name": "my_rubric", "options": {}, "metrics": ACC_STDERR}, {"grader": {"model": "g/judge-1"}}, "g/judge-1"),
    ({"name": "model_graded_qa", "options": {}, "metrics": ACC_STDERR}, None,
     "no grader in the scorer's options, so Inspect's default, the evaluated model m/x: it grades its own answers"),
    ({"name": "custom", "options": {"grader_model": "openai/m/x"}, "metrics": ACC_STDERR}, None,
     "openai/m/x: the evaluated model grades its own answers"),
    ({"name": "my_judge", "options": {}, "metrics": ACC_STDERR}, None, "grader model not recorded in the log"),
    ({"name": "model_graded_qa", "options": {"model": None, "model_role": "grader"}, "metrics": ACC_STDERR}, {},
     "no 'grader' model role set: Inspect then grades with the evaluated model"),
])
def test_a_label_from_an_llm_judge_has_a_note_naming_it(scorer, roles, grader):
    samples = [_sample(1, "C", scorer["name"], "GRADE: C"), _sample(2, "I", scorer["name"], "GRADE: I")]
    frame = load_eval_log(("j.json", _log(samples, [scorer], model_roles=roles)))
    assert frame["correct"].tolist() == [1.0, 0.0] and _texts(frame["explanation"]) == ["GRADE: C", "GRADE: I"]
    assert any(f"correct comes from an LLM judge ({grader})" in n for n in report_of(frame).notes)


def test_a_deterministic_scorer_next_to_a_grader_role_is_not_a_judge():
    scorers = [{"name": "match", "metrics": ACC_STDERR}, {"name": "rubric", "metrics": ACC_STDERR}]
    samples = [{"id": 1, "epoch": 1, "scores": {"match": {"value": "C"}, "rubric": {"value": "I"}}}]
    frame = load_eval_log(("g.json", _log(samples, scorers, model_roles={"grader": {"model": "g/j"}})))
    assert frame["correct"].tolist() == [1.0] and frame["proxy"].tolist() == [0.0]
    notes = report_of(frame).notes
    assert not any("comes from an LLM judge" in n for n in notes)
    assert any("'rubric' is the annotator ('proxy'; grader: g/j)" in n for n in notes)


def test_text_roles_from_chat_messages_targets_and_output():
    chat = [{"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}, {"type": "image", "image": "x"}]}]
    samples = [
        _sample(1, "C", explanation="4 matches", input=chat, target=["4", "four"],
                output={"model": "x", "choices": [{"message": {"role": "assistant", "content": [
                    {"type": "reasoning", "reasoning": "2 and 2 make 4"}, {"type": "text", "text": "4"}]}}]}),
        _sample(2, "I", input="Capital of France?", target="Paris",
                output={"completion": "Lyon", "choices": []}),
        _sample(3, "I", input="Say hi", target="", output={"choices": []},
                messages=[{"role": "user", "content": "Say hi"}, {"role": "assistant", "content": "Bye"}]),
    ]
    frame = load_eval_log(("t.json", _log(samples, [{"name": "s", "metrics": ACC_STDERR}])))
    assert _texts(frame["input"]) == ["system: Answer briefly.\nuser: What is 2+2?\n(image)", "Capital of France?",
                                       "Say hi"]
    assert _texts(frame["target"]) == ["4\nfour", "Paris", None]
    assert _texts(frame["output"]) == ["4", "Lyon", "Bye"]
    assert _texts(frame["explanation"]) == ["4 matches", None, None]


def _eval_zip(samples: list[dict], summaries: bool = True) -> bytes:
    buffer = io.BytesIO()
    header = {"version": 2, "status": "success",
              "eval": {"task": "t", "model": "m", "scorers": [{"name": "s", "metrics": ACC_STDERR}]}, "results": {}}
    with zipfile.ZipFile(buffer, "w") as archive:
        for sample in samples:
            archive.writestr(f"samples/{sample['id']}_epoch_1.json", json.dumps(sample))
        if summaries:
            archive.writestr("summaries.json", json.dumps(
                [{k: s[k] for k in ("id", "epoch", "input", "target", "scores")} for s in samples]))
        archive.writestr("header.json", json.dumps(header))
    return buffer.getvalue()


def test_eval_zip_keeps_the_text_and_large_logs_read_summaries_without_output(monkeypatch):
    samples = [_sample(i, v, explanation=f"because {i}", input=f"question {i}", target="A",
                       output={"completion": f"answer {i}"}) for i, v in ((1, "C"), (2, "I"))]
    frame = load_eval_log(("z.eval", _eval_zip(samples)))
    assert _texts(frame["output"]) == ["answer 1", "answer 2"] and frame["correct"].tolist() == [1.0, 0.0]
    monkeypatch.setattr(inspect, "SAMPLES_TEXT_BYTES", 0)
    frame = load_eval_log(("z.eval", _eval_zip(samples)))
    assert _texts(frame["input"]) == ["question 1", "question 2"]
    assert _texts(frame["explanation"]) == ["because 1", "because 2"] and frame["correct"].tolist() == [1.0, 0.0]
    assert "output" not in frame or frame["output"].isna().all()
    assert any("read through its summaries.json" in n for n in report_of(frame).notes)


def test_sniff_needs_inspect_spec_keys_without_version():
    assert inspect.sniff(LogFile("x.json", _no_version_summary_log()))
    other = json.dumps({"status": "ok", "eval": {"task": "t", "model": "m"}}).encode()
    assert not inspect.sniff(LogFile("x.json", other))
