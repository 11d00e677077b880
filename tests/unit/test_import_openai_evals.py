"""OpenAI evals event logs (evalcore.importers.openai_evals)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.data.validation import EvalDataError, load_eval_log, report_of
from evalcore.importers import openai_evals
from evalcore.importers.base import LogFile

SPEC = {"spec": {"completion_fns": ["gpt-4"], "eval_name": "arith.dev.v0", "run_id": "r1"}}


def _log(*events: dict, spec: dict | None = SPEC) -> bytes:
    lines = ([spec] if spec else []) + [{"final_report": {"accuracy": 0.5}}] + list(events)
    return "\n".join(json.dumps(line) for line in lines).encode()


def _match(sample: str, correct, event: int = 0) -> dict:
    return {"run_id": "r1", "event_id": event, "sample_id": sample, "type": "match",
            "data": {"correct": correct, "expected": "4", "picked": "4" if correct else None}}


def test_real_log(shared_data: Path):
    path = shared_data / "ecosystem" / "openai_evals" / "230417220821DPM75QNS_auto_gpt_completion_fn_test-match.jsonl"
    if not path.is_file():
        pytest.skip("the OpenAI evals sample log is not present")
    frame = load_eval_log(path)
    assert set(frame["model"]) == {"auto_gpt_completion_fn"} and set(frame["task"]) == {"test-match.s1.simple-v0"}
    # final_report: accuracy 1/3; sample 1 correct, samples 0 and 2 not
    assert dict(zip(frame["example_id"], frame["correct"])) == {"test-match.s1.0": 0.0, "test-match.s1.1": 1.0,
                                                                "test-match.s1.2": 0.0}


def test_match_events_repeats_and_left_out():
    data = _log(_match("s.0", True), _match("s.1", False, 1), _match("s.1", True, 2), _match("s.2", None, 3))
    frame = load_eval_log(("run.jsonl", data))
    assert frame[["example_id", "repeat", "correct"]].values.tolist() == [["s.0", "0", 1.0], ["s.1", "0", 0.0],
                                                                          ["s.1", "1", 1.0]]
    assert any("1 of 4 events of run.jsonl were left out" in n for n in report_of(frame).notes)


def test_scored_metrics_events_without_match_events():
    events = [{"run_id": "r1", "event_id": i, "sample_id": f"s.{i}", "type": "metrics",
               "data": {"choice": "Y", "score": s}} for i, s in enumerate((1.0, 0.5, 0.0))]
    assert load_eval_log(("mg.jsonl", _log(*events)))["score"].tolist() == [1.0, 0.5, 0.0]


def test_only_a_final_report_is_refused_saying_so():
    with pytest.raises(EvalDataError, match=r"report\.jsonl: the log has no per-sample events"):
        load_eval_log(("report.jsonl", _log()))


def test_missing_spec_and_corrupt_line_name_the_file():
    with pytest.raises(EvalDataError, match=r"nospec\.jsonl: no 'spec' line"):
        openai_evals.convert([LogFile("nospec.jsonl", _log(_match("s.0", True), spec=None))])
    broken = _log(_match("s.0", True)) + b'\n{"run_id": "r1", "event_'
    with pytest.raises(EvalDataError, match=r"broken\.jsonl, line 4: not valid JSON"):
        load_eval_log(("broken.jsonl", broken))


def test_sniff():
    assert openai_evals.sniff(LogFile("x.jsonl", _log(_match("s.0", True))))
    assert not openai_evals.sniff(LogFile("x.jsonl", b'{"model": "a", "example_id": "1", "correct": 1}\n'))


def _texts(column) -> list:
    return [v if isinstance(v, str) else None for v in column]


def test_real_log_keeps_prompt_answer_and_expected(shared_data: Path):
    path = shared_data / "ecosystem" / "openai_evals" / "230417220821DPM75QNS_auto_gpt_completion_fn_test-match.jsonl"
    if not path.is_file():
        pytest.skip("the OpenAI evals sample log is not present")
    frame = load_eval_log(path).set_index("example_id")
    assert frame.loc["test-match.s1.1", "input"] == ("Complete the phrase as concisely as possible.\nUser: The first "
                                                     "US president was \nAssistant: ")
    assert frame.loc["test-match.s1.1", "output"] == "George Washington"
    assert frame.loc["test-match.s1.2", "target"] == "15"
    assert frame.loc["test-match.s1.0", "output"] == "Once upon a time"


def test_text_from_sampling_events_chat_prompts_and_several_expected():
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}]
    sampling = {"run_id": "r1", "event_id": 0, "sample_id": "s.0", "type": "sampling",
                "data": {"prompt": chat, "sampled": ["4"]}}
    match = {"run_id": "r1", "event_id": 1, "sample_id": "s.0", "type": "match",
             "data": {"correct": True, "expected": ["4", "four"], "picked": "4"}}  # no 'sampled' of its own
    frame = load_eval_log(("chat.jsonl", _log(sampling, match)))
    assert _texts(frame["input"]) == ["system: Be brief.\nuser: 2+2?"]
    assert _texts(frame["output"]) == ["4"] and _texts(frame["target"]) == ["4\nfour"]


def test_metrics_events_take_the_samples_first_completion():
    events = [{"run_id": "r1", "event_id": 0, "sample_id": "s.0", "type": "sampling",
               "data": {"prompt": "Write a haiku", "sampled": "An old silent pond"}},
              {"run_id": "r1", "event_id": 1, "sample_id": "s.0", "type": "sampling",
               "data": {"prompt": "Is this a haiku? ...", "sampled": "Yes"}},
              {"run_id": "r1", "event_id": 2, "sample_id": "s.0", "type": "metrics",
               "data": {"choice": "Yes", "score": 1.0}}]
    frame = load_eval_log(("mg.jsonl", _log(*events)))
    # the second sampling event is the grader's call: the text is the first one's, the model's
    assert frame["score"].tolist() == [1.0]
    assert _texts(frame["input"]) == ["Write a haiku"] and _texts(frame["output"]) == ["An old silent pond"]
    assert "target" not in frame
