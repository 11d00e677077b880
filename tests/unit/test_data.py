"""Validation of the three data shapes: actionable refusals, nothing dropped silently, and the real reference data."""

from __future__ import annotations

import io
import textwrap

import numpy as np
import pandas as pd
import pytest

from evalcore.data.validation import EvalDataError, ValidationReport, labeled, load_eval_log, report_of, validate


def table(text: str) -> bytes:
    """CSV bytes from an indented literal."""
    return textwrap.dedent(text).strip().encode() + b"\n"


def refusal(source, **kwargs) -> str:
    """The message of the EvalDataError that loading ``source`` raises."""
    with pytest.raises(EvalDataError) as err:
        if isinstance(source, pd.DataFrame):
            validate(source, **kwargs)
        else:
            load_eval_log(source, **kwargs)
    return str(err.value)


def assert_mentions(message: str, *fragments: str) -> None:
    missing = [f for f in fragments if f not in message]
    assert not missing, f"{missing} not in: {message}"


LOG_OK = table("""
    model,example_id,correct,confidence
    A,1,1,0.9
    A,2,0,0.4
    B,1,1,0.8
    B,2,1,0.7
""")


# ---------------------------------------------------------------------------------------------------------------
# canonical frames


def test_log_canonical_columns_and_types():
    frame = load_eval_log(LOG_OK)
    assert list(frame.columns) == ["model", "example_id", "task", "category", "group", "correct", "confidence"]
    for column in ("model", "example_id", "task", "category", "group"):
        assert frame[column].map(type).eq(str).all(), column
    assert frame["correct"].dtype == "float64" and frame["confidence"].dtype == "float64"
    report = report_of(frame)
    assert (report.kind, report.n_rows, report.n_models) == ("log", 4, 2)


@pytest.mark.parametrize("values", [["true", "false"], ["yes", "no"], ["True", "FALSE"], [" y ", "n"]])
def test_correct_accepts_true_false_words(values):
    raw = pd.DataFrame({"model": ["a", "a"], "example_id": [1, 2], "correct": values})
    assert validate(raw)["correct"].tolist() == [1.0, 0.0]


def test_correct_accepts_booleans():
    raw = pd.DataFrame({"model": ["a", "a"], "example_id": [1, 2], "correct": [True, False]})
    assert validate(raw)["correct"].tolist() == [1.0, 0.0]


def test_summary_canonical_frame():
    frame = load_eval_log(table("""
        model,task,category,n,n_correct
        A,t1,natural,10,7
        B,t1,natural,10,4
        A,t2,structured,20,5
        B,t2,structured,20,20
    """))
    assert list(frame.columns) == ["model", "task", "category", "n", "n_correct", "accuracy"]
    assert frame["n"].dtype == "int64" and frame["n_correct"].dtype == "int64"
    assert frame["accuracy"].tolist() == [0.7, 0.4, 0.25, 1.0]
    assert report_of(frame).kind == "summary"


def test_battles_canonical_frame():
    frame = load_eval_log(table("""
        model_a,model_b,outcome,judge
        A,B,1,0.8
        B,C,0,0.3
        C,A,,0.5
    """))
    assert list(frame.columns) == ["model_a", "model_b", "outcome", "judge"]
    assert frame["outcome"].tolist()[:2] == [1.0, 0.0] and np.isnan(frame["outcome"].iloc[2])
    report = report_of(frame)
    assert (report.kind, report.n_models) == ("battles", 3)
    assert "2 of 3 battles have a human vote." in report.notes


def test_report_of_a_frame_that_was_not_validated():
    with pytest.raises(ValueError, match="not produced by evalcore.data.validation.validate"):
        report_of(pd.DataFrame({"a": [1]}))


def test_report_is_a_validation_report():
    assert isinstance(report_of(load_eval_log(LOG_OK)), ValidationReport)


def test_validate_does_not_modify_the_callers_table():
    raw = pd.DataFrame({"model": ["a", "b"], "correct": [1, 0]}, index=[10, 20])
    before = raw.copy()
    validate(raw)
    pd.testing.assert_frame_equal(raw, before)


# ---------------------------------------------------------------------------------------------------------------
# refusals: each names the column, the rows and what was expected


def test_missing_model_column():
    message = refusal(table("""
        example_id,correct
        1,1
    """))
    assert_mentions(message, "needs the role model", "columns are: example_id, correct", "column mapping")


def test_a_wide_table_with_a_column_per_model_is_told_to_reshape():
    message = refusal(table("""
        prompt,Base,SFT,DPO
        q1,1,0,1
    """))
    assert_mentions(message, "columns are: prompt, Base, SFT, DPO", "If each model has a column of its own",
                    "var_name='model'")


def test_missing_value_column():
    message = refusal(table("""
        model,example_id
        A,1
    """))
    assert_mentions(message, "at least one value column", "'correct'", "'confidence'", "columns are: model, example_id")


def test_non_numeric_confidence_names_column_row_and_value():
    message = refusal(table("""
        model,example_id,correct,confidence
        A,1,1,0.9
        A,2,0,0.4
        A,3,1,high
    """))
    assert_mentions(message, "Column 'confidence'", "must hold numbers", "row 3 holds 'high'")


def test_error_names_the_users_column_and_its_role():
    raw = pd.DataFrame({"system": ["a", "a"], "p": [0.5, "sure"]})
    message = refusal(raw, mapping={"system": "model", "p": "confidence"})
    assert_mentions(message, "Column 'p' (role 'confidence')", "row 2 holds 'sure'")


def test_confidence_out_of_range_without_percent_hint():
    message = refusal(table("""
        model,example_id,confidence
        A,1,0.5
        A,2,1.5
        A,3,0.2
        A,4,-0.2
    """))
    assert_mentions(message, "Column 'confidence'", "must lie in [0, 1]", "rows 2, 4", "1.5", "-0.2")
    assert "percent" not in message


def test_confidence_in_percent_gets_the_percentage_hint():
    message = refusal(table("""
        model,example_id,confidence
        A,1,85
        A,2,40
        A,3,100
    """))
    assert_mentions(message, "Column 'confidence'", "[0, 1]", "rows 1, 2, 3", "85", "percentages",
                    "divide the column by 100")


def test_correct_with_probabilities_gets_the_probability_hint():
    message = refusal(table("""
        model,example_id,correct
        A,1,1
        A,2,0.7
        A,3,0.2
    """))
    assert_mentions(message, "Column 'correct'", "must be 0 or 1", "rows 2, 3 hold '0.7', '0.2'",
                    "look like probabilities", "'confidence'")


def test_correct_not_binary_without_probability_hint():
    message = refusal(table("""
        model,example_id,correct
        A,1,2
        A,2,1
    """))
    assert_mentions(message, "Column 'correct'", "0 or 1", "row 1 holds '2'")
    assert "probabilities" not in message


def test_correct_with_text_names_the_value():
    message = refusal(table("""
        model,example_id,correct
        A,1,right
        A,2,1
    """))
    assert_mentions(message, "Column 'correct'", "row 1 holds 'right'")


def test_duplicated_model_example_pairs_name_the_rows():
    message = refusal(table("""
        model,example_id,correct
        A,1,1
        A,2,1
        A,1,0
        B,1,1
    """))
    assert_mentions(message, "(model, example_id)", "rows 1, 3", "model='A'", "example_id='1'", "duplicates")


def test_many_bad_rows_are_summarised():
    raw = pd.DataFrame({"model": ["a"] * 8, "example_id": range(8), "confidence": [2.0] * 7 + [0.5]})
    assert_mentions(refusal(raw), "rows 1, 2, 3, 4, 5 and 2 more")


def test_a_log_with_one_model_is_valid_by_default():
    raw = pd.DataFrame({"model": ["a", "a"], "example_id": [1, 2], "confidence": [0.9, 0.6], "correct": [1, 0]})
    assert report_of(validate(raw)).n_models == 1


def test_a_log_with_one_model_is_refused_when_two_are_needed():
    message = refusal(table("""
        model,example_id,correct
        A,1,1
        A,2,0
    """), min_models=2)
    assert_mentions(message, "Only 1 model found ('A') in column 'model'", "at least 2 models")


def test_a_summary_with_one_model_loads_and_min_models_2_refuses_it():
    one_model = """
        model,task,n,n_correct
        A,t1,10,5
        A,t2,10,7
    """
    assert report_of(load_eval_log(table(one_model))).n_models == 1
    with pytest.raises(EvalDataError) as info:
        load_eval_log(table(one_model), min_models=2)
    assert_mentions(str(info.value), "Only 1 model found ('A')", "at least 2 models")


def test_a_summary_with_one_model_passes_with_min_models_1():
    frame = load_eval_log(table("""
        model,task,n,n_correct
        A,t1,10,5
    """), min_models=1)
    assert len(frame) == 1


def test_task_with_two_categories():
    message = refusal(table("""
        model,example_id,task,category,correct
        A,1,t1,natural,1
        A,2,t2,natural,0
        A,3,t1,structured,1
    """))
    assert_mentions(message, "Task 't1'", "natural, structured", "row 3", "one category", "column 'category'")


@pytest.mark.parametrize("column, value", [("score", "inf"), ("confidence", "-inf"), ("score", "1e999")])
def test_infinite_values(column, value):
    message = refusal(table(f"""
        model,example_id,{column}
        A,1,0.5
        A,2,{value}
    """))
    assert_mentions(message, f"Column '{column}'", "infinite values in row 2")


def test_non_positive_weights():
    message = refusal(table("""
        model,example_id,correct,weight
        A,1,1,0
        A,2,1,2
        A,3,0,-1
    """))
    assert_mentions(message, "Column 'weight'", "must be positive", "rows 1, 3")


def test_empty_model_cell():
    message = refusal(table("""
        model,example_id,correct
        A,1,1
        ,2,0
    """))
    assert_mentions(message, "Column 'model'", "empty in row 2", "every row needs a model")


def test_empty_example_id_cell():
    message = refusal(table("""
        model,example_id,correct
        A,,1
        A,2,0
    """))
    assert_mentions(message, "Column 'example_id'", "empty in row 1")


@pytest.mark.parametrize(
    "raw, fragment",
    [
        (pd.DataFrame(), "no columns"),
        (pd.DataFrame({"model": [], "correct": []}), "no data rows"),
        ([{"model": "a", "correct": 1}], "Expected a table (pandas DataFrame), got list"),
        (pd.DataFrame([["a", 1, 0]], columns=["model", "correct", "correct"]), "Column names must be unique"),
    ],
)
def test_tables_validate_cannot_use(raw, fragment):
    with pytest.raises(EvalDataError) as err:
        validate(raw)
    assert fragment in str(err.value)


def test_unknown_kind():
    assert_mentions(refusal(LOG_OK, kind="table"), "Unknown data shape 'table'", "log, summary, battles")


# summaries


def test_summary_n_correct_above_n():
    message = refusal(table("""
        model,task,n,n_correct
        A,t1,10,5
        B,t1,10,11
    """))
    assert_mentions(message, "Column 'n_correct'", "whole number between 0 and n", "row 2", "'11'")


@pytest.mark.parametrize("n", ["0", "2.5", "-3", ""])
def test_summary_n_must_be_a_positive_whole_number(n):
    message = refusal(table(f"""
        model,task,n,n_correct
        A,t1,{n},1
        B,t1,10,1
    """))
    assert_mentions(message, "Column 'n'", "positive whole number", "row 1")


def test_summary_accuracy_in_percent_is_converted_and_noted():
    frame = load_eval_log(table("""
        model,task,n,accuracy
        A,t1,200,73.5
        B,t1,200,50
    """))
    assert frame["n_correct"].tolist() == [147, 100]
    assert frame["accuracy"].tolist() == [0.735, 0.5]
    notes = report_of(frame).notes
    assert "'accuracy' holds percentages (max above 1): divided by 100." in notes
    assert any("round(accuracy x n)" in note for note in notes)


def test_summary_accuracy_as_fraction_is_not_converted():
    frame = load_eval_log(table("""
        model,task,n,accuracy
        A,t1,200,0.735
        B,t1,200,0.5
    """))
    assert frame["n_correct"].tolist() == [147, 100]
    assert not any("percentages" in note for note in report_of(frame).notes)


def test_summary_accuracy_that_is_not_a_count_over_n_is_noted():
    # 0.1111 x 10 = 1.111 -> 1 correct, 1 / 10 = 0.1 (0.011 away: noted); 0.5861 x 2305 = 1350.96 -> 1351, and
    # 1351 / 2305 = 0.58612 is within 0.0005 of 0.5861 (an accuracy written to 4 decimals: not noted)
    frame = load_eval_log(table("""
        model,task,n,accuracy
        A,t1,10,0.1111
        B,t1,2305,0.5861
    """))
    assert frame["n_correct"].tolist() == [1, 1351] and frame["accuracy"].iloc[0] == 0.1
    [note] = [n for n in report_of(frame).notes if "whole count" in n]
    assert note.startswith("'accuracy' is not a whole count over 'n' in row 1 (e.g. 0.1111 x 10 = 1.11): evalcore "
                           "uses the rounded count, so it shows 1 / 10 = 0.1 there.")
    exact = load_eval_log(table("""
        model,task,n,accuracy
        A,t1,2305,0.5861
        B,t1,10,0.3
    """))
    assert not any("whole count" in n for n in report_of(exact).notes)


def test_summary_accuracy_above_100_percent():
    message = refusal(table("""
        model,task,n,accuracy
        A,t1,200,150
        B,t1,200,50
    """))
    assert_mentions(message, "Column 'accuracy'", "[0, 1]", "rows 1, 2 hold 150, 50")


def test_summary_without_counts_or_accuracy():
    message = refusal(table("""
        model,task,n
        A,t1,10
        B,t1,10
    """), kind="summary")
    assert_mentions(message, "'n_correct'", "'accuracy'", "columns are: model, task, n")


def test_summary_duplicated_model_task():
    message = refusal(table("""
        model,task,n,n_correct
        A,t1,10,5
        B,t1,10,5
        A,t1,10,6
    """))
    assert_mentions(message, "(model, task)", "rows 1, 3", "task='t1'")


def test_summary_counts_beyond_int64_are_refused():
    # used to overflow silently into a negative n
    raw = pd.DataFrame({"model": ["a", "b"], "task": ["t", "t"], "n": [1e300, 10], "n_correct": [1, 1]})
    assert_mentions(refusal(raw), "Column 'n'", "positive whole number", "row 1")


# battles


def test_battle_of_a_model_with_itself():
    message = refusal(table("""
        model_a,model_b,outcome
        A,B,1
        C,C,0
    """))
    assert_mentions(message, "cannot battle itself", "row 2")


def test_battle_outcome_not_binary():
    message = refusal(table("""
        model_a,model_b,outcome
        A,B,1
        C,B,2
    """))
    assert_mentions(message, "Column 'outcome'", "must lie in [0, 1]", "row 2 holds 2", "AlpacaEval", "subtract 1")
    message = refusal(table("""
        model_a,model_b,outcome
        A,B,1
        C,B,3
    """))
    assert_mentions(message, "Column 'outcome'", "must lie in [0, 1]", "row 2 holds 3")


def test_battle_outcome_fractions_are_soft_verdicts_with_a_note_pointing_to_judge():
    frame = load_eval_log(table("""
        model_a,model_b,outcome
        A,B,0.6
        C,B,1
        C,A,0.5
    """))
    assert frame["outcome"].tolist() == [0.6, 1.0, 0.5]
    note = next(n for n in report_of(frame).notes if "soft verdicts" in n)
    assert_mentions(note, "1 values of 'outcome'", "row 1", "map the column to 'judge'")


def test_battle_judge_out_of_range():
    message = refusal(table("""
        model_a,model_b,judge
        A,B,0.2
        C,B,1.2
    """))
    assert_mentions(message, "Column 'judge'", "[0, 1]", "row 2", "1.2")


def test_battles_need_outcome_or_judge():
    message = refusal(table("""
        model_a,model_b
        A,B
    """))
    assert_mentions(message, "'outcome'", "'judge'", "columns are: model_a, model_b")


# ---------------------------------------------------------------------------------------------------------------
# nothing dropped silently


def test_unlabeled_rows_are_kept_and_counted():
    frame = load_eval_log(table("""
        model,example_id,correct,confidence
        A,1,1,0.9
        A,2,,0.4
        A,3,0,0.3
        B,1,,0.8
        B,2,1,0.7
    """))
    assert len(frame) == 5 and report_of(frame).n_rows == 5
    assert frame["correct"].isna().sum() == 2
    assert any(note.startswith("2 of 5 rows have no 'correct' label (unlabeled): they are kept")
               for note in report_of(frame).notes)
    assert len(labeled(frame, "correct")) == 3
    assert labeled(frame, "correct")["correct"].notna().all()


def test_fully_unlabeled_log_is_noted():
    frame = load_eval_log(table("""
        model,example_id,correct,confidence
        A,1,,0.9
        A,2,,0.4
    """))
    assert "No row has a 'correct' label: only views that work without labels can use it." in report_of(frame).notes


def test_labeled_needs_the_metric_column():
    with pytest.raises(EvalDataError, match="no 'score' column"):
        labeled(load_eval_log(LOG_OK), "score")


def test_missing_confidence_is_counted():
    frame = load_eval_log(table("""
        model,example_id,correct,confidence
        A,1,1,
        A,2,0,0.4
    """))
    assert "1 rows have no confidence: views that need it leave them out and say so." in report_of(frame).notes


def test_ignored_text_columns_are_listed_and_numeric_ones_kept_as_features():
    frame = load_eval_log(table("""
        model,example_id,correct,latency_ms,prompt,tokens,comment
        A,1,1,120.5,what is 2+2,17,ok
        A,2,0,98.0,capital of France,,check
    """))
    report = report_of(frame)
    assert report.features == ("latency_ms", "tokens")
    assert frame["latency_ms"].tolist() == [120.5, 98.0]
    assert frame["tokens"].iloc[0] == 17.0 and np.isnan(frame["tokens"].iloc[1])
    assert "prompt" not in frame.columns and "comment" not in frame.columns
    assert frame["input"].tolist() == ["what is 2+2", "capital of France"]  # 'prompt' is the input text role
    assert "Extra numeric columns kept as features: latency_ms, tokens." in report.notes
    assert "Text columns not mapped to a role are ignored: comment." in report.notes


def test_defaults_for_missing_task_category_group_are_noted():
    frame = load_eval_log(LOG_OK)
    assert (frame[["task", "category", "group"]] == "all").all().all()
    notes = report_of(frame).notes
    for role in ("task", "category", "group"):
        assert f"No {role} column: all rows belong to one {role}, 'all'." in notes


def test_category_without_task_makes_each_category_a_task():
    frame = load_eval_log(table("""
        model,example_id,category,correct
        A,1,natural,1
        A,2,structured,0
    """))
    assert frame["task"].tolist() == ["natural", "structured"]
    assert "No task column: each category ('category') is treated as one task." in report_of(frame).notes


def test_missing_group_labels_are_shown_and_noted():
    frame = load_eval_log(table("""
        model,example_id,group,correct
        A,1,easy,1
        A,2,,0
    """))
    assert frame["group"].tolist() == ["easy", "(missing)"]
    assert "1 rows have no group ('group'): shown as '(missing)'." in report_of(frame).notes


def test_missing_example_id_numbers_examples_within_each_model():
    frame = load_eval_log(table("""
        model,correct
        A,1
        B,0
        A,0
        B,1
    """))
    assert frame["example_id"].tolist() == ["0", "0", "1", "1"]
    assert any(note.startswith("No example_id column: examples are numbered") for note in report_of(frame).notes)


def test_summary_lists_the_columns_it_does_not_use():
    frame = load_eval_log(table("""
        model,task,n,n_correct,accuracy,source,test_size
        A,t1,10,5,50.0,paper,12
        B,t1,10,7,70.0,paper,12
    """))
    notes = report_of(frame).notes
    assert "'accuracy' is not used: accuracy is computed as n_correct / n ('n_correct' / 'n')." in notes
    assert "Columns not mapped to a role are ignored: source, test_size." in notes


# ---------------------------------------------------------------------------------------------------------------
# regressions found by the property tests and by probing


def test_categorical_label_with_missing_values_from_parquet():
    # a Categorical refused the new value '(missing)' with a TypeError
    raw = pd.DataFrame({"model": ["a", "a"], "example_id": [1, 2], "task": pd.Categorical(["t1", None]),
                        "correct": [1, 0]})
    buffer = io.BytesIO()
    raw.to_parquet(buffer)
    frame = load_eval_log(buffer.getvalue())
    assert frame["task"].tolist() == ["t1", "(missing)"]


def test_label_bytes_that_are_not_utf8():
    # astype(str) decoded bytes and raised UnicodeDecodeError
    raw = pd.DataFrame({"model": [b"m1", b"\xff\xfe"], "example_id": [1, 1], "correct": [1, 0]})
    frame = validate(raw)
    assert frame["model"].tolist() == ["m1", "\ufffd\ufffd"]


def test_integers_beyond_float_range_are_infinite():
    # pd.to_numeric raised OverflowError
    raw = pd.DataFrame({"model": ["a", "a"], "example_id": [1, 2], "score": pd.Series([10**400, 1], dtype=object)})
    assert_mentions(refusal(raw), "Column 'score'", "infinite values in row 1")


@pytest.mark.parametrize(
    "values, fragment",
    [
        (pd.to_datetime(["2024-01-01", "2024-01-02"]), "datetime64"),
        (pd.Series([0.5 + 1j, 0.2 + 0j]), "complex"),
        (pd.Series([0.5 + 1j, 0.2], dtype=object), "complex"),
    ],
)
def test_numbers_of_another_kind_are_not_numbers(values, fragment):
    # datetimes became nanosecond counts and complex numbers lost their imaginary part silently
    raw = pd.DataFrame({"model": ["a", "a"], "example_id": [1, 2], "confidence": values})
    assert_mentions(refusal(raw), "Column 'confidence'", "must hold", fragment)


def test_complex_columns_are_not_features():
    raw = pd.DataFrame({"model": ["a", "a"], "example_id": [1, 2], "correct": [1, 0], "z": [1j, 2 + 0j]})
    frame = validate(raw)
    assert "z" not in frame.columns
    assert "Text columns not mapped to a role are ignored: z." in report_of(frame).notes


def test_feature_names_never_overwrite_each_other():
    # 'model' (unmapped, numeric) became 'x_model' and overwrote the user's own 'x_model'
    raw = pd.DataFrame({"x_model": [1.0, 2.0], "m": ["a", "b"], "model": [3.0, 4.0], "correct": [1, 0]})
    frame = validate(raw, mapping={"m": "model", "correct": "correct"})
    assert frame["x_model"].tolist() == [1.0, 2.0]
    assert frame["x_x_model"].tolist() == [3.0, 4.0]
    assert report_of(frame).features == ("x_model", "x_x_model")


# ---------------------------------------------------------------------------------------------------------------
# real data (../shared/data; skipped when absent)


def test_vtab_reproduces_the_published_category_means(shared_file):
    frame = load_eval_log(shared_file("vtab_1k.csv"))
    report = report_of(frame)
    assert (report.kind, report.n_rows, report.n_models) == ("summary", 304, 16)
    assert frame["task"].nunique() == 19
    caltech = frame[(frame["model"] == "Sup-Rotation-100%") & (frame["task"] == "Caltech101")].iloc[0]
    assert (caltech["n"], caltech["n_correct"]) == (6080, 5575)  # n_eval_inferred, not test_size (6084)

    rotation = frame[frame["model"] == "Sup-Rotation-100%"]
    per_category = (rotation.groupby("category")["accuracy"].mean() * 100).round(1)
    assert per_category.to_dict() == {"natural": 73.6, "specialized": 83.1, "structured": 55.5}
    assert round(rotation["accuracy"].mean() * 100, 1) == 68.0


def test_imagenet_x_resnet50_accuracy(shared_file):
    frame = load_eval_log(shared_file("imagenet_x_predictions.csv.gz"))
    report = report_of(frame)
    assert (report.kind, report.n_rows, report.n_models) == ("log", 200_000, 4)
    resnet = frame[frame["model"] == "ResNet50"]
    assert len(resnet) == 50_000
    assert round(resnet["correct"].mean(), 4) == 0.7613
    assert frame["confidence"].between(0, 1).all()
    assert report.mapping["group"] == "metaclass_name"  # suggested from its 100 values (issue 37)
    assert "top_factor" in next(n for n in report.notes if n.startswith("Text columns not mapped"))
