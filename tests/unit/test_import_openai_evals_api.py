"""OpenAI Evals API output items (evalcore.importers.openai_evals_api).

The fixture tests/data/ecosystem27/openai_evals_api/output_items.jsonl is written after the SDK's type
(openai/openai-python ``src/openai/types/evals/runs/output_item_retrieve_response.py``) and the API reference's
example (a headline classification eval with a string-check grader); its fourth item errored (rate limit). Other
shapes (list pages, model graders, Azure's ``label`` / ``reason``, items without a grader type) are built here.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from evalcore.data.validation import EvalDataError, load_eval_log, load_eval_logs, report_of
from evalcore.importers import openai_evals_api
from evalcore.importers.base import LogFile
from evalcore.importers.detect import tool_of

FIXTURE = Path(__file__).parents[1] / "data" / "ecosystem27" / "openai_evals_api" / "output_items.jsonl"


def _items() -> list[dict]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]


def _texts(column) -> list:
    return [v if isinstance(v, str) else None for v in column]


def _jsonl(items: list[dict]) -> bytes:
    return "\n".join(json.dumps(i) for i in items).encode()


def _item(example: int, results: list[dict], model="gpt-4.1", run="evalrun_B", **extra) -> dict:
    item = {"object": "eval.run.output_item", "id": f"outputitem_{run}_{example}", "created_at": 1, "run_id": run,
            "eval_id": "eval_Y", "status": "completed", "datasource_item_id": example,
            "datasource_item": {"question": f"q{example}", "ideal": f"a{example}"}, "results": results,
            "sample": {"input": [{"role": "user", "content": f"q{example}"}],
                       "output": [{"role": "assistant", "content": f"out{example}"}], "model": model,
                       "error": {"code": None, "message": None}}}
    item.update(extra)
    return item


def test_fixture_known_values_text_and_errored_item():
    assert tool_of(LogFile(FIXTURE.name, FIXTURE.read_bytes())) == "OpenAI Evals API"
    frame = load_eval_log(FIXTURE)
    assert frame[["model", "task", "example_id", "correct"]].values.tolist() == [
        ["gpt-4o-mini-2024-07-18", "eval_X", "5", 1.0], ["gpt-4o-mini-2024-07-18", "eval_X", "6", 0.0],
        ["gpt-4o-mini-2024-07-18", "eval_X", "7", 1.0]]
    assert _texts(frame["input"])[0] == ("developer: Categorize the headline into: Technology, Markets, World, "
                                         "Business.\nuser: Stock Markets Rally After Positive Economic Data Released")
    assert _texts(frame["target"]) == ["Markets", "Technology", "World"]
    assert _texts(frame["output"]) == ["Markets", "Business", "World"]
    notes = report_of(frame).notes
    assert "1 of 4 OpenAI Evals API output items were left out: the model call failed (sample.error set), so there " \
           "is no answer to grade." in notes
    assert "Grader 'String check-a2486074' (string-check-grader) gives 'correct': its 'passed'." in notes


def test_json_list_and_list_pages_read_the_same_items():
    items = _items()
    page = {"object": "list", "data": items[:2], "first_id": "outputitem_01", "last_id": "outputitem_02",
            "has_more": True}
    page2 = {"object": "list", "data": items[2:], "has_more": False}
    as_list = load_eval_log(("items.json", json.dumps(items, indent=2).encode()))
    as_page = load_eval_log(("page.json", json.dumps(page).encode()))
    as_pages = load_eval_log(("pages.jsonl", _jsonl([page, page2])))
    assert as_list["correct"].tolist() == [1.0, 0.0, 1.0] == as_pages["correct"].tolist()
    assert as_page["example_id"].tolist() == ["5", "6"]


def test_an_item_given_twice_is_counted_once():
    items = _items()
    frame = load_eval_log(("dup.jsonl", _jsonl(items + items[:2])))
    assert frame["correct"].tolist() == [1.0, 0.0, 1.0]
    notes = report_of(frame).notes
    assert "2 output items appear more than once (same run and item id): counted once." in notes
    assert any(n.startswith("1 of 4 OpenAI Evals API output items were left out") for n in notes)


def test_two_models_and_a_second_run_of_one_model_are_repeats():
    check = [{"name": "match", "type": "string_check", "passed": True, "score": 1.0}]
    miss = [{"name": "match", "type": "string_check", "passed": False, "score": 0.0}]
    items = [_item(0, check, "m1", "evalrun_1"), _item(1, miss, "m1", "evalrun_1"),
             _item(0, miss, "m2", "evalrun_2"), _item(1, miss, "m2", "evalrun_2"),
             _item(0, miss, "m1", "evalrun_3"), _item(1, check, "m1", "evalrun_3")]
    frame = load_eval_log(("runs.jsonl", _jsonl(items)))
    got = frame[["model", "example_id", "repeat", "correct"]].values.tolist()
    assert sorted(got) == [["m1", "0", "1", 1.0], ["m1", "0", "2", 0.0], ["m1", "1", "1", 0.0], ["m1", "1", "2", 1.0],
                           ["m2", "0", "1", 0.0], ["m2", "1", "1", 0.0]]
    assert any("Some models were run several times on one eval (3 runs)" in n for n in report_of(frame).notes)
    assert _texts(frame.sort_values(["model", "repeat", "example_id"])["target"])[:2] == ["a0", "a1"]


def test_run_object_names_the_model_of_items_without_one(tmp_path):
    items = [_item(i, [{"name": "g", "type": "string_check", "passed": bool(i % 2), "score": float(i % 2)}])
             for i in range(3)]
    for item in items:
        del item["sample"]["model"]
    run = {"object": "eval.run", "id": "evalrun_B", "eval_id": "eval_Y", "model": "o3-mini", "name": "my run",
           "status": "completed", "result_counts": {"total": 3, "passed": 1, "failed": 2, "errored": 0}}
    (tmp_path / "items.jsonl").write_bytes(_jsonl(items))
    (tmp_path / "run.json").write_text(json.dumps(run))
    frame = load_eval_logs([tmp_path / "items.jsonl", tmp_path / "run.json"])
    assert set(frame["model"]) == {"o3-mini"} and frame["correct"].tolist() == [0.0, 1.0, 0.0]
    alone = load_eval_log(("items.jsonl", _jsonl(items)))
    assert set(alone["model"]) == {"evalrun_B"}
    assert any("the run id stands for the model" in n for n in report_of(alone).notes)


def test_a_run_object_alone_is_refused_saying_items_are_needed():
    run = {"object": "eval.run", "id": "evalrun_B", "eval_id": "eval_Y", "model": "o3-mini",
           "result_counts": {"total": 3, "passed": 1, "failed": 2, "errored": 0}}
    with pytest.raises(EvalDataError, match=r"run\.json: no OpenAI Evals API output items .*a run object alone "
                                            r"holds only counts"):
        load_eval_log(("run.json", json.dumps(run).encode()))


def test_score_model_grader_is_a_score_from_an_llm_judge_with_its_reasoning():
    judge = {"model": "o3-mini", "input": [], "output": [{"role": "assistant", "content": "Mostly right: 0.7"}]}
    items = [_item(0, [{"name": "quality", "type": "score_model", "passed": True, "score": 0.7, "sample": judge}]),
             _item(1, [{"name": "quality", "type": "score_model", "passed": False, "score": 1.0, "sample": None}])]
    frame = load_eval_log(("j.jsonl", _jsonl(items)))
    assert "correct" not in frame and frame["score"].tolist() == [0.7, 1.0]
    assert _texts(frame["explanation"]) == ["Mostly right: 0.7", None]
    notes = report_of(frame).notes
    assert any("score comes from an LLM judge (o3-mini): grader 'quality' (score_model)" in n for n in notes)


def test_several_pass_fail_graders_all_must_pass():
    def results(a, b):
        return [{"name": "exact", "type": "string_check", "passed": a, "score": float(a)},
                {"name": "tone", "type": "label_model", "passed": b, "score": float(b)}]
    items = [_item(0, results(True, True)), _item(1, results(True, False)), _item(2, results(False, True))]
    frame = load_eval_log(("multi.jsonl", _jsonl(items)))
    assert frame["correct"].tolist() == [1.0, 0.0, 0.0]
    assert frame["score_exact"].tolist() == [1.0, 1.0, 0.0] and frame["score_tone"].tolist() == [1.0, 0.0, 1.0]
    notes = report_of(frame).notes
    assert any("2 graders ('exact', 'tone'), each pass/fail: correct = all of them passed" in n for n in notes)
    assert any("correct comes from an LLM judge (judge model not recorded in the items): grader 'tone'" in n
               for n in notes)


def test_mixed_graders_the_first_gives_the_label():
    items = [_item(i, [{"name": "sim", "type": "text_similarity", "passed": s > 0.5, "score": s},
                       {"name": "exact", "type": "string_check", "passed": p, "score": float(p)}])
             for i, (s, p) in enumerate(((0.9, True), (0.2, False)))]
    frame = load_eval_log(("mixed.jsonl", _jsonl(items)))
    assert frame["score"].tolist() == [0.9, 0.2] and frame["score_exact"].tolist() == [1.0, 0.0]
    assert any("'sim' (the first) gives the label" in n for n in report_of(frame).notes)


def test_without_grader_type_the_values_decide():
    binary = [_item(i, [{"name": "g", "passed": bool(i), "score": float(i)}]) for i in (0, 1)]
    assert load_eval_log(("b.jsonl", _jsonl(binary)))["correct"].tolist() == [0.0, 1.0]
    graded = [_item(i, [{"name": "g", "passed": s > 0.5, "score": s}]) for i, s in enumerate((0.25, 1.0))]
    assert load_eval_log(("g.jsonl", _jsonl(graded)))["score"].tolist() == [0.25, 1.0]


def test_azure_label_and_reason():
    items = [_item(i, [{"name": "relevance", "type": "azure_ai_evaluator", "label": label, "reason": why,
                        "threshold": 3, "metric": "relevance"}]) for i, (label, why) in
             enumerate((("pass", "On topic."), ("fail", "Off topic.")))]
    items[0]["datasource_item"] = {"item": {"query": "nested q", "ground_truth": "nested a"}, "sample": {}}
    items[0]["sample"]["input"] = []
    frame = load_eval_log(("azure.jsonl", _jsonl(items)))
    # a graded type that wrote no score: its label pass/fail gives correct
    assert frame["correct"].tolist() == [1.0, 0.0]
    assert _texts(frame["explanation"]) == ["On topic.", "Off topic."]
    assert _texts(frame["target"]) == ["nested a", "a1"] and _texts(frame["input"]) == ["nested q", "user: q1"]
    assert not any("LLM judge" in n for n in report_of(frame).notes)  # Azure's evaluator type does not say


def test_missing_example_id_names_the_file_and_item():
    item = _item(0, [{"name": "g", "type": "string_check", "passed": True, "score": 1.0}])
    del item["datasource_item_id"]
    with pytest.raises(EvalDataError, match=r"bad\.jsonl \(item outputitem_evalrun_B_0\): the field "
                                            r"'datasource_item_id' is missing"):
        load_eval_log(("bad.jsonl", _jsonl([item, copy.deepcopy(item)])))


def test_sniff_claims_items_only(shared_data):
    assert openai_evals_api.sniff(LogFile("x.jsonl", FIXTURE.read_bytes()))
    for name in ("openai_evals/230417220821DPM75QNS_auto_gpt_completion_fn_test-match.jsonl",
                 "promptfoo/sample-export.json", "inspect_ai/data_arc_qwen.json"):
        path = shared_data / "ecosystem" / name
        if path.is_file():
            assert not openai_evals_api.sniff(LogFile(path.name, path.read_bytes()))
    assert not openai_evals_api.sniff(LogFile("t.jsonl", b'{"model": "a", "example_id": "1", "correct": 1}\n'))


def _export_row(question: str, ideal: str, answer: str, model: str | None, passed, run="evalrun_A", **extra) -> dict:
    sample = {"output_text": answer, **({"model": model} if model else {})}
    row = {"run_id": run, "item": {"question": question, "ideal": ideal}, "sample": sample,
           "grades": {"Exact match": float(passed) if isinstance(passed, bool) else 0.0},
           "passes": {"Exact match": passed}}
    row.update(extra)
    return row


def test_platform_export_rows_are_read_as_the_items_they_describe():
    """The dashboard's export (run_id, item, sample, grades, passes): two models' runs of one eval; the row's number
    pairs the examples, the data row gives input and reference, the sample the answer, an errored row is counted."""
    questions = [("2+2?", "4"), ("3+3?", "6"), ("capital of France?", "Paris")]
    mini = [_export_row(q, a, out, "gpt-4.1-mini", ok) for (q, a), (out, ok) in
            zip(questions, [("4", True), ("5", False), ("Paris", True)])]
    full = [_export_row(q, a, out, "gpt-4.1", ok, run="evalrun_B") for (q, a), (out, ok) in
            zip(questions, [("4", True), ("6", True), ("", None)])]
    full[2]["sample"]["error"] = {"code": "rate_limit_exceeded", "message": "Rate limit reached"}
    assert tool_of(LogFile("export.jsonl", _jsonl(mini))) == "OpenAI Evals API"
    frame = load_eval_logs([("mini.jsonl", _jsonl(mini)), ("full.jsonl", _jsonl(full))])
    assert frame[["model", "example_id", "correct"]].values.tolist() == [
        ["gpt-4.1-mini", "1", 1.0], ["gpt-4.1-mini", "2", 0.0], ["gpt-4.1-mini", "3", 1.0],
        ["gpt-4.1", "1", 1.0], ["gpt-4.1", "2", 1.0]]
    assert _texts(frame["input"])[:2] == ["2+2?", "3+3?"]
    assert _texts(frame["target"])[:3] == ["4", "6", "Paris"]
    assert _texts(frame["output"])[:3] == ["4", "5", "Paris"]
    notes = report_of(frame).notes
    assert ("1 of 6 OpenAI Evals API output items were left out: the model call failed (sample.error set), so "
            "there is no answer to grade.") in notes


def test_platform_export_row_verdicts_graders_and_unnamed_model():
    """``passes`` as one boolean for a row with two graders: the row's verdict is correct, the graders' grades kept as
    scores; a list of passes follows the graders' order; a row naming no model stands under its run id."""
    rows = [{"run_id": "evalrun_C", "item": {"id": f"q{i}", "prompt": f"p{i}", "answer": "x"},
             "sample": {"choices": [{"message": {"role": "assistant", "content": f"o{i}"}}]},
             "grades": {"similarity": s, "style": t}, "passes": p}
            for i, (s, t, p) in enumerate([(0.9, 0.8, True), (0.4, 0.7, False), (1.0, 0.2, 1)])]
    frame = load_eval_log(("verdicts.jsonl", _jsonl(rows)))
    assert frame["example_id"].tolist() == ["q0", "q1", "q2"]
    assert frame["correct"].tolist() == [1.0, 0.0, 0.0]  # a count of 1 of 2 graders: not every grader passed
    assert frame["score_similarity"].tolist() == [0.9, 0.4, 1.0]
    assert _texts(frame["output"]) == ["o0", "o1", "o2"]
    assert set(frame["model"]) == {"evalrun_C"}
    assert any("the run id stands for the model" in n for n in report_of(frame).notes)
    listed = [{"run_id": "r", "item": {"question": "q"}, "sample": {"output_text": "a", "model": "m"},
               "grades": [{"name": "a", "score": 1}, {"name": "b", "score": 0}], "passes": [True, False]}]
    assert load_eval_log(("list.jsonl", _jsonl(listed * 2)))["correct"].tolist() == [0.0, 0.0]
