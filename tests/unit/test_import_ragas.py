"""Ragas per-sample results (issue 49, item 5a) read through the public path, on real files: each file one system
(named after the file), each metric a task, each sample's metric value a score.

The files in ``tests/data/ecosystem49/ragas/`` are real Ragas results cut to their first samples (see ../SOURCES.md):
``ragas_evaluation_results.csv`` (tomahus-jay/HyperGraphRAG, ``to_pandas().to_csv``: user_input, retrieved_contexts,
reference, context_recall, context_precision; no response) and ``ragas_results.json`` (linus-ireri/VeritasRAG-RAGAS-
Evaluation, ``to_pandas().to_dict(orient="records")`` dumped with NaN where a metric failed).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from evalcore.data.validation import load_eval_logs, report_of
from evalcore.errors import EvalDataError
from evalcore.importers.base import LogFile
from evalcore.importers.detect import tool_of

HERE = Path(__file__).resolve().parents[1] / "data" / "ecosystem49" / "ragas"
CSV, JSON = HERE / "ragas_evaluation_results.csv", HERE / "ragas_results.json"
# the values of the files, as written there
CONTEXT_RECALL = [0.5, 0.3333333333333333, 0.4, 1.0, 0.5]
CONTEXT_PRECISION = [0.9999999999, 0.9999999999, 0.0, 0.99999999995, 0.9999999999]
ANSWER_RELEVANCY = [0.9896790066506889, 0.9689199129864978, 0.7835578199946637, 0.9246830109360991,
                    0.9769053897083669, 1.0]  # the 7th sample's is NaN


def _means(frame: pd.DataFrame) -> dict[str, float]:
    return frame.groupby("task")["score"].mean().to_dict()


def test_both_real_files_are_recognised_as_ragas():
    for path in (CSV, JSON):
        assert tool_of(LogFile(path.name, path.read_bytes())) == "Ragas"


def test_real_csv_one_system_each_metric_a_task():
    frame = load_eval_logs([CSV])
    assert set(frame["model"]) == {"ragas_evaluation_results"} and len(frame) == 10
    assert _means(frame) == pytest.approx({"context_recall": sum(CONTEXT_RECALL) / 5,
                                           "context_precision": sum(CONTEXT_PRECISION) / 5})
    first = frame[frame["task"] == "context_recall"].iloc[0]
    assert first["input"] == "Were Scott Derrickson and Ed Wood of the same nationality?"
    assert first["target"].startswith("Scott Derrickson (born July 16, 1966)") and "output" not in frame
    notes = report_of(frame).notes
    assert any("Ragas writes no name of the system it scored: the file holds one system, named after the file, "
               "'ragas_evaluation_results'" in n for n in notes), notes
    assert any("are judged by an LLM in Ragas" in n for n in notes)


def test_real_json_nan_scores_left_out_and_counted():
    frame = load_eval_logs([JSON])
    assert set(frame["model"]) == {"ragas_results"}
    assert _means(frame) == pytest.approx({"answer_relevancy": sum(ANSWER_RELEVANCY) / 6, "context_recall": 5 / 6})
    assert frame["task"].value_counts().to_dict() == {"answer_relevancy": 6, "context_recall": 6}
    first = frame.iloc[0]
    assert (first["input"], first["target"]) == ("What is the Year 1 tuition fee for BSc Computer Science at JKUAT?",
                                                 "KES 148,000.")
    assert first["output"].startswith("The Year\u202f1 tuition feefor the **BSc. Computer Science** programme")
    notes = report_of(frame).notes
    assert "2 of 14 metric values of ragas_results.json were left out: empty or NaN (the metric failed on the " \
           "sample, e.g. its LLM's answer could not be parsed): answer_relevancy (1), context_recall (1)." in notes
    assert "ragas_results.json: 'faithfulness', 'answer_correctness': no sample has a value (the metric failed on " \
           "every sample, NaN or empty): not read." in notes


@pytest.mark.parametrize("orient", ["columns", "lines"])
def test_the_other_json_shapes_of_the_same_result(tmp_path, orient):
    records = json.loads(JSON.read_text())  # Python's json reads the file's NaN
    path = tmp_path / "ragas_results.json"
    frame = pd.DataFrame.from_records(records)
    frame.to_json(path, orient="records", lines=True) if orient == "lines" else frame.to_json(path)
    assert _means(load_eval_logs([path])) == pytest.approx(_means(load_eval_logs([JSON])))


def test_two_files_are_two_systems(tmp_path):
    (tmp_path / "baseline.csv").write_bytes(CSV.read_bytes())
    lines = CSV.read_text().splitlines(keepends=True)
    (tmp_path / "reranked.csv").write_text("".join(lines).replace(",0.0\n", ",1.0\n"))  # sample 3's precision 0 -> 1
    frame = load_eval_logs([tmp_path / "baseline.csv", tmp_path / "reranked.csv"])
    means = frame[frame["task"] == "context_precision"].groupby("model")["score"].mean()
    assert means.to_dict() == pytest.approx({"baseline": sum(CONTEXT_PRECISION) / 5,
                                             "reranked": (sum(CONTEXT_PRECISION) + 1) / 5})


def test_tables_that_are_not_ragas_results_are_not_claimed():
    judged = b"prompt,completion,helpfulness\nWhat is X?,X,0.9\n"
    aggregates = b"metric,score\nfaithfulness,1.0\nanswer_relevancy,0.97\ncontext_recall,1.0\n"
    for name, data in (("judged.csv", judged), ("ragas_results.csv", aggregates)):
        assert tool_of(LogFile(name, data)) == "table"
    with pytest.raises(EvalDataError, match="aggregates without example counts"):
        load_eval_logs([("ragas_results.csv", aggregates)])


def test_bad_input_names_the_file_and_the_column():
    text = b"user_input,response,faithfulness\nq1,a1,0.5\nq2,a2,high\n"
    with pytest.raises(EvalDataError, match=r"^bad\.csv: column 'faithfulness' is a Ragas metric but holds text that "
                                            r"is not a number \(e\.g\. 'high'\)"):
        load_eval_logs([("bad.csv", text)])
    failed = b"user_input,response,faithfulness\nq1,a1,\nq2,a2,NaN\n"
    with pytest.raises(EvalDataError, match=r"^failed\.csv: every metric of the Ragas result \('faithfulness'\) is "
                                            "empty or NaN on every sample"):
        load_eval_logs([("failed.csv", failed)])
    assert not math.isnan(sum(CONTEXT_RECALL))
