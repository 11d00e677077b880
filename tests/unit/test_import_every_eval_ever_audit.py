"""every_eval_ever: problems an audit found with real EEE files (issue 27), on small fixtures written here in their
shapes (evaleval/every_eval_ever: ``every_eval_ever/schemas/eval.schema.json``; 0.1.0 at commit 7b868b059 and
0.0.1 at ed98720dc ``eval.schema.json``; the repository's data/ files of commits dcb00c1e2, 169e01b87, 76e554d26).

- P1 n is the number of samples scored (uncertainty.num_samples, len(sample_ids), total_rows, inline rows), not the
  dataset's size (source_data.samples_number), which is only a fallback.
- P2 the tool's score stays the accuracy; a note where score x n is not whole; results of one name are told apart by
  metric, split and perturbation, and exact repeats are read once.
- P3 a samples file that holds fewer samples than its aggregate's n, or whose mean is not its score, says so.
- P4 0.0.1 / 0.1.0 aggregates without min_score / max_score: accuracy-named scores in [0, 1] are proportions; their
  inline per-sample rows are read as a log; no advice to upload a ``_samples.jsonl`` those versions never wrote.

Expected values are computed by hand in each test.
"""

from __future__ import annotations

import copy
import json

import pytest

from evalcore.data.validation import EvalDataError, load_eval_logs, report_of
from evalcore.importers import every_eval_ever
from evalcore.importers.base import LogFile


def _notes(frame) -> str:
    return "\n".join(report_of(frame).notes)


def _convert(name: str, doc: dict):
    (imported,) = every_eval_ever.convert([LogFile(name, json.dumps(doc).encode())])
    return imported


def _result(name: str, score: float, source_data: dict | None = None, **config) -> dict:
    result = {"evaluation_name": name,
              "metric_config": {"evaluation_description": "accuracy", "lower_is_better": False,
                                "score_type": "continuous", "min_score": 0.0, "max_score": 1.0, **config},
              "score_details": {"score": score}}
    if source_data is not None:
        result["source_data"] = source_data
    return result


def _v02(*results: dict, **top) -> dict:
    """An aggregate of schema 0.2.0 as EEE's Inspect converter wrote them (commit dcb00c1e2)."""
    return {"schema_version": "0.2.0", "evaluation_id": "ai2_arc/org_m/1", "retrieved_timestamp": "1",
            "source_metadata": {"source_name": "inspect_ai", "source_type": "evaluation_run",
                                "source_organization_name": "unknown", "evaluator_relationship": "third_party"},
            "model_info": {"name": "org/m", "id": "org/m"}, "evaluation_results": list(results), **top}


def _early(version: str, *results: dict, source_data: dict | None = None, samples=None) -> dict:
    """An aggregate of schema 0.0.1 / 0.1.0: top-level source_data, bounds often null, rows inline."""
    doc = {"schema_version": version, "evaluation_id": f"inspect_ai/org/m/ds/{version}", "retrieved_timestamp": "1",
           "source_data": source_data or {"dataset_name": "ai2_arc", "samples_number": 2376,
                                          "sample_ids": [1, 2, 3, 4, 5]},
           "source_metadata": {"source_name": "inspect_ai", "source_type": "evaluation_run",
                               "source_organization_name": "unknown", "evaluator_relationship": "third_party"},
           "model_info": {"name": "org/m", "id": "org/m"}, "evaluation_results": list(results)}
    if samples is not None:
        doc["detailed_evaluation_results_per_samples"] = samples
    return doc


def _unbounded(name: str, score: float, description: str = "accuracy") -> dict:
    """A 0.0.1 result as EEE's Inspect converter wrote it (commit 76e554d26): every bound null."""
    return {"evaluation_name": name, "evaluation_timestamp": "1",
            "metric_config": {"evaluation_description": description, "lower_is_better": False, "score_type": None,
                              "level_names": None, "level_metadata": None, "has_unknown_level": None,
                              "min_score": None, "max_score": None},
            "score_details": {"score": score, "details": None}, "detailed_evaluation_results_url": None}


# ---------------------------------------------------------------------------------------------------------------
# P1: n counts the samples scored


def test_sample_ids_give_n_not_the_datasets_size():
    # ai2_arc run on 5 of 2,376 questions, 4 right: score 0.8, sample_ids [1..5], total_rows 5
    doc = _v02(_result("choice", 0.8, {"source_type": "hf_dataset", "dataset_name": "ai2_arc",
                                       "samples_number": 2376, "sample_ids": [1, 2, 3, 4, 5]}),
               detailed_evaluation_results={"format": "jsonl", "file_path": "x.jsonl", "total_rows": 5})
    frame = load_eval_logs([("arc.json", json.dumps(doc).encode())])
    assert frame[["task", "n", "n_correct"]].values.tolist() == [["choice", 5, 4]]  # 0.8 x 5 = 4
    notes = _notes(frame)
    assert "'choice' (n = 5 of the dataset's 2,376) is the number of samples scored, from the length of " \
           "source_data.sample_ids" in notes


def test_total_rows_gives_n_for_a_one_result_aggregate_only():
    # GAIA: 2 of 165 scored, no sample_ids, total_rows 2, score 0.5 -> n 2, 1 correct
    one = _v02(_result("gaia_scorer", 0.5, {"source_type": "hf_dataset", "dataset_name": "GAIA",
                                            "samples_number": 165}),
               detailed_evaluation_results={"format": "jsonl", "file_path": "x.jsonl", "total_rows": 2})
    frame = load_eval_logs([("gaia.json", json.dumps(one).encode())])
    assert frame[["n", "n_correct"]].values.tolist() == [[2, 1]]
    assert "from detailed_evaluation_results.total_rows" in _notes(frame)
    # two results share the file's 4 rows: total_rows counts neither; the dataset's size (165) is n, with a note
    two = copy.deepcopy(one)
    two["evaluation_results"].append(_result("other", 0.2, {"source_type": "hf_dataset", "dataset_name": "GAIA",
                                                            "samples_number": 165}))
    two["detailed_evaluation_results"]["total_rows"] = 4
    frame = load_eval_logs([("gaia2.json", json.dumps(two).encode())])
    assert frame[["task", "n", "n_correct"]].values.tolist() == [["gaia_scorer", 165, 82], ["other", 165, 33]]
    assert "is the dataset's size (source_data.samples_number)" in _notes(frame)  # 0.5 x 165 = 82.5 -> 82


def test_num_samples_wins_and_nothing_counted_is_refused():
    result = _result("t", 0.5, {"source_type": "hf_dataset", "dataset_name": "d", "sample_ids": [1, 2, 3, 4, 5]})
    result["score_details"]["uncertainty"] = {"num_samples": 4}
    frame = load_eval_logs([("a.json", json.dumps(_v02(result)).encode())])
    assert frame[["n", "n_correct"]].values.tolist() == [[4, 2]]  # num_samples 4, not the 5 sample_ids
    bare = _v02(_result("t", 0.5, {"source_type": "hf_dataset", "dataset_name": "d"}))
    with pytest.raises(EvalDataError, match=r"b\.json: no result .*no sample count .*'t'.*_samples\.jsonl"):
        load_eval_logs([("b.json", json.dumps(bare).encode())])


# ---------------------------------------------------------------------------------------------------------------
# P2: the tool's score, a doubtful n, tasks told apart


def _helm(score: float, split: str, perturbation: str | None, metric: str = "exact_match") -> dict:
    """A result as EEE's HELM converter wrote it in schema 0.1.0 (commit 169e01b87): every result named
    'multiple_choice_joint', the split and perturbation in score_details.details."""
    details = {"count": 1, "sum": score, "mean": score, "split": split,
               "perturbation": None if perturbation is None else
               {"name": perturbation, "robustness": perturbation == "robustness",
                "fairness": perturbation == "fairness", "computed_on": "worst", "seed": None}}
    return {"evaluation_name": "multiple_choice_joint", "evaluation_timestamp": "1",
            "metric_config": {"evaluation_description": metric, "lower_is_better": False, "score_type": "continuous",
                              "min_score": 0.0, "max_score": 1.0},
            "score_details": {"score": score, "details": details}}


def test_helm_results_named_by_metric_split_and_perturbation_and_the_score_kept():
    ninth = 1 / 9  # HELM's test split: 1 of 9 right; the file's sample_ids list 10 (9 test + 1 valid)
    results = [_helm(ninth, "test", None), _helm(ninth, "test", None),  # the converter wrote this one twice
               _helm(0.0, "valid", None), _helm(ninth, "test", "robustness"), _helm(ninth, "test", "fairness"),
               _helm(ninth, "test", None, "quasi_exact_match")]
    doc = _early("0.1.0", *results, source_data={"dataset_name": "mmlu", "samples_number": 10,
                                                 "sample_ids": [f"id{i}" for i in range(10)]})
    imported = _convert("mmlu.json", doc)
    table = imported.frame
    assert table["task"].tolist() == ["multiple_choice_joint (exact_match, test)",
                                      "multiple_choice_joint (exact_match, valid)",
                                      "multiple_choice_joint (exact_match, test, robustness)",
                                      "multiple_choice_joint (exact_match, test, fairness)",
                                      "multiple_choice_joint (quasi_exact_match)"]  # alone: its metric suffices
    assert table["n"].tolist() == [10] * 5
    assert table["accuracy"].tolist() == [ninth, 0.0, ninth, ninth, ninth]  # the tool's scores, as written
    notes = "\n".join(imported.notes)
    assert "1 result was an exact repeat of another (every field alike), read once" in notes
    # 0.1111 x 10 = 1.11 is no whole count; valid's 0 x 10 = 0 is
    assert "'multiple_choice_joint (exact_match, test)' (0.1111 x 10 = 1.11)" in notes
    assert "n looks doubtful" in notes and "(exact_match, valid)' (0" not in notes


@pytest.mark.parametrize("score, n, doubtful", [
    (0.75, 1319, False),   # 989.25: a score of 2 decimals may be 989/1319 = 0.7498... rounded
    (0.333, 3, False),     # 0.999: 1/3 rounded to 3 decimals
    (0.35, 10, True),      # 3.5 correct of 10: 0.35 x 10 is half a sample from a whole count
    (0.4, 10, False),      # 4 of 10
])
def test_doubtful_n_only_beyond_the_scores_rounding(score, n, doubtful):
    result = _result("t", score, {"source_type": "hf_dataset", "dataset_name": "d"})
    result["score_details"]["uncertainty"] = {"num_samples": n}
    notes = "\n".join(_convert("a.json", _v02(result)).notes)
    assert ("n looks doubtful" in notes) is doubtful


# ---------------------------------------------------------------------------------------------------------------
# P3: a samples file beside its aggregate


def _pair(score: float, uncertainty: dict | None, samples: list[tuple[str, float, bool | None]],
          **top) -> list[tuple[str, bytes]]:
    agg = {"schema_version": "0.3.0", "evaluation_id": "ev/1", "retrieved_timestamp": "1",
           "source_metadata": {"source_type": "evaluation_run", "source_organization_name": "x",
                               "evaluator_relationship": "other"},
           "eval_library": {"name": "x", "version": "unknown"}, "model_info": {"name": "m", "id": "org/m"},
           "evaluation_results": [{"evaluation_result_id": "t1", "evaluation_name": "t",
                                   "source_data": {"dataset_name": "t", "source_type": "other"},
                                   "metric_config": {"metric_name": "vqa_score", "lower_is_better": False,
                                                     "score_type": "continuous", "min_score": 0, "max_score": 1},
                                   "score_details": {"score": score, "uncertainty": uncertainty or {}}}], **top}
    lines = [{"schema_version": "0.3.0", "evaluation_id": "ev/1", "evaluation_result_id": "t1", "model_id": "org/m",
              "evaluation_name": "t", "sample_id": sid, "interaction_type": "single_turn",
              "input": {"raw": "q", "reference": ["a"]}, "output": {"raw": ["a"]}, "answer_attribution": [],
              "evaluation": {"score": value, "is_correct": flag}} for sid, value, flag in samples]
    return [("u.json", json.dumps(agg).encode()),
            ("u_samples.jsonl", "\n".join(json.dumps(line) for line in lines).encode())]


def test_a_samples_file_smaller_than_its_aggregate_or_with_another_mean_says_so():
    # 1 sample scored 0.75; the aggregate says 0.55 over 20
    frame = load_eval_logs(_pair(0.55, {"num_samples": 20}, [("s1", 0.75, None)]))
    assert frame["score"].tolist() == [0.75]
    assert ("1 sample of 't', mean 0.75, where the aggregate says 0.55 over 20 (uncertainty.num_samples): "
            "a subset?") in _notes(frame)
    # no n in the aggregate (GenEval example, commit e0e0e14): the mean alone differs
    frame = load_eval_logs(_pair(0.55, None, [("s1", 0.75, None)]))
    assert "1 sample of 't', mean 0.75, where the aggregate says 0.55: a subset, or another run?" in _notes(frame)
    # 4 samples, 3 right (mean 0.75); the aggregate says 0.75 over 4: nothing to say
    frame = load_eval_logs(_pair(0.75, {"num_samples": 4}, [("a", 1.0, True), ("b", 1.0, True), ("c", 0.0, False),
                                                            ("d", 1.0, True)]))
    assert frame["correct"].tolist() == [1.0, 1.0, 0.0, 1.0]
    assert "samples file holds" not in _notes(frame)


def test_a_samples_file_with_fewer_rows_than_total_rows_is_called_cut():
    # total_rows 3 counts the samples file's own rows; it holds 2 (mean 0.5 = the aggregate's 0.5)
    frame = load_eval_logs(_pair(0.5, None, [("a", 1.0, True), ("b", 0.0, False)],
                                 detailed_evaluation_results={"format": "jsonl", "file_path": "u_samples.jsonl",
                                                              "total_rows": 3}))
    assert ("2 samples of 't', mean 0.5, where the aggregate says 0.5 over 3 "
            "(detailed_evaluation_results.total_rows): is the file cut?") in _notes(frame)


# ---------------------------------------------------------------------------------------------------------------
# P4: schema 0.0.1 / 0.1.0


def test_early_aggregate_without_bounds_reads_an_accuracy_as_a_proportion():
    # Inspect's choice scorer, description 'accuracy', bounds null, score 1.0 on 5 sample_ids of 2,376
    frame = load_eval_logs([("arc.json", json.dumps(_early("0.0.1", _unbounded("choice", 1.0))).encode())])
    assert frame[["task", "n", "n_correct"]].values.tolist() == [["choice", 5, 5]]
    notes = _notes(frame)
    assert "metric_config gives no min_score / max_score for 'choice' (1); read as a proportion" in notes
    assert "not bounded by 0 and 1" not in notes


def test_early_aggregate_that_is_no_proportion_says_why_and_never_asks_for_a_samples_file():
    doc = _early("0.0.1", _unbounded("helpfulness", 7.5, "mean rating"))
    with pytest.raises(EvalDataError) as error:
        load_eval_logs([("rating.json", json.dumps(doc).encode())])
    message = str(error.value)
    assert "no min_score / max_score in metric_config" in message and "'helpfulness'" in message
    assert "_samples.jsonl" not in message
    assert "keeps the per-sample rows inside the aggregate, in 'detailed_evaluation_results_per_samples'; this " \
           "file holds none" in message
    doc["detailed_evaluation_results_per_samples"] = "https://example.invalid/rows.json"
    with pytest.raises(EvalDataError, match=r"links them elsewhere \('https://example\.invalid/rows\.json'\)"):
        load_eval_logs([("rating.json", json.dumps(doc).encode())])


def test_early_aggregate_inline_rows_are_a_log():
    samples = [
        {"sample_id": "1", "input": "Which is a fruit?", "prompt": None, "ground_truth": "A", "response": "A",
         "choices": ["apple", "stone"], "full_logprobs": None},
        {"sample_id": "2", "input": "Which is a stone?", "prompt": None, "ground_truth": "B", "response": "A",
         "choices": ["apple", "granite"], "full_logprobs": None},
        {"sample_id": "3", "input": "2 + 2?", "ground_truth": ["C"], "response": " C ",
         "choices": [["A", "3"], ["B", "5"], ["C", "4"]]},
        {"sample_id": "4", "input": "unanswered", "ground_truth": "A", "response": None},
    ]
    doc = _early("0.0.1", _unbounded("choice", 1.0), samples=samples)
    frame = load_eval_logs([("arc.json", json.dumps(doc).encode())])
    assert report_of(frame).kind == "log"
    # 1: A = A right; 2: A for B wrong; 3: " C " trimmed = C right; 4: no response, left out
    assert frame[["model", "task", "example_id", "correct"]].values.tolist() == [
        ["org/m", "ai2_arc", "1", 1.0], ["org/m", "ai2_arc", "2", 0.0], ["org/m", "ai2_arc", "3", 1.0]]
    assert frame["input"].tolist() == ["Which is a fruit?\n\nA) apple\nB) stone",
                                       "Which is a stone?\n\nA) apple\nB) granite", "2 + 2?\n\nA) 3\nB) 5\nC) 4"]
    assert frame["target"].tolist() == ["A", "B", "C"] and frame["output"].tolist() == ["A", "A", " C "]
    notes = _notes(frame)
    assert "Schema 0.0.1 stores no per-sample score: 'correct' is whether the response equals a ground_truth" in notes
    assert "1 of 4 inline samples of arc.json were left out: no ground_truth or no response to compare" in notes
    # mean 2/3 = 0.6667 against the aggregate's 1.0
    assert "the 3 inline samples' exact-match mean is 0.6667; the aggregate's results say 1 (1 result, e.g. " \
           "'choice')" in notes
    assert "the run scored 3 of the dataset's 2,376 samples" in notes


def test_early_inline_rows_that_agree_with_the_aggregate_have_no_mismatch_note():
    samples = [{"sample_id": str(i), "input": "q", "ground_truth": "A", "response": r} for i, r in
               enumerate("AAB")]  # 2 of 3 right = 0.6667, the result says 0.6667
    doc = _early("0.1.0", _result("choice", 0.6667), samples=samples)
    frame = load_eval_logs([("a.json", json.dumps(doc).encode())])
    assert frame["correct"].tolist() == [1.0, 1.0, 0.0]
    assert "exact-match mean" not in _notes(frame)


def test_early_inline_rows_of_a_graded_metric_are_not_labelled_by_exact_match():
    # a 0.1.0 aggregate whose only result is F1: the rows hold no score, exact match is not what F1 counts
    samples = [{"sample_id": "1", "input": "q", "ground_truth": "the cat", "response": "a cat"}]
    doc = _early("0.1.0", _result("narrative_qa", 0.5, evaluation_description="f1_score"), samples=samples)
    with pytest.raises(EvalDataError) as error:
        load_eval_logs([("nqa.json", json.dumps(doc).encode())])
    assert "a graded metric: 'narrative_qa'" in str(error.value)
    assert "its rows there carry no score" in str(error.value) and "_samples.jsonl" not in str(error.value)


def test_an_aggregate_beside_an_early_inline_log_is_left_out_with_a_note():
    inline = _early("0.0.1", _unbounded("choice", 1.0),
                    samples=[{"sample_id": "1", "input": "q", "ground_truth": "A", "response": "A"}])
    other = _early("0.0.1", _unbounded("choice", 0.5))
    other["evaluation_id"] = "other/run"
    frame = load_eval_logs([("a.json", json.dumps(inline).encode()), ("b.json", json.dumps(other).encode())])
    assert frame["correct"].tolist() == [1.0]
    assert "1 every_eval_ever aggregate file(s) were left out: 'b.json'; they hold no per-sample rows of their " \
           "own" in _notes(frame)


def test_early_inline_rows_without_responses_leave_a_summary_counted_by_its_rows():
    # two inline rows without a response: no label; the one result (score 0.5) counts the 2 rows: 1 of 2
    samples = [{"sample_id": "1", "input": "q1"}, {"sample_id": "2", "input": "q2"}]
    doc = _early("0.0.1", _unbounded("choice", 0.5), source_data={"dataset_name": "d"}, samples=samples)
    frame = load_eval_logs([("a.json", json.dumps(doc).encode())])
    assert frame[["task", "n", "n_correct"]].values.tolist() == [["choice", 2, 1]]
    notes = _notes(frame)
    assert "its 2 inline per-sample rows (detailed_evaluation_results_per_samples) carry no score" in notes
    assert "from the rows of detailed_evaluation_results_per_samples" in notes


def test_an_inline_row_without_sample_id_is_named():
    doc = _early("0.1.0", _unbounded("choice", 1.0),
                 samples=[{"sample_id": "1", "ground_truth": "A", "response": "A"}, {"ground_truth": "A"}])
    with pytest.raises(EvalDataError, match=r"a\.json: detailed_evaluation_results_per_samples row 2 has no "
                                            r"'sample_id'"):
        load_eval_logs([("a.json", json.dumps(doc).encode())])
