"""Scales are read, not assumed (issue 49, item 2), on the real MT-Bench judgments of
../shared/data/ecosystem/mt_bench (gpt-4, FastChat's prompts "rate the response on a scale of 1 to 10"; 330
judgments, 4 failed, the Griffin model's 160 kept ratings sum to 432): a judge that rated 0-100 loads with a warning
naming the values seen and the scale expected, never under a note saying "from 1 to 10"; a prompt that states its own
scale is read as stated; two judge prompts over the same answers are two judges (tasks), not repeats. An Inspect
scorer that gives every sample C under trait metrics (personality's any_choice) is refused as not a correctness
score."""

from __future__ import annotations

import json

import pytest

from evalcore.data.validation import load_eval_logs, report_of
from evalcore.importers import pairwise
from evalcore.importers.base import LogFile

MT_SINGLE = "ecosystem/mt_bench/gpt-4_single-origin.jsonl"
GRIFFIN = "Meta-Llama-3-8B-Instruct-Griffin"


def _records(shared_file) -> list[dict]:
    return [json.loads(line) for line in shared_file(MT_SINGLE).read_text().splitlines()]


def _file(name: str, records: list[dict]) -> LogFile:
    return LogFile(name, "\n".join(json.dumps(r) for r in records).encode())


def _griffin(records: list[dict]) -> list[dict]:
    return [r for r in records if r["model"] == GRIFFIN]


def test_the_real_file_is_read_on_the_scale_its_prompt_states(shared_file):
    (imported,) = pairwise.convert([_file("gpt-4_single.jsonl", _records(shared_file))])
    assert imported.warnings == []
    assert ("score = the AI judge's rating from 1 to 10 by gpt-4 (as the judge's prompts state; single-answer "
            "grading)") in " ".join(imported.notes)


def test_ratings_out_of_the_scale_load_with_a_warning_naming_the_values_and_the_scale(shared_file, tmp_path):
    records = [{**r, "score": r["score"] * 10 if r["score"] > 0 else r["score"]}
               for r in _griffin(_records(shared_file))]
    path = tmp_path / "gpt-4_single.jsonl"
    path.write_bytes(_file(path.name, records).data)
    log = load_eval_logs([path])
    report = report_of(log)
    assert log["score"].sum() == 4320 and len(log) == 160  # read as written: mean 27.0
    [warning] = [w for w in report.warnings if "outside the scale" in w]
    outside = sorted(r["score"] for r in records if r["score"] > 10)  # every rating above 1, times 10
    assert len(outside) == 70 and sorted(set(outside)) == [20, 30, 40, 50, 60, 70, 80, 85, 90, 100]
    assert warning.startswith("gpt-4_single.jsonl: 70 of 160 ratings lie outside the scale the judge was given (from "
                              "1 to 10, as the judge's prompts state): values seen 20, 30, 40, "
                              "50, 60, 70, 80, 85 and 2 more; ratings of the file range from 10 to 100."), warning
    assert not any("from 1 to 10" in note for note in report.notes)
    assert any(note.startswith("score = the AI judge's rating as written by gpt-4 (single-answer grading; values "
                               "from 10 to 100, see the warning)") for note in report.notes)


def test_a_prompt_that_states_0_to_100_is_read_on_that_scale(shared_file):
    records = [{**r, "score": r["score"] * 10 if r["score"] > 0 else r["score"],
                "user_prompt": r["user_prompt"].replace("on a scale of 1 to 10", "on a scale of 0 to 100")}
               for r in _griffin(_records(shared_file))]
    (imported,) = pairwise.convert([_file("custom_single.jsonl", records)])
    assert imported.warnings == []
    note = next(n for n in imported.notes if n.startswith("score = "))
    # turn 2's prompts state no scale (FastChat keeps the instruction in the system prompt): the judge's other prompts'
    assert note.startswith("score = the AI judge's rating from 0 to 100 by gpt-4 (as the judge's prompts state; "
                           "single-answer grading)"), note


def test_two_judge_prompts_over_the_same_answers_are_two_judges(shared_file):
    griffin = _griffin(_records(shared_file))
    strict = [{**r, "judge": ["gpt-4", "strict-v1"], "score": max(r["score"] - 1, 1)} for r in griffin]
    (imported,) = pairwise.convert([_file("judgments.jsonl", griffin + strict)])
    frame = imported.frame
    assert "repeat" not in frame  # no answer was judged twice by one judge and prompt
    means = frame.groupby("task")["score"].agg(["count", "sum"])
    assert means.to_dict("index") == {
        "mt_bench (judge gpt-4, prompt single-v1)": {"count": 160, "sum": 432.0},
        "mt_bench (judge gpt-4, prompt strict-v1)": {"count": 160,
                                                     "sum": float(sum(max(r["score"] - 1, 1) for r in griffin))}}
    assert any("answers are graded by 2 judges (judge model and prompt: gpt-4, prompt single-v1; gpt-4, prompt "
               "strict-v1): each judge's scores are a task of their own, not repeats" in note
               for note in imported.notes)


@pytest.mark.parametrize("judge, family", [(["gpt-4", "single-math-v1-multi-turn"], "single-v1"),
                                           (["gpt-4", "single-v1"], "single-v1"), ("gpt-4", None)])
def test_fastchats_prompt_variants_are_one_judge(judge, family):
    assert pairwise._prompt_family(judge) == family


# ------------------------------------------------------------------------------------------------ Inspect


def _questionnaire(values: list[str], metrics: list[dict]) -> bytes:
    """An Inspect log shaped as inspect_evals' personality BFI writes it: the scorer any_choice gives "C" whenever an
    option was chosen, and its declared metric (trait_ratio) reports one ratio per trait."""
    return json.dumps({
        "version": 2, "status": "success",
        "eval": {"task": "personality_BFI", "model": "openai/gpt-4o-mini",
                 "scorers": [{"name": "any_choice", "metrics": metrics}]},
        "results": {"scores": [{"name": "any_choice", "scorer": "any_choice",
                                "metrics": {"Extraversion": {"name": "Extraversion", "value": 0.62},
                                            "Agreeableness": {"name": "Agreeableness", "value": 0.71}}}]},
        "samples": [{"id": i, "epoch": 1, "scores": {"any_choice": {"value": v, "answer": "B"}}}
                    for i, v in enumerate(values, 1)]}).encode()


def test_a_constant_correct_under_trait_metrics_is_refused_as_not_a_correctness_score():
    from evalcore.data.validation import EvalDataError, load_eval_log

    log = ("bfi.json", _questionnaire(["C"] * 6, [{"name": "inspect_evals/trait_ratio", "options": {}}]))
    with pytest.raises(EvalDataError) as refused:
        load_eval_log(log)
    message = str(refused.value)
    assert message.startswith("bfi.json: scorer 'any_choice' gives every sample the value C (CORRECT) and declares "
                              "the metrics trait_ratio, not accuracy: its value marks that an answer was given"), \
        message
    # the same scorer declaring accuracy is a correctness score: every answer right, accuracy 1
    right = load_eval_log(("right.json", _questionnaire(["C"] * 6, [{"name": "inspect_ai/accuracy"}])))
    assert right["correct"].tolist() == [1.0] * 6
    mixed = load_eval_log(("mixed.json", _questionnaire(["C", "I", "C"], [{"name": "inspect_evals/trait_ratio"}])))
    assert mixed["correct"].tolist() == [1.0, 0.0, 1.0]  # values that differ still decide, as before
