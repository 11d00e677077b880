"""LMSYS Chatbot Arena ``clean_battle`` JSON (FastChat ``fastchat/serve/monitor/clean_battle_data.py``): fixtures
written here in the documented shapes (simple mode with the public dump's extra fields, conv_release mode with
conversations) under tests/data/ecosystem27/chatbot_arena; expected values counted by hand from those files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evalcore.data.validation import load_eval_logs, report_of, validate
from evalcore.errors import EvalDataError
from evalcore.importers import chatbot_arena, pairwise
from evalcore.importers.base import LogFile
from evalcore.importers.detect import TOOL_MODULES, tool_of

HERE = Path(__file__).resolve().parents[1] / "data" / "ecosystem27"
SIMPLE = HERE / "chatbot_arena" / "clean_battle_20240814.json"
CONV = HERE / "chatbot_arena" / "clean_battle_conv_20230630.json"
MT_HUMAN = HERE / "mt_bench" / "mt_bench_human_judgments_human.json"
MT_PAIR = HERE / "mt_bench" / "gpt-4_pair.jsonl"


def _file(path: Path) -> LogFile:
    return LogFile(path.name, path.read_bytes())


def _one(file: LogFile):
    (imported,) = chatbot_arena.convert([file])
    return imported


def test_simple_mode_battles_ties_and_left_out_rows():
    imported = _one(_file(SIMPLE))
    assert imported.kind == "battles" and imported.tool == "Chatbot Arena"
    frame = imported.frame
    # 10 records: a self-battle (claude-2.1 vs itself), a winner 'model_c' and a null winner are left out
    assert frame["model_a"].tolist() == ["gpt-4-0613", "llama-2-70b-chat", "vicuna-13b", "claude-2.1", "koala-13b",
                                         "gpt-4-0613", "vicuna-13b"]
    assert frame["model_b"].tolist() == ["claude-2.1", "gpt-4-0613", "koala-13b", "llama-2-70b-chat", "gpt-4-0613",
                                         "vicuna-13b", "claude-2.1"]
    # model_a -> 0, model_b -> 1, tie and tie (bothbad) -> 0.5: people's votes are the outcome
    assert frame["outcome"].tolist() == [0.0, 0.5, 0.5, 1.0, 1.0, 0.5, 0.0]
    assert "judge" not in frame and "input" not in frame   # simple mode: no conversations
    assert frame["anony"].tolist() == [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0]
    assert frame["language"].tolist() == ["English", "German", "English", "English", "unknown", "English",
                                          "English"]
    notes = imported.notes
    assert "2 of 10 battles were left out: a winner other than model_a, model_b, tie or tie (bothbad) ('(none)', " \
           "'model_c')." in notes
    assert "1 of 10 battles were left out: a model compared with itself." in notes
    assert "7 votes by people in the Arena (3 voters) are human votes: outcome = 1 if model_b wins, 0 if model_a " \
           "wins, 0.5 a tie." in notes
    assert "Ties: 2 'tie' and 1 'tie (bothbad)' (both models bad), each 0.5 as in FastChat's elo_analysis.py." in notes
    assert any(n.startswith("1 of 7 battles are not anonymous") for n in notes)
    assert any(n.startswith("1 battles are marked dedup_tag.sampled = false") for n in notes)


def test_simple_mode_end_to_end():
    frame = load_eval_logs([SIMPLE])
    report = report_of(frame)
    assert report.kind == "battles" and len(frame) == 7
    assert frame["outcome"].tolist() == [0.0, 0.5, 0.5, 1.0, 1.0, 0.5, 0.0]
    assert frame["anony"].sum() == 6   # a numeric feature: select the anonymous battles of the leaderboard
    assert "7 of 7 battles have a human vote." in report.notes


def test_conv_release_input_is_the_user_turns():
    imported = _one(_file(CONV))
    frame = imported.frame
    assert frame["outcome"].tolist() == [1.0, 0.5, 0.0]
    assert frame["input"].tolist() == ["What is the difference between OpenCL and CUDA?",
                                       "Why did my parent not invite me to their wedding?\n\nAnd my sibling?",
                                       "Fix this code: print(1"]
    assert "Ties: 1 'tie' and 0 'tie (bothbad)' (both models bad), each 0.5 as in FastChat's elo_analysis.py." \
        in imported.notes
    validate(frame, kind="battles")


def test_json_lines_and_an_ai_judge_row():
    rows = json.loads(CONV.read_text())
    rows[1]["judge"] = ["gpt-4", "pair-v2"]   # FastChat's AI judge: never a human vote
    imported = _one(LogFile("battles.jsonl", b"".join(json.dumps(r).encode() + b"\n" for r in rows)))
    frame = imported.frame
    assert frame["outcome"].tolist() == pytest.approx([1.0, np.nan, 0.0], nan_ok=True)
    assert frame["judge"].tolist() == pytest.approx([np.nan, 0.5, np.nan], nan_ok=True)
    assert "1 verdicts by the AI judge gpt-4 are the judge role, not human votes." in imported.notes
    assert any(n.startswith("2 votes by people in the Arena (1 voters)") for n in imported.notes)


def test_missing_model_is_refused_naming_the_record():
    rows = json.loads(SIMPLE.read_text())
    del rows[3]["model_b"]
    with pytest.raises(EvalDataError, match=r"^b\.json \(record 4\): the field 'model_b' is missing"):
        _one(LogFile("b.json", json.dumps(rows).encode()))
    with pytest.raises(EvalDataError, match=r"^b\.json \(record 2\): expected a JSON object"):
        _one(LogFile("b.json", json.dumps([rows[0], [1, 2]]).encode()))
    with pytest.raises(EvalDataError, match=r"^b\.json: not valid JSON"):
        _one(LogFile("b.json", SIMPLE.read_bytes()[:-50]))
    with pytest.raises(EvalDataError, match=r"^b\.json: no battle has a winner"):
        _one(LogFile("b.json", json.dumps([dict(rows[0], winner="skip")]).encode()))


def test_sniffs_claim_their_own_shapes():
    for path in (SIMPLE, CONV):
        assert chatbot_arena.sniff(_file(path)) and not pairwise.sniff(_file(path))
    for path in (MT_HUMAN, MT_PAIR):   # MT-Bench human judgments (turn, question ids 81-160) and pair judgments
        assert pairwise.sniff(_file(path)) and not chatbot_arena.sniff(_file(path))
    assert not chatbot_arena.sniff(LogFile("t.csv", b"model_a,model_b,outcome\na,b,1\n"))
    assert not chatbot_arena.sniff(LogFile("t.json", b'[{"model_a": "a", "model_b": "b", "outcome": 1}]'))


def test_sniffs_refuse_the_real_files_of_other_tools(shared_file):
    for name in ("alpaca_eval/alpaca-7b/alpaca_eval_gpt4/annotations.json", "mt_bench/gpt-4_single-origin.jsonl",
                 "promptfoo/sample-export.json", "inspect_ai/data_arc_qwen.json"):
        path = shared_file(f"ecosystem/{name}")
        assert not chatbot_arena.sniff(LogFile(path.name, path.read_bytes()))


def test_detection_routes_arena_before_mt_bench_human():
    for name in TOOL_MODULES:   # the other tools' modules are written in parallel
        pytest.importorskip(f"evalcore.importers.{name}")
    assert tool_of(_file(SIMPLE)) == chatbot_arena.TOOL
    assert tool_of(_file(CONV)) == chatbot_arena.TOOL
    assert tool_of(_file(MT_HUMAN)) == pairwise.TOOL


def test_large_array_keeps_every_battle():
    rng = np.random.default_rng(0)
    winners = np.array(["model_a", "model_b", "tie", "tie (bothbad)"])
    n = 50_000
    a, b, w = rng.integers(0, 20, n), rng.integers(0, 20, n), winners[rng.integers(0, 4, n)]
    rows = [{"model_a": f"m{i}", "model_b": f"m{j}", "winner": str(v), "judge": f"arena_user_{k % 500}",
             "anony": True, "language": "English", "tstamp": float(k)}
            for k, (i, j, v) in enumerate(zip(a, b, w))]
    imported = _one(LogFile("clean_battle.json", json.dumps(rows).encode()))
    keep = a != b
    assert len(imported.frame) == keep.sum()
    expected = np.select([w == "model_a", w == "model_b"], [0.0, 1.0], 0.5)[keep]
    np.testing.assert_array_equal(imported.frame["outcome"].to_numpy(), expected)
    ties = f"Ties: {int(((w == 'tie') & keep).sum()):,} 'tie' and {int(((w == 'tie (bothbad)') & keep).sum()):,}"
    assert any(note.startswith(ties) for note in imported.notes)


def test_battles_as_a_table_with_winners_as_verdicts_or_model_names():
    data = (b"model_a,model_b,winner,judge,anony\n"
            b"x,y,model_a,arena_user_1,True\n"       # 0
            b"x,y,y,arena_user_2,True\n"             # the winner's name: model_b wins, 1
            b"y,x,tie (bothbad),arena_user_1,False\n"  # 0.5
            b"x,y,nobody,arena_user_3,True\n")       # left out
    file = LogFile("battles.csv", data)
    assert tool_of(file) == chatbot_arena.TOOL
    frame = load_eval_logs([("battles.csv", data)])
    assert frame["outcome"].tolist() == [0.0, 1.0, 0.5]
    notes = report_of(frame).notes
    assert any("1 of 4 battles were left out: a winner other than model_a, model_b, tie or tie (bothbad) ('nobody')"
               in n for n in notes)
    bare = load_eval_logs([("b.tsv", b"model_a\tmodel_b\twinner\nx\ty\tx\nx\ty\ttie\n")])
    assert bare["outcome"].tolist() == [0.0, 0.5]
    assert any(n.startswith("2 battles name no judge: their winners are read as human votes")
               for n in report_of(bare).notes)
