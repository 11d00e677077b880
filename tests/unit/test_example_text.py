"""An example's text (roles input, target, output, explanation): mapped from table columns, cut at the limit with
the cut counted, bounded in total, kept literally in the workspace's Parquet, never used by a method; a summary's
own standard error."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd

from evalcore.data.limits import ReadLimits
from evalcore.data.mapping import suggest_mapping
from evalcore.data.text import cut
from evalcore.data.validation import load_eval_log, load_eval_logs, report_of, validate
from evalcore.stats.overall import overall_table
from evalcore.workspace import Workspace


def test_table_columns_named_like_prompt_and_response_are_text_roles():
    columns = ["model", "id", "correct", "question", "reference", "completion", "rationale", "prompt_tokens"]
    mapping = suggest_mapping(columns)
    assert mapping["question"] == "input" and mapping["reference"] == "target"
    assert mapping["completion"] == "output" and mapping["rationale"] == "explanation"
    assert "prompt_tokens" not in mapping  # a number named after the prompt is a feature, not the prompt
    assert suggest_mapping(["model", "example_id", "score", "prompt", "answer", "response"]) == {
        "model": "model", "example_id": "example_id", "score": "score", "prompt": "input", "answer": "target",
        "response": "output"}


def test_text_is_kept_literally_and_missing_text_stays_missing():
    raw = pd.DataFrame({"model": ["a", "a"], "example_id": ["1", "2"], "correct": [1, 0],
                        "prompt": ["**Bold?** <b>x</b> =1+1", None], "answer": [42, "4"]})
    frame = validate(raw)
    assert frame["input"].iloc[0] == "**Bold?** <b>x</b> =1+1" and pd.isna(frame["input"].iloc[1])
    assert frame["target"].tolist() == ["42", "4"]  # numbers in a text column become their text
    assert frame["correct"].mean() == 0.5  # the numbers are untouched
    assert report_of(frame).features == ()


def test_each_value_is_cut_at_4_kb_at_a_character_boundary_and_the_cut_is_counted():
    assert cut("é" * 3, 5) == "éé" and cut("abc", 3) == "abc"
    long_ascii, long_accents = "x" * 5000, "é" * 3000  # 5,000 and 6,000 bytes
    raw = pd.DataFrame({"model": ["a"] * 3, "example_id": ["1", "2", "3"], "correct": [1, 0, 1],
                        "output": [long_ascii, long_accents, "short"]})
    frame = validate(raw)
    assert [len(v.encode()) for v in frame["output"]] == [4096, 4096, 5]
    assert frame["output"].iloc[1] == "é" * 2048
    assert any(n.startswith("2 output texts longer than 4 KB cut to that length.") for n in report_of(frame).notes)


def test_the_text_of_a_log_is_bounded_in_total_and_the_rows_past_it_counted():
    raw = pd.DataFrame({"model": ["a"] * 4, "example_id": list("1234"), "correct": [1, 0, 1, 1],
                        "input": ["q" * 400] * 4, "output": ["o" * 100] * 4})
    frame = validate(raw, limits=ReadLimits(max_text_bytes=1200))  # 500 bytes a row: two rows fit
    assert frame["input"].notna().tolist() == [True, True, False, False]
    assert frame["output"].notna().tolist() == [True, True, False, False]
    assert frame["correct"].tolist() == [1, 0, 1, 1]
    assert any(n.startswith("The text of 2 of 4 rows is left out (their numbers are kept)")
               for n in report_of(frame).notes)


def test_text_is_never_needed_by_a_method():
    rows = {"model": ["a", "a", "b", "b"], "example_id": ["1", "2", "1", "2"], "task": "t", "correct": [1, 0, 1, 1]}
    plain = overall_table(validate(pd.DataFrame(rows)))
    with_text = overall_table(validate(pd.DataFrame({**rows, "input": ["q1", "q2", "q1", "q2"]})))
    pd.testing.assert_frame_equal(plain, with_text)


def test_text_is_kept_in_the_workspace_parquet(tmp_path):
    raw = pd.DataFrame({"model": ["a", "b"], "example_id": ["1", "1"], "correct": [1, 0],
                        "question": ["What is =SUM(A1)?", "What is =SUM(A1)?"], "response": ["<i>2</i>", "3"]})
    ws = Workspace(tmp_path / "ws")
    buffer = io.BytesIO()
    raw.to_csv(buffer, index=False)
    record = ws.add_dataset(buffer.getvalue(), "qa")
    stored = ws.dataset(record.id)
    assert stored["input"].tolist() == ["What is =SUM(A1)?"] * 2
    assert stored["output"].tolist() == ["<i>2</i>", "3"]


def test_battles_keep_the_prompt_and_the_judges_reasoning():
    raw = pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "x"], "judge": [1.0, 0.5],
                        "instruction": ["Write a poem", "Sum 2+2"], "judgment": ["B is better", "tie"]})
    frame = validate(raw)
    assert frame["input"].tolist() == ["Write a poem", "Sum 2+2"]
    assert frame["explanation"].tolist() == ["B is better", "tie"]


def test_a_summary_keeps_the_tools_standard_error_and_accuracy():
    data = b"model,task,n,accuracy,standard_error\na,t,805,77.39,0.43\nb,t,100,60,\n"
    frame = load_eval_log(("leader.csv", data))
    assert np.allclose(frame["accuracy"], [0.7739, 0.6])  # the tool's accuracy, not round(0.7739 * 805) / 805
    assert frame["se"].iloc[0] == 0.0043 and np.isnan(frame["se"].iloc[1])
    table = overall_table(frame, alpha=0.05, summary=True).set_index("model")
    assert np.isclose(table.loc["a", "ci_low"], 0.7739 - 1.959964 * 0.0043, atol=1e-6)
    assert np.isclose(table.loc["a", "ci_high"], 0.7739 + 1.959964 * 0.0043, atol=1e-6)
    assert np.isclose(table.loc["b", "ci_low"], 0.502003, atol=1e-6)  # Wilson 60 / 100 where no se is given
    assert any("one use the binomial interval from n" in n for n in report_of(frame).notes)


def test_text_survives_combining_tool_logs_with_tables():
    inspect_free = json.dumps({"model": "m", "example_id": "1", "correct": 1, "input": "q"}).encode()
    table = b"model,example_id,correct,question\nn,1,0,q\n"
    frame = load_eval_logs([("a.jsonl", inspect_free), ("b.csv", table)])
    assert frame["input"].tolist() == ["q", "q"]
