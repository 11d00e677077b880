"""Column-role mapping: suggestions from column names (real and synthetic headers) and the user's own mapping."""

from __future__ import annotations

import pandas as pd
import pytest

from evalcore.data.validation import EvalDataError, load_eval_log, report_of, suggest_mapping, validate
from evalcore.data.mapping import check_mapping, detect_kind, normalize
from evalcore.data.schema import BATTLES, LOG, SUMMARY


def header(path) -> list[str]:
    """The column names of a (possibly gzip-compressed) CSV, without reading its rows."""
    return list(pd.read_csv(path, nrows=0).columns)


# ---------------------------------------------------------------------------------------------------------------
# suggestions for the real files in ../shared/data


def test_vtab_header_is_a_summary_with_the_inferred_counts(shared_file):
    columns = header(shared_file("vtab_1k.csv"))
    mapping = suggest_mapping(columns)
    assert mapping == {
        "model": "model",
        "task": "task",
        "category": "category",
        "n_eval_inferred": "n",  # not test_size: the leaderboard dropped the last partial batch
        "n_correct_inferred": "n_correct",
        "accuracy_percent": "accuracy",
    }
    assert detect_kind(mapping.values()) == SUMMARY


def test_imagenet_x_header_is_a_log_keyed_by_file_name(shared_file):
    columns = header(shared_file("imagenet_x_predictions.csv.gz"))
    mapping = suggest_mapping(columns)
    assert mapping == {
        "model": "model",
        "file_name": "example_id",
        "correct": "correct",  # not correct_real
        "predicted_probability": "confidence",
    }
    assert detect_kind(mapping.values()) == LOG


def test_mmlu_pro_header_is_a_log_with_src_as_group(shared_file):
    columns = header(shared_file("mmlu_pro_per_question.csv.gz"))
    mapping = suggest_mapping(columns)
    assert mapping == {
        "model": "model",
        "question_id": "example_id",
        "category": "category",
        "src": "group",
        "correct": "correct",
        "answer": "target",  # the answer key's letter: the example's reference answer (text)
        "pred": "output",  # the model's letter: shown beside the reference on the Label page
    }
    assert detect_kind(mapping.values()) == LOG


# ---------------------------------------------------------------------------------------------------------------
# suggestions for synthetic headers


@pytest.mark.parametrize(
    "columns, expected, kind",
    [
        pytest.param(["Model Name", "Question ID", "Is Correct", "Confidence"],
                     {"Model Name": "model", "Question ID": "example_id", "Is Correct": "correct",
                      "Confidence": "confidence"}, LOG, id="spaces-and-capitals"),
        pytest.param(["system", "item_id", "em", "prob"],
                     {"system": "model", "item_id": "example_id", "em": "correct", "prob": "confidence"}, LOG,
                     id="synonyms"),
        pytest.param(["llm", "uid", "reward", "p_max", "judge_score", "weight", "subject"],
                     {"llm": "model", "uid": "example_id", "reward": "score", "p_max": "confidence",
                      "judge_score": "proxy", "weight": "weight", "subject": "group"}, LOG, id="every-log-role"),
        pytest.param(["model", "model_name", "correct"], {"model": "model", "correct": "correct"}, LOG,
                     id="one-column-per-role"),
        pytest.param(["model", "task", "n", "n_correct"],
                     {"model": "model", "task": "task", "n": "n", "n_correct": "n_correct"}, SUMMARY,
                     id="summary-counts"),
        pytest.param(["model", "task", "n_examples", "accuracy_top1"],
                     {"model": "model", "task": "task", "n_examples": "n", "accuracy_top1": "accuracy"}, SUMMARY,
                     id="summary-prefixed-names"),
        pytest.param(["model", "task", "n", "correct"], {"model": "model", "task": "task", "correct": "correct"},
                     LOG, id="0/1-correct-makes-a-log"),
        pytest.param(["model", "id", "score", "acc_top1"], {"model": "model", "id": "example_id", "score": "score"},
                     LOG, id="short-synonyms-need-an-exact-match"),
        pytest.param(["model_a", "model_b", "winner_b", "judge_prob"],
                     {"model_a": "model_a", "model_b": "model_b", "winner_b": "outcome", "judge_prob": "judge"},
                     BATTLES, id="battles"),
        pytest.param(["left", "right", "human_vote"],
                     {"left": "model_a", "right": "model_b", "human_vote": "outcome"}, BATTLES, id="battles-synonyms"),
        pytest.param(["a", "score"], {"score": "score"}, LOG, id="a-alone-is-not-a-battle"),
    ],
)
def test_suggest_mapping_known_answers(columns, expected, kind):
    mapping = suggest_mapping(columns)
    assert mapping == expected
    assert detect_kind(mapping.values()) == kind


def test_suggest_mapping_for_a_given_kind():
    assert suggest_mapping(["model", "task", "n", "correct"], kind=SUMMARY) == {"model": "model", "task": "task",
                                                                               "n": "n"}


def test_suggest_mapping_refuses_an_unknown_kind():
    with pytest.raises(EvalDataError, match="Unknown data shape 'leaderboard'.*log, summary, battles"):
        suggest_mapping(["model"], kind="leaderboard")


@pytest.mark.parametrize(
    "name, expected",
    [("Model Name", "model_name"), (" Top-1  Prob ", "top_1_prob"), ("n_correct", "n_correct"), (3, "3")],
)
def test_normalize(name, expected):
    assert normalize(name) == expected


# ---------------------------------------------------------------------------------------------------------------
# the user's mapping {user column: role}


def test_user_mapping_maps_own_names_onto_roles():
    raw = pd.DataFrame({"sys": ["a", "a", "b"], "qid": [1, 2, 1], "hit": [1, 0, 1], "p": [0.9, 0.2, 0.6]})
    frame = validate(raw, mapping={"sys": "model", "qid": "example_id", "hit": "correct", "p": "confidence"})
    assert list(frame["model"]) == ["a", "a", "b"]
    assert list(frame["example_id"]) == ["1", "2", "1"]
    assert list(frame["correct"]) == [1.0, 0.0, 1.0]
    assert report_of(frame).mapping == {"model": "sys", "example_id": "qid", "correct": "hit", "confidence": "p"}


def test_columns_named_after_a_role_join_the_user_mapping():
    raw = pd.DataFrame({"sys": ["a", "b"], "correct": [1, 0]})
    frame = validate(raw, mapping={"sys": "model"})
    assert list(frame["correct"]) == [1.0, 0.0]
    assert report_of(frame).mapping == {"model": "sys", "correct": "correct"}


def test_a_role_the_user_mapped_elsewhere_is_not_taken_again_by_name():
    raw = pd.DataFrame({"model": ["a", "b"], "judge_says": [1, 0], "correct": [0, 0]})
    frame = validate(raw, mapping={"model": "model", "judge_says": "correct"})
    assert list(frame["correct"]) == [1.0, 0.0]
    assert list(frame["x_correct"]) == [0.0, 0.0]  # kept as a feature under a name that is not a role
    assert "x_correct" in report_of(frame).features


def test_mapping_decides_the_kind():
    raw = pd.DataFrame({"p1": ["a", "b"], "p2": ["b", "c"], "vote": [1, 0]})
    frame = validate(raw, mapping={"p1": "model_a", "p2": "model_b", "vote": "outcome"})
    assert report_of(frame).kind == BATTLES


@pytest.mark.parametrize(
    "mapping, fragments",
    [
        pytest.param({"conf": "confidence"}, ["column 'conf' that is not in the file",
                                              "confidence, correct, example_id, model"], id="unknown-column"),
        pytest.param({"model": "modell"}, ["'modell' (mapped from column 'model') is not a role of a log table",
                                           "model, example_id, task"], id="unknown-role"),
        pytest.param({"model": "model", "example_id": "model"},
                     ["Columns 'model' and 'example_id' are both mapped to the role 'model'", "map only one"],
                     id="two-columns-one-role"),
        pytest.param({"model": "model", "correct": "n"}, ["'n' (mapped from column 'correct') is not a role of a log"],
                     id="role-of-another-shape"),
    ],
)
def test_bad_mappings_give_clear_errors(mapping, fragments):
    data = b"model,example_id,correct,confidence\nA,1,1,0.9\nB,1,0,0.3\n"
    with pytest.raises(EvalDataError) as err:
        load_eval_log(data, mapping=mapping)
    for fragment in fragments:
        assert fragment in str(err.value)


def test_check_mapping_accepts_a_good_mapping():
    check_mapping({"m": "model", "c": "correct"}, ["m", "c", "other"], LOG)  # no exception


@pytest.mark.parametrize(
    "roles, kind",
    [({"model", "correct"}, LOG), ({"model", "task", "n", "n_correct"}, SUMMARY), ({"model", "n", "accuracy"}, SUMMARY),
     ({"model", "n", "accuracy", "confidence"}, LOG), ({"model_a", "model_b", "outcome"}, BATTLES),
     ({"model_a"}, BATTLES)],
)
def test_detect_kind(roles, kind):
    assert detect_kind(roles) == kind


@pytest.mark.parametrize("columns, expected", [
    # another role's exact name is never taken by a prefix: correct_answer is the target, model_output the output
    (["model_name", "question", "model_answer", "correct_answer", "is_correct"],
     {"model_name": "model", "question": "input", "model_answer": "output", "correct_answer": "target",
      "is_correct": "correct"}),
    (["model_name", "question", "model_output", "is_correct"],
     {"model_name": "model", "question": "input", "model_output": "output", "is_correct": "correct"}),
    # a kind of text about the role is not the role; an id names examples, not tasks
    (["model", "correct_choice", "judge_choice", "is_correct"], {"model": "model", "is_correct": "correct"}),
    (["task_name", "task_id", "model", "id", "correct"],
     {"task_name": "task", "id": "example_id", "model": "model", "correct": "correct"}),
    # names that start with a synonym still map
    (["dataset_name", "model", "id", "correct"],
     {"dataset_name": "task", "model": "model", "id": "example_id", "correct": "correct"}),
])
def test_exact_names_of_other_roles_ids_and_texts_are_not_taken_by_a_prefix(columns, expected):
    assert suggest_mapping(columns) == expected
