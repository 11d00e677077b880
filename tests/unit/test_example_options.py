"""Multiple-choice options (evalcore.data.options): read from a list column, a JSON array, a Python list literal or
option columns A, B, C ...; lettered with the model's choice and the reference marked; the image role suggested from
its names; a log with option columns A, B, C stays a log (not battles)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from evalcore.data.mapping import option_columns, suggest_mapping
from evalcore.data.options import chosen_letter, option_lines, parse_options
from evalcore.data.validation import report_of, validate


@pytest.mark.parametrize("text, options", [
    ('["2 m/s", "4 m/s"]', ["2 m/s", "4 m/s"]),
    ("['2 m/s', \"it's 4\"]", ["2 m/s", "it's 4"]),  # a CSV written from a Python list column
    ("A. one\nB. two\nC. three", ["one", "two", "three"]),  # lettered lines: the letters are not doubled
    ("[1, 2.5]", ["1", "2.5"]),
    ("just one line", None),
    ("", None),
    (None, None),
    ("[" * 3000, None),  # nested too deep to read: not a list, no crash
])
def test_options_are_read_from_every_form_a_log_keeps_them_in(text, options):
    assert parse_options(text) == options


def test_the_models_choice_and_the_reference_are_found_by_letter_or_text():
    options = ["2 m/s", "4 m/s", "8 m/s"]
    assert [chosen_letter(a, options) for a in ("B", "(C)", "A.", "C) 8 m/s", "The answer is (B).", "4 M/S")] == \
        ["B", "C", "A", "C", "B", "B"]
    assert [chosen_letter(a, options) for a in ("D", "A cat", "the answer is a dog", "", None)] == [None] * 5
    assert option_lines(options, "B", "C").splitlines() == [
        "A. 2 m/s", "B. 4 m/s    ◀ the model's answer", "C. 8 m/s    ✓ reference"]
    assert option_lines(options, "A", "A").splitlines()[0] == "A. 2 m/s    ◀ the model's answer  ✓ reference"


def test_option_columns_are_a_run_from_a():
    assert option_columns(["model", "A", "B", "C", "D"]) == ["A", "B", "C", "D"]
    assert option_columns(["A", "B"]) == []  # two single letters: a battle's models
    assert option_columns(["A", "B", "D"]) == []  # not a run
    assert option_columns(["Option A", "option_b", "A", "B", "C"]) == ["Option A", "option_b"]
    assert option_columns(["choice_a", "choice_b"]) == ["choice_a", "choice_b"]
    assert suggest_mapping(["model_a", "model_b", "winner_b"])["model_a"] == "model_a"  # battles stay battles


def test_a_log_with_option_columns_keeps_them_as_its_options():
    raw = pd.DataFrame({"model": "m", "question_id": ["1", "2"], "question": ["Speed?", "Mass?"],
                        "A": ["2 m/s", "1 kg"], "B": ["4 m/s", "2 kg"], "C": ["8 m/s", None], "D": [None, None],
                        "answer": ["B", "A"], "pred": ["B", "B"], "correct": [1, 0]})
    assert "model_a" not in suggest_mapping(raw.columns).values()  # A, B, C are options, not a battle's models
    frame = validate(raw)
    assert report_of(frame).kind == "log"
    assert [json.loads(v) for v in frame["options"]] == [["2 m/s", "4 m/s", "8 m/s"], ["1 kg", "2 kg"]]
    assert frame[["input", "target", "output"]].values.tolist() == [["Speed?", "B", "B"], ["Mass?", "A", "B"]]
    assert any("'A', 'B', 'C', 'D' kept as each example's options" in n for n in report_of(frame).notes)


def test_a_list_column_of_options_and_an_image_column_are_kept_as_text():
    raw = pd.DataFrame({"model": "m", "id": ["1", "2"], "choices": [["yes", "no"], ("a", "b", "c")],
                        "image_path": ["cats/1.png", "dogs/2.jpg"], "correct": [1, 0]})
    mapping = suggest_mapping(raw.columns)
    assert (mapping["choices"], mapping["image_path"]) == ("options", "image")
    frame = validate(raw)
    assert [parse_options(v) for v in frame["options"]] == [["yes", "no"], ["a", "b", "c"]]
    assert frame["image"].tolist() == ["cats/1.png", "dogs/2.jpg"]


@pytest.mark.parametrize("name", ["image", "image_path", "file", "filepath", "img"])
def test_the_image_role_is_suggested_from_its_names(name):
    assert suggest_mapping(["model", "example_id", name, "correct"])[name] == "image"
