"""AlpacaEval annotations and MT-Bench (FastChat llm_judge) judgments: the real files in ../shared/data/ecosystem
and small files written here after alpaca_eval's and FastChat's formats."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evalcore.data.validation import validate
from evalcore.errors import EvalDataError
from evalcore.importers import pairwise
from evalcore.importers.base import LogFile
from evalcore.importers.detect import TOOL_MODULES, tool_of

ALPACA = "ecosystem/alpaca_eval/alpaca-7b/alpaca_eval_gpt4/annotations.json"
MT_SINGLE = "ecosystem/mt_bench/gpt-4_single-origin.jsonl"
OTHER_TOOLS = (
    "ecosystem/inspect_ai/data_arc_qwen.json",
    "ecosystem/inspect_ai/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval",
    "ecosystem/lm_eval/results_2026-01-21T03-44-18.458309.json",
    "ecosystem/lm_eval/samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl",
    "ecosystem/helm/mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2/per_instance_stats.json",
    "ecosystem/helm/mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2/run_spec.json",
    "ecosystem/openai_evals/230417220821DPM75QNS_auto_gpt_completion_fn_test-match.jsonl",
    "ecosystem/promptfoo/sample-export.json",
)


def _file(shared_file, name: str) -> LogFile:
    path = shared_file(name)
    return LogFile(path.name, path.read_bytes())


def _one(file: LogFile):
    (imported,) = pairwise.convert([file])
    return imported


def _lines(rows: list[dict]) -> bytes:
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows)


def _annotation(preference, generator_1="gpt4_turbo", generator_2="my-model", **extra) -> dict:
    row = {"instruction": "Say hi.", "output_1": "Hi.", "generator_1": generator_1, "dataset": "helpful_base",
           "output_2": "Hello!", "generator_2": generator_2, "annotator": "weighted_alpaca_eval_gpt4_turbo",
           "preference": preference}
    row.update(extra)
    return row


def _single(qid, model, score, turn=1, judge=("gpt-4", "single-v1")) -> dict:
    return {"question_id": qid, "model": model, "judge": list(judge), "user_prompt": "[Instruction] ...",
            "judgment": "Rating: [[x]]", "score": score, "turn": turn, "tstamp": 1718408533.8}


def _pair(qid, g1, g2, model_1="vicuna-13b", model_2="gpt-3.5-turbo", turn=1) -> dict:
    return {"question_id": qid, "model_1": model_1, "model_2": model_2, "g1_winner": g1, "g2_winner": g2,
            "judge": ["gpt-4", "pair-v2"], "g1_user_prompt": "...", "g1_judgment": "[[A]]",
            "g2_user_prompt": "...", "g2_judgment": "[[B]]", "turn": turn, "tstamp": 1687221890.1}


# ----------------------------------------------------------------------------------------------------------------
# the real files


def test_real_alpaca_eval_annotations(shared_file):
    file = _file(shared_file, ALPACA)
    assert pairwise.sniff(file)
    imported = _one(file)
    frame = imported.frame
    assert imported.kind == "battles" and imported.tool == "AlpacaEval"
    assert len(frame) == 805
    assert set(frame["model_a"]) == {"text_davinci_003"} and set(frame["model_b"]) == {"alpaca-7b"}
    # preference 1: 584 (reference wins), 2: 205 (alpaca-7b wins), 0: 16 draws -- an AI judge's verdicts (issue 27)
    assert "outcome" not in frame
    assert (frame["judge"] == 0).sum() == 584
    assert (frame["judge"] == 1).sum() == 205
    assert (frame["judge"] == 0.5).sum() == 16
    assert frame["dataset"].value_counts().to_dict() == {"selfinstruct": 252, "oasst": 188, "koala": 156,
                                                         "helpful_base": 129, "vicuna": 80}
    assert frame["input"].iloc[0] == ("What are the names of some famous actors that started their careers on "
                                      "Broadway?")
    assert "annotations.json: verdicts by the AI judge alpaca_eval_gpt4 (annotator) are the judge role; no battle " \
           "has a human vote." in imported.notes[0]
    assert not any("human vote" in note.replace("no battle has a human vote", "") for note in imported.notes)
    canonical = validate(frame, kind="battles")
    assert len(canonical) == 805 and canonical["judge"].mean() == pytest.approx((205 + 8) / 805)


def test_real_mt_bench_single(shared_file):
    file = _file(shared_file, MT_SINGLE)
    assert pairwise.sniff(file)
    imported = _one(file)
    frame = imported.frame
    assert imported.kind == "log" and imported.tool == "MT-Bench"
    # 330 judgments, 4 of them score -1 (questions 81-84, turn 1, of the "Normal" model; re-judged later)
    assert len(frame) == 326
    assert "4 of 330 judgments were left out" in " ".join(imported.notes)
    counts = frame.groupby("model")["score"].agg(["count", "sum"])
    assert counts.loc["Meta-Llama-3-8B-Instruct-Griffin"].tolist() == [160, 432.0]
    assert counts.loc["Meta-Llama-3-8B-Instruct-Normal"].tolist() == [166, 1302.0]
    assert set(frame["task"]) == {"mt_bench"}
    # questions 85-90, turn 1, of "Normal" were judged twice: the second judgment is repeat 1
    again = frame[frame["repeat"] == 1]
    assert sorted(again["example_id"]) == [f"{q}/turn 1" for q in range(85, 91)]
    assert set(again["model"]) == {"Meta-Llama-3-8B-Instruct-Normal"}
    first_85 = frame[(frame["example_id"] == "85/turn 1") & (frame["model"].str.endswith("Normal"))]
    assert first_85.sort_values("repeat")["score"].tolist() == [9.0, 10.0]
    assert frame.loc[frame["example_id"] == "81/turn 1", "repeat"].tolist() == [0, 0]
    assert frame["group"].value_counts().to_dict() == {"writing": 46, "roleplay": 40, "reasoning": 40, "math": 40,
                                                       "coding": 40, "extraction": 40, "stem": 40,
                                                       "humanities": 40}
    canonical = validate(frame, kind="log")
    assert canonical.attrs["report"]["n_models"] == 2


def test_detect_routes_real_files_here(shared_file):
    for name in TOOL_MODULES:   # the other tools' modules are written in parallel
        pytest.importorskip(f"evalcore.importers.{name}")
    assert tool_of(_file(shared_file, ALPACA)) == pairwise.TOOL
    assert tool_of(_file(shared_file, MT_SINGLE)) == pairwise.TOOL


@pytest.mark.parametrize("name", OTHER_TOOLS)
def test_sniff_refuses_other_tools(shared_file, name):
    assert not pairwise.sniff(_file(shared_file, name))


@pytest.mark.parametrize("data", [
    b"model_a,model_b,outcome\na,b,1\n",
    b'{"model_a": "a", "model_b": "b", "outcome": 1}\n{"model_a": "b", "model_b": "a", "outcome": 0}\n',
    b'{"model": "a", "example_id": "1", "correct": 1}\n',
    b'[{"model": "a", "example_id": "1", "score": 0.5}]',
    # AlpacaEval model outputs (not annotations) are not claimed
    b'[{"instruction": "Say hi.", "output": "Hi.", "generator": "m", "dataset": "x"}]',
    b"",
])
def test_sniff_refuses_plain_tables(data):
    assert not pairwise.sniff(LogFile("table.json", data))


# ----------------------------------------------------------------------------------------------------------------
# AlpacaEval fixtures


def test_alpaca_eval_preferences():
    rows = [_annotation(1), _annotation(2), _annotation(1.5), _annotation(0), _annotation(1.25),
            _annotation(2.0000000001), _annotation(None), _annotation(3), _annotation(1, generator_2="gpt4_turbo")]
    imported = _one(LogFile("annotations.json", json.dumps(rows, indent=2).encode()))
    frame = imported.frame
    assert "outcome" not in frame
    assert frame["judge"].tolist() == pytest.approx([0.0, 1.0, 0.5, 0.5, 0.25, 1.0])
    assert frame["input"].tolist() == ["Say hi."] * 6
    notes = " ".join(imported.notes)
    assert "1 of 9 annotations were left out: no preference" in notes
    assert "1 of 9 annotations were left out: the preference is not 0" in notes
    assert "1 of 9 annotations were left out: both outputs come from the same generator" in notes
    validate(frame, kind="battles")


def test_alpaca_eval_optional_fields_missing():
    rows = [{"output_1": "a", "generator_1": "x", "output_2": "b", "generator_2": "y", "preference": 2}]
    frame = _one(LogFile("annotations.json", json.dumps(rows).encode())).frame
    assert frame.to_dict("records") == [{"model_a": "x", "model_b": "y", "judge": 1.0}]


def test_alpaca_eval_required_fields():
    rows = [_annotation(1), _annotation(2)]
    del rows[1]["generator_2"]
    with pytest.raises(EvalDataError, match=r"^annotations\.json \(record 2\).*'generator_2'"):
        _one(LogFile("annotations.json", json.dumps(rows).encode()))
    rows = [_annotation(1)]
    del rows[0]["preference"]
    with pytest.raises(EvalDataError, match=r"^annotations\.json \(record 1\).*'preference'"):
        _one(LogFile("annotations.json", json.dumps(rows).encode()))


def test_alpaca_eval_truncated():
    data = json.dumps([_annotation(1), _annotation(2)], indent=2).encode()
    file = LogFile("annotations.json", data[:-40])
    assert pairwise.sniff(file)
    with pytest.raises(EvalDataError, match=r"^annotations\.json: not valid JSON"):
        _one(file)


def test_alpaca_eval_nothing_annotated():
    with pytest.raises(EvalDataError, match=r"^annotations\.json: no annotation"):
        _one(LogFile("annotations.json", json.dumps([_annotation(None)]).encode()))


# ----------------------------------------------------------------------------------------------------------------
# MT-Bench fixtures


def test_mt_bench_pairwise_two_orders():
    rows = [_pair(81, "model_1", "model_1"), _pair(82, "model_2", "model_2"), _pair(83, "tie", "tie"),
            _pair(84, "model_1", "model_2"), _pair(85, "error", "model_1"), _pair(86, "model_2", "weird")]
    file = LogFile("data/mt_bench/model_judgment/gpt-4_pair.jsonl", _lines(rows))
    assert pairwise.sniff(file)
    imported = _one(file)
    assert imported.kind == "battles" and imported.tool == "MT-Bench"
    frame = imported.frame
    assert "outcome" not in frame   # gpt-4's verdicts: the judge role, never a human vote
    assert frame["judge"].tolist() == [0.0, 1.0, 0.5, 0.5]
    assert set(frame["model_a"]) == {"vicuna-13b"} and set(frame["model_b"]) == {"gpt-3.5-turbo"}
    assert frame["explanation"].tolist() == ["[[A]]"] * 4 and frame["input"].tolist() == ["..."] * 4
    notes = " ".join(imported.notes)
    assert "1 of 6 pairwise judgments were left out: the judge's output had no parsable verdict" in notes
    assert "1 of 6 pairwise judgments were left out: a verdict other than" in notes
    assert "1 pairwise judgments give different winners" in notes
    assert "Verdicts by the AI judge gpt-4 (pair-v2) are the judge role; no battle has a human vote." in notes
    validate(frame, kind="battles")


def test_mt_bench_pairwise_single_winner_field():
    rows = [{"question_id": 81, "model_1": "a", "model_2": "b", "winner": "model_2", "judge": ["gpt-4", "x"]}]
    frame = _one(LogFile("gpt-4_pair.jsonl", _lines(rows))).frame
    assert frame.to_dict("records") == [{"model_a": "a", "model_b": "b", "judge": 1.0}]


def test_mt_bench_human_judgments_json_and_jsonl():
    votes = [{"question_id": 81, "model_a": "alpaca-13b", "model_b": "gpt-4", "winner": "model_b",
              "judge": "expert_0", "turn": 1},
             {"question_id": 81, "model_a": "gpt-4", "model_b": "claude-v1", "winner": "tie (bothbad)",
              "judge": "author_2", "turn": 2},
             {"question_id": 82, "model_a": "gpt-4", "model_b": "claude-v1", "winner": "model_a",
              "judge": ["gpt-4", "pair-v2"], "turn": 1},
             {"question_id": 82, "model_a": "gpt-4", "model_b": "claude-v1", "winner": "tie", "judge": "expert_1",
              "turn": 1},
             {"question_id": 83, "model_a": "gpt-4", "model_b": "claude-v1", "winner": "skip", "judge": "expert_1",
              "turn": 1}]
    for file in (LogFile("human_judgments.json", json.dumps(votes, indent=1).encode()),
                 LogFile("human.jsonl", _lines(votes))):
        assert pairwise.sniff(file)
        imported = _one(file)
        # people's votes are the outcome, gpt-4's verdict (a judge list) the judge role
        assert imported.frame["outcome"].tolist() == pytest.approx([1.0, 0.5, np.nan, 0.5], nan_ok=True)
        assert imported.frame["judge"].tolist() == pytest.approx([np.nan, np.nan, 0.0, np.nan], nan_ok=True)
        notes = " ".join(imported.notes)
        assert "1 of 5 votes were left out" in notes
        assert "3 votes by 3 people (author_2, expert_0, expert_1) are human votes (the outcome role)" in notes
        assert "1 verdicts by the AI judge gpt-4 (pair-v2) are the judge role" in notes
        validate(imported.frame, kind="battles")


def test_mt_bench_single_variants():
    rows = [_single(1, "a", 8), _single(1, "b", -1), _single(2, "a", 6.5, turn=2), _single(2, "b", None),
            _single(1, "a", 7, judge=("claude-v1", "single-v1")), _single(1, "b", 5, judge=("claude-v1", "x"))]
    del rows[0]["turn"]    # older files: turn 1 implied
    imported = _one(LogFile("data/vicuna_bench/model_judgment/mixed_single.jsonl", _lines(rows)))
    frame = imported.frame
    assert frame["example_id"].tolist() == ["1/turn 1", "2/turn 2", "1/turn 1", "1/turn 1"]
    assert frame["task"].tolist() == ["vicuna_bench (judge gpt-4)", "vicuna_bench (judge gpt-4)",
                                      "vicuna_bench (judge claude-v1)", "vicuna_bench (judge claude-v1)"]
    assert frame["score"].tolist() == [8.0, 6.5, 7.0, 5.0]
    assert "group" not in frame and "repeat" not in frame   # ids outside MT-Bench's 81-160
    notes = " ".join(imported.notes)
    assert "1 of 6 judgments were left out: the judge's output had no rating" in notes
    assert "1 of 6 judgments were left out: no numeric score" in notes


def test_mt_bench_single_required_field_and_truncation():
    rows = [_single(81, "a", 8), _single(82, "a", 9)]
    del rows[1]["model"]
    with pytest.raises(EvalDataError, match=r"^gpt-4_single\.jsonl \(line 2\).*'model'"):
        _one(LogFile("gpt-4_single.jsonl", _lines(rows)))
    data = _lines([_single(81, "a", 8), _single(82, "a", 9)])
    file = LogFile("gpt-4_single.jsonl", data[:-30])
    assert pairwise.sniff(file)
    with pytest.raises(EvalDataError, match=r"^gpt-4_single\.jsonl, line 2: not valid JSON"):
        _one(file)


def test_mt_bench_single_all_unparsed():
    with pytest.raises(EvalDataError, match=r"^s\.jsonl: no judgment has a rating"):
        _one(LogFile("s.jsonl", _lines([_single(81, "a", -1)])))


def test_mt_bench_large_single_file_keeps_every_row():
    rng = np.random.default_rng(0)
    rows = [_single(81 + i % 80, f"m{i // 160 % 50}", int(rng.integers(1, 11)), turn=1 + i % 2)
            for i in range(20_000)]
    frame = _one(LogFile("gpt-4_single.jsonl", _lines(rows))).frame
    assert len(frame) == 20_000 and frame["repeat"].max() > 0
