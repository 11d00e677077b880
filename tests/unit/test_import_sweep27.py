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


# ----------------------------------------------------------------------------------------------------------------
# Inspect AI: a log cut by another tool keeps fewer samples than its results count (every_eval_ever
# tests/data/inspect/data_cyse2_vuln_exploit_challenges.json: 1 sample, results.completed_samples 2340), and a run
# that did not succeed (inspect_ai tests/test_eval_set/2024-08-29T15-11-18+00-00_popularity_*.json: status "error")


def _inspect_log(status: str, completed: int) -> bytes:
    return json.dumps({
        "version": 2, "status": status,
        "eval": {"task": "popularity", "model": "openai/gpt-4o-mini",
                 "scorers": [{"name": "match", "options": {}, "metrics": [{"name": "inspect_ai/accuracy"}]}]},
        "results": {"total_samples": completed, "completed_samples": completed,
                    "scores": [{"name": "match", "scorer": "match", "scored_samples": completed,
                                "metrics": {"accuracy": {"name": "accuracy", "value": 0.6}}}]},
        "samples": [{"id": 1, "epoch": 1, "input": "q1", "target": "A", "scores": {"match": {"value": "C"}}},
                    {"id": 2, "epoch": 1, "input": "q2", "target": "B", "scores": {"match": {"value": "I"}}}],
    }).encode()


def test_inspect_log_holding_fewer_samples_than_its_results_count():
    frame = load_eval_logs([("cut.json", _inspect_log("success", 5))])
    assert frame["correct"].tolist() == [1.0, 0.0]
    notes = frame.attrs["report"]["notes"]
    assert "cut.json: the log holds 2 samples, but its results count 5 (results.completed_samples): the log was " \
           "cut (e.g. copied in part by another tool), so the rows here cover only the samples it holds, and " \
           "their figures differ from the run's results." in notes
    assert not any("status" in n for n in notes)


def test_inspect_run_that_did_not_succeed_is_named_in_the_notes():
    frame = load_eval_logs([("run.json", _inspect_log("error", 2))])
    notes = frame.attrs["report"]["notes"]
    assert "run.json: the run's status is 'error', not 'success': it may have stopped before every sample was " \
           "run and scored." in notes
    assert not any("the log holds" in n for n in notes)  # 2 samples, 2 completed


# ----------------------------------------------------------------------------------------------------------------
# lm-evaluation-harness: a results file with two tasks and the samples file of one, cut to fewer docs than the run's
# n-samples (every_eval_ever tests/data/lm_eval/: results_<time>.json lists math_perturbed_full and
# math_rephrased_full, 5000 docs each; samples_math_perturbed_full_<time>.jsonl holds 10 lines); an old results file
# without n-samples (lm-evaluation-harness tests/testdata/arc_easy-v0-res.json)

STAMP = "2026-01-21T03-44-18.458309"
LM_RESULTS = json.dumps({
    "results": {"t1": {"alias": "t1", "exact_match,none": 0.25, "exact_match_stderr,none": 0.2},
                "t2": {"alias": "t2", "exact_match,none": 0.5, "exact_match_stderr,none": 0.2}},
    "group_subtasks": {"t1": [], "t2": []},
    "n-samples": {"t1": {"original": 4, "effective": 4}, "t2": {"original": 4, "effective": 4}},
    "model_name": "org/model",
}).encode()
LM_SAMPLES = b"\n".join(json.dumps(
    {"doc_id": i, "doc": {"problem": f"q{i}"}, "target": "1", "arguments": {"gen_args_0": {"arg_0": f"q{i}",
                                                                                         "arg_1": {}}},
     "resps": [["1" if i == 0 else "2"]], "filtered_resps": ["1" if i == 0 else "2"], "filter": "none",
     "metrics": ["exact_match"], "exact_match": 1.0 if i == 0 else 0.0}).encode() for i in range(2))


def test_lm_eval_cut_samples_and_tasks_without_samples_are_named():
    frame = load_eval_logs([(f"out/results_{STAMP}.json", LM_RESULTS), (f"out/samples_t1_{STAMP}.jsonl", LM_SAMPLES)])
    assert frame["model"].unique().tolist() == ["org/model"] and frame["task"].unique().tolist() == ["t1"]
    assert frame["correct"].tolist() == [1.0, 0.0]
    notes = frame.attrs["report"]["notes"]
    assert f"out/samples_t1_{STAMP}.jsonl: holds 2 docs, but the results file of its run counts 4 (n-samples, " \
           "effective): the samples file was cut (e.g. copied in part), so the rows here cover only the docs it " \
           "holds, and their figures differ from the run's results." in notes
    assert f"out/results_{STAMP}.json: 1 task(s) of the run have no samples file among the files given and are " \
           "not read (t2); upload their samples_<task>_*.jsonl files too." in notes


def test_lm_eval_old_results_without_sample_counts_are_refused_saying_so():
    old = json.dumps({"results": {"arc_easy": {"acc": 0.2474747474747475, "acc_norm": 0.24074074074074073,
                                               "acc_norm_stderr": 0.008772796145221907,
                                               "acc_stderr": 0.008855114414834707}},
                      "versions": {"arc_easy": 0}}).encode()
    with pytest.raises(EvalDataError, match=r"arc_easy-v0-res\.json: the results file gives no sample count "
                                            r"\('n-samples'.*its accuracies \(arc_easy\) cannot be a leaderboard"):
        load_eval_logs([("arc_easy-v0-res.json", old)])


# ----------------------------------------------------------------------------------------------------------------
# promptfoo: the record of an eval without its results, as the Node package's evaluate() writes it with
# writeLatestResults (promptfoo examples/config-node-package/output.json: _resultsLoaded false, results [], each
# prompt's metrics)

RECORD = json.dumps({
    "_resultsLoaded": False, "createdAt": 1758065695513, "id": "eval-IF3-2025-09-16T23:34:55",
    "config": {"prompts": [{"raw": "Write a haiku about: {{body}}", "label": "Write a haiku about: {{body}}"}],
               "providers": ["openai:gpt-4.1-mini"], "tests": [{"vars": {"body": "Hello world"}}]},
    "results": [],
    "prompts": [{"raw": "Write a haiku about: {{body}}", "label": "Write a haiku about: {{body}}", "id": "64a3",
                 "provider": "openai:gpt-4.1-mini",
                 "metrics": {"score": 1, "testPassCount": 1, "testFailCount": 1, "testErrorCount": 0}}],
    "persisted": True, "vars": ["body"],
}).encode()


def test_promptfoo_eval_record_without_results_is_refused_saying_how_to_write_them():
    with pytest.raises(EvalDataError, match=r"output\.json: this is promptfoo's record of an eval "
                                            r"\(eval-IF3-2025-09-16T23:34:55\) without its results .* promptfoo "
                                            r"eval -o results\.json, or promptfoo export eval <eval id>"):
        load_eval_logs([("output.json", RECORD)])


# ----------------------------------------------------------------------------------------------------------------
# AlpacaEval: the website's copy of a leaderboard (tatsu-lab/alpaca_eval
# docs/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv) has no n_total and no standard errors

WEBSITE = (b"name,length_controlled_winrate,win_rate,avg_length,link,samples,filter\n"
           b"SelfMoA + gemma-2-9b-it-WPO-HB,78.53928111481099,77.58955217385297,3261,https://github.com/wenzhe-li/"
           b"Self-MoA/,https://github.com/tatsu-lab/alpaca_eval/blob/main/results/SelfMoA_gemma-2-9b-it-WPO-HB/"
           b"model_outputs.json,community\n")


def test_alpaca_eval_website_leaderboard_is_refused_naming_the_package_csv():
    with pytest.raises(EvalDataError, match=r"weighted_alpaca_eval_gpt4_turbo_leaderboard\.csv: this is the "
                                            r"leaderboard table of AlpacaEval's website .* no number of comparisons "
                                            r"\(n_total\)"):
        load_eval_logs([("docs/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", WEBSITE)])


# Inspect AI logs of older formats without samples: results.scorers (format version 2 of May 2024, inspect_ai
# tests/log/test_eval_log/log_valid.txt) and version 1's results {scorer, metrics} (log_with_nan.txt, accuracy NaN)


def _old_inspect(results: dict) -> bytes:
    return json.dumps({"version": 1, "status": "success",
                       "eval": {"task": "wikipedia", "model": "openai/gpt-4", "dataset": {"name": "wikipedia"}},
                       "plan": {"name": "plan", "steps": []}, "results": results, "stats": {}}).replace(
        '"NAN"', "NaN").encode()


def test_inspect_old_results_are_read_for_their_accuracy():
    scorers = {"scorers": [{"name": "model_graded_fact", "params": {},
                            "metrics": {"accuracy": {"name": "accuracy", "value": 1, "options": {}}}}]}
    with pytest.raises(EvalDataError, match=r"log_valid\.txt: .* its results give no number of samples"):
        load_eval_logs([("log_valid.txt", _old_inspect(scorers))])
    version1 = {"scorer": {"name": "model_graded_fact", "params": {}},
                "metrics": {"accuracy": {"name": "accuracy", "value": "NAN", "options": {}}}}
    with pytest.raises(EvalDataError, match=r"log_with_nan\.txt: .* its results give no accuracy \(its accuracy is "
                                            r"not a number\)"):
        load_eval_logs([("log_with_nan.txt", _old_inspect(version1))])
    counted = {"total_samples": 4, "completed_samples": 4,
               "scorers": [{"name": "match", "metrics": {"accuracy": {"name": "accuracy", "value": 0.75}}}]}
    frame = load_eval_logs([("old.json", _old_inspect(counted))])
    assert frame[["n", "accuracy", "n_correct"]].values.tolist() == [[4, 0.75, 3]]


# ----------------------------------------------------------------------------------------------------------------
# MT-Bench: FastChat's data/mt_bench/ folder holds question.jsonl, model_answer/ and reference_answer/ beside
# model_judgment/gpt-4_single.jsonl (instructlab/eval commit 810dcfc, data/mt_bench/)

QUESTIONS = (b'{"question_id": 81, "category": "writing", "turns": ["Compose a blog post.", "Rewrite it."]}\n'
             b'{"question_id": 111, "category": "math", "turns": ["Area of a triangle?", "Circle?"]}\n')
ANSWERS = (b'{"question_id": 81, "answer_id": "ny", "model_id": "instructlab/granite-7b-lab", "choices": [{"index": 0, '
           b'"turns": ["Title: Hawaii", "Rewritten"]}], "tstamp": 1715000000.0}\n')
JUDGMENTS = b"\n".join(json.dumps(
    {"question_id": q, "model": "granite-7b-lab", "judge": ["gpt-4", "single-v1"], "user_prompt": f"prompt {q}",
     "judgment": f"Rating: [[{s}]]", "score": s, "turn": 1, "tstamp": 1715000001.0}).encode()
    for q, s in ((81, 8), (111, -1), (112, 5)))


def test_mt_bench_data_folder_sets_questions_and_answers_aside():
    frame = load_eval_logs([("mt_bench/question.jsonl", QUESTIONS),
                            ("mt_bench/model_answer/instructlab/granite-7b-lab.jsonl", ANSWERS),
                            ("mt_bench/model_judgment/gpt-4_single.jsonl", JUDGMENTS)])
    # score -1 (no rating parsed) is left out: 81 -> 8 (writing), 112 -> 5 (math)
    assert frame["score"].tolist() == [8.0, 5.0] and frame["group"].tolist() == ["writing", "math"]
    report = frame.attrs["report"]
    assert "mt_bench/question.jsonl, mt_bench/model_answer/instructlab/granite-7b-lab.jsonl: not needed " \
           "(MT-Bench's questions, answers or judge prompts, without verdicts; the judgments are in " \
           "model_judgment/)." in report["notes"]
    assert "mt_bench/model_judgment/gpt-4_single.jsonl: 1 of 3 judgments were left out: the judge's output had no " \
           "rating that FastChat could parse (score -1)." in report["notes"]
    assert not report["warnings"]


def test_mt_bench_questions_alone_are_refused_naming_the_judgment_file():
    with pytest.raises(EvalDataError, match=r"question\.jsonl: MT-Bench's questions, answers or judge prompts .*"
                                            r"model_judgment/<judge>_single\.jsonl"):
        load_eval_logs([("mt_bench/question.jsonl", QUESTIONS)])
    assert not pairwise.sniff(LogFile("answers.jsonl", ANSWERS))  # not in a model_answer/ folder: a table's


# lm-evaluation-harness's printed results table (tests/testdata/mmlu_stem_10_hf_pretrained-EleutherAI-pythia-14m-
# deduped-dtype-float32-device-cpu.txt)

PRINTED = ("|             Tasks             |Version|Filter|n-shot|Metric|   |Value |   |Stderr|\n"
           "|-------------------------------|------:|------|-----:|------|---|-----:|---|------|\n"
           "|stem                           |      2|none  |     0|acc   |↑  |0.2474|±  |   N/A|\n"
           "| - abstract_algebra            |      1|none  |     0|acc   |↑  |0.2000|±  |   N/A|\n").encode()


def test_lm_eval_printed_table_is_refused_naming_the_files_to_upload():
    with pytest.raises(EvalDataError, match=r"mmlu_stem\.txt: this is the results table lm-evaluation-harness "
                                            r"prints .* no sample counts .* results_<time>\.json"):
        load_eval_logs([("mmlu_stem.txt", PRINTED)])


# Inspect AI's exact() scorer declares mean and stderr but grades C / I (inspect_ai src/inspect_ai/scorer/
# _classification.py; tests/log/test_eval_log/log_length_stop_reason.txt): right or wrong, so 'correct'


def _exact_log(values: list) -> bytes:
    return json.dumps({
        "version": 2, "status": "success", "eval": {"task": "hello_world", "model": "anthropic/claude-3-5-sonnet"},
        "results": {"total_samples": len(values), "completed_samples": len(values),
                    "scores": [{"name": "exact", "scorer": "exact", "metrics": {"mean": {"name": "mean", "value": 0.5},
                                                                               "stderr": {"name": "stderr",
                                                                                          "value": 0.5}}}]},
        "samples": [{"id": i, "epoch": 1, "input": f"q{i}", "target": "Hello",
                     "scores": {"exact": {"value": v, "answer": "Hello"}}} for i, v in enumerate(values, 1)],
    }).encode()


def test_inspect_exact_scorer_letter_grades_are_correct_although_it_declares_mean():
    frame = load_eval_logs([("exact.json", _exact_log(["C", "I"]))])
    assert frame["correct"].tolist() == [1.0, 0.0] and "score" not in frame
    assert any("scorer 'exact' is the metric ('correct'): it declares mean, stderr without accuracy, but every value "
               "is Inspect's grade C (CORRECT) or I (INCORRECT)" in n for n in frame.attrs["report"]["notes"])
    numbers = load_eval_logs([("numbers.json", _exact_log([1, 0]))])  # numbers under a declared mean stay a score
    assert numbers["score"].tolist() == [1.0, 0.0] and "correct" not in numbers


def test_inspect_eval_zip_of_a_run_that_never_ended_says_so():
    import io
    import zipfile
    buffer = io.BytesIO()
    spec = {"task": "popularity", "model": "openai/gpt-4o-mini",
            "scorers": [{"name": "match", "options": {}, "metrics": [{"name": "inspect_ai/accuracy"}]}]}
    with zipfile.ZipFile(buffer, "w") as archive:  # interrupted: _journal/start.json, no header.json
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": spec, "plan": {}}))
        archive.writestr("samples/1_epoch_1.json", json.dumps(
            {"id": 1, "epoch": 1, "input": "q1", "target": "A", "scores": {"match": {"value": "C"}}}))
    frame = load_eval_logs([("run.eval", buffer.getvalue())])
    assert frame["correct"].tolist() == [1.0]
    assert "run.eval: the run's status is 'started', not 'success': it may have stopped before every sample was " \
           "run and scored." in frame.attrs["report"]["notes"]


# ----------------------------------------------------------------------------------------------------------------
# a folder that names a place is not a model: lm-eval samples or lighteval details found under tests/ (as in
# every_eval_ever tests/data/lm_eval/, lighteval tests/reference_details/) or results_2024/


def test_lm_eval_samples_in_a_tests_folder_are_not_named_after_it():
    for folder in ("tests", "testdata", "results_2024", "fixtures"):
        frame = load_eval_logs([(f"{folder}/samples_t1_{STAMP}.jsonl", LM_SAMPLES)])
        assert frame["model"].unique().tolist() == ["unknown model"], folder
    frame = load_eval_logs([(f"org__model-7b/samples_t1_{STAMP}.jsonl", LM_SAMPLES)])
    assert frame["model"].unique().tolist() == ["org/model-7b"]


def test_lighteval_folder_that_names_a_place_is_not_a_model():
    from evalcore.importers import lighteval
    assert lighteval._model_from_folder("tests") is None
    assert lighteval._model_from_folder("/home/u/Downloads") is None
    assert lighteval._model_from_folder("run-3") is None
    assert lighteval._model_from_folder("Qwen2.5-7B") == "Qwen2.5-7B"
    assert lighteval._model_from_folder("out/details/org/model/2025-11-05T14-43-47.148527") == "org/model"


# Inspect AI: samples without any score but results with the run's accuracy (inspect_ai
# tests/log/test_eval_log/log_tool_call_error.json: 1 sample, no scores; results includes accuracy 1.0 of 4)


def test_inspect_samples_without_scores_fall_back_to_the_results():
    doc = json.loads(_inspect_log("success", 4))
    for sample in doc["samples"]:
        del sample["scores"]
    doc["results"]["scores"][0]["metrics"]["accuracy"]["value"] = 0.75
    frame = load_eval_logs([("unscored.json", json.dumps(doc).encode())])
    assert frame[["n", "accuracy", "n_correct"]].values.tolist() == [[4, 0.75, 3]]  # 0.75 x 4 = 3
    assert any(n.startswith("unscored.json: none of the 2 sample(s) it holds has a score (0 errored; or the log "
                            "was cut) and only its results hold the run's figures: read as a summary, n = 4")
               for n in frame.attrs["report"]["notes"])
    doc["samples"][0]["error"] = {"message": "RuntimeError: sandbox"}
    doc["results"]["scores"][0]["metrics"] = {"mean": {"name": "mean", "value": 0.7}}  # no accuracy: refused
    with pytest.raises(EvalDataError, match=r"unscored\.json: none of the 2 sample\(s\) it holds has a score \(1 "
                                            r"errored; .* and its results give no accuracy \(only mean\)"):
        load_eval_logs([("unscored.json", json.dumps(doc).encode())])
