"""Leaderboard and Subgroups answer first (issue 26): each page opens with one sentence with the number and its
interval at the sidebar's level, then its chart sorted by the estimate (the leader first); a one-model log gets a
plain explanation and its own scores, never a red error; the sidebar's level is the level of both pages.

Known answers are counted by hand from small hand-made logs (accuracies, Wilson and normal intervals, which model
leads, which models the data tell apart); the bootstrap and empirical Bayes numbers are checked against evalcore's
functions called here on the same data.
"""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from evalcore.leaderboard.answer import lead_answer
from evalcore.data.validation import validate
from evalcore.stats import glossary
from evalcore.subgroups.answer import range_sentence
from evalcore.subgroups.estimates import empirical_bayes
from test_pages import assert_no_exception, charts, csv_bytes, goto, open_app, shown, table_with, texts, upload

Z90, Z95 = 1.6448536269514722, 1.959963984540054
INSPECT_ONE_MODEL = "ecosystem/inspect_ai/2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"


def wilson(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson score interval, written out here (not evalcore's)."""
    centre, half = (k + z * z / 2) / (n + z * z), z / (n + z * z) * math.sqrt(k * (n - k) / n + z * z / 4)
    return centre - half, centre + half


def answer(at) -> str:
    """The page's answer sentence: its first subheader, as the browser shows it."""
    return shown(at.main.subheader[0].value)


def first_chart(at) -> dict:
    return json.loads(charts(at)[0].proto.spec)


def set_level(at, level: float):
    goto(at, "models")
    at.select_slider(key="w_level").set_value(level)
    at.run()
    assert_no_exception(at)
    return at


# ------------------------------------------------------------------------------------------------------------------
# the sentences, from hand-made tables


def test_lead_answer_counts_the_models_within_the_interval_and_those_told_apart():
    overall = pd.DataFrame({"model": ["b", "a", "c"], "estimate": [0.5, 0.85, 0.83],
                            "ci_low": [0.44, 0.793, 0.77], "ci_high": [0.56, 0.907, 0.89]})
    differences = pd.DataFrame({"model_a": ["a", "a", "c"], "model_b": ["c", "b", "b"],
                                "diff": [0.02, 0.35, 0.33], "ci_low": [-0.013, 0.28, 0.26],
                                "ci_high": [0.053, 0.42, 0.40]})
    assert lead_answer(overall, 0.95, differences) == (
        "a leads on overall accuracy at 0.850 (95% interval 0.793–0.907); 1 other model is within its interval; the "
        "simultaneous 95% intervals of all pairwise differences tell it apart from 1 of the 2 others.")
    both = differences.assign(ci_low=[0.001, 0.28, 0.26])
    assert lead_answer(overall, 0.9, both).endswith("90% intervals of all pairwise differences tell it apart from "
                                                    "all 2 others.")
    two = overall[overall["model"] != "b"]
    pair = differences.iloc[:1]
    assert lead_answer(two, 0.95, pair).endswith("the simultaneous 95% interval of their difference includes 0: the "
                                                 "data do not tell the two apart.")
    assert lead_answer(overall, 0.95) == ("a leads on overall accuracy at 0.850 (95% interval 0.793–0.907); 1 other "
                                          "model is within its interval.")


def test_range_sentence_names_both_ends_and_the_narrowing_of_small_subgroups():
    # direct widths 0.4, 0.3, 0.1; EB widths 0.2, 0.24, 0.1; median n 10: the small subgroups are g1 and g2,
    # narrowed by 1 - 0.2/0.4 = 0.5 and 1 - 0.24/0.3 = 0.2: 35.0% on average
    table = pd.DataFrame({"model": "m", "group": ["g1", "g2", "g3"], "n": [5, 10, 40],
                          "direct": [0.6, 0.7, 0.8], "direct_low": [0.4, 0.55, 0.75], "direct_high": [0.8, 0.85, 0.85],
                          "eb": [0.65, 0.72, 0.79], "eb_low": [0.55, 0.6, 0.74], "eb_high": [0.75, 0.84, 0.84]})
    assert range_sentence(table, "m", 0.9) == (
        "For m, subgroup accuracy ranges from 0.650 (g1, 90% interval 0.550–0.750) to 0.790 (g3, 90% interval "
        "0.740–0.840); empirical Bayes borrows strength across subgroups, so the intervals of its small subgroups "
        "(at most 10 examples) are 35.0% narrower on average than their direct intervals.")
    direct = table.rename(columns={"direct": "estimate", "direct_low": "ci_low", "direct_high": "ci_high"})
    assert range_sentence(direct, "m", 0.95, "score", empirical_bayes=False) == (
        "For m, subgroup mean score ranges from 0.600 (g1, 95% interval 0.400–0.800) to 0.800 (g3, 95% interval "
        "0.750–0.850) (direct estimates of 3 subgroups).")
    assert range_sentence(direct.iloc[:1], "m", 0.95, empirical_bayes=False) == (
        "m: accuracy 0.600 (95% interval 0.400–0.800) in its single subgroup, g1.")


# ------------------------------------------------------------------------------------------------------------------
# Leaderboard


def three_model_log() -> pd.DataFrame:
    """Task t1 (category 'other', 50 questions) and t2 ('philosophy', 100), the same questions for every model.
    alpha: 45/50 and 80/100, overall 0.85 (the mean over tasks); gamma: 43/50 and 80/100, 0.83 (it misses two of
    alpha's t1 questions, nothing else differs); beta: 25/50 and 50/100, 0.50."""
    right = {"alpha": (45, 80), "beta": (25, 50), "gamma": (43, 80)}
    rows = [{"model": model, "example_id": f"{task}-{i}", "task": task, "category": category,
             "correct": float(i < k)}
            for model, ks in right.items()
            for (task, category, n), k in zip((("t1", "other", 50), ("t2", "philosophy", 100)), ks)
            for i in range(n)]
    return pd.DataFrame(rows)


def alpha_overall(z: float) -> dict:
    """alpha's overall number as every page shows it, by hand: se = sqrt(0.9 * 0.1 / 50 + 0.8 * 0.2 / 100) / 2 =
    0.0292, the normal interval 0.85 -/+ z se joined with Wilson's at n_eff = 0.85 * 0.15 / se^2 = 150."""
    se = math.sqrt(0.9 * 0.1 / 50 + 0.8 * 0.2 / 100) / 2
    n_eff = 0.85 * 0.15 / se**2
    assert n_eff == pytest.approx(150.0)
    low, high = wilson(round(0.85 * n_eff, 12), n_eff, z)
    return {"ci_low": min(low, 0.85 - z * se), "ci_high": max(high, 0.85 + z * se)}


def test_leaderboard_opens_with_the_leader_its_interval_and_the_models_told_apart():
    log = three_model_log()
    at = open_app()
    upload(at, "three.csv", csv_bytes(log))
    goto(at, "leaderboard")
    assert not texts(at.error) and not texts(at.warning)
    top = alpha_overall(Z95)
    assert answer(at) == (
        f"alpha leads on overall accuracy at 0.850 (95% interval {top['ci_low']:.3f}–{top['ci_high']:.3f}); 1 other "
        "model is within its interval; the simultaneous 95% intervals of all pairwise differences tell it apart "
        "from 1 of the 2 others.")
    # the overall chart comes right after the answer, best first
    assert first_chart(at)["data"][0]["y"] == ["alpha", "gamma", "beta"]
    # one row per model, best overall first; 'overall' first after 'model' (not between 'other' and 'philosophy')
    wide = table_with(at, "model", "overall", "other", "philosophy")
    assert list(wide.columns) == ["model", "overall", "other", "philosophy"]
    assert list(wide["model"]) == ["alpha", "gamma", "beta"]
    assert wide["overall"].iloc[0] == f"0.850 ({top['ci_low']:.3f}–{top['ci_high']:.3f})"
    # technical tables in expanders named for what they hold; the paper named, not "the paper"
    labels = [e.label for e in at.expander]
    assert any(label.startswith("Every score with its interval") for label in labels)
    assert "Pairwise differences: the table" in labels
    assert any(label.startswith("Rank intervals: best and worst rank") for label in labels)
    captions = " ".join(texts(at.caption))
    assert "Longjohn et al. (2024)" in captions and "the paper" not in captions
    # method names carry their glossary line as a tooltip
    helps = {s.value: s.proto.help for s in at.main.subheader}
    assert helps["Pairwise differences"] == glossary.TERMS["simultaneous"]
    assert helps["Rank intervals"] == glossary.TERMS["rank interval"]

    # the comparison intervals are an option: the chart shows 83.4%, the answer stays at the chosen level
    at.toggle(key="lb_compare").set_value(True)
    at.run()
    assert_no_exception(at)
    assert "(95% interval" in answer(at) and "83.4%" not in answer(at)
    assert "83.4% intervals (normal/Wilson) (comparison)" in first_chart(at)["layout"]["title"]["subtitle"]["text"]

    # the sidebar's level is the answer's level
    at.toggle(key="lb_compare").set_value(False)
    set_level(at, 0.9)
    goto(at, "leaderboard")
    top90 = alpha_overall(1.6448536269514722)
    assert answer(at).startswith(f"alpha leads on overall accuracy at 0.850 (90% interval {top90['ci_low']:.3f}–"
                                 f"{top90['ci_high']:.3f})")
    assert "simultaneous 90% intervals" in answer(at)
    assert any(c.startswith("Intervals: 90% bootstrap percentile intervals") for c in texts(at.caption))


def one_model_log() -> pd.DataFrame:
    """solo: 7 of 10 right on t1, 3 of 10 on t2."""
    return pd.DataFrame([{"model": "solo", "example_id": f"{task}-{i}", "task": task, "correct": float(i < k)}
                         for task, k in (("t1", 7), ("t2", 3)) for i in range(10)])


def test_a_one_model_log_gets_its_scores_and_a_plain_explanation_on_the_leaderboard():
    at = open_app()
    upload(at, "solo.csv", csv_bytes(one_model_log()))
    goto(at, "leaderboard")
    assert not at.exception and not texts(at.error) and not texts(at.warning)
    [note] = texts(at.info)
    assert note.startswith("This log holds one model, solo, so there is no ranking to show")
    assert "needs at least two models" in note and "Data page" in note
    # overall: the mean over tasks 0.5, se = sqrt(0.7 * 0.3 / 10 + 0.3 * 0.7 / 10) / 2, normal interval
    se = math.sqrt(0.021 + 0.021) / 2
    assert answer(at) == f"solo: overall accuracy 0.500 (95% interval {0.5 - Z95 * se:.3f}–{0.5 + Z95 * se:.3f})."
    whole = table_with(at, "model", "n_tasks", "estimate", "ci_low", "ci_high")
    assert whole[["ci_low", "ci_high"]].iloc[0].tolist() == pytest.approx([0.5 - Z95 * se, 0.5 + Z95 * se])
    per_task = table_with(at, "task", "n", "estimate", "ci_low", "ci_high")
    assert per_task["task"].tolist() == ["t1", "t2"] and per_task["n"].tolist() == [10, 10]
    assert per_task["estimate"].tolist() == pytest.approx([0.7, 0.3])
    for (_, row), k in zip(per_task.iterrows(), (7, 3)):
        assert [row["ci_low"], row["ci_high"]] == pytest.approx(wilson(k, 10, Z95))
    assert first_chart(at)["data"][0]["y"] == ["t1", "t2"]  # best first


def test_one_model_chosen_of_two_is_a_warning_pointing_to_the_models_page():
    two = pd.concat([one_model_log(), one_model_log().assign(model="duo")], ignore_index=True)
    at = open_app()
    upload(at, "two.csv", csv_bytes(two))
    goto(at, "models")
    at.multiselect(key="w_models").set_value(["solo"])
    at.run()
    goto(at, "leaderboard")
    assert not texts(at.error)
    assert any("Choose at least two models on the Models page" in w for w in texts(at.warning))
    assert len(at.get("page_link")) == 1 and not charts(at)


def test_the_one_model_inspect_log_shows_no_error_on_leaderboard_and_subgroups(shared_file):
    """gpt-4o-mini, 8 of 10 right on the task 'popularity' (the log's header: accuracy 0.8)."""
    path = shared_file(INSPECT_ONE_MODEL)
    at = open_app()
    upload(at, path.name, path.read_bytes(), "application/zip")
    goto(at, "leaderboard")
    assert not at.exception and not texts(at.error)
    low, high = wilson(8, 10, Z95)
    assert answer(at) == f"openai/gpt-4o-mini: overall accuracy 0.800 (95% interval {low:.3f}–{high:.3f})."
    assert any("needs at least two models" in i for i in texts(at.info))
    goto(at, "subgroups")
    assert not at.exception and not texts(at.error)
    [note] = texts(at.info)
    assert note.startswith("The selection has a single group")
    assert answer(at) == (f"openai/gpt-4o-mini: accuracy 0.800 (95% interval {low:.3f}–{high:.3f}) in its single "
                          "subgroup, all.")


# ------------------------------------------------------------------------------------------------------------------
# Subgroups

SIZES = {"g1": 5, "g2": 8, "g3": 10, "g4": 15, "g5": 20, "g6": 30}
RIGHT = {"able": {"g1": 2, "g2": 3, "g3": 5, "g4": 7, "g5": 9, "g6": 15},     # 41 of 88
         "zeta": {"g1": 4, "g2": 6, "g3": 7, "g4": 11, "g5": 15, "g6": 24}}  # 67 of 88: the leader


def grouped_log() -> pd.DataFrame:
    rows, k = [], 0
    for group, n in SIZES.items():
        for i in range(n):
            rows += [{"model": model, "example_id": f"q{k}", "group": group, "correct": float(i < right[group])}
                     for model, right in RIGHT.items()]
            k += 1
    return pd.DataFrame(rows)


def test_subgroups_open_on_the_leader_sorted_by_estimate_at_the_sidebar_level():
    log = grouped_log()
    at = open_app()
    upload(at, "grouped.csv", csv_bytes(log))
    set_level(at, 0.9)
    goto(at, "subgroups")
    at.selectbox(key="sg_reg").set_value("mean")
    at.run()
    assert_no_exception(at)
    assert not texts(at.error) and not texts(at.warning)
    assert at.selectbox(key="sg_model").value == "zeta"  # the leader, not the alphabetically first
    expected = empirical_bayes(validate(log), metric="correct", regressor="mean", alpha=0.1, seed=0, features=[])
    table = table_with(at, "model", "group", "n", "direct", "direct_low", "direct_high", "eb", "eb_low", "eb_high")
    pd.testing.assert_frame_equal(table.reset_index(drop=True)[expected.columns], expected, check_dtype=False,
                                  atol=1e-9)
    # the direct intervals are 90% Wilson intervals, counted by hand
    for _, row in table.iterrows():
        k, n = RIGHT[row["model"]][row["group"]], SIZES[row["group"]]
        assert [row["direct_low"], row["direct_high"]] == pytest.approx(wilson(k, n, Z90)), (row["model"], k, n)
    assert any("cover the true subgroup values 90% of the time on average across subgroups" in i
               for i in texts(at.info))
    zeta = expected[expected["model"] == "zeta"]
    low, high = zeta.loc[zeta["eb"].idxmin()], zeta.loc[zeta["eb"].idxmax()]
    assert (low["group"], high["group"]) == ("g3", "g6")
    small = zeta[zeta["n"] <= 12]  # median n 12.5: g1, g2, g3
    narrower = (1 - (small["eb_high"] - small["eb_low"]) / (small["direct_high"] - small["direct_low"])).mean()
    assert answer(at) == (
        f"For zeta, subgroup accuracy ranges from {low['eb']:.3f} (g3, 90% interval {low['eb_low']:.3f}–"
        f"{low['eb_high']:.3f}) to {high['eb']:.3f} (g6, 90% interval {high['eb_low']:.3f}–{high['eb_high']:.3f}); "
        "empirical Bayes borrows strength across subgroups, so the intervals of its small subgroups (at most 12 "
        f"examples) are {100 * narrower:.3g}% narrower on average than their direct intervals.")
    # the forest plot: zeta's subgroups, highest EB estimate first
    forest = first_chart(at)
    order = [t.split(" (n=")[0] for t in forest["layout"]["yaxis"]["ticktext"]]
    assert order == list(zeta.sort_values("eb", ascending=False)["group"])
    assert "90%" in forest["layout"]["title"]["subtitle"]["text"]
    overall = [c for c in texts(at.caption) if c.startswith("zeta: overall accuracy (mean over tasks)")]
    assert len(overall) == 1 and "0.761 (" in overall[0]  # 67 / 88
    # the fit table sits in "Fit diagnostics", each column explained
    [fit] = [e for e in at.expander if e.label == "Fit diagnostics"]
    assert list(fit.dataframe[0].value["model"]) == ["able", "zeta"]
    for column in ("units", "median_n", "sr_r2", "mean_shrinkage", "A_min, A_max", "kappa_min, kappa_max"):
        assert f"`{column}`:" in fit.markdown[0].value, column
    assert "Fogliato, Patil, Akpinar & Monfort (2024)" in " ".join(texts(at.caption))
    assert [s.proto.help for s in at.main.subheader if s.value == "Shrinkage"] == [glossary.TERMS["shrinkage"]]


def test_the_summary_view_uses_the_sidebar_level():
    """An uploaded per-subgroup summary: DT = estimate -/+ z se with z at the sidebar's 90%."""
    summary = pd.DataFrame({"group": [f"g{i}" for i in range(8)],
                            "estimate": [0.55, 0.6, 0.62, 0.7, 0.71, 0.75, 0.8, 0.66],
                            "se": [0.1, 0.08, 0.05, 0.04, 0.09, 0.03, 0.06, 0.07]})
    at = set_level(open_app(), 0.9)
    goto(at, "subgroups")
    at.radio(key="sg_source").set_value("summary")
    at.run()
    at.file_uploader(key="sga_upload").set_value(("summary.csv", csv_bytes(summary), "text/csv"))
    at.run()
    assert_no_exception(at)
    assert not texts(at.error)
    assert not [s for s in at.selectbox if s.key == "sga_level"]  # no level of its own
    table = table_with(at, "group", "eb", "eb_low", "eb_high", "direct_low")
    assert table["direct_low"].tolist() == pytest.approx((summary["estimate"] - Z90 * summary["se"]).tolist())
    assert any("Confidence level 90%" in c for c in texts(at.caption))
    assert answer(at).startswith("Subgroup estimate ranges from") and "90% interval" in answer(at)


def test_the_bayesian_section_names_the_paper_and_keeps_its_diagnostics_in_an_expander():
    at = open_app()
    upload(at, "three.csv", csv_bytes(three_model_log()))
    goto(at, "leaderboard")
    at.toggle(key="lb_bayes").set_value(True)
    at.run()
    assert_no_exception(at)
    assert not texts(at.error)
    captions = texts(at.caption)
    assert any(c.startswith(f"Beta-binomial model per model across tasks ({glossary.PAPERS['leaderboard']}, "
                            "Section 2.2)") for c in captions)
    assert any("posterior predictive intervals (as in Longjohn et al. (2024), Table 7)" in c for c in captions)
    assert not any("the paper" in c for c in captions)
    [diagnostics] = [e for e in at.expander if e.label.startswith("Sampler diagnostics")]
    board = diagnostics.dataframe[0].value
    assert {"rhat", "ess_bulk", "ess_tail"} <= set(board.columns)
    assert len(board) == 3 * (2 + 2 + 1)  # 3 models x (2 tasks, 2 categories, overall)
    assert [s.proto.help for s in at.main.subheader if s.value == "Bayesian hierarchical model"] == [
        glossary.TERMS["posterior"]]


def test_mmlu_pro_opens_on_its_leader_with_overall_first(shared_file):
    """MMLU-Pro, six questions per category answered by all 29 models: the leader is the model with the highest mean
    over the 14 categories (one task each), counted here with pandas; the wide table puts 'overall' right after
    'model' and lists the models best first."""
    raw = pd.read_csv(shared_file("mmlu_pro_per_question.csv.gz"))
    answered_by_all = raw.groupby("question_id")["model"].nunique() == raw["model"].nunique()
    common = raw[raw["question_id"].isin(answered_by_all[answered_by_all].index)]
    questions = common.drop_duplicates("question_id").groupby("category").head(6)["question_id"]
    frame = common[common["question_id"].isin(questions)]
    means = frame.groupby(["model", "category"])["correct"].mean().groupby("model").mean()
    best = means.sort_values(ascending=False, kind="stable")
    at = open_app()
    upload(at, "mmlu_pro.csv", csv_bytes(frame))
    goto(at, "leaderboard")
    assert not texts(at.error)
    leader = best.index[0]
    assert answer(at).startswith(f"{leader} leads on overall accuracy at {best.iloc[0]:.3f} (95% interval ")
    wide = table_with(at, "model", "overall", "other", "philosophy")
    assert list(wide.columns[:2]) == ["model", "overall"]
    assert sorted(wide.columns[2:]) == sorted(frame["category"].unique())
    shown_means = [float(v.split(" (")[0]) for v in wide["overall"]]
    assert shown_means == sorted(shown_means, reverse=True) and wide["model"].iloc[0] == leader
    assert first_chart(at)["data"][0]["y"][0] == leader
