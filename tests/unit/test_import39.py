"""Issue 39: runs told apart, every refusal names its file and the way forward.

Fixtures: tests/data/ecosystem39/ (see SOURCES.md there), written in each tool's shape.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.data.validation import EvalDataError, load_eval_logs, report_of
from evalcore.importers.combine import read_logs

DATA = Path(__file__).resolve().parents[1] / "data" / "ecosystem39"
STAMP = "2026-02-03T10-11-12.345678"
DAMAGED = DATA / "lm_eval_damaged" / "results"


def _notes(frame) -> str:
    return "\n".join(report_of(frame).notes)


def test_json_that_fails_to_parse_gets_a_json_message_naming_it_with_its_folder():
    results = DAMAGED / f"results_{STAMP}.json"
    with pytest.raises(EvalDataError) as caught:
        load_eval_logs([results])
    message = str(caught.value)
    assert "Only one column" not in message and "delimiter" not in message
    assert "lm_eval_damaged/results/" in message and "not valid JSON" in message
    assert "line 1, column" in message and "cut off" in message
    # a table-looking .json without a folder (an upload's bytes): still a JSON message, line and column
    with pytest.raises(EvalDataError, match=r"^runs/notes\.json: not valid JSON \(Expecting .* at line 2, column"):
        load_eval_logs([("runs/notes.json", b'{\n  "a": ,\n}\n')])


def test_an_unreadable_results_file_is_left_out_by_name_and_its_run_keeps_the_model_it_names():
    raw = read_logs([DAMAGED])
    assert len(raw.warnings) == 1
    assert raw.warnings[0].startswith(f"results/results_{STAMP}.json was left out: not valid JSON")
    assert "--strict" in raw.warnings[0]
    assert set(raw.frame["model"]) == {"gpt-4o"}
    notes = "\n".join(raw.notes)
    assert "cannot be read (left out, see the warnings); the model is the one it names: 'gpt-4o'" in notes
    assert "no results file of this run was uploaded" not in notes
    with pytest.raises(EvalDataError, match=r"results_2026-02-03T10-11-12\.345678\.json: not valid JSON.*--strict"):
        read_logs([DAMAGED], strict=True)
