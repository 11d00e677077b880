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


# --- 1. DeepEval runs identified by what the log says -------------------------------------------------------------

DEEPEVAL = DATA / "deepeval"
PROJECTS = [DEEPEVAL / p / ".deepeval" / ".latest_test_run.json" for p in ("recipes_bot", "legal_rag", "sql_agent")]


def test_unrelated_deepeval_projects_are_three_models_named_after_their_folders(monkeypatch):
    monkeypatch.chdir(DEEPEVAL)
    raw = read_logs([Path(p).relative_to(DEEPEVAL) for p in PROJECTS])
    assert sorted(set(raw.frame["model"])) == ["legal_rag", "recipes_bot", "sql_agent"]
    assert "latest_test_run" not in " ".join(raw.frame["model"])
    # files of one name are named by their paths as given
    assert raw.files == tuple(f"{p}/.deepeval/.latest_test_run.json" for p in ("recipes_bot", "legal_rag",
                                                                             "sql_agent"))
    notes = "\n".join(raw.notes)
    assert "the model is named after its folder 'recipes_bot'" in notes
    # the same three files as an upload without folders: told apart by their own ids, never pooled into one model
    uploaded = read_logs([(".latest_test_run.json", p.read_bytes()) for p in PROJECTS])
    assert uploaded.frame["model"].nunique() == 3
    assert uploaded.frame["model"].str.fullmatch(r"test run [0-9a-f]{8}").all()


def test_unrelated_deepeval_runs_that_name_one_model_are_warned_about_by_name(monkeypatch):
    monkeypatch.chdir(DEEPEVAL)
    given = ["same_model/faq/.deepeval/.latest_test_run.json", "same_model/summaries/.deepeval/.latest_test_run.json"]
    raw = read_logs([Path(p) for p in given])
    assert set(raw.frame["model"]) == {"gpt-4o-mini"}
    warning = next(w for w in raw.warnings if "separate DeepEval test runs" in w)
    assert given[0] in warning and given[1] in warning and "'gpt-4o-mini'" in warning
    assert f"evalcore compare {given[0]} {given[1]}" in warning


def test_two_runs_of_one_deepeval_project_are_two_runs_named_after_the_project_and_time():
    runs = sorted((DEEPEVAL / "support_bot" / "results").glob("test_run_*.json"))
    raw = read_logs(runs[::-1])  # given newest first: ordered by when each ran
    assert raw.runs == ("support_bot 2026-03-10 09:15:00", "support_bot 2026-03-11 10:15:00")
    by = raw.frame.set_index(["model", "example_id"])["correct"]
    assert [by[("support_bot 2026-03-10 09:15:00", f"test_case_{i}")] for i in range(3)] == [1.0, 0.0, 1.0]
    assert [by[("support_bot 2026-03-11 10:15:00", f"test_case_{i}")] for i in range(3)] == [1.0, 1.0, 0.0]
    note = next(n for n in raw.notes if "differently" in n)
    assert "named after what its log says" in note and ("evalcore compare test_run_20260310_091500.json "
                                                           "test_run_20260311_101500.json") in note
    assert not any("separate DeepEval test runs" in w for w in raw.warnings)


# --- 5. lm-eval chat-API samples keep their input text --------------------------------------------------------------

def test_lm_eval_chat_api_samples_keep_the_messages_as_input_and_say_when_none_holds_text():
    frame = load_eval_logs([DATA / "lm_eval_chat" / "gpt-4o"])
    assert set(frame["model"]) == {"gpt-4o"} and len(frame) == 4
    inputs = frame.set_index("example_id")["input"]
    assert inputs["0"].startswith("user: What is the correct answer to this question:Which particle mediates")
    assert "(A) photon" in inputs["0"] and "[{" not in inputs["0"]
    assert inputs.isna().sum() == 1 and inputs.isna()["3"]  # the image-only prompt
    notes = _notes(frame)
    assert "the input is the messages as 'role: content' lines" in notes
    assert "1 of 4 prompts' chat messages hold no text in any role (user: images or other parts only)" in notes


# --- 3. every unusable file of an upload is left out, named by its path as given -----------------------------------

def _alpaca(tmp_path: Path) -> list[Path]:
    """Three AlpacaEval annotations.json (the shape of alpaca_eval's results/<model>/<annotator>/annotations.json):
    two models judged against the reference, and the reference judged against itself."""
    def record(i: int, generator: str, preference: float, itself: bool = False) -> dict:
        return {"instruction": f"Question {i}?", "output_1": f"Reference answer {i}.", "generator_1": "gpt4_1106_preview",
                "dataset": "helpful_base", "output_2": f"Reference answer {i}." if itself else f"Answer {i}.",
                "generator_2": "gpt4_1106_preview" if itself else generator, "annotator": "weighted_alpaca_eval_gpt4_turbo",
                "preference": preference, "price_per_example": 0.0012, "time_per_example": 1.1, "raw_completion": "m"}
    paths = []
    for model, prefs in (("alpaca-7b", [1.0, 2.0, 1.2, 1.9]), ("gpt4_1106_preview", [1.5] * 4), ("llama-2-70b", [2.0, 1.1, 1.8, 1.6])):
        path = tmp_path / "results" / model / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps([record(i, model, p, model == "gpt4_1106_preview") for i, p in enumerate(prefs)]))
        paths.append(path)
    return paths


def test_alpaca_eval_reference_judged_against_itself_is_left_out_by_its_path_the_others_read(tmp_path, monkeypatch):
    paths = _alpaca(tmp_path)
    monkeypatch.chdir(tmp_path)
    given = [p.relative_to(tmp_path) for p in paths]
    raw = read_logs(given)
    assert set(raw.frame["model_b"]) == {"alpaca-7b", "llama-2-70b"}
    [warning] = [w for w in raw.warnings if "was left out" in w]
    assert warning.startswith("results/gpt4_1106_preview/weighted_alpaca_eval_gpt4_turbo/annotations.json was left out: "
                              "all 4 annotations compare gpt4_1106_preview with itself")
    assert "--strict" in warning
    with pytest.raises(EvalDataError, match="with itself"):
        read_logs(given, strict=True)
    # uploads of one name without folders: the file that fails is the one left out, whichever its place
    uploaded = read_logs([("annotations.json", p.read_bytes()) for p in paths[::-1]])
    assert set(uploaded.frame["model_b"]) == {"alpaca-7b", "llama-2-70b"}
