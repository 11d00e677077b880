"""lm-evaluation-harness files as an audit met them in real runs (evalcore.importers.lm_eval).

Fixtures are written here in the shapes lm-eval writes (EleutherAI/lm-evaluation-harness
``lm_eval/loggers/evaluation_tracker.py``: ``<output_path>/<org>__<name>/results_<time>.json`` and
``samples_<task>_<time>.jsonl``; ``lm_eval/evaluator.py``: a samples line's ``metrics`` and per-metric values;
``lm_eval/api/metrics.py``: corpus-level metrics such as ``f1``, ``mcc``, ``bleu`` keep a per-doc pair and aggregate at
the end; ``perplexity``, ``word_perplexity``, ``bits_per_byte`` are ``higher_is_better=False``;
``tests/testdata/*-res.json``: results files of older versions, without ``n-samples``):

- a group of three tasks of one run (a user task ``negotiationtom`` in lm-eval ``outputs/``), the third scored by a
  custom ``process_results`` returning ``micro_f1`` / ``macro_f1`` as ``[gold, prediction]`` pairs and
  ``exact_match`` as 0/1;
- a regression task whose ``mae`` is ``Infinity`` where the answer could not be parsed, declared
  ``higher_is_better: false`` in the results file;
- ``eqbench`` (a 0-100 score) whose every value is 0 on a small model;
- a results file alone with two filters (``strict-match``, ``flexible-extract``), ``--limit 4`` and standard errors.
"""

from __future__ import annotations

import json

import pytest

from evalcore.data.validation import EvalDataError, load_eval_log, load_eval_logs, report_of
from evalcore.importers import lm_eval
from evalcore.importers.base import LogFile

T = "2026-07-08T18-15-33.115417"
DIR = "out/org__model-8b"


def _lines(rows) -> bytes:
    return "\n".join(json.dumps(r) for r in rows).encode()  # json.dumps writes Infinity / NaN as lm-eval does


def _mc(doc_id: int, lls: list[float], gold: int) -> dict:
    acc = float(max(range(len(lls)), key=lambda i: lls[i]) == gold)
    return {"doc_id": doc_id, "doc": {"prompt": f"q{doc_id}"}, "target": str(gold),
            "arguments": {f"gen_args_{i}": {"arg_0": f"q{doc_id}", "arg_1": f" {c}"} for i, c in enumerate("ABCD")},
            "resps": [[[str(ll), "False"]] for ll in lls], "filtered_resps": [[str(ll), "False"] for ll in lls],
            "filter": "none", "metrics": ["acc"], "acc": acc}


def _intent(doc_id: int, gold: list[str], pred: list[str]) -> dict:
    pair = [gold, pred]
    return {"doc_id": doc_id, "doc": {"prompt": f"u{doc_id}"}, "target": ",".join(gold),
            "arguments": {"gen_args_0": {"arg_0": f"u{doc_id}", "arg_1": {"until": ["\n"]}}},
            "resps": [[" ".join(pred)]], "filtered_resps": [" ".join(pred)], "filter": "none",
            "metrics": ["micro_f1", "macro_f1", "exact_match"], "micro_f1": pair, "macro_f1": pair,
            "exact_match": 1.0 if set(gold) == set(pred) else 0.0}


# belief: doc 0 right (choice 0 most likely, gold 0), doc 1 wrong; desire: doc 0 wrong, doc 1 right
BELIEF = [_mc(0, [-1.0, -2.0, -3.0, -4.0], 0), _mc(1, [-1.0, -2.0, -3.0, -4.0], 3)]
DESIRE = [_mc(0, [-5.0, -1.0, -3.0, -4.0], 0), _mc(1, [-5.0, -1.0, -3.0, -4.0], 1)]
# intention: exact_match 1, 0, 0, 0, 1 -> mean 0.4 (the run's own exact_match below)
INTENT = [_intent(0, ["A"], ["A"]), _intent(1, ["A", "B"], ["A"]), _intent(2, ["C"], ["D"]),
          _intent(3, ["B"], []), _intent(4, ["B", "C"], ["C", "B"])]
GROUP_RESULTS = json.dumps({
    "results": {"tom_belief": {"alias": "tom_belief", "sample_len": 2, "acc,none": 0.5, "acc_stderr,none": 0.5},
                "tom_desire": {"alias": "tom_desire", "sample_len": 2, "acc,none": 0.5, "acc_stderr,none": 0.5},
                "tom_intention": {"alias": "tom_intention", "sample_len": 5, "micro_f1,none": 0.5,
                                  "micro_f1_stderr,none": "N/A", "macro_f1,none": 0.4, "macro_f1_stderr,none": "N/A",
                                  "exact_match,none": 0.4, "exact_match_stderr,none": 0.2449},
                "tom": {"alias": "tom", "acc,none": 0.5, "exact_match,none": 0.4}},
    "groups": {"tom": {"alias": "tom", "acc,none": 0.5}},
    "group_subtasks": {"tom": ["tom_belief", "tom_desire", "tom_intention"]},
    "higher_is_better": {"tom_belief": {"acc": True}, "tom_desire": {"acc": True},
                         "tom_intention": {"micro_f1": True, "macro_f1": True, "exact_match": True}},
    "n-samples": {"tom_belief": {"original": 100, "effective": 2}, "tom_desire": {"original": 100, "effective": 2},
                  "tom_intention": {"original": 40, "effective": 5}},
    "config": {"model": "hf", "model_args": "pretrained=org/model-8b", "limit": 5.0},
    "model_name": "org/model-8b",
}).encode()


def _group_files(tasks=("belief", "desire", "intention")) -> list[tuple[str, bytes]]:
    data = {"belief": BELIEF, "desire": DESIRE, "intention": INTENT}
    return [(f"{DIR}/samples_tom_{t}_{T}.jsonl", _lines(data[t])) for t in tasks] + \
        [(f"{DIR}/results_{T}.json", GROUP_RESULTS)]


def _notes(frame) -> list[str]:
    return list(report_of(frame).notes)


# ---------------------------------------------------------------------------------------------------------------
# 1, 2: corpus-level metrics are not the label; one run's tasks are one log, its group their category


def test_corpus_level_metric_is_passed_over_for_the_next_numeric_one():
    files = [(f"{DIR}/samples_tom_intention_{T}.jsonl", _lines(INTENT)), (f"{DIR}/results_{T}.json", GROUP_RESULTS)]
    frame = load_eval_logs(files)
    assert frame["correct"].tolist() == [1.0, 0.0, 0.0, 0.0, 1.0]
    assert frame["correct"].mean() == pytest.approx(0.4)  # the run's own exact_match,none
    assert "micro_f1" not in frame and "macro_f1" not in frame
    notes = _notes(frame)
    assert any("'micro_f1', 'macro_f1' are scored over the whole task" in n and "'exact_match' is." in n
               for n in notes)
    assert any("metric 'exact_match' is the label ('correct')" in n for n in notes)
    assert not any("no value of" in n for n in notes)
    # the run's other two tasks were not given: named, and the given one is not
    missing = [n for n in notes if "task(s) of the run have no samples file" in n]
    assert len(missing) == 1 and "2 task(s)" in missing[0] and "(tom_belief, tom_desire)" in missing[0]


def test_one_runs_tasks_are_one_log_with_their_group_as_category():
    frame = load_eval_logs(_group_files())
    report = report_of(frame)
    assert len(frame) == 9 and set(frame["category"]) == {"tom"}
    assert frame.groupby("task")["correct"].sum().to_dict() == {"tom_belief": 1.0, "tom_desire": 1.0,
                                                               "tom_intention": 2.0}
    assert report.files.count(f"{DIR}/results_{T}.json") == 1 and len(report.files) == 4
    assert not report.warnings  # no "share no example and no task ... Upload them separately"
    assert not any("have no samples file" in n for n in report.notes)
    assert any("the run's group 'tom' (group_subtasks) is the category of its tasks." in n for n in report.notes)


def test_nested_groups_give_the_innermost_group():
    results = json.loads(GROUP_RESULTS)
    results["group_subtasks"] = {"tom_mind": ["tom_belief", "tom_desire"], "tom": ["tom_mind", "tom_intention"]}
    files = _group_files(("belief", "intention"))[:-1] + [(f"{DIR}/results_{T}.json", json.dumps(results).encode())]
    frame = load_eval_logs(files)
    assert frame.groupby("task")["category"].first().to_dict() == {"tom_belief": "tom_mind", "tom_intention": "tom"}


def test_a_task_whose_metrics_are_all_corpus_level_is_refused_naming_them():
    rows = [{k: v for k, v in line.items() if k != "exact_match"} | {"metrics": ["micro_f1", "macro_f1"]}
            for line in INTENT]
    with pytest.raises(EvalDataError, match=rf"samples_tom_intention_{T}\.jsonl: no metric of task 'tom_intention' "
                                            r"can be the label.*'micro_f1', 'macro_f1': scored over the whole task"):
        load_eval_log((f"samples_tom_intention_{T}.jsonl", _lines(rows)))


# ---------------------------------------------------------------------------------------------------------------
# 3: infinite and NaN values apart from missing ones; lower-is-better metrics are not the label


def _graded(doc_id: int, **values) -> dict:
    return {"doc_id": doc_id, "doc": {"question": f"q{doc_id}"}, "target": "1", "resps": [["x"]],
            "filtered_resps": ["x"], "filter": "none", "metrics": list(values), **values}


def test_infinite_nan_and_missing_values_are_counted_apart():
    rows = [_graded(0, rel_score=0.5), _graded(1, rel_score=float("inf")), _graded(2, rel_score=float("nan")),
            _graded(3, rel_score=None), _graded(4, rel_score=0.25), _graded(5, rel_score=float("inf"))]
    frame = load_eval_log((f"samples_reg_{T}.jsonl", _lines(rows)))
    assert frame["score"].tolist() == [0.5, 0.25] and frame["example_id"].tolist() == ["0", "4"]
    notes = _notes(frame)
    assert f"2 of 6 docs of samples_reg_{T}.jsonl were left out: their 'rel_score' is infinite (Infinity), and a " \
           "mean with them would be infinite." in notes
    assert f"1 of 6 docs of samples_reg_{T}.jsonl were left out: their 'rel_score' is NaN (not a number: the tool " \
           "could not compute it)." in notes
    assert f"1 of 6 docs of samples_reg_{T}.jsonl were left out: no value of 'rel_score'." in notes


def test_lower_is_better_metric_declared_in_the_results_file_is_refused_as_the_label():
    rows = [_graded(0, mae=12.5), _graded(1, mae=float("inf")), _graded(2, mae=float("inf"))]
    results = json.dumps({"results": {"tg": {"alias": "tg", "mae,none": float("inf"), "mae_stderr,none": float("nan")}},
                          "higher_is_better": {"tg": {"mae": False}}, "n-samples": {"tg": {"original": 3,
                                                                                           "effective": 3}},
                          "model_name": "gpt-4o-mini"}).encode()
    files = [(f"gpt-4o-mini/samples_tg_{T}.jsonl", _lines(rows)), (f"gpt-4o-mini/results_{T}.json", results)]
    with pytest.raises(EvalDataError, match=rf"samples_tg_{T}\.jsonl: no metric of task 'tg' can be the label of its "
                                            r"docs \('mae' \(higher_is_better: false in the results file; 2 of its 3 "
                                            r"values are infinite\): lower is better, but evalcore's labels"):
        load_eval_logs(files, strict=True)
    # without --strict both files are left out (the results file alone has no accuracy either): nothing to read
    with pytest.raises(EvalDataError, match=r"'mae' \(higher_is_better: false"):
        load_eval_logs(files)


def test_a_higher_is_better_metric_is_preferred_to_a_lower_is_better_one():
    # lambada_openai: metrics [perplexity, acc]; each doc's perplexity value is its log-likelihood
    rows = [_graded(0, perplexity=-0.5, acc=1), _graded(1, perplexity=-4.0, acc=0), _graded(2, perplexity=-1.0, acc=1)]
    frame = load_eval_log((f"samples_lambada_openai_{T}.jsonl", _lines(rows)))  # no results file: the registry
    assert frame["correct"].tolist() == [1.0, 1.0 - 1.0, 1.0] and frame["perplexity"].tolist() == [-0.5, -4.0, -1.0]
    assert any("'perplexity' (lower is better in lm-eval's metric registry): lower is better, but evalcore's correct "
               "and score are higher-is-better: not the label; 'acc' is." in n for n in _notes(frame))
    # a custom metric that the results file declares lower-is-better
    rows = [_graded(0, err_rate=0.2, exact_match=1.0), _graded(1, err_rate=0.9, exact_match=0.0)]
    results = json.dumps({"results": {"qa": {"alias": "qa", "err_rate,none": 0.55, "exact_match,none": 0.5}},
                          "higher_is_better": {"qa": {"err_rate": False, "exact_match": True}},
                          "n-samples": {"qa": {"original": 2, "effective": 2}}, "model_name": "m"}).encode()
    frame = load_eval_logs([(f"r/samples_qa_{T}.jsonl", _lines(rows)), (f"r/results_{T}.json", results)])
    assert frame["correct"].tolist() == [1.0, 0.0]
    assert any("'err_rate' (higher_is_better: false in the results file)" in n for n in _notes(frame))


# ---------------------------------------------------------------------------------------------------------------
# 4: the metric's name decides right/wrong against graded


def test_graded_metric_whose_values_are_all_zero_is_a_score():
    rows = [_graded(i, eqbench=0, percent_parseable=0) for i in range(3)]
    frame = load_eval_log((f"FLOR-760M/samples_eqbench_ca_{T}.jsonl", _lines(rows)))
    assert "correct" not in frame and frame["score"].tolist() == [0.0, 0.0, 0.0]
    assert any("metric 'eqbench' is the label ('score'): it is a graded metric (not right/wrong by lm-eval's "
               "definition), although every value here is 0 or 1." in n for n in _notes(frame))


@pytest.mark.parametrize("metric, values, label", [
    ("acc", [1, 0], "correct"), ("acc_norm", [0.0, 1.0], "correct"), ("exact_match", [1.0, 1.0], "correct"),
    ("em", [0, 1], "correct"), ("contains", [1, 0], "correct"), ("mc1", [1.0, 0.0], "correct"),
    ("pass@1", [1.0, 0.0], "correct"), ("bleu_acc", [1, 0], "correct"),
    ("prompt_level_strict_acc", [True, False], "correct"),
    ("acc", [0.73, 0.2], "score"),          # truthfulqa_mc2 writes the probability of the true answers as 'acc'
    ("bleu_max", [1.0, 0.0], "score"), ("f1", [1.0, 0.0], "score"), ("likelihood", [0.0, 1.0], "score"),
    ("percent_parseable", [0, 0], "score"),
])
def test_label_by_metric_name(metric, values, label):
    rows = [_graded(i, **{metric: v}) for i, v in enumerate(values)]
    frame = load_eval_log((f"samples_t_{T}.jsonl", _lines(rows)))
    assert frame[label].tolist() == [float(v) for v in values]
    assert ("score" if label == "correct" else "correct") not in frame


# ---------------------------------------------------------------------------------------------------------------
# 5: results-only summaries


def _summary_results(**extra) -> bytes:
    doc = {"results": {
        "asdiv_cot": {"alias": "asdiv_cot", "exact_match,strict-match": 0.75, "exact_match_stderr,strict-match": 0.25,
                      "exact_match,flexible-extract": 1.0, "exact_match_stderr,flexible-extract": 0.0},
        "cola": {"alias": "cola", "mcc,none": 0.1, "mcc_stderr,none": 0.03},
        "boolq": {"alias": "boolq", "acc,none": 0.5, "acc_stderr,none": "N/A", "f1,none": 0.6},
        "wiki": {"alias": "wiki", "word_perplexity,none": 1.2, "bits_per_byte,none": 0.3}},
        "group_subtasks": {"asdiv_cot": [], "cola": [], "boolq": [], "wiki": []},
        "higher_is_better": {"asdiv_cot": {"exact_match": True}, "cola": {"mcc": True},
                             "boolq": {"acc": True, "f1": True},
                             "wiki": {"word_perplexity": False, "bits_per_byte": False}},
        "n-samples": {"asdiv_cot": {"original": 2305, "effective": 4}, "cola": {"original": 10, "effective": 10},
                      "boolq": {"original": 2, "effective": 2}, "wiki": {"original": 3, "effective": 3}},
        "config": {"model": "hf", "model_args": "pretrained=meta-llama/Meta-Llama-3-8B-Instruct", "limit": 4.0}}
    doc.update(extra)
    return json.dumps(doc).encode()


def test_summary_names_its_metric_and_filter_keeps_the_stderr_and_notes_the_limit():
    frame = load_eval_log((f"results_{T}.json", _summary_results()))
    assert report_of(frame).kind == "summary"
    rows = frame.set_index("task")
    assert sorted(rows.index) == ["asdiv_cot", "boolq"]
    assert rows.loc["asdiv_cot", ["n", "n_correct"]].tolist() == [4, 3]        # 0.75 x 4 (strict-match)
    assert rows.loc["boolq", ["n", "n_correct"]].tolist() == [2, 1]
    assert rows.loc["asdiv_cot", "se"] == pytest.approx(0.25) and pd_isna(rows.loc["boolq", "se"])  # "N/A": none
    notes = _notes(frame)
    assert f"results_{T}.json: accuracy = 'exact_match,strict-match' (the 'flexible-extract' filter not used) for " \
           "asdiv_cot; 'acc,none' for boolq." in notes
    assert f"results_{T}.json: 'asdiv_cot': n = 4 of the task's 2,305 examples (the run used --limit)." in notes
    left = next(n for n in notes if "task(s) left out" in n)
    assert left.startswith(f"results_{T}.json: 2 task(s) left out")
    assert "cola ('mcc': not an accuracy)" in left
    assert "wiki ('word_perplexity' (lower is better), 'bits_per_byte' (lower is better): not an accuracy)" in left


def pd_isna(value) -> bool:
    import pandas as pd
    return bool(pd.isna(value))


def test_summary_without_limit_has_no_limit_note():
    doc = json.loads(_summary_results())
    doc["n-samples"]["asdiv_cot"]["effective"] = 2305
    doc["config"]["limit"] = None
    frame = load_eval_log((f"results_{T}.json", json.dumps(doc).encode()))
    assert not any("--limit" in n for n in _notes(frame))
    assert frame.set_index("task").loc["asdiv_cot", "n_correct"] == round(0.75 * 2305)


def test_a_results_file_with_no_accuracy_is_refused_naming_its_metrics():
    doc = json.loads(_summary_results())
    doc["results"] = {"cola": doc["results"]["cola"], "wiki": doc["results"]["wiki"]}
    with pytest.raises(EvalDataError, match=rf"results_{T}\.json: no task of the results file has an accuracy-like "
                                            r"metric.*cola \('mcc': not an accuracy\)"):
        load_eval_log((f"results_{T}.json", json.dumps(doc).encode()))


def test_log_notes_the_limit_too():
    frame = load_eval_logs(_group_files(("belief",)))
    assert f"{DIR}/samples_tom_belief_{T}.jsonl: 'tom_belief': n = 2 of the task's 100 examples (the run used " \
           "--limit)." in _notes(frame)


# ---------------------------------------------------------------------------------------------------------------
# 6: results files of older versions (tests/testdata/*-res.json) are recognised and refused saying why

WIKITEXT = json.dumps({"results": {"wikitext": {"bits_per_byte": 3.2e-05, "byte_perplexity": 1.00002,
                                                "word_perplexity": 1.0001}},
                       "versions": {"wikitext": 1}}).encode()


def test_old_perplexity_only_results_file_is_recognised_and_refused_saying_why():
    assert lm_eval.sniff(LogFile("wikitext-v1-res.json", WIKITEXT))
    with pytest.raises(EvalDataError, match=r"wikitext-v1-res\.json: the results file gives no sample count "
                                            r"\('n-samples'.*, and no accuracy-like metric \('bits_per_byte' \(lower "
                                            r"is better\), 'byte_perplexity' \(lower is better\), 'word_perplexity' "
                                            r"\(lower is better\).*re-run with lm-eval >= 0\.4 and --output_path "
                                            r"<folder> --log_samples"):
        load_eval_log(("wikitext-v1-res.json", WIKITEXT))


def test_old_accuracy_results_file_says_what_to_do():
    old = json.dumps({"results": {"anli_r1": {"acc": 0.334, "acc_stderr": 0.0149}}, "versions": {"anli_r1": 0},
                      "config": {"model": "hf-causal", "model_args": "pretrained=gpt2", "limit": None}}).encode()
    with pytest.raises(EvalDataError, match=r"anli_r1-v0-res\.json: .*so its accuracies \(anli_r1\) cannot be a "
                                            r"leaderboard summary\. .*lm-eval >= 0\.4 .*--log_samples"):
        load_eval_log(("anli_r1-v0-res.json", old))


def test_other_json_with_results_is_not_taken_for_an_old_results_file():
    other = json.dumps({"results": {"a": {"note": "text"}}, "versions": {"a": 1}}).encode()
    assert not lm_eval.sniff(LogFile("x.json", other))
    assert not lm_eval.sniff(LogFile("y.json", json.dumps({"results": {"a": {"acc": 1}}}).encode()))


def test_ifeval_prompt_level_booleans_are_correct_and_instruction_lists_are_not_columns():
    # Open LLM Leaderboard ifeval samples: prompt-level booleans, instruction-level lists (aggregated over the task)
    names = ["prompt_level_strict_acc", "inst_level_strict_acc", "prompt_level_loose_acc", "inst_level_loose_acc"]
    rows = [_graded(0, prompt_level_strict_acc=False, inst_level_strict_acc=[True, False],
                    prompt_level_loose_acc=True, inst_level_loose_acc=[True, True]),
            _graded(1, prompt_level_strict_acc=True, inst_level_strict_acc=[True],
                    prompt_level_loose_acc=True, inst_level_loose_acc=[True])]
    for row in rows:
        row["metrics"] = names
    frame = load_eval_log((f"samples_leaderboard_ifeval_{T}.jsonl", _lines(rows)))
    assert frame["correct"].tolist() == [0.0, 1.0] and frame["prompt_level_loose_acc"].tolist() == [1.0, 1.0]
    assert "inst_level_strict_acc" not in frame and "inst_level_loose_acc" not in frame
    assert f"samples_leaderboard_ifeval_{T}.jsonl: 'inst_level_strict_acc', 'inst_level_loose_acc' are scored over " \
           "the whole task (each doc holds a value that is not a number, e.g. a list, which lm-eval aggregates at " \
           "the end): not kept as a column." in _notes(frame)


def test_two_filters_in_a_samples_file_keep_the_first_and_count_the_other():
    # gsm8k: one line per (doc, filter), strict-match first; exact_match 1, 0 under strict-match
    rows = [_graded(0, exact_match=1.0) | {"filter": "strict-match"}, _graded(0, exact_match=1.0) | {"filter": "flex"},
            _graded(1, exact_match=0.0) | {"filter": "strict-match"}, _graded(1, exact_match=1.0) | {"filter": "flex"}]
    frame = load_eval_log((f"samples_gsm8k_{T}.jsonl", _lines(rows)))
    assert frame["correct"].tolist() == [1.0, 0.0]
    assert f"2 of 4 lines of samples_gsm8k_{T}.jsonl were left out: they belong to the filters flex; filter " \
           "'strict-match' is used." in _notes(frame)


def test_a_copy_of_a_samples_file_in_one_upload_is_counted_once():
    files = _group_files(("belief",)) + [(f"{DIR}/copy/samples_tom_belief_{T}.jsonl", _lines(BELIEF))]
    frame = load_eval_logs(files)
    assert len(frame) == 2 and frame["correct"].tolist() == [1.0, 0.0]
