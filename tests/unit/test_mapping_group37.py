"""The automatic mapping suggests a group from the values (issue 37, point 4; evalcore.data.mapping.suggest_group):
a text column of 2-200 values, one per example, no id, no other role's column; the most values wins. Counted by
hand on small tables; the real logs (ImageNet-X's metaclass_name, MMLU-Pro's categories) through shared_file."""

from __future__ import annotations

import pandas as pd

from evalcore.data.mapping import suggest_group, suggest_mapping
from evalcore.data.validation import load_eval_log, read_and_validate, report_of, validate

N = 12  # examples e0..e11, two models


def _log(**columns) -> pd.DataFrame:
    """Two models a and b on examples e0..e11 (correct on even examples), with per-example ``columns`` (lists of
    N values, repeated for each model)."""
    frame = pd.DataFrame({"model": ["a"] * N + ["b"] * N, "example_id": [f"e{i}" for i in range(N)] * 2,
                          "correct": [i % 2 == 0 for i in range(N)] * 2})
    return frame.assign(**{name: list(values) * 2 for name, values in columns.items()})


def _group(frame: pd.DataFrame) -> tuple[str, int] | None:
    return suggest_group(frame, suggest_mapping(frame.columns))


def test_the_text_column_with_the_most_values_is_the_group():
    # kind: 2 values (6 examples each), animal: 4 values (3 examples each): animal, the finer
    frame = _log(kind=["x", "y"] * 6, animal=["cat", "dog", "eel", "fox"] * 3)
    assert _group(frame) == ("animal", 4)
    validated = validate(frame)
    assert report_of(validated).mapping["group"] == "animal"
    assert validated.groupby("group")["example_id"].nunique().to_dict() == {"cat": 3, "dog": 3, "eel": 3, "fox": 3}
    assert report_of(validated).notes[0].startswith("No group column: 'animal' (4 values) is the group")


def test_ids_answers_numbers_and_one_value_are_never_the_group():
    frame = _log(doc_key=[f"k{i % 6}" for i in range(N)],  # named like an id
                 constant=["same"] * N,  # one value
                 level=[i % 3 for i in range(N)],  # numeric
                 answer_letter=["A", "B"] * 6,  # a label word
                 name=[f"n{i}" for i in range(N)])  # 12 values for 12 examples: an identifier
    frame["pred"] = ["A"] * N + ["B"] * N  # the model's answer (also named so)
    frame["verdict"] = ["yes", "no"] * N  # varies between the models on one example: not the example's
    frame.loc[frame["model"] == "b", "verdict"] = ["no", "yes"] * (N // 2)
    assert _group(frame) is None
    assert report_of(validate(frame)).mapping.get("group") is None


def test_more_than_200_values_is_not_a_group_and_a_group_column_is_kept():
    many = pd.DataFrame({"model": "a", "example_id": [str(i) for i in range(402)], "correct": 1,
                         "topic_text": [f"t{i // 2}" for i in range(402)]})  # 201 values, two examples each
    assert _group(many) is None
    few = many.assign(topic_text=[f"t{i // 3}" for i in range(402)])  # 134 values
    assert _group(few) == ("topic_text", 134)
    assert _group(_log(group=["g", "h"] * 6, animal=["cat", "dog"] * 6)) is None  # a group already


def test_an_explicit_mapping_is_kept_as_given_and_left_out_columns_stay_out():
    frame = _log(animal=["cat", "dog", "eel", "fox"] * 3)
    given = {"model": "model", "example_id": "example_id", "correct": "correct"}
    assert "group" not in report_of(validate(frame, mapping=given)).mapping
    table = read_and_validate(("x.csv", frame.to_csv(index=False).encode()))
    assert table.mapping == {**given, "animal": "group"}  # what the Data page's column mapping shows
    left_out = read_and_validate(("x.csv", frame.to_csv(index=False).encode()), {**given, "animal": None})
    assert "group" not in report_of(left_out.frame).mapping


def test_imagenet_x_gets_metaclass_name_as_its_group(shared_file):
    frame = load_eval_log(shared_file("imagenet_x_predictions.csv.gz"))
    report = report_of(frame)
    assert report.mapping["group"] == "metaclass_name" and frame["group"].nunique() == 100
    assert not report.tasks_are_categories


def test_mmlu_pro_keeps_src_as_its_group_and_its_tasks_are_its_categories(shared_file):
    report = report_of(load_eval_log(shared_file("mmlu_pro_per_question.csv.gz")))
    assert report.mapping["group"] == "src" and report.tasks_are_categories


def test_the_suggestion_stops_counting_a_column_of_many_values_early(monkeypatch):
    """A million rows of a unique text id and one 3-valued column: the id's count stops after the first chunk."""
    import evalcore.data.mapping as mapping

    rows = 1_000_000
    calls = []
    unique = pd.unique

    def counting(values):
        calls.append(len(values))
        return unique(values)

    ids = pd.RangeIndex(rows).astype(str)
    frame = pd.DataFrame({"model": "a", "example_id": ids, "correct": 1.0, "note_text": ids,
                          "kind": ["x", "y", "z"] * (rows // 3) + ["x"]})
    monkeypatch.setattr(mapping.pd, "unique", counting)
    assert mapping.suggest_group(frame, suggest_mapping(frame.columns)) == ("kind", 3)
    chunks = rows // mapping._CHUNK_ROWS
    assert len(calls) == 1 + chunks  # note_text: one chunk; kind: every chunk
