"""promptfoo results files (``promptfoo eval -o results.json``) into a canonical log: the real export in
../shared/data/ecosystem/promptfoo and small files written here after promptfoo's types (src/types/index.ts)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from evalcore.data.validation import load_eval_logs, validate
from evalcore.errors import EvalDataError
from evalcore.importers import promptfoo
from evalcore.importers.base import LogFile
from evalcore.importers.detect import TOOL_MODULES, tool_of

SAMPLE = "ecosystem/promptfoo/sample-export.json"
OTHER_TOOLS = (
    "ecosystem/inspect_ai/data_arc_qwen.json",
    "ecosystem/inspect_ai/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval",
    "ecosystem/lm_eval/results_2026-01-21T03-44-18.458309.json",
    "ecosystem/lm_eval/samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl",
    "ecosystem/helm/mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2/per_instance_stats.json",
    "ecosystem/helm/mmlu-subject=philosophy,method=multiple_choice_joint,model=openai_gpt2/scenario_state.json",
    "ecosystem/openai_evals/230417220821DPM75QNS_auto_gpt_completion_fn_test-match.jsonl",
    "ecosystem/alpaca_eval/alpaca-7b/alpaca_eval_gpt4/annotations.json",
    "ecosystem/mt_bench/gpt-4_single-origin.jsonl",
)


def _file(shared_file, name: str) -> LogFile:
    path = shared_file(name)
    return LogFile(path.name, path.read_bytes())


def _one(file: LogFile):
    (imported,) = promptfoo.convert([file])
    return imported


def _component(kind: str, passed: bool, score: float) -> dict:
    return {"pass": passed, "score": score, "reason": "", "assertion": {"type": kind, "value": "x"}}


def _result(test: int, provider, prompt: str = "p1", success: bool = True, score: float = 1.0,
            components: list | None = None, **extra) -> dict:
    """One EvaluateResult as promptfoo writes it (version 3)."""
    result = {
        "id": f"r{test}-{prompt}", "promptIdx": 0, "testIdx": test, "promptId": f"id-{prompt}",
        "prompt": {"raw": f"{prompt}: {{{{q}}}}", "label": prompt},
        "provider": provider if not isinstance(provider, str) else {"id": provider, "label": ""},
        "vars": {"q": f"question {test}"}, "testCase": {"vars": {"q": f"question {test}"}},
        "success": success, "score": score, "failureReason": 0 if success else 1, "latencyMs": 10,
        "namedScores": {},
        "gradingResult": {"pass": success, "score": score, "reason": "",
                          "componentResults": components or [_component("contains", success, float(success))]},
    }
    result.update(extra)
    return result


def _export(results: list[dict], **top) -> bytes:
    doc = {"evalId": "eval-abc-2025-01-01T00:00:00",
           "results": {"version": 3, "timestamp": "2025-01-01T00:00:00Z", "prompts": [], "results": results,
                       "stats": {"successes": 0, "failures": 0, "errors": 0}},
           "config": {"description": "my eval"}, "shareableUrl": None}
    doc.update(top)
    return json.dumps(doc, indent=2).encode()


# ----------------------------------------------------------------------------------------------------------------
# the real export


def test_real_export_known_values(shared_file):
    file = _file(shared_file, SAMPLE)
    assert promptfoo.sniff(file)
    imported = _one(file)
    frame = imported.frame
    assert imported.kind == "log" and imported.tool == "promptfoo" and imported.files == ("sample-export.json",)
    assert len(frame) == 4
    # one prompt ("Solve this riddle: {{riddle}}") for two providers: the task is the eval's description
    assert set(frame["task"]) == {"Comparing OpenAI flagship and mini models performance on riddles"}
    rows = {(m, e): r for m, e, r in zip(frame["model"], frame["example_id"], frame.itertuples())}
    assert set(rows) == {("openai:gpt-5", "0"), ("openai:gpt-5-mini", "0"), ("openai:gpt-5", "1"),
                         ("openai:gpt-5-mini", "1")}
    # every test failed its latency threshold: promptfoo's success is false for all four
    assert frame["correct"].tolist() == [0.0, 0.0, 0.0, 0.0]
    assert rows[("openai:gpt-5-mini", "0")].score == pytest.approx(0.75)
    assert rows[("openai:gpt-5", "0")].score == pytest.approx(0.5)
    assert rows[("openai:gpt-5", "1")].score == pytest.approx(2 / 3)
    # test 0 has a 'contains' check next to its llm-rubric (score 1): the rubric is a proxy there; test 1 has only
    # cost/latency next to the rubric: no proxy
    assert rows[("openai:gpt-5", "0")].proxy == 1.0 and rows[("openai:gpt-5-mini", "0")].proxy == 1.0
    assert math.isnan(rows[("openai:gpt-5", "1")].proxy)
    assert "repeat" not in frame
    assert any("2 results are graded only by model-graded" in note for note in imported.notes)
    canonical = validate(imported.frame, kind=imported.kind)
    assert canonical.attrs["report"]["n_models"] == 2


def test_detect_routes_the_export_here(shared_file):
    for name in TOOL_MODULES:   # the other tools' modules are written in parallel
        pytest.importorskip(f"evalcore.importers.{name}")
    assert tool_of(_file(shared_file, SAMPLE)) == "promptfoo"


@pytest.mark.parametrize("name", OTHER_TOOLS)
def test_sniff_refuses_other_tools(shared_file, name):
    assert not promptfoo.sniff(_file(shared_file, name))


@pytest.mark.parametrize("data", [
    b"model,example_id,correct\na,1,1\nb,1,0\n",
    b'{"model": "a", "example_id": "1", "correct": 1}\n{"model": "b", "example_id": "1", "correct": 0}\n',
    b'{"results": {"acc": 0.5}, "config": {"model": "x"}}',
    b"",
    b"\x00\x01garbage",
])
def test_sniff_refuses_plain_tables(data):
    assert not promptfoo.sniff(LogFile("table.jsonl", data))


# ----------------------------------------------------------------------------------------------------------------
# fixtures after promptfoo's format


def test_several_prompts_are_tasks_and_label_names_the_model():
    results = [
        _result(0, {"id": "openai:gpt-4o", "label": "gpt4o-hot"}, "short", True, 1.0),
        _result(0, {"id": "openai:gpt-4o", "label": "gpt4o-hot"}, "long", False, 0.0),
        _result(1, {"id": "openai:gpt-4o", "label": "gpt4o-hot"}, "short", False, 0.0),
        _result(1, {"id": "openai:gpt-4o", "label": "gpt4o-hot"}, "long", True, 1.0),
        _result(0, "anthropic:claude", "short", True, 1.0),
        _result(0, "anthropic:claude", "long", True, 1.0),
    ]
    imported = _one(LogFile("results.json", _export(results)))
    frame = imported.frame
    assert sorted(set(frame["task"])) == ["long", "short"]
    # evalcore needs an example id unique per model: a test under two prompts is two examples
    assert sorted(set(frame["example_id"])) == ["long/0", "long/1", "short/0", "short/1"]
    assert sorted(set(frame["model"])) == ["anthropic:claude", "gpt4o-hot"]
    assert frame["correct"].sum() == 4
    assert "score" not in frame and "proxy" not in frame   # scores are only 0/1; no model-graded assertion
    assert any("2 prompts" in note for note in imported.notes)
    validate(frame, kind="log")


def test_prompts_with_the_same_label_are_numbered():
    results = [_result(0, "m", "same"), _result(0, "m", "same", promptId="other-id")]
    results[1]["promptId"] = "other-id"
    frame = _one(LogFile("results.json", _export(results))).frame
    assert frame["task"].tolist() == ["prompt 1", "prompt 2"]
    assert frame["example_id"].tolist() == ["prompt 1/0", "prompt 2/0"]


def test_errors_are_left_out_and_counted():
    results = [
        _result(0, "m", success=True),
        _result(1, "m", success=False, score=0.0, error="Latency too high", failureReason=1),   # assertion failure
        _result(2, "m", success=False, score=0.0, error="API error: 429", failureReason=2, gradingResult=None),
    ]
    imported = _one(LogFile("results.json", _export(results)))
    assert imported.frame["example_id"].tolist() == ["0", "1"]
    assert imported.frame["correct"].tolist() == [1.0, 0.0]
    assert "1 of 3 promptfoo results were left out" in " ".join(imported.notes)


def test_all_errors_refused():
    results = [_result(0, "m", success=False, error="boom", failureReason=2)]
    with pytest.raises(EvalDataError, match="results.json"):
        _one(LogFile("results.json", _export(results)))


def test_proxy_from_model_graded_assertions():
    graded = [_component("equals", True, 1.0), _component("llm-rubric", True, 0.8),
              _component("not-g-eval", False, 0.4), _component("latency", True, 1.0)]
    only_judge = [_component("llm-rubric", False, 0.3), _component("cost", True, 1.0)]
    nested = [{"pass": True, "score": 1.0, "reason": "", "assertion": {"type": "assert-set"},
               "componentResults": [_component("regex", True, 1.0), _component("factuality", True, 0.9)]}]
    results = [_result(0, "m", score=0.75, components=graded), _result(1, "m", success=False, score=0.3,
                                                                         components=only_judge),
               _result(2, "m", components=nested)]
    imported = _one(LogFile("results.json", _export(results)))
    frame = imported.frame
    assert frame["proxy"].iloc[0] == pytest.approx(0.6)     # mean of the two model-graded scores
    assert math.isnan(frame["proxy"].iloc[1])               # only a judge: correct already is its verdict
    assert frame["proxy"].iloc[2] == pytest.approx(0.9)     # inside an assert-set
    assert frame["score"].tolist()[:2] == [0.75, 0.3]
    validate(frame, kind="log")


def test_the_graders_of_model_graded_assertions_are_named():
    def rubric(provider) -> dict:
        part = _component("llm-rubric", True, 0.9)
        if provider is not None:
            part["assertion"]["provider"] = provider
        return part

    results = [_result(0, "openai:gpt-4o", components=[rubric("openai:gpt-4o")]),
               _result(1, "openai:gpt-4o", components=[rubric({"id": "anthropic:claude-3"})]),
               _result(2, "openai:gpt-4o", components=[rubric(None)])]
    notes = _one(LogFile("results.json", _export(results))).notes
    assert ("The model-graded assertions name their grader (the AI judge): anthropic:claude-3, openai:gpt-4o; 1 "
            "results were graded by promptfoo's default grader, which the file does not name. openai:gpt-4o grades "
            "its own outputs (a judge tends to favour them).") in notes
    configured = _export(results[2:], config={"defaultTest": {"options": {"provider": "openai:gpt-4o-mini"}}})
    assert ("The model-graded assertions name their grader (the AI judge): openai:gpt-4o-mini."
            in _one(LogFile("results.json", configured)).notes)
    assert any(n.startswith("The model-graded assertions do not name their grader")
               for n in _one(LogFile("results.json", _export(results[2:]))).notes)


def test_failures_from_an_assertion_whose_code_crashed_are_counted_apart():
    crash = {"pass": False, "score": 0, "reason": "Custom function threw error: Unexpected token 'return'\nStack Trace",
             "assertion": {"type": "javascript", "value": "return 1"}}
    results = [_result(0, "m", success=False, score=0.0, components=[_component("regex", False, 0.0), crash]),
               _result(1, "m", success=False, score=0.0, components=[_component("regex", False, 0.0)]),
               _result(2, "m")]
    notes = _one(LogFile("results.json", _export(results))).notes
    assert ("1 of the 2 failed results failed an assertion whose own code raised an error (e.g. \"Custom function "
            "threw error: Unexpected token 'return'\"): promptfoo counts them as failures") in " ".join(notes)


def test_repeated_test_cases_are_repeats():
    # promptfoo --repeat 2: each test case run twice, with a new testIdx each time
    results = []
    for test_idx, question in enumerate(["a", "a", "b", "b"]):
        for model in ("m1", "m2"):
            r = _result(test_idx, model, success=test_idx % 2 == 0)
            r["vars"] = {"q": question}
            r["testCase"] = {"vars": {"q": question}}
            results.append(r)
    imported = _one(LogFile("results.json", _export(results)))
    frame = imported.frame
    assert sorted(frame["example_id"].unique()) == ["0", "2"]
    assert frame.groupby(["model", "example_id"])["repeat"].apply(sorted).tolist() == [[0, 1]] * 4
    assert any("run several times" in note for note in imported.notes)
    assert len(validate(frame, kind="log")) == 8


def test_same_vars_different_assertions_are_different_tests():
    first, second = _result(0, "m"), _result(1, "m")
    second["vars"], second["testCase"] = first["vars"], {"vars": first["vars"], "assert": [{"type": "equals"}]}
    frame = _one(LogFile("results.json", _export([first, second]))).frame
    assert frame["example_id"].tolist() == ["0", "1"] and "repeat" not in frame


def test_old_layout_without_indices():
    """promptfoo 0.x wrote the summary itself: {version, results: [...], table, stats}, results without testIdx,
    failureReason or labels."""
    doc = {"version": 1, "results": [
        {"provider": {"id": "openai:gpt-3.5-turbo"}, "prompt": {"raw": "Q: {{q}}", "display": "Q: {{q}}"},
         "vars": {"q": "2+2"}, "response": {"output": "4"}, "success": True, "score": 1, "latencyMs": 5},
        {"provider": {"id": "openai:gpt-3.5-turbo"}, "prompt": {"raw": "Q: {{q}}", "display": "Q: {{q}}"},
         "vars": {"q": "3+3"}, "response": {"error": "timeout"}, "error": "timeout", "success": False, "score": 0,
         "latencyMs": 5},
        {"provider": "openai:gpt-4", "prompt": {"raw": "Q: {{q}}", "display": "Q: {{q}}"},
         "vars": {"q": "2+2"}, "success": False, "score": 0, "latencyMs": 5,
         "error": "Expected output to contain 4", "gradingResult": {"pass": False, "score": 0, "reason": "no"}},
    ], "table": {"head": {"prompts": [], "vars": ["q"]}, "body": []}, "stats": {"successes": 1, "failures": 2}}
    file = LogFile("output.json", json.dumps(doc, indent=2).encode())
    assert promptfoo.sniff(file)
    imported = _one(file)
    frame = imported.frame
    assert frame["model"].tolist() == ["openai:gpt-3.5-turbo", "openai:gpt-4"]
    assert frame["example_id"].tolist() == ['{"q": "2+2"}'] * 2
    assert frame["correct"].tolist() == [1.0, 0.0]
    assert set(frame["task"]) == {"promptfoo eval"}
    assert "1 of 3 promptfoo results were left out" in " ".join(imported.notes)


def test_version_2_table_only():
    table = {"head": {"prompts": [{"raw": "Hi {{n}}", "label": "greet", "provider": "echo", "id": "p"}],
                      "vars": ["n"]},
             "body": [{"testIdx": 0, "vars": ["Ada"], "test": {"vars": {"n": "Ada"}},
                       "outputs": [{"pass": True, "score": 1, "text": "Hi Ada", "failureReason": 0}]},
                      {"testIdx": 1, "vars": ["Bob"], "test": {"vars": {"n": "Bob"}},
                       "outputs": [{"pass": False, "score": 0.25, "text": "", "failureReason": 1}]}]}
    doc = {"evalId": "eval-x", "results": {"version": 2, "timestamp": "t", "table": table, "stats": {}},
           "config": {}}
    frame = _one(LogFile("r.json", json.dumps(doc).encode())).frame
    assert frame["model"].tolist() == ["echo", "echo"]
    assert frame["example_id"].tolist() == ["0", "1"]
    assert frame["score"].tolist() == [1.0, 0.25]
    assert set(frame["task"]) == {"eval-x"}


def test_json_lines_output():
    lines = [_result(0, "m1"), _result(0, "m2", success=False, score=0.0)]
    data = b"\n".join(json.dumps(r).encode() for r in lines) + b"\n"
    file = LogFile("results.jsonl", data)
    assert promptfoo.sniff(file)
    frame = _one(file).frame
    assert frame["model"].tolist() == ["m1", "m2"] and frame["correct"].tolist() == [1.0, 0.0]


def test_optional_fields_missing_still_load():
    bare = {"provider": {"id": "m"}, "testIdx": 0, "promptIdx": 0, "success": True, "score": 1}
    doc = {"evalId": "e", "results": {"version": 3, "results": [bare]}}
    frame = _one(LogFile("r.json", json.dumps(doc).encode())).frame
    assert frame.to_dict("records") == [{"model": "m", "task": "e", "example_id": "0", "correct": 1.0}]


def test_provider_from_the_prompts_column():
    result = _result(0, "x")
    del result["provider"]
    doc = json.loads(_export([result]))
    doc["results"]["prompts"] = [{"raw": "p", "label": "p", "provider": "ollama:llama3"}]
    frame = _one(LogFile("r.json", json.dumps(doc).encode())).frame
    assert frame["model"].tolist() == ["ollama:llama3"]


@pytest.mark.parametrize("mutate, missing", [
    (lambda r: r.pop("provider"), "provider"),
    (lambda r: (r.pop("success"), r.pop("gradingResult")), "success"),
])
def test_required_field_missing_names_file_and_field(mutate, missing):
    result = _result(0, "m")
    mutate(result)
    with pytest.raises(EvalDataError, match=rf"^results\.json \(result 0\).*'{missing}"):
        _one(LogFile("results.json", _export([result])))


def test_truncated_file_names_it():
    data = _export([_result(0, "m"), _result(1, "m")])
    file = LogFile("results.json", data[: len(data) // 2])
    assert promptfoo.sniff(file)
    with pytest.raises(EvalDataError, match=r"^results\.json: not valid JSON"):
        _one(file)


def test_no_results_refused():
    with pytest.raises(EvalDataError, match=r"^results\.json: .*no test results"):
        _one(LogFile("results.json", _export([])))
    with pytest.raises(EvalDataError, match=r"^results\.json.*'results'"):
        _one(LogFile("results.json", b'{"evalId": "e", "config": {}}'))
    empty = b'{"results": {"results": [], "timestamp": null}}'  # no promptfoo marker: recognised by its layout
    with pytest.raises(EvalDataError, match=r"^empty\.json: the promptfoo results file holds no test results"):
        load_eval_logs([("empty.json", empty)])


def test_large_export_keeps_every_row():
    results = [_result(i % 10_000, f"m{i // 10_000}", success=bool(i % 3), score=float(i % 3) / 2,
                       components=[_component("contains", True, 1.0), _component("llm-rubric", True, 0.5)])
               for i in range(20_000)]
    file = LogFile("big.json", json.dumps({"evalId": "e", "results": {"version": 3, "results": results}}).encode())
    frame = _one(file).frame
    assert len(frame) == 20_000 and frame["example_id"].nunique() == 10_000
    assert np.allclose(frame["proxy"], 0.5)


# ----------------------------------------------------------------------------------------------------------------
# the example's text (issue 27)


def test_real_export_keeps_prompt_response_expected_and_reason(shared_file):
    frame = _one(_file(shared_file, SAMPLE)).frame
    rows = {(m, e): r for m, e, r in zip(frame["model"], frame["example_id"], frame.to_dict("records"))}
    first = rows[("openai:gpt-5", "0")]
    assert first["input"] == ("Solve this riddle: I speak without a mouth and hear without ears. I have no body, but "
                              "I come alive with wind. What am I?")
    assert first["output"] == "An echo."
    assert first["target"] == "echo"   # the 'contains' value; the llm-rubric's criterion is not an answer
    assert first["explanation"] == "Latency 6197ms is greater than threshold 3000ms"
    assert rows[("openai:gpt-5", "1")]["target"] is None   # only cost, latency and an llm-rubric


def test_text_from_chat_prompts_vars_and_assertions():
    chat = json.dumps([{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Capital of France?"}])
    with_chat = _result(0, "m", response={"output": "Paris"},
                        testCase={"vars": {"q": "question 0"},
                                  "assert": [{"type": "icontains", "value": "paris"},
                                             {"type": "not-contains", "value": "Lyon"},
                                             {"type": "contains-any", "value": ["Paris", "paris"]},
                                             {"type": "javascript", "value": "output.length < 10"}]})
    with_chat["prompt"] = {"raw": chat, "label": "p"}
    with_chat["gradingResult"]["reason"] = "All assertions passed"
    no_prompt = _result(1, "m", vars={"q": "2+2", "expected": "4"},
                        testCase={"vars": {"q": "2+2", "expected": "4"}}, response={"output": {"answer": 4}})
    no_prompt["prompt"] = {"label": "p"}
    frame = _one(LogFile("r.json", _export([with_chat, no_prompt]))).frame
    assert frame["input"].tolist() == ["system: Be terse.\nuser: Capital of France?", "q: 2+2\nexpected: 4"]
    assert frame["target"].tolist() == ["paris\nParis\nparis", "4"]
    assert frame["output"].tolist() == ["Paris", '{"answer": 4}']
    assert frame["explanation"].tolist() == ["All assertions passed", None]
