"""lm-evaluation-harness samples and results files (evalcore.importers.lm_eval)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from evalcore.data.validation import EvalDataError, load_eval_log, load_eval_logs, report_of
from evalcore.importers import lm_eval
from evalcore.importers.base import LogFile

STAMP = "2025-03-01T10-00-00.123456"


@pytest.fixture(scope="module")
def folder(shared_data: Path) -> Path:
    path = shared_data / "ecosystem" / "lm_eval"
    if not path.is_dir():
        pytest.skip("../shared/data/ecosystem/lm_eval not present")
    return path


def _mc_line(doc_id: int, lls: list[float], gold: int, filt: str = "none") -> dict:
    acc = float(max(range(len(lls)), key=lambda i: lls[i]) == gold)
    return {"doc_id": doc_id, "doc": {}, "target": gold, "arguments": {}, "resps": [[[ll, False]] for ll in lls],
            "filtered_resps": [[ll, False] for ll in lls], "filter": filt, "metrics": ["acc", "acc_norm"],
            "acc": acc, "acc_norm": acc}


def _results(model="org/model-1b", tasks=("hellaswag",), groups=None) -> bytes:
    results = {t: {"alias": t, "acc,none": 0.5, "acc_stderr,none": 0.1} for t in tasks}
    for g in groups or {}:
        results[g] = {"alias": g, "acc,none": 0.5}
    return json.dumps({"results": results, "group_subtasks": groups or {t: [] for t in tasks},
                       "n-samples": {t: {"original": 10, "effective": 8} for t in tasks},
                       "config": {"model": "hf", "model_args": f"pretrained={model},dtype=float16"}}).encode()


def _lines(rows) -> bytes:
    return "\n".join(json.dumps(r) for r in rows).encode()


def test_real_samples_with_their_results_file(folder):
    frame = load_eval_logs(sorted(folder.iterdir()))
    assert set(frame["model"]) == {"RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"}
    assert set(frame["task"]) == {"math_perturbed_full"} and len(frame) == 10
    assert frame["correct"].sum() == 0  # results file: exact_match 0.0 on this task


def test_real_results_file_alone_is_a_summary(folder):
    frame = load_eval_log(next(folder.glob("results_*.json")))
    assert report_of(frame).kind == "summary"
    assert dict(zip(frame["task"], frame["n_correct"])) == {"math_perturbed_full": 0, "math_rephrased_full": 2}
    assert set(frame["n"]) == {5000}  # 0.0004 x 5000 = 2


def test_multiple_choice_confidence_and_filters():
    rows = [_mc_line(0, [-1.0, -2.0, -3.0], 0), _mc_line(1, [-2.0, -1.0], 0), _mc_line(0, [-9.0, 0.0, -9.0], 1, "x")]
    frame = load_eval_logs([(f"out/org__m/samples_arc_easy_{STAMP}.jsonl", _lines(rows)),
                            (f"out/org__m/results_{STAMP}.json", _results("org/m", ("arc_easy",)))])
    assert frame["correct"].tolist() == [1.0, 0.0] and frame["model"].iloc[0] == "org/m"
    softmax = 1 / (1 + math.exp(-1) + math.exp(-2))
    assert frame["confidence"].tolist() == pytest.approx([softmax, 1 / (1 + math.exp(-1))])
    assert any("1 of 3 lines" in n and "filter 'none' is used" in n for n in report_of(frame).notes)


def test_model_from_the_folder_when_no_results_file():
    frame = load_eval_log((f"EleutherAI__pythia-160m/samples_arc_easy_{STAMP}.jsonl", _lines([_mc_line(0, [0, -1], 0)])))
    assert frame["model"].tolist() == ["EleutherAI/pythia-160m"]
    assert any("named after its folder" in n for n in report_of(frame).notes)


def test_groups_are_categories_not_tasks():
    data = _results(tasks=("mmlu_a", "mmlu_b"), groups={"mmlu": ["mmlu_a", "mmlu_b"]})
    frame = load_eval_log((f"results_{STAMP}.json", data))
    assert sorted(frame["task"]) == ["mmlu_a", "mmlu_b"] and set(frame["category"]) == {"mmlu"}
    assert set(frame["n"]) == {8}


def test_corrupt_files_name_themselves():
    with pytest.raises(EvalDataError, match=rf"samples_arc_{STAMP}\.jsonl, line 2: not valid JSON"):
        load_eval_log((f"samples_arc_{STAMP}.jsonl", _lines([_mc_line(0, [0, -1], 0)]) + b'\n{"doc_id": 1,'))
    with pytest.raises(EvalDataError, match=rf"results_{STAMP}\.json"):
        load_eval_log((f"results_{STAMP}.json", _results()[:40]))


def test_sniff():
    assert lm_eval.sniff(LogFile(f"samples_x_{STAMP}.jsonl", _lines([_mc_line(0, [0, -1], 0)])))
    assert lm_eval.sniff(LogFile("renamed.jsonl", _lines([_mc_line(0, [0, -1], 0)])))
    assert not lm_eval.sniff(LogFile("t.jsonl", b'{"model": "a", "example_id": "1", "correct": 1}\n'))


def test_older_results_file_without_filters_is_a_summary():
    data = json.dumps({"results": {"arc_easy": {"acc": 0.75, "acc_stderr": 0.01, "acc_norm": 0.7}},
                       "versions": {"arc_easy": 0}, "n-samples": {"arc_easy": {"original": 4, "effective": 4}},
                       "config": {"model_args": "pretrained=gpt2"}}).encode()
    assert lm_eval.sniff(LogFile("results.json", data))
    frame = load_eval_log(("results.json", data))
    assert frame[["model", "task", "n", "n_correct"]].values.tolist() == [["gpt2", "arc_easy", 4, 3]]


def test_log_likelihoods_written_as_text_still_give_a_confidence():
    line = _mc_line(0, [-1.0, -2.0], 0)
    line["filtered_resps"] = [["-1.0", "False"], ["-2.0", "False"]]
    frame = load_eval_log((f"samples_arc_{STAMP}.jsonl", _lines([line, _mc_line(1, [-2.0, -1.0], 0)])))
    assert frame["confidence"].tolist() == pytest.approx([1 / (1 + math.exp(-1))] * 2)


def test_generation_tasks_get_no_confidence():
    line = {"doc_id": 0, "filter": "strict-match", "resps": [["4"]], "filtered_resps": ["4"],
            "metrics": ["exact_match"], "exact_match": 1.0}
    frame = load_eval_log((f"samples_gsm8k_{STAMP}.jsonl", _lines([line])))
    assert "confidence" not in frame and frame["correct"].tolist() == [1.0]
