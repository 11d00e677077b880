"""every_eval_ever aggregates and per-sample files (evalcore.importers.every_eval_ever).

Fixtures: tests/data/ecosystem27/every_eval_ever/ — ``real/`` holds files of the EEE repository (MIT, see SOURCE.md);
``gsm8k_run/`` and ``other/`` were written in the documented shapes. Expected values are read off the fixtures by
hand (see each test).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from crafted import mutated

from evalcore.data.validation import EvalDataError, load_eval_logs, report_of
from evalcore.importers import every_eval_ever
from evalcore.importers.base import LogFile

DATA = Path(__file__).resolve().parents[1] / "data" / "ecosystem27" / "every_eval_ever"
RUN = DATA / "gsm8k_run"
UUID = "5e0c7a4e-1111-4a2b-9c3d-000000000001"
DEMO = "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40"


def _notes(frame) -> str:
    return "\n".join(report_of(frame).notes)


def _by_id(frame, column: str) -> dict:
    return {e: (None if isinstance(v, float) and math.isnan(v) else v)
            for e, v in zip(frame["example_id"], frame[column])}


def _row(sample_id: str, score, is_correct, name: str = "t", result_id: str | None = None, **extra) -> dict:
    row = {"schema_version": "0.3.0", "evaluation_id": "e/m/1", "model_id": "org/m", "evaluation_name": name,
           "sample_id": sample_id, "interaction_type": "single_turn", "input": {"raw": "q", "reference": ["a"]},
           "output": {"raw": ["a"]}, "answer_attribution": [], "evaluation": {"score": score, "is_correct": is_correct}}
    if result_id is not None:
        row["evaluation_result_id"] = result_id
    row.update(extra)
    return row


def _jsonl(*rows: dict) -> bytes:
    return "\n".join(json.dumps(r) for r in rows).encode()


def _aggregate(config: dict, score: float = 0.5, name: str = "t", uncertainty: dict | None = None) -> bytes:
    return json.dumps({
        "schema_version": "0.3.0", "evaluation_id": "e/m/1", "retrieved_timestamp": "1",
        "source_metadata": {"source_type": "evaluation_run", "source_organization_name": "x",
                            "evaluator_relationship": "other"},
        "eval_library": {"name": "x", "version": "unknown"},
        "model_info": {"name": "m", "id": "org/m", "additional_details": {}},
        "evaluation_results": [{"evaluation_name": name, "source_data": {"dataset_name": name, "source_type": "other"},
                                "metric_config": {"lower_is_better": False, **config},
                                "score_details": {"score": score, "uncertainty": uncertainty or {}}}]}).encode()


# ---------------------------------------------------------------------------------------------------------------
# real files of the EEE repository


def test_real_pair_is_one_log_with_its_text():
    frame = load_eval_logs([DATA / "real" / f"{DEMO}.json", DATA / "real" / f"{DEMO}_samples.jsonl"])
    # the one line: sample demo_0001 of demo-org/demo-model, score 1.0, is_correct true
    assert frame[["model", "task", "example_id", "correct"]].values.tolist() == [
        ["demo-org/demo-model", "demo-source.demo_bench", "demo_0001", 1.0]]
    assert frame[["input", "target", "output"]].values.tolist() == [["What is 2 + 2?", "4", "The answer is 4."]]
    assert "paired with its aggregate" in _notes(frame)
    assert report_of(frame).kind == "log"


def test_real_aggregate_without_sample_counts_is_refused_naming_its_results():
    # HF Open LLM v2 aggregate (schema 0.2.0): six results, none with num_samples / samples_number
    with pytest.raises(EvalDataError, match=r"98ea850e-7019-4728-a558-8b1819ec47c2\.json: no result .*\(no sample "
                                            r"count .*'IFEval', 'BBH'") as error:
        load_eval_logs([DATA / "real" / "98ea850e-7019-4728-a558-8b1819ec47c2.json"])
    assert "_samples.jsonl" in str(error.value)  # says what to upload instead


# ---------------------------------------------------------------------------------------------------------------
# aggregates as summaries


def test_aggregate_summary_scales_counts_and_leaves_out_what_is_not_a_proportion():
    frame = load_eval_logs([RUN / f"{UUID}.json"])
    assert report_of(frame).kind == "summary"
    rows = {t: (n, k, se) for t, n, k, se in frame[["task", "n", "n_correct", "se"]].itertuples(index=False)}
    # gsm8k: 0.75 x 1319 = 989.25 -> 989, se 0.0119; mmlu: 62.5 % of 400 = 250, se 1.25 % -> 0.0125;
    # helpfulness (LLM judge): 0.55 x 80 = 44, se 0.05; ifeval: n = samples_number 541, 0.45 x 541 = 243.45 -> 243
    assert set(rows) == {"gsm8k", "mmlu", "helpfulness", "ifeval"}
    assert rows["gsm8k"][:2] == (1319, 989) and rows["gsm8k"][2] == pytest.approx(0.0119)
    assert rows["mmlu"][:2] == (400, 250) and rows["mmlu"][2] == pytest.approx(0.0125)
    assert rows["helpfulness"][:2] == (80, 44) and rows["helpfulness"][2] == pytest.approx(0.05)
    assert rows["ifeval"][:2] == (541, 243) and math.isnan(rows["ifeval"][2])
    assert set(frame["model"]) == {"meta-llama/Llama-3.1-8B-Instruct"}
    notes = _notes(frame)
    assert "3 of 7 results of" in notes
    assert "a graded metric: 'truthfulqa'" in notes and "lower is better: 'wikitext'" in notes
    assert "no sample count (uncertainty.num_samples, source_data.sample_ids or source_data.samples_number): 'bbh'" \
        in notes
    assert "'helpfulness' (openai/gpt-4o) is an LLM judge's verdict" in notes
    assert "'ifeval' (n = 541) is the dataset's size (source_data.samples_number)" in notes


def test_pre_0_2_aggregate_reads_its_top_level_source_data():
    # schema 0.0.1: evaluation_source, top-level source_data.samples_number 1000, score 0.371 -> 371 of 1000
    frame = load_eval_logs([DATA / "other" / "pythia_hellaswag_v001.json"])
    assert frame[["model", "task", "n", "n_correct"]].values.tolist() == [["EleutherAI/pythia-1b", "hellaswag", 1000,
                                                                           371]]


@pytest.mark.parametrize("config, why", [
    ({"score_type": "levels", "level_names": ["a"], "has_unknown_level": False}, "scored in levels"),
    ({"score_type": "continuous", "min_score": 0, "max_score": 10}, "not bounded by 0 and 1"),
    ({"score_type": "continuous", "min_score": 0, "max_score": 1, "metric_kind": "f1"}, "a graded metric"),
])
def test_results_that_are_not_proportions_cannot_be_summary_rows(config, why):
    with pytest.raises(EvalDataError, match=why):
        load_eval_logs([("agg.json", _aggregate(config, uncertainty={"num_samples": 10}))])


def test_percent_unit_without_bounds_is_scaled():
    # metric_unit percent, no bounds: 40 % of 50 = 20, se 2 % -> 0.02
    frame = load_eval_logs([("agg.json", _aggregate({"metric_unit": "percent"}, score=40.0,
                                                    uncertainty={"num_samples": 50, "standard_error": {"value": 2}}))])
    assert frame[["n", "n_correct"]].values.tolist() == [[50, 20]]
    assert frame["se"].tolist() == pytest.approx([0.02])


# ---------------------------------------------------------------------------------------------------------------
# per-sample files as logs


def test_pair_gives_a_log_with_labels_text_and_judge_note():
    frame = load_eval_logs([RUN])  # the run folder: aggregate + its _samples.jsonl
    assert report_of(frame).kind == "log" and len(frame) == 7
    gsm = frame[frame["task"] == "gsm8k"]
    help_ = frame[frame["task"] == "helpfulness"]
    # gsm8k: is_correct true, false, true, false (errored), true (multi-turn); helpfulness: graded 0.8, 0.3
    assert _by_id(gsm, "correct") == {"gsm8k_0001": 1.0, "gsm8k_0002": 0.0, "gsm8k_0003": 1.0, "gsm8k_0004": 0.0,
                                      "gsm8k_0005": 1.0}
    assert _by_id(help_, "score") == {"help_01": 0.8, "help_02": 0.3}
    assert gsm["score"].isna().all() and help_["correct"].isna().all()
    assert _by_id(frame, "target")["gsm8k_0002"] == "9\nnine"          # reference list joined
    assert _by_id(frame, "output")["gsm8k_0003"] == "It takes 5 hours.\n5"  # output.raw list joined
    assert _by_id(frame, "output")["gsm8k_0005"] == "16"                 # multi-turn: the last assistant message
    assert _by_id(frame, "input")["gsm8k_0005"] == "How many legs do 2 spiders have?"
    assert _by_id(frame, "explanation") == {**{f"gsm8k_000{i}": None for i in range(1, 6)},
                                            "help_01": "Vivid imagery, correct form.", "help_02": None}
    notes = _notes(frame)
    assert "paired with its aggregate" in notes
    assert "'helpfulness' (judge: openai/gpt-4o) comes from an LLM judge" in notes
    assert "1 sample carries an error message" in notes
    assert set(report_of(frame).files) == {f"gsm8k_run/{UUID}.json", f"gsm8k_run/{UUID}_samples.jsonl"}


def test_samples_file_alone_chooses_the_label_from_its_scores():
    frame = load_eval_logs([RUN / f"{UUID}_samples.jsonl"])
    assert _by_id(frame[frame["task"] == "gsm8k"], "correct") == {"gsm8k_0001": 1.0, "gsm8k_0002": 0.0,
                                                                  "gsm8k_0003": 1.0, "gsm8k_0004": 0.0,
                                                                  "gsm8k_0005": 1.0}
    assert _by_id(frame[frame["task"] == "helpfulness"], "score") == {"help_01": 0.8, "help_02": 0.3}
    notes = _notes(frame)
    assert "no aggregate given" in notes
    assert "'helpfulness' (answer extracted by an LLM judge)" in notes  # answer_attribution llm_judge


def test_score_type_of_the_paired_aggregate_decides_the_label():
    rows = _jsonl(_row("s1", 1.0, True), _row("s2", 0.0, False))
    levels = load_eval_logs([("a.json", _aggregate({"score_type": "levels", "level_names": ["no", "yes"],
                                                    "has_unknown_level": False})), ("a_samples.jsonl", rows)])
    assert "correct" not in levels and levels["score"].tolist() == [1.0, 0.0]  # levels: never 'correct'
    # binary: is_correct is the label even where the score says otherwise (s2: score 0.4, is_correct true)
    binary = load_eval_logs([("a.json", _aggregate({"score_type": "binary"})),
                             ("a_samples.jsonl", _jsonl(_row("s1", 1.0, True), _row("s2", 0.4, True)))])
    assert binary["correct"].tolist() == [1.0, 1.0] and "score" not in binary


def test_0_1_scores_that_disagree_with_is_correct_stay_scores():
    frame = load_eval_logs([("x_samples.jsonl", _jsonl(_row("s1", 1.0, True), _row("s2", 0.0, True)))])
    assert "correct" not in frame and frame["score"].tolist() == [1.0, 0.0]


def test_early_draft_samples_metrics_interactions_and_strings():
    frame = load_eval_logs([DATA / "other" / "draft_arc_samples.jsonl"])
    # metrics.score true / false / 1 with is_correct true / false / true
    assert _by_id(frame, "correct") == {"arc_1": 1.0, "arc_2": 0.0, "arc_3": 1.0}
    assert _by_id(frame, "target") == {"arc_1": "whale", "arc_2": "iron", "arc_3": "Mars"}
    assert _by_id(frame, "output") == {"arc_1": "whale", "arc_2": "wood", "arc_3": "Mars"}  # arc_3 from interactions
    assert set(frame["model"]) == {"Qwen/Qwen2.5-7B"} and set(frame["task"]) == {"arc_easy"}


def test_aggregate_of_another_run_is_not_paired_and_is_left_out_with_notes():
    folder = DATA / "other"
    frame = load_eval_logs([folder / "77aa0000-2222-4b3c-8d4e-000000000002.json",
                            folder / "77aa0000-2222-4b3c-8d4e-000000000002_samples.jsonl"])
    assert _by_id(frame, "correct") == {"gsm8k_0001": 1.0, "gsm8k_0002": 0.0}
    notes = _notes(frame)
    assert "was not paired with 77aa0000-2222-4b3c-8d4e-000000000002.json: their evaluation_id differ" in notes
    assert "1 every_eval_ever aggregate file(s) were left out: '77aa0000-2222-4b3c-8d4e-000000000002.json'" in notes


def test_repeated_samples_are_numbered_and_several_results_per_name_are_tasks():
    rows = _jsonl(_row("s1", 1.0, True, result_id="t.em"), _row("s1", 0.0, False, result_id="t.em"),
                  _row("s1", 0.25, True, result_id="t.f1"))
    frame = load_eval_logs([("r_samples.jsonl", rows)])
    em = frame[frame["task"] == "t.em"]
    assert em["correct"].tolist() == [1.0, 0.0] and sorted(em["repeat"].astype(str)) == ["1", "2"]
    assert frame.loc[frame["task"] == "t.f1", "score"].tolist() == [0.25]
    assert "each result is a task of its own" in _notes(frame)


# ---------------------------------------------------------------------------------------------------------------
# detection and bad input


def test_sniff_claims_both_shapes_and_nothing_else(shared_data: Path):
    assert every_eval_ever.sniff(LogFile("a.json", (RUN / f"{UUID}.json").read_bytes()))
    assert every_eval_ever.sniff(LogFile("a.jsonl", (RUN / f"{UUID}_samples.jsonl").read_bytes()))
    index_line = b'{"benchmark":"MMLU-Pro","eval_schema_version":"0.2.2","record_type":"aggregate"}'
    assert not every_eval_ever.sniff(LogFile("aggregate.jsonl", index_line))  # the datastore's index, not a log
    for path in (shared_data / "ecosystem").rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl"):
            assert not every_eval_ever.sniff(LogFile(path.name, path.read_bytes())), path.name


def test_bad_lines_and_missing_fields_name_the_file_and_line():
    with pytest.raises(EvalDataError, match=r"bad_samples\.jsonl, line 2: not a JSON object"):
        every_eval_ever.convert([LogFile("bad_samples.jsonl", _jsonl(_row("s1", 1.0, True)) + b"\n[1, 2]")])
    no_eval = _row("s2", 1.0, True)
    del no_eval["evaluation"]
    with pytest.raises(EvalDataError, match=r"x_samples\.jsonl, line 2: the field 'evaluation'"):
        every_eval_ever.convert([LogFile("x_samples.jsonl", _jsonl(_row("s1", 1.0, True), no_eval))])
    with pytest.raises(EvalDataError, match=r"agg\.json: the field 'evaluation_results' is missing"):
        every_eval_ever.convert([LogFile("agg.json", b'{"schema_version": "0.3.0", "evaluation_id": "x", '
                                                     b'"model_info": {"id": "m"}}')])
    with pytest.raises(EvalDataError, match=r"cut\.json: not valid JSON"):
        load_eval_logs([("cut.json", _aggregate({"score_type": "binary"})[:200])])


def test_alike_result_names_become_distinct_tasks_and_out_of_bounds_scores_are_left_out():
    doc = json.loads(_aggregate({"score_type": "continuous", "min_score": 0, "max_score": 1, "metric_name": "acc"},
                                score=0.5, uncertainty={"num_samples": 10}))
    first = doc["evaluation_results"][0]
    doc["evaluation_results"] = [first, json.loads(json.dumps(first)), json.loads(json.dumps(first))]
    doc["evaluation_results"][1]["score_details"]["score"] = 0.7
    doc["evaluation_results"][2]["score_details"]["score"] = 1.5  # above max_score 1
    frame = load_eval_logs([("agg.json", json.dumps(doc).encode())])
    # 't' three times with one metric name: 't (acc) #1' 0.5 x 10 = 5, 't (acc) #2' 0.7 x 10 = 7; #3 left out
    assert frame[["task", "n_correct"]].values.tolist() == [["t (acc) #1", 5], ["t (acc) #2", 7]]
    assert "a score outside its bounds: 't (acc) #3'" in _notes(frame)


def test_converter_style_results_named_only_by_their_description():
    # EEE's lm-eval converter: metric named only in evaluation_description, acc and acc_norm under one name;
    # EEE's HELM converter: every core metric bounded 0..1, "rouge_l" among them
    def result(name, description, score, n):
        return {"evaluation_name": name, "source_data": {"dataset_name": name, "source_type": "other"},
                "metric_config": {"evaluation_description": description, "lower_is_better": False,
                                  "score_type": "continuous", "min_score": 0.0, "max_score": 1.0},
                "score_details": {"score": score, "uncertainty": {"num_samples": n}}}
    doc = json.loads(_aggregate({"score_type": "binary"}))
    doc["evaluation_results"] = [result("hellaswag", "acc", 0.5, 100), result("hellaswag", "acc_norm", 0.6, 100),
                                 result("drop", "f1", 0.3, 50), result("rouge_l on narrative_qa", "rouge_l", 0.4, 20),
                                 result("exact_match on mmlu", "exact_match", 0.25, 20)]
    frame = load_eval_logs([("agg.json", json.dumps(doc).encode())])
    # kept: 0.5 x 100 = 50, 0.6 x 100 = 60, 0.25 x 20 = 5; left out: f1 and rouge_l (graded)
    assert frame[["task", "n_correct"]].values.tolist() == [["hellaswag (acc)", 50], ["hellaswag (acc_norm)", 60],
                                                            ["exact_match on mmlu", 5]]
    assert "a graded metric: 'drop', 'rouge_l on narrative_qa'" in _notes(frame)


CONVERTED = DATA / "real" / "lm_eval_converter"


def test_eee_lm_eval_converter_output_agrees_with_the_lm_eval_importer(shared_data: Path):
    frame = load_eval_logs([CONVERTED / "e1097d25-6439-4204-a1af-74cf8a994783.json",
                            CONVERTED / "e1097d25-6439-4204-a1af-74cf8a994783_samples.jsonl"])
    model = "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1"
    # the 10 samples: none exact-matched (score 0.0, is_correct false); sample 2's reference is \dfrac{13}{9}
    assert frame[["model", "task"]].drop_duplicates().values.tolist() == [[model, "math_perturbed_full"]]
    assert _by_id(frame, "correct") == {str(i): 0.0 for i in range(10)}
    assert _by_id(frame, "target")["2"] == "\\dfrac{13}{9}"
    assert _by_id(frame, "input")["0"].startswith("Problem: How many vertical asymptotes")
    assert ("10 samples of 'math_perturbed_full', mean 0, where the aggregate says 0 over 5,000 "
            "(uncertainty.num_samples): a subset?") in _notes(frame)
    original = shared_data / "ecosystem" / "lm_eval"
    if original.is_dir():  # the same run read from lm-eval's own files
        direct = load_eval_logs([original])
        assert dict(zip(direct["example_id"], direct["correct"])) == dict(zip(frame["example_id"], frame["correct"]))


def test_eee_lm_eval_converter_aggregates_as_a_summary():
    frame = load_eval_logs(sorted(CONVERTED.glob("*.json")))
    # exact_match 0.0 and 0.0004 of num_samples 5000 -> 0 and 2 correct; standard errors 0.0 and 0.000283 (bootstrap)
    frame = frame.sort_values("task")
    assert frame[["task", "n", "n_correct"]].values.tolist() == [["math_perturbed_full", 5000, 0],
                                                                ["math_rephrased_full", 5000, 2]]
    assert frame["se"].round(6).tolist() == [0.0, 0.000283]


def test_eee_inspect_converter_output_pairs_by_name_and_shows_the_choices(shared_data: Path):
    frame = load_eval_logs([DATA / "real" / "inspect_converter"])
    # 3 ARC-Easy samples: answers A (right), D (B expected), A (D expected); the aggregate's one result is named
    # "accuracy on arc_easy for scorer choice", the samples' evaluation_name "arc_easy"
    assert frame[["model", "task"]].drop_duplicates().values.tolist() == [["ollama/qwen2.5-0.5b", "arc_easy"]]
    assert _by_id(frame, "correct") == {"1": 1.0, "2": 0.0, "3": 0.0}
    assert _by_id(frame, "target") == {"1": "A", "2": "B", "3": "D"}
    assert _by_id(frame, "output") == {"1": "A", "2": "D", "3": "A"}
    assert _by_id(frame, "input")["2"] == ("Which piece of safety equipment is used to keep mold spores from "
                                            "entering the respiratory system?\n\nA) safety goggles\nB) breathing "
                                            "mask\nC) rubber gloves\nD) lead apron")
    original = shared_data / "ecosystem" / "inspect_ai" / "data_arc_qwen.json"
    if original.is_file():  # the same run read by the Inspect importer
        direct = load_eval_logs([original])
        assert dict(zip(direct["example_id"], direct["correct"])) == dict(zip(frame["example_id"], frame["correct"]))


def test_damaged_values_give_a_message_never_a_traceback():
    import random
    rng = random.Random(27)
    aggregate = (RUN / f"{UUID}.json").read_text()
    samples = (RUN / f"{UUID}_samples.jsonl").read_text().splitlines()
    for _ in range(80):
        doc = mutated(json.loads(aggregate), rng)
        lines = [json.loads(line) for line in samples]
        line = rng.randrange(len(lines))
        lines[line] = mutated(lines[line], rng)
        for sources in ([("a.json", json.dumps(doc).encode())],
                        [("a.json", json.dumps(doc).encode()), ("a_samples.jsonl", _jsonl(*lines))]):
            try:
                load_eval_logs(sources)
            except EvalDataError:
                pass
