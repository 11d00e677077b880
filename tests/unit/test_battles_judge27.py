"""Issue 27, point 3: an AI judge's verdicts are the ``judge`` role, never human votes, and battles judged by an AI
alone get the judge's own Bradley-Terry ranking (labelled so) instead of an error. Known answers: the two-model
closed form (theta = logit of the mean verdict, sandwich se by hand) and a direct logistic fit; the real AlpacaEval
annotations in ../shared/data/ecosystem; MT-Bench fixtures in tests/data/ecosystem27/mt_bench (FastChat shapes)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from scipy.stats import norm

from evalcore.data.validation import load_eval_logs, report_of, validate
from evalcore.errors import EvalDataError
from evalcore.importers import pairwise
from evalcore.importers.base import LogFile
from evalcore.ppi.autoeval import METHOD_NAMES, bradley_terry_table
from evalcore.ppi.bradley_terry import bradley_terry_of_log, judge_bradley_terry

HERE = Path(__file__).resolve().parents[1] / "data" / "ecosystem27" / "mt_bench"
ALPACA = "ecosystem/alpaca_eval/alpaca-7b/alpaca_eval_gpt4/annotations.json"
MT_SINGLE = "ecosystem/mt_bench/gpt-4_single-origin.jsonl"
Z = norm.ppf(0.975)
FOR_JUDGE = "valid for the judge's preferences, not for people's"


def _two(judge) -> pd.DataFrame:
    return pd.DataFrame({"model_a": ["a"] * len(judge), "model_b": ["b"] * len(judge), "judge": judge})


# ------------------------------------------------------------------------------------------------ known answers


def test_two_models_closed_form_hard_verdicts():
    # b wins 3 of 4: p = 0.75, theta_b = logit(0.75) = ln 3; H = p(1-p) = 3/16; the residuals p - y are
    # -1/4 (x3) and 3/4: sample variance (ddof 1) = (3/16 + 9/16) / 3 = 1/4; se = sqrt(1/4 / 4) / (3/16) = 4/3
    table = judge_bradley_terry(_two([1.0, 1.0, 1.0, 0.0]), reference="a").set_index("model")
    assert table.loc["b", "coefficient"] == pytest.approx(math.log(3), abs=1e-9)
    assert table.loc["b", "se"] == pytest.approx(4 / 3, abs=1e-9)
    assert table.loc["b", "ci_low"] == pytest.approx(math.log(3) - Z * 4 / 3, abs=1e-9)
    assert table.loc["a", ["coefficient", "se"]].tolist() == [0.0, 0.0]
    assert table.attrs["labels"] == "judge" and (table.attrs["n"], table.attrs["N"]) == (0, 4)
    assert FOR_JUDGE in table.attrs["notes"][0] and "no battle has a human vote" in table.attrs["notes"][0]


def test_two_models_closed_form_probabilities_and_hard_mode():
    judge = [0.9, 0.8, 0.6, 0.3]
    # soft labels: p = mean = 0.65, theta = ln(0.65 / 0.35); residuals -0.25, -0.15, 0.05, 0.35: ddof-1 variance
    # (0.0625 + 0.0225 + 0.0025 + 0.1225) / 3 = 0.07; se = sqrt(0.07 / 4) / (0.65 * 0.35)
    table = judge_bradley_terry(_two(judge), reference="a").set_index("model")
    assert table.loc["b", "coefficient"] == pytest.approx(math.log(0.65 / 0.35), abs=1e-9)
    assert table.loc["b", "se"] == pytest.approx(math.sqrt(0.07 / 4) / 0.2275, abs=1e-9)
    # hard mode: 1, 1, 1, 0 -> the case above
    hard = judge_bradley_terry(_two(judge), reference="a", judge="hard").set_index("model")
    assert hard.loc["b", "coefficient"] == pytest.approx(math.log(3), abs=1e-9)
    # the other reference flips the sign
    flipped = judge_bradley_terry(_two(judge), reference="b").set_index("model")
    assert flipped.loc["a", "coefficient"] == pytest.approx(-math.log(0.65 / 0.35), abs=1e-9)


def _mt_pair_battles() -> pd.DataFrame:
    (imported,) = pairwise.convert([LogFile("gpt-4_pair.jsonl", (HERE / "gpt-4_pair.jsonl").read_bytes())])
    return imported.frame


def test_three_models_match_a_direct_logistic_fit():
    battles = _mt_pair_battles()
    # the fixture's verdicts, counted by hand (question 84: the orders disagree -> a tie; 91: 'error' -> left out)
    assert battles["judge"].tolist() == [1.0, 1.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.5, 0.0, 1.0]
    models = ["gpt-3.5-turbo", "llama-13b", "vicuna-13b"]
    ia = battles["model_a"].map(models.index).to_numpy()
    ib = battles["model_b"].map(models.index).to_numpy()
    y = battles["judge"].to_numpy()

    def loss(theta):  # reference gpt-3.5-turbo fixed at 0
        zeta = np.concatenate([[0.0], theta])
        eta = zeta[ib] - zeta[ia]
        return float(np.sum(np.logaddexp(0, eta) - y * eta))

    direct = minimize(loss, np.zeros(2), method="BFGS", options={"gtol": 1e-12}).x
    table = judge_bradley_terry(battles, reference="gpt-3.5-turbo").set_index("model")
    assert table.loc[["llama-13b", "vicuna-13b"], "coefficient"].to_numpy() == pytest.approx(direct, abs=1e-6)
    # sandwich se: H^-1 Cov(x (p - y)) H^-1 / n, from the direct fit
    zeta = np.concatenate([[0.0], direct])
    p = expit(zeta[ib] - zeta[ia])
    x = np.zeros((len(y), 3))
    x[np.arange(len(y)), ia], x[np.arange(len(y)), ib] = -1.0, 1.0
    x = x[:, 1:]
    h = (x * (p * (1 - p))[:, None]).T @ x / len(y)
    g = x * (p - y)[:, None]
    sigma = np.linalg.inv(h) @ np.cov(g, rowvar=False) @ np.linalg.inv(h)
    assert table.loc[["llama-13b", "vicuna-13b"], "se"].to_numpy() == pytest.approx(
        np.sqrt(np.diag(sigma) / len(y)), abs=1e-6)
    # the per-pair statistics path (report, engine) gives the same fit, labelled as the judge's
    canonical = validate(battles, kind="battles")
    of_log = bradley_terry_of_log(canonical, reference="gpt-3.5-turbo").set_index("model")
    assert of_log["coefficient"].to_numpy() == pytest.approx(table["coefficient"].to_numpy(), abs=1e-9)
    assert of_log["se"].to_numpy() == pytest.approx(table["se"].to_numpy(), abs=1e-9)
    assert of_log.attrs["labels"] == "judge" and (of_log.attrs["n"], of_log.attrs["N"]) == (0, 10)
    assert FOR_JUDGE in of_log.attrs["notes"][0]


def test_judge_only_refusals_speak_of_the_judge():
    undefeated = pd.DataFrame({"model_a": ["a", "a", "b"], "model_b": ["b", "c", "c"], "judge": [0.0, 0.0, 1.0]})
    with pytest.raises(EvalDataError) as caught:
        judge_bradley_terry(undefeated)
    message = str(caught.value)
    assert "a won every labeled comparison it took part in" in message
    assert "The AI judge's verdicts alone cannot rank these models" in message and "human" not in message
    apart = pd.DataFrame({"model_a": ["a", "c"], "model_b": ["b", "d"], "judge": [0.5, 0.5]})
    with pytest.raises(EvalDataError, match="no verdict of the AI judge compares a model of one group"):
        judge_bradley_terry(apart)


# ------------------------------------------------------------------------------------------------ the table and page logic


def test_table_of_judge_only_battles_is_the_judges_ranking():
    battles = _mt_pair_battles()
    table = bradley_terry_table(validate(battles, kind="battles"), reference="gpt-3.5-turbo")
    assert set(table["method"]) == {METHOD_NAMES["judge"]} == {"AI judge only (no human votes)"}
    assert table.attrs["labels"] == "judge" and (table.attrs["n"], table.attrs["N"]) == (0, 10)
    assert any(FOR_JUDGE in note for note in table.attrs["notes"])


def test_votes_without_the_judges_verdict_fall_back_to_classical():
    # MT-Bench's human split and gpt4_pair split loaded together: the votes and the verdicts are on different rows
    frame = load_eval_logs([HERE / "mt_bench_human_judgments_human.json",
                            HERE / "mt_bench_human_judgments_gpt4_pair.json"])
    assert frame["outcome"].notna().sum() == 6 and frame["judge"].notna().sum() == 4
    table = bradley_terry_table(frame, reference="alpaca-13b")
    assert set(table["method"]) == {METHOD_NAMES["classical"]}
    assert any(note.startswith("6 of 6 battles with a human vote have no verdict of the AI judge") for note in
               table.attrs["notes"])
    of_log = bradley_terry_of_log(frame, reference="alpaca-13b")
    assert of_log["lam"].iloc[0] == 0.0 and of_log.attrs["labels"] == "human"
    np.testing.assert_allclose(of_log["coefficient"], table["coefficient"], atol=1e-9)
    # classical fit of the 6 votes: alpaca-13b vs gpt-4 1-1, gpt-4 vs claude-v1 two ties, claude-v1 vs alpaca 1-1:
    # every pair even, so every strength is 0
    np.testing.assert_allclose(table["coefficient"], 0.0, atol=1e-9)


# ------------------------------------------------------------------------------------------------ importers


def test_real_alpaca_eval_is_the_judges_ranking(shared_file):
    frame = load_eval_logs([shared_file(ALPACA)])
    report = report_of(frame)
    assert "outcome" not in frame and frame["judge"].notna().sum() == 805
    assert not any("have a human vote" in note for note in report.notes)
    table = bradley_terry_table(frame, reference="alpaca-7b").set_index("model")
    # the judge prefers alpaca-7b (model_b) in 205 + 16/2 = 213 of 805: text_davinci_003 = logit(592/805)
    p = 213 / 805
    assert table.loc["text_davinci_003", "coefficient"] == pytest.approx(math.log(592 / 213), abs=1e-9)
    variance = (205 + 16 * 0.25 - 805 * p * p) / 804   # ddof-1 variance of the verdicts
    assert table.loc["text_davinci_003", "se"] == pytest.approx(math.sqrt(variance / 805) / (p * (1 - p)),
                                                                 abs=1e-9)
    assert table.loc["text_davinci_003", "rank"] == 1 and table.attrs["labels"] == "judge"


def test_report_section_of_judge_only_battles(shared_file):
    from evalcore.report.build import build_report
    from evalcore.report.html import render

    report = build_report(load_eval_logs([shared_file(ALPACA)]))
    (section,) = report.sections
    assert section.title == "Pairwise battles: the AI judge's ranking (Bradley-Terry)"
    assert "AI judge's verdicts on 805 battles; no battle has a human vote" in section.intro
    assert FOR_JUDGE in section.meaning
    assert section.facts["top"] == "text_davinci_003"
    assert section.facts["estimate"] == pytest.approx(math.log(592 / 213), abs=1e-9)
    page = render(report)
    assert "human-judged" not in page and "battles with a human vote" not in page


def test_report_section_of_human_votes_says_votes():
    from evalcore.report.build import build_report

    frame = load_eval_logs([HERE / "mt_bench_human_judgments_human.json"])
    report = build_report(frame)
    (section,) = report.sections
    assert section.title == "Pairwise battles (Bradley-Terry)"
    assert section.intro == "Strength of each model from 6 battles with a human vote."


def test_mt_bench_pair_fixture_notes_and_text():
    (imported,) = pairwise.convert([LogFile("gpt-4_pair.jsonl", (HERE / "gpt-4_pair.jsonl").read_bytes())])
    frame = imported.frame
    assert "outcome" not in frame
    assert frame["explanation"].iloc[0] == "Assistant A is better on question 81. [[A]]"
    assert frame["input"].iloc[0].startswith("[User Question]\nQuestion 81")
    assert "Verdicts by the AI judge gpt-4 (pair-v2) are the judge role; no battle has a human vote." in \
        " ".join(imported.notes)


def test_mt_bench_gpt4_pair_split_is_the_judge():
    (imported,) = pairwise.convert([LogFile("gpt4_pair.json",
                                            (HERE / "mt_bench_human_judgments_gpt4_pair.json").read_bytes())])
    frame = imported.frame
    assert "outcome" not in frame and frame["judge"].tolist() == [1.0, 1.0, 0.5, 0.5]
    assert frame["input"].iloc[2] == "Draft a professional email seeking feedback."
    assert imported.notes[-1].startswith("4 verdicts by the AI judge gpt-4 (pair-v2) are the judge role; no battle "
                                         "in this file has a human vote.")


def test_mt_bench_human_split_is_the_outcome():
    (imported,) = pairwise.convert([LogFile("human.json", (HERE / "mt_bench_human_judgments_human.json").read_bytes())])
    frame = imported.frame
    assert "judge" not in frame and frame["outcome"].tolist() == [1.0, 0.0, 0.5, 0.5, 0.0, 1.0]
    assert imported.notes[-1].startswith("6 votes by 4 people (author_0, author_2, expert_0, expert_1) are human "
                                         "votes (the outcome role).")


def test_mt_bench_single_text_roles(shared_file):
    path = shared_file(MT_SINGLE)
    (imported,) = pairwise.convert([LogFile(path.name, path.read_bytes())])
    frame = imported.frame
    # the first judgment (question 81, score -1, judgment '$ERROR$') is left out: the first row is question 85
    first = frame.iloc[0]
    assert first["example_id"] == "85/turn 1"
    assert first["input"].startswith("[Instruction]\nPlease act as an impartial judge and evaluate ")
    assert first["explanation"].startswith("The assistant's response is highly creative and detailed")
    assert frame["input"].notna().all() and frame["explanation"].notna().all()
    assert "score = the AI judge's rating from 1 to 10 by gpt-4" in " ".join(imported.notes)


# ------------------------------------------------------------------------------------------------ several judges


def _annotations(generator: str, annotator: str, preferences: list[float]) -> bytes:
    import json

    return json.dumps([{"instruction": f"q{i}", "output_1": "x", "generator_1": "gpt4_turbo", "output_2": "y",
                        "generator_2": generator, "annotator": annotator, "preference": p}
                       for i, p in enumerate(preferences)]).encode()


def test_battles_of_different_ai_judges_are_pooled_with_a_warning_naming_each_judge():
    one = ("qwen/annotations.json", _annotations("qwen", "weighted_alpaca_eval_gpt4_turbo", [2.0, 1.0, 1.5]))
    other = ("mistral/annotations.json", _annotations("mistral", "alpaca_eval_cot_gpt4_turbo_fn", [1.0, 1.0]))
    frame = load_eval_logs([one, other])
    assert len(frame) == 5  # pooled, as before
    [warning] = [w for w in report_of(frame).warnings if "different AI judges" in w]
    assert ("(weighted_alpaca_eval_gpt4_turbo: qwen/annotations.json; alpaca_eval_cot_gpt4_turbo_fn: "
            "mistral/annotations.json)") in warning
    same = ("mistral/annotations.json", _annotations("mistral", "weighted_alpaca_eval_gpt4_turbo", [1.0, 1.0]))
    assert not [w for w in report_of(load_eval_logs([one, same])).warnings if "different AI judges" in w]


def test_the_reference_models_own_annotations_are_refused_saying_so():
    itself = _annotations("gpt4_turbo", "weighted_alpaca_eval_gpt4_turbo", [1.5, 1.5, 1.5])
    with pytest.raises(EvalDataError, match=r"^annotations\.json: all 3 annotations compare gpt4_turbo with itself "
                                            r"\(the reference model's own folder\)"):
        load_eval_logs([("annotations.json", itself)])


def test_mt_bench_judge_failures_are_counted_apart_and_uneven_turns_noted():
    import json

    def line(q: int, turn: int, score: float, judgment: str = "Rating: [[8]]") -> str:
        return json.dumps({"question_id": q, "model": "m", "judge": ["gpt-4", "single-v1"], "user_prompt": "p",
                           "judgment": judgment, "score": score, "turn": turn, "tstamp": 1.0})

    lines = [line(81, 1, 8), line(82, 1, 6), line(81, 2, -1, "$ERROR$"), line(82, 2, -1, "no rating here")]
    frame = load_eval_logs([("gpt-4_single.jsonl", "\n".join(lines).encode())], min_models=1)
    assert frame["score"].tolist() == [8.0, 6.0]
    notes = report_of(frame).notes
    assert ("gpt-4_single.jsonl: 1 of 4 judgments were left out: the call to the judge failed (judgment '$ERROR$', "
            "score -1).") in notes
    assert any("1 of 4 judgments were left out: the judge's output had no rating" in n for n in notes)
    assert ("gpt-4_single.jsonl: the judgments left out are not spread evenly over the turns (turn 1: 0%, turn 2: "
            "100% left out): a mean over the kept ones leans towards turn 1.") in notes
