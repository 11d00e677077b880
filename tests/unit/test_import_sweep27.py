"""Shapes found by a sweep of real tool output files (issue 27), written here small, by hand, after the real files
named in each test (values checked by hand)."""

from __future__ import annotations

import json

import pytest

from evalcore.data.validation import load_eval_logs
from evalcore.errors import EvalDataError
from evalcore.importers import pairwise
from evalcore.importers.base import LogFile

# ----------------------------------------------------------------------------------------------------------------
# AlpacaEval: a run folder results/<model>/ holds model_outputs.json beside <annotator>/annotations.json
# (tatsu-lab/alpaca_eval results/alpaca-7b/); the chain-of-thought annotator alpaca_eval_cot_gpt4_turbo_fn writes
# raw_completion as an object {concise_explanation, ordered_models}
# (results/alpaca-7b/alpaca_eval_cot_gpt4_turbo_fn/annotations.json), alpaca_eval_gpt4 as text.


def _annotation(instruction: str, preference, raw) -> dict:
    return {"instruction": instruction, "output_1": "ref answer", "generator_1": "gpt4_1106_preview",
            "dataset": "helpful_base", "output_2": "model answer", "generator_2": "alpaca-7b",
            "annotator": "alpaca_eval_cot_gpt4_turbo_fn", "preference": preference, "price_per_example": 0.0099,
            "time_per_example": 2.43, "raw_completion": raw, "referenced_models": {"M": "output_1", "m": "output_2"}}


COT = json.dumps([
    _annotation("Q1", 1.0, {"concise_explanation": "M is more detailed.",
                            "ordered_models": [{"model": "M", "rank": 1}, {"model": "m", "rank": 2}]}),
    _annotation("Q2", 2.0, {"ordered_models": [{"model": "m", "rank": 1}, {"model": "M", "rank": 2}]}),
    _annotation("Q3", 2.0, "[{'model': 'model_2', 'rank': 1}]"),
    _annotation("Q4", None, None),
]).encode()
OUTPUTS = json.dumps([
    {"dataset": "helpful_base", "instruction": "Q1", "output": "model answer", "generator": "alpaca-7b"},
]).encode()


def test_alpaca_eval_judge_explanation_of_an_object_and_notes_naming_the_file():
    frame = load_eval_logs([("alpaca-7b/alpaca_eval_cot_gpt4_turbo_fn/annotations.json", COT)])
    assert frame["judge"].tolist() == [0.0, 1.0, 1.0]
    assert frame["input"].tolist() == ["Q1", "Q2", "Q3"]
    assert frame["explanation"].tolist() == [
        "M is more detailed.",
        '{"ordered_models": [{"model": "m", "rank": 1}, {"model": "M", "rank": 2}]}',
        "[{'model': 'model_2', 'rank': 1}]"]
    notes = frame.attrs["report"]["notes"]
    assert any(n.startswith("alpaca-7b/alpaca_eval_cot_gpt4_turbo_fn/annotations.json: 1 of 4 annotations were "
                            "left out: no preference") for n in notes)
    assert any(n.startswith("alpaca-7b/alpaca_eval_cot_gpt4_turbo_fn/annotations.json: verdicts by the AI judge "
                            "alpaca_eval_cot_gpt4_turbo_fn (annotator)") for n in notes)


def test_alpaca_eval_run_folder_with_model_outputs():
    frame = load_eval_logs([("alpaca-7b/model_outputs.json", OUTPUTS),
                            ("alpaca-7b/alpaca_eval_cot_gpt4_turbo_fn/annotations.json", COT)])
    assert len(frame) == 3 and set(frame["model_b"]) == {"alpaca-7b"}
    report = frame.attrs["report"]
    assert "alpaca-7b/model_outputs.json: not needed (AlpacaEval's model outputs: the answers, without verdicts; " \
           "the verdicts are in annotations.json)." in report["notes"]
    assert "alpaca-7b/model_outputs.json" in report["files"]
    assert not report["warnings"]


def test_alpaca_eval_model_outputs_alone_are_refused_clearly():
    assert pairwise.sniff(LogFile("model_outputs.json", OUTPUTS))
    assert not pairwise.sniff(LogFile("outputs.json", OUTPUTS))  # another name: left to the table reader
    with pytest.raises(EvalDataError, match=r"model_outputs\.json: AlpacaEval's model outputs .* hold no verdicts\. "
                                            r"Upload the annotations\.json"):
        load_eval_logs([("alpaca-7b/model_outputs.json", OUTPUTS)])
