"""lighteval details Parquet and results JSON (evalcore.importers.lighteval), from files written here in the shapes of
huggingface/lighteval ``src/lighteval/logging/evaluation_tracker.py`` and ``info_loggers.py`` (<= v0.10 flat columns,
>= v0.11 ``doc`` / ``model_response`` / ``metric`` structs; /work/notes/formats27.md section 4)."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalcore.data  # noqa: F401 - evalcore.data first (evalcore.importers imports it back)
from evalcore.data.limits import ReadLimits
from evalcore.data.validation import EvalDataError, load_eval_logs, report_of
from evalcore.importers import lighteval
from evalcore.importers.base import LogFile
from evalcore.importers.detect import tool_of

STAMP = "2025-11-05T14-43-47.148527"
MODEL = "HuggingFaceTB/SmolLM2-1.7B-Instruct"
TASK = "leaderboard|arc:challenge|25"
RESULTS = f"out/results/{MODEL}/results_{STAMP}.json"
DETAILS = f"out/details/{MODEL}/{STAMP}/details_{TASK}_{STAMP}.parquet"


def _parquet(rows: list[dict], schema: pa.Schema | None = None) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), buffer)
    return buffer.getvalue()


def _results(metrics: dict | None = None, docs: int | None = 2, task: str = TASK) -> bytes:
    metrics = metrics or {"acc": 0.5, "acc_stderr": 0.5, "acc_norm": 0.5, "acc_norm_stderr": 0.5}
    config = {"name": "arc:challenge", "hf_repo": "ai2_arc", "metric": [{"metric_name": "acc"}],
              "original_num_docs": 1172}
    if docs is not None:
        config["effective_num_docs"] = docs
    return json.dumps({
        "config_general": {"lighteval_sha": "203045a", "num_fewshot_seeds": 1, "model_name": MODEL, "model_sha": "",
                           "total_evaluation_time_secondes": "24.75"},
        "results": {task: metrics, "all": metrics}, "versions": {task: 0},
        "config_tasks": {task.rsplit("|", 1)[0]: config}, "summary_tasks": {}, "summary_general": {}},
        indent=2).encode()


def _old_rows() -> list[dict]:
    """The two rows of the <= v0.10 schema in formats27.md: per choice a log-likelihood."""
    return [{"choices": [" A", " B", " C", " D"], "example": "Which gas do plants absorb?\nAnswer:",
             "full_prompt": "<25 shots>...Which gas do plants absorb?\nAnswer:", "gold": [" B"], "gold_index": [1],
             "instruction": "", "metrics": {"acc": 1.0, "acc_norm": 1.0}, "predictions": [-2.3, -0.4, -3.1, -4.0]},
            {"choices": [" A", " B", " C", " D"], "example": "What is H2O?\nAnswer:", "full_prompt": "...",
             "gold": [" B"], "gold_index": [1], "instruction": "", "metrics": {"acc": 0.0, "acc_norm": 0.0},
             "predictions": [-0.2, -1.9, -3.0, -3.3]}]


def _new_rows(prefix: str = "") -> list[dict]:
    """Two rows of the >= v0.11 schema (doc, model_response, metric)."""
    def row(ident, query, answer, em):
        return {f"{prefix}doc{prefix}": {"query": query, "choices": ["4"] if ident == "17" else ["6"], "gold_index": 0,
                                 "id": ident, "task_name": "gsm8k", "instruction": None},
                f"{prefix}metric{prefix}": {"em": em},
                f"{prefix}model_response{prefix}": {"input": "Few shots...\n" + query, "text": [answer],
                                                    "logprobs": []}}
    return [row("17", "Question: 2+2?\nAnswer:", " 4", 1.0), row("18", "Question: 3+3?\nAnswer:", " 5", 0.0)]


def test_old_schema_with_its_results_file():
    frame = load_eval_logs([(RESULTS, _results()), (DETAILS, _parquet(_old_rows()))], min_models=1)
    assert report_of(frame).kind == "log"
    assert list(frame["model"]) == [MODEL, MODEL] and list(frame["task"]) == [TASK, TASK]
    assert list(frame["example_id"]) == ["0", "1"] and list(frame["correct"]) == [1.0, 0.0]
    assert list(frame["input"]) == ["Which gas do plants absorb?\nAnswer:", "What is H2O?\nAnswer:"]
    assert list(frame["target"]) == [" B", " B"]
    assert list(frame["output"]) == [" B", " A"]  # the choice with the highest log-likelihood: -0.4, then -0.2
    notes = " ".join(report_of(frame).notes)
    assert "metric 'acc' is the label ('correct'): the task's first metric in " + RESULTS in notes
    assert "the row's position in the file" in notes


def test_v03_text_columns():
    """v0.3 wrote every column as str(value) when pyarrow failed: a Python repr, with (log-likelihood, is_greedy)."""
    rows = [{"example": "Q1", "full_prompt": "Q1", "gold": "[' B']", "choices": "[' A', ' B']",
             "gold_index": "[1]", "metrics": "{'acc': 0.0, 'acc_norm': 1.0}",
             "predictions": "[(-0.1, True), (-2.5, False)]", "specifics": "{}"}]
    frame = load_eval_logs([(DETAILS, _parquet(rows))], min_models=1)
    assert frame["model"].iloc[0] == MODEL  # from the folder details/<org>/<model>/<time>/
    assert frame["correct"].iloc[0] == 0.0 and frame["output"].iloc[0] == " A" and frame["target"].iloc[0] == " B"
    assert "no results file of this run" in " ".join(report_of(frame).notes)


@pytest.mark.parametrize("prefix", ["", "__"])
def test_new_schema_without_results(prefix):
    name = f"details/openai__gpt-x/{STAMP}/details_gsm8k|0_{STAMP}.parquet"
    frame = load_eval_logs([(name, _parquet(_new_rows(prefix)))], min_models=1)
    assert list(frame["model"]) == ["openai/gpt-x"] * 2 and list(frame["task"]) == ["gsm8k|0"] * 2
    assert list(frame["example_id"]) == ["17", "18"] and list(frame["correct"]) == [1.0, 0.0]
    assert list(frame["input"]) == ["Question: 2+2?\nAnswer:", "Question: 3+3?\nAnswer:"]
    assert list(frame["target"]) == ["4", "6"] and list(frame["output"]) == [" 4", " 5"]
    assert "metric 'em' is the label ('correct'): the first numeric metric of the rows" in " ".join(
        report_of(frame).notes)


def test_main_metric_is_the_first_the_rows_hold_and_continuous_values_are_scores():
    """The results list f1 first, but rows hold only bleu and em: bleu (continuous) is the score; judge text kept."""
    rows = [{"doc": {"query": "q", "choices": ["a"], "gold_index": 0, "id": str(i)},
             "model_response": {"text": ["a"]},
             "metric": {"bleu": b, "em": e, "judgement_gpt": f"reason {i}"}} for i, (b, e) in
            enumerate([(0.25, 1.0), (0.75, 0.0), (None, 1.0)])]
    task = "lighteval|wmt|0"
    results = _results({"f1": 0.4, "f1_stderr": 0.1, "bleu": 0.5, "bleu_stderr": 0.2}, task=task)
    frame = load_eval_logs([(f"r/results_{STAMP}.json", results),
                            (f"d/details_{task}_{STAMP}.parquet", _parquet(rows))], min_models=1)
    assert list(frame["score"]) == [0.25, 0.75] and "correct" not in frame
    assert list(frame["explanation"]) == ["reason 0", "reason 1"]
    notes = " ".join(report_of(frame).notes)
    assert "metric 'bleu' is the label ('score')" in notes and "(f1 is not per row)" in notes
    assert "1 of 3 rows of d/details_lighteval|wmt|0" in notes and "no numeric value of 'bleu'" in notes


def test_v011_results_name_pairs_with_a_suite_task():
    """v0.11+ results name the task without its suite ("arc:challenge|25")."""
    short = TASK.split("|", 1)[1]
    results = _results({"acc_norm": 0.5, "acc_norm_stderr": 0.1, "acc": 0.5}, task=short)
    frame = load_eval_logs([(RESULTS, results), (DETAILS, _parquet(_old_rows()))], min_models=1)
    assert list(frame["correct"]) == [1.0, 0.0]
    assert "metric 'acc_norm' is the label" in " ".join(report_of(frame).notes)


def test_results_alone_are_a_summary_with_the_stderr():
    frame = load_eval_logs([(RESULTS, _results())], min_models=1)
    assert report_of(frame).kind == "summary"
    row = frame.iloc[0]
    assert (row["model"], row["task"], row["n"], row["n_correct"]) == (MODEL, TASK, 2, 1)
    assert row["se"] == 0.5  # acc_stderr
    assert "1 task(s): accuracy = each task's first metric ('acc'), se = that metric's '_stderr'" in " ".join(
        report_of(frame).notes)


def test_results_alone_without_document_counts_ask_for_the_details():
    with pytest.raises(EvalDataError, match=r"results_.*no task has both a metric in \[0, 1\] and its number of "
                                            r"documents.*details_\*\.parquet"):
        load_eval_logs([(RESULTS, _results(docs=None))], min_models=1)


def test_results_alone_with_unrecorded_document_counts_say_so():
    with pytest.raises(EvalDataError, match=r"effective_num_docs, which is -1: this lighteval version does not "
                                            r"record it\)"):
        load_eval_logs([(RESULTS, _results(docs=-1))], min_models=1)


def test_the_other_numeric_metrics_are_kept_as_columns():
    rows = [{"doc": {"query": "q", "choices": ["a"], "gold_index": 0, "id": str(i)}, "model_response": {"text": ["a"]},
             "metric": {"trad_score": t, "idk_score": k, "extract_fail": f, "pairs": [1, 2]}}
            for i, (t, k, f) in enumerate([(1.0, 0.5, 0.0), (0.0, 0.25, 1.0)])]
    task = "community|gpqa-idk|0"
    results = _results({"trad_score": 0.5, "trad_score_stderr": 0.5}, task=task)
    frame = load_eval_logs([(f"r/results_{STAMP}.json", results),
                            (f"d/details_{task}_{STAMP}.parquet", _parquet(rows))], min_models=1)
    assert list(frame["correct"]) == [1.0, 0.0]
    assert list(frame["idk_score"]) == [0.5, 0.25] and list(frame["extract_fail"]) == [0.0, 1.0]
    assert "pairs" not in frame  # a list per row: not a number
    assert any(n.endswith("the other metrics with a number in every row are kept as numeric columns: "
                          "'idk_score', 'extract_fail'.") for n in report_of(frame).notes)


def test_detection():
    plain = _parquet([{"model": "m", "example_id": "1", "task": "t", "correct": 1.0}])
    lm_eval = json.dumps({"results": {"arc": {"alias": "arc", "acc,none": 0.5}}}).encode()
    assert tool_of(LogFile(DETAILS, _parquet(_old_rows()))) == "lighteval"
    assert tool_of(LogFile("x.parquet", _parquet(_new_rows()))) == "lighteval"
    assert tool_of(LogFile("details_x.parquet", plain)) == "table"  # a plain Parquet log stays a table
    assert tool_of(LogFile(f"results_{STAMP}.json", _results())) == "lighteval"
    assert tool_of(LogFile(f"results_{STAMP}.json", lm_eval)) == "lm-evaluation-harness"
    assert not lighteval.sniff(LogFile("x.parquet", b"PAR1 truncated"))


def test_many_list_values_are_refused_before_reading():
    """100,000 one-letter choices in one row: a small file, 1.6 MB of values once read (16 bytes each)."""
    rows = [{"doc": {"query": "q", "choices": ["x"] * 100_000, "gold_index": 0, "id": "1"},
             "model_response": {"text": ["x"]}, "metric": {"em": 1.0}}]
    data = _parquet(rows)
    assert len(data) < 100_000
    with pytest.raises(EvalDataError, match="pages hold values that take up to"):
        load_eval_logs([("details_t|0_" + STAMP + ".parquet", data)], limits=ReadLimits(max_bytes=1_000_000))


def test_repeated_text_is_measured_before_it_is_decoded():
    """One 10 kB text repeated 300 times: stored once (a dictionary), 2.9 MB (3,000,000 bytes) once decoded."""
    rows = [{"doc": {"query": "q", "choices": ["y" * 10_000] * 300, "gold_index": 0, "id": "1"},
             "model_response": {"text": ["x"]}, "metric": {"em": 1.0}}]
    data = _parquet(rows)
    assert len(data) < 100_000
    with pytest.raises(EvalDataError, match="text takes 2.9 MB once decoded"):
        load_eval_logs([("details_t|0_" + STAMP + ".parquet", data)], limits=ReadLimits(max_bytes=1_000_000))


def test_damaged_details_file_is_named():
    data = _parquet(_new_rows())
    damaged = data[:8] + b"\xff" * 40 + data[48:]  # the first page header overwritten, the footer intact
    assert lighteval.sniff(LogFile("d.parquet", damaged))
    with pytest.raises(EvalDataError, match=r"details_t\|0_.*could not be read as Parquet"):
        load_eval_logs([("details_t|0_" + STAMP + ".parquet", damaged)])


def test_metrics_that_are_not_an_object():
    rows = [dict(_old_rows()[0], metrics="not a dict")]
    schema = pa.schema([("choices", pa.list_(pa.string())), ("example", pa.string()), ("full_prompt", pa.string()),
                        ("gold", pa.list_(pa.string())), ("gold_index", pa.list_(pa.int64())),
                        ("instruction", pa.string()), ("metrics", pa.string()),
                        ("predictions", pa.list_(pa.float64()))])
    with pytest.raises(EvalDataError, match=r"row 1: the column 'metrics' holds no \{metric: value\} object"):
        load_eval_logs([(DETAILS, _parquet(rows, schema))])


def test_no_numeric_metric():
    rows = [{"doc": {"query": "q", "choices": ["a"], "gold_index": 0, "id": "1"}, "model_response": {"text": ["a"]},
             "metric": {"judgement": "text only"}}]
    with pytest.raises(EvalDataError, match="no row of the details file holds a numeric metric"):
        load_eval_logs([(DETAILS, _parquet(rows))])


def test_model_from_folder():
    assert lighteval._model_from_folder(f"out/details/org/model/{STAMP}") == "org/model"
    assert lighteval._model_from_folder(f"details_org__model/{STAMP}") == "org/model"
    assert lighteval._model_from_folder("") is None


def test_summary_leaves_out_tasks_without_a_document_count():
    doc = json.loads(_results())
    doc["results"]["leaderboard|gsm8k|5"] = {"qem": 0.25, "qem_stderr": 0.05}
    frame = load_eval_logs([(RESULTS, json.dumps(doc).encode())], min_models=1)
    assert list(frame["task"]) == [TASK]
    assert f"1 of 2 tasks of {RESULTS} were left out" in " ".join(report_of(frame).notes)


def test_metrics_written_as_a_parquet_map():
    rows = [{"example": "q", "full_prompt": "q", "predictions": ["a"], "gold": ["a"], "metrics": [("em", 1.0)]},
            {"example": "r", "full_prompt": "r", "predictions": ["b"], "gold": ["c"], "metrics": [("em", 0.0)]}]
    schema = pa.schema([("example", pa.string()), ("full_prompt", pa.string()), ("predictions", pa.list_(pa.string())),
                        ("gold", pa.list_(pa.string())), ("metrics", pa.map_(pa.string(), pa.float64()))])
    frame = load_eval_logs([(DETAILS, _parquet(rows, schema))], min_models=1)
    assert list(frame["correct"]) == [1.0, 0.0] and list(frame["output"]) == ["a", "b"]
    assert list(frame["target"]) == ["a", "c"]


def test_a_run_folder_on_disk(tmp_path):
    """lighteval's layout: results/<org>/<model>/results_<time>.json and details/<org>/<model>/<time>/*.parquet."""
    task = "lighteval|arc_easy|0"  # no ':' in the file name (not allowed on every file system)
    results = tmp_path / "out" / "results" / "HuggingFaceTB" / "SmolLM2-1.7B-Instruct" / f"results_{STAMP}.json"
    details = tmp_path / "out" / "details" / "HuggingFaceTB" / "SmolLM2-1.7B-Instruct" / STAMP
    results.parent.mkdir(parents=True)
    details.mkdir(parents=True)
    results.write_bytes(_results(task=task))
    (details / f"details_{task}_{STAMP}.parquet").write_bytes(_parquet(_old_rows()))
    frame = load_eval_logs([tmp_path / "out"], min_models=1)
    assert list(frame["model"]) == [MODEL, MODEL] and list(frame["task"]) == [task, task]
    assert list(frame["correct"]) == [1.0, 0.0]
    assert f"the task's first metric in out/results/{MODEL}/results_{STAMP}.json" in " ".join(report_of(frame).notes)
