"""DeepEval test runs (evalcore.importers.deepeval).

Fixtures: tests/data/ecosystem27/deepeval/ (written in the shapes of deepeval's TestRun / LLMApiTestCase /
ConversationalApiTestCase / MetricData; see SOURCE.md). Expected values are read off the fixtures by hand.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from crafted import mutated

from evalcore.data.validation import EvalDataError, load_eval_logs, report_of
from evalcore.importers import deepeval
from evalcore.importers.base import LogFile

DATA = Path(__file__).resolve().parents[1] / "data" / "ecosystem27" / "deepeval"
RUN = DATA / "results" / "test_run_20260421_140114.json"
OLD = DATA / "results" / "test_run_20240102_090000"
LATEST = DATA / ".deepeval" / ".latest_test_run.json"
LINK = DATA / "link_only" / ".deepeval" / ".latest_test_run.json"


def _notes(frame) -> str:
    return "\n".join(report_of(frame).notes)


def _plain(value):
    return None if isinstance(value, float) and math.isnan(value) else value


def _case(name: str, *metrics: dict, **fields) -> dict:
    return {"name": name, "input": "q", "actualOutput": "a", "success": True, "metricsData": list(metrics), **fields}


def _metric(name: str = "M", score=0.5, success=True, **fields) -> dict:
    return {"name": name, "threshold": 0.5, "score": score, "success": success, **fields}


def _run(*cases: dict, **fields) -> bytes:
    return json.dumps({"testCases": list(cases), "testPassed": 1, **fields}).encode()


def test_run_rows_labels_text_and_notes():
    frame = load_eval_logs([RUN])
    assert report_of(frame).kind == "log" and set(frame["model"]) == {"gpt-4o-mini"}
    # one row per (test case, metric): test_case_0 x 2, test_case_1 x 1 (Faithfulness errored), test_case_2 x 1,
    # test_case_3 none (no metrics), the conversational case x 1; ids are 'metric/name' (one test case, several
    # metrics)
    rows = {(t, e.split("/", 1)[1]): (_plain(c), _plain(s)) for t, e, c, s in
            frame[["task", "example_id", "correct", "score"]].itertuples(index=False)}
    assert rows == {
        ("Answer Relevancy", "test_case_0"): (1.0, 1.0),
        ("Faithfulness", "test_case_0"): (0.0, 0.5),
        ("Answer Relevancy", "test_case_1"): (1.0, 0.9),
        ("Correctness [GEval]", "test_case_2"): (0.0, 0.1),
        ("Conversation Completeness", "conversational_test_case_0"): (1.0, 0.8),
    }
    text = {e.split("/", 1)[1] + "|" + t: (i, _plain(g), o, x) for t, e, i, g, o, x in
            frame[["task", "example_id", "input", "target", "output", "explanation"]].itertuples(index=False)}
    assert text["test_case_0|Faithfulness"] == (
        "What if these shoes don't fit?", "You are eligible for a 30 day full refund at no extra cost.",
        "We offer a 30-day full refund at no extra cost.", "Half of the claims are not in the retrieval context.")
    assert text["test_case_2|Correctness [GEval]"][1] is None  # no expectedOutput (omitted as None)
    # a conversation: its scenario, its expected outcome, its turns in 'order' (user 0, assistant 1)
    assert text["conversational_test_case_0|Conversation Completeness"] == (
        "A customer asks to change a flight.", "The flight is changed.",
        "user: I need to move my flight to Friday.\nassistant: Your flight is now on Friday.",
        "The user's intention was met.")
    notes = _notes(frame)
    assert "hyperparameters['model'] ('gpt-4o-mini')" in notes
    assert "1 of 6 metric verdicts of test_run_20260421_140114.json were left out: the metric errored" in notes
    assert "Faithfulness (1)" in notes
    assert "1 of 5 test cases of test_run_20260421_140114.json were left out: no metric verdict" in notes
    assert "'Answer Relevancy' at threshold 0.7" in notes and "'Correctness [GEval]' at threshold 0.5" in notes
    assert "are verdicts of an LLM judge" in notes and "(gpt-4.1)" in notes


def test_old_file_without_suffix_identifier_repeated_names_and_strict_mode():
    frame = load_eval_logs([OLD])
    # no hyperparameters: the run's identifier names the model; 'test_answer' twice: ids '<name> #<order>';
    # strict mode scores 1 / 0 equal the pass / fail, so no separate 'score'
    assert frame[["model", "task", "example_id", "correct"]].values.tolist() == [
        ["nightly-claude", "Exact Answer [GEval]", "test_answer #0", 1.0],
        ["nightly-claude", "Exact Answer [GEval]", "test_answer #1", 0.0]]
    assert "score" not in frame
    notes = _notes(frame)
    assert "named after the run's identifier ('nightly-claude')" in notes
    assert "test case names repeat" in notes and "in strict mode" in notes


def test_latest_test_run_wrapper_without_a_model_is_named_after_its_folder_never_the_default_file_name():
    frame = load_eval_logs([LATEST])
    # deepeval/.deepeval/.latest_test_run.json: the project's folder names it (issue 39)
    assert frame[["model", "example_id", "correct", "score", "output", "explanation"]].values.tolist() == [
        ["deepeval", "test_case_0", 1.0, 0.95, "Paris", "On topic."]]
    assert "no model in 'hyperparameters'" in _notes(frame) and "its folder 'deepeval'" in _notes(frame)
    # an upload without its folder: the run's own id (a hash of its test cases), never 'latest_test_run'
    alone = load_eval_logs([(".latest_test_run.json", LATEST.read_bytes())])
    assert alone["model"].str.fullmatch(r"test run [0-9a-f]{8}").all()


def test_a_link_only_file_is_refused_alone_and_left_out_beside_a_run():
    with pytest.raises(EvalDataError, match=r"\.latest_test_run\.json: no DeepEval test run results here .*only a "
                                            r"link to the test run on Confident AI"):
        load_eval_logs([LINK])
    frame = load_eval_logs([("link/.latest_test_run.json", LINK.read_bytes()), LATEST])
    assert len(frame) == 1
    assert "1 DeepEval file(s) left out: 'link/.latest_test_run.json' (only a link to the test run" in _notes(frame)


def test_real_run_folder_reads_the_run_once_and_leaves_out_copies_cache_and_lock():
    frame = load_eval_logs([DATA / "real_run"])
    # Exact Match: test_case_0 1.0 pass, test_case_1 0.0 fail, test_case_2 1.0 pass; Word Overlap: 1.0 pass,
    # 0.3333 fail (2 shared words of 6), errored on test_case_2 (success false beside the error: left out)
    rows = {(t, e.split("/", 1)[1]): (c, s) for t, e, c, s in
            frame[["task", "example_id", "correct", "score"]].itertuples(index=False)}
    assert rows == {("Exact Match", "test_case_0"): (1.0, 1.0), ("Exact Match", "test_case_1"): (0.0, 0.0),
                    ("Exact Match", "test_case_2"): (1.0, 1.0), ("Word Overlap", "test_case_0"): (1.0, 1.0),
                    ("Word Overlap", "test_case_1"): (0.0, 0.3333)}
    assert set(frame["model"]) == {"gpt-4o-mini"}
    assert set(frame.loc[frame["task"] == "Word Overlap", "explanation"]) == {"1 shared words of 1.",
                                                                             "2 shared words of 6."}
    notes = _notes(frame)
    assert "1 of 6 metric verdicts of real_run/results/test_run_20261127_032825.json were left out" in notes
    assert "Word Overlap (1)" in notes
    assert "4 DeepEval file(s) left out" in notes
    for name in (".latest_run_full.json' (the same test run as", ".latest_test_run.json' (the same test run as",
                 ".deepeval-cache.json' (its metric cache", ".test_run.lock' (a lock file"):
        assert name in notes
    assert "LLM judge" not in notes  # custom metrics without an evaluationModel
    assert report_of(frame).files == ("real_run/results/test_run_20261127_032825.json",)


def test_two_runs_of_two_models_combine():
    frame = load_eval_logs([DATA / "results"])
    assert sorted(set(frame["model"])) == ["gpt-4o-mini", "nightly-claude"] and len(frame) == 7


def test_model_key_of_hyperparameters_is_found_in_any_case():
    data = _run(_case("c0", _metric()), _case("c1", _metric(score=0.2, success=False)),
                hyperparameters={"prompt": "v2", "Model": "claude-sonnet-4"})
    frame = load_eval_logs([("test_run_1.json", data)])
    assert frame[["model", "example_id", "correct", "score"]].values.tolist() == [
        ["claude-sonnet-4", "c0", 1.0, 0.5], ["claude-sonnet-4", "c1", 0.0, 0.2]]


def test_every_metric_errored_is_refused_saying_so():
    data = _run(_case("c0", {"name": "M", "threshold": 0.5, "error": "boom"}))
    with pytest.raises(EvalDataError, match=r"bad\.json: no metric .* has a score or a pass/fail \(1 errored"):
        load_eval_logs([("bad.json", data)])


def test_damaged_files_name_the_file_and_field():
    with pytest.raises(EvalDataError, match=r"r\.json: the field 'testCases' is not a list"):
        deepeval.convert([LogFile("r.json", b'{"testCases": {"a": 1}, "testPassed": 1}')])
    with pytest.raises(EvalDataError, match=r"r\.json: the DeepEval test run holds no test case"):
        deepeval.convert([LogFile("r.json", b'{"testCases": [], "testPassed": 0}')])
    with pytest.raises(EvalDataError, match=r"cut\.json: not valid JSON"):
        load_eval_logs([("cut.json", RUN.read_bytes()[:300])])


def test_sniff_claims_deepeval_files_and_nothing_else(shared_data: Path):
    for path in (RUN, OLD, LATEST, LINK):
        assert deepeval.sniff(LogFile(path.name, path.read_bytes())), path.name
    assert not deepeval.sniff(LogFile("x.json", b'{"testCases": [1, 2]}'))  # no DeepEval key
    for path in (shared_data / "ecosystem").rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl"):
            assert not deepeval.sniff(LogFile(path.name, path.read_bytes())), path.name


def test_sniff_reads_a_run_saved_again_with_sorted_keys():
    resaved = json.dumps(json.loads(RUN.read_bytes()), sort_keys=True, indent=2).encode()
    assert deepeval.sniff(LogFile("run.json", resaved))
    assert len(load_eval_logs([("run.json", resaved)])) == 5


def test_real_conversational_run():
    frame = load_eval_logs([DATA / "real_conversation" / "test_run_20261127_032937.json"])
    # Politeness: 0.5 (one of two replies polite) pass at 0.5, 0.0 fail; no hyperparameters: the identifier
    assert frame[["model", "task", "example_id", "correct", "score"]].values.tolist() == [
        ["support-bot-v2", "Politeness", "conversational_test_case_0", 1.0, 0.5],
        ["support-bot-v2", "Politeness", "conversational_test_case_1", 0.0, 0.0]]
    first, second = frame.to_dict("records")
    assert (first["input"], first["target"]) == ("A customer asks to change a flight.", "The flight is changed.")
    assert first["output"] == ("user: Move my flight to Friday.\nassistant: Done, thank you for waiting.\n"
                               "user: Great.\nassistant: Anything else?")
    assert second["input"] == "Hi" and _plain(second["target"]) is None  # no scenario: the first user turn
    assert second["explanation"] == "0.00 of the replies are polite."


def test_damaged_values_give_a_message_never_a_traceback():
    import random
    rng = random.Random(27)
    for path in (RUN, DATA / "real_conversation" / "test_run_20261127_032937.json"):
        text = path.read_text()
        for _ in range(60):
            doc = json.loads(text)
            for _ in range(rng.randint(1, 3)):
                doc = mutated(doc, rng)
            try:
                load_eval_logs([("test_run_1.json", json.dumps(doc).encode())])
            except EvalDataError:
                pass
