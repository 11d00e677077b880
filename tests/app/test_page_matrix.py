"""Every page on data of every size and shape: never an uncaught exception, always results or a message saying
what the page needs.

The matrix uploads each data set through the Data page (as a user would) and opens the seven pages in turn. For
each (data, page) it states what must be shown: results (a chart or a table, no error) or a message (st.info,
st.warning or st.error) containing a given phrase. Further tests open the settings where defaults could break on
small data (the Leaderboard's top-k slider, the Bayesian toggle and the weighting map with fewer than three
categories, the Labeling budget with fewer examples than strata, the AI-assisted page without labels, ...).
Known answers (accuracies, differences, numbers of pairs) are counted by hand from the generated data.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from test_pages import assert_no_exception, charts, csv_bytes, open_app, table_with, texts, upload

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"data": "Data", "models": "Models", "calibration": "Calibration", "subgroups": "Subgroups",
         "leaderboard": "Leaderboard", "sampling": "Labeling budget", "autoeval": "AI-assisted evaluation",
         "report": "Report"}

# ------------------------------------------------------------------------------------------------------------------
# data


def generated_log(n_models: int, n_examples: int, *, tasks: int = 3, categories: int = 3, groups: int = 4,
                  labeled: float = 0.7, seed: int = 0) -> pd.DataFrame:
    """A per-example log: ``n_models`` x ``n_examples`` rows with correct, confidence, task, category, group.

    Example i belongs to task i % tasks, category (i % tasks) % categories and group i % groups; a fraction
    ``labeled`` of the examples carries a label, the same examples for every model (a label belongs to the example).
    """
    rng = np.random.default_rng(seed)
    unlabeled = rng.random(n_examples) >= labeled
    frames = []
    for m in range(n_models):
        correct = (rng.random(n_examples) < rng.uniform(0.3, 0.9)).astype(float)
        correct[unlabeled] = np.nan
        i = np.arange(n_examples)
        frames.append(pd.DataFrame({
            "model": f"model-{m:02d}", "example_id": [f"q{k}" for k in i], "task": [f"task-{k % tasks}" for k in i],
            "category": [f"cat-{(k % tasks) % categories}" for k in i], "group": [f"g{k % groups}" for k in i],
            "correct": correct, "confidence": np.clip(rng.beta(4, 2, n_examples), 0.01, 0.99).round(4)}))
    return pd.concat(frames, ignore_index=True)


def readme_example() -> pd.DataFrame:
    """The example log of the README's "Data formats" section (the first CSV block), as a user would save it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Data formats", 1)[1].split("```csv\n", 1)[1].split("```", 1)[0]
    return pd.read_csv(io.StringIO(block))


README_EXAMPLE = readme_example()


def all_labeled(n_models: int, n_examples: int, value: float) -> pd.DataFrame:
    return generated_log(n_models, n_examples, labeled=1.0).assign(correct=value)


def single_labeled_example() -> pd.DataFrame:
    """Two models x 6 examples; only example q0 is labeled (for both models)."""
    log = generated_log(2, 6, labeled=1.0)
    return log.assign(correct=log["correct"].where(log["example_id"] == "q0"))


def score_only() -> pd.DataFrame:
    log = generated_log(3, 20).drop(columns="confidence")
    return log.assign(score=0.25 + 0.5 * log.pop("correct"))


def battles(votes: bool) -> pd.DataFrame:
    """Two models, 20 battles judged by an AI; with a human vote on every battle or on none."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"model_a": ["A", "B"] * 10, "model_b": ["B", "A"] * 10,
                          "judge": rng.uniform(0.05, 0.95, 20).round(3)})
    if votes:
        frame["outcome"] = (rng.random(20) < frame["judge"]).astype(int)
    return frame


def repeated(n_models: int, epochs: int, n_examples: int) -> pd.DataFrame:
    """A log with ``epochs`` samples of every (model, example), whose correctness differs between samples."""
    return pd.concat([generated_log(n_models, n_examples, seed=e).assign(epoch=e) for e in range(epochs)],
                     ignore_index=True)


SUMMARY_2 = pd.DataFrame({"model": ["a", "b"], "task": ["t", "t"], "category": ["c", "c"], "n": [100, 100],
                          "n_correct": [60, 70]})

# ------------------------------------------------------------------------------------------------------------------
# what a page must show

RESULTS = "results"  # a chart or a table, and no error
REPORT = "report"  # the report's download button and its summary, and no error


@dataclass(frozen=True)
class Either:
    """Results, or a message containing ``phrase`` (for views whose defaults may fit small data or not)."""

    phrase: str


LOG_NEEDED = "per-example log"
NEEDS_TWO = "at least two models"
FEW_UNITS = Either("units with labels")  # empirical Bayes needs several (model, group) units
FEW_STRATA = Either("strata")  # the pool is too small for the default number of strata

ALL_RESULTS = {**dict.fromkeys(PAGES, RESULTS), "report": REPORT}
LOG_ONLY = {"calibration": LOG_NEEDED, "subgroups": LOG_NEEDED, "sampling": LOG_NEEDED, "autoeval": LOG_NEEDED}
NO_LOG = {"calibration": LOG_NEEDED, "subgroups": LOG_NEEDED, "leaderboard": "leaderboard needs",
          "sampling": LOG_NEEDED}

#: name -> (data, expectations differing from "results on every page")
CASES = {
    "1 model": (lambda: generated_log(1, 30), {"leaderboard": NEEDS_TWO, "sampling": FEW_STRATA}),
    "2 models": (lambda: generated_log(2, 30), {"sampling": FEW_STRATA}),
    "29 models": (lambda: generated_log(29, 12), {"sampling": FEW_STRATA}),
    "1 row": (lambda: generated_log(1, 1, labeled=1.0),
              {"subgroups": FEW_UNITS, "leaderboard": NEEDS_TWO, "sampling": Either("sampling needs at least 2"),
               "autoeval": "at least 2 human labels"}),
    "1 model x 2 examples": (lambda: generated_log(1, 2, labeled=1.0),
                             {"subgroups": FEW_UNITS, "leaderboard": NEEDS_TWO, "sampling": FEW_STRATA,
                              "autoeval": "at least 10 fully labeled examples"}),
    "a single labeled example": (single_labeled_example,
                                 {"subgroups": FEW_UNITS, "sampling": FEW_STRATA,
                                  "autoeval": "at least 2 human labels"}),
    "all correct": (lambda: all_labeled(3, 20, 1.0), {"sampling": FEW_STRATA}),
    "all wrong": (lambda: all_labeled(3, 20, 0.0), {"sampling": FEW_STRATA}),
    "one task, group and category": (lambda: generated_log(3, 20, tasks=1, categories=1, groups=1),
                                     {"subgroups": FEW_UNITS, "sampling": FEW_STRATA}),
    "no confidence": (lambda: generated_log(3, 20).drop(columns="confidence"),
                      {"calibration": "`confidence`", "sampling": "proxy", "autoeval": "annotator"}),
    "score only": (score_only, {"calibration": "`correct`", "leaderboard": "0/1 correctness",
                                "sampling": "0/1 correctness", "autoeval": "annotator"}),
    "unlabeled only": (lambda: generated_log(3, 20).assign(correct=np.nan),
                       {"models": "no labeled metric", "calibration": "No labeled row", "subgroups": "labeled metric",
                        "leaderboard": "0/1 correctness", "sampling": FEW_STRATA,
                        "autoeval": "human-labeled metric"}),
    "README example": (lambda: README_EXAMPLE,
                       {"subgroups": FEW_UNITS, "sampling": FEW_STRATA,
                        "autoeval": "labeled for some models but not others"}),
    "summary, 2 models, 1 task": (lambda: SUMMARY_2, {**LOG_ONLY}),
    "summary, 1 model": (lambda: SUMMARY_2.iloc[:1], {**LOG_ONLY, "leaderboard": NEEDS_TWO}),
    "repeated samples, 3 epochs": (lambda: repeated(3, 3, 30), {"sampling": FEW_STRATA}),
    "battles with ties": (lambda: battles(votes=True).assign(outcome=lambda f: f["outcome"].where(
        f.index % 4 != 0, 0.5)), {**NO_LOG}),
    "battles, 2 models, votes": (lambda: battles(votes=True), {**NO_LOG}),
    "battles, 2 models, no votes": (lambda: battles(votes=False),  # autoeval: the AI judge's own ranking
                                    {**NO_LOG, "models": "no human votes"}),
}

# ------------------------------------------------------------------------------------------------------------------
# driving the pages


def visit(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert_no_exception(at)
    assert [t.value for t in at.title] == [PAGES[page]]
    return at


def rerun(at: AppTest) -> AppTest:
    at.run()
    assert_no_exception(at)
    return at


def messages(at: AppTest) -> list[str]:
    return texts(at.error) + texts(at.warning) + texts(at.info)


def results(at: AppTest) -> int:
    """How many charts and result tables (not input editors) the page shows."""
    return len(charts(at)) + sum(d.editing_mode == "read_only" for d in at.dataframe)


def check(at: AppTest, page: str, expected) -> None:
    """``page`` shows what ``expected`` says (RESULTS, a phrase of a message, or Either)."""
    where = f"{page}: errors {texts(at.error)}, warnings {texts(at.warning)}"
    said = messages(at)
    if expected == REPORT:
        buttons = [button.proto.label for button in at.get("download_button")]
        assert "Download the report (HTML)" in buttons and at.text and not texts(at.error), where
    elif expected == RESULTS:
        assert results(at) > 0 and not texts(at.error), where
    elif isinstance(expected, Either):
        assert (results(at) > 0 and not texts(at.error)) or any(expected.phrase in m for m in said), where
    else:
        assert any(expected in m for m in said), f"{page}: no message with {expected!r}; shown {said}"


def loaded(frame: pd.DataFrame, name: str = "data.csv") -> AppTest:
    at = open_app()
    upload(at, name, csv_bytes(frame))
    assert not texts(at.error), texts(at.error)
    return at


def run_every_page(at: AppTest, expectations: dict) -> None:
    for page in PAGES:
        visit(at, page)
        check(at, page, {**ALL_RESULTS, **expectations}[page])


@pytest.mark.parametrize("case", list(CASES))
def test_every_page_on_small_and_odd_data(case):
    make, expectations = CASES[case]
    run_every_page(loaded(make()), expectations)


def test_every_page_on_29_real_models(shared_file):
    """MMLU-Pro: 29 models, 14 categories (one task each), 91 source groups; six questions per category that every
    model answered (2,436 rows). No confidence column: calibration and the label-budget pages explain."""
    raw = pd.read_csv(shared_file("mmlu_pro_per_question.csv.gz"))
    answered_by_all = raw.groupby("question_id")["model"].nunique() == raw["model"].nunique()
    common = raw[raw["question_id"].isin(answered_by_all[answered_by_all].index)]
    questions = common.drop_duplicates("question_id").groupby("category").head(6)["question_id"]
    frame = common[common["question_id"].isin(questions)]
    assert frame["model"].nunique() == 29
    at = loaded(frame, "mmlu_pro.csv")
    run_every_page(at, {"calibration": "`confidence`", "sampling": "proxy", "autoeval": "annotator"})
    visit(at, "leaderboard")
    assert at.slider(key="lb_top").max == 8
    board = table_with(at, "model", "scope", "name", "estimate")
    overall = board[board["scope"] == "overall"].set_index("model")["estimate"]
    by_task = frame.groupby(["model", "category"])["correct"].mean().groupby("model").mean()
    assert overall.to_dict() == pytest.approx(by_task.to_dict())


# ------------------------------------------------------------------------------------------------------------------
# selections: no model, one model of a pairwise view, an empty intersection of tasks and groups


def select(at: AppTest, models=None, tasks=None, groups=None) -> AppTest:
    visit(at, "models")
    for key, value in (("w_models", models), ("w_tasks", tasks), ("w_groups", groups)):
        if value is not None:
            at.multiselect(key=key).set_value(value)
    return rerun(at)


@pytest.mark.parametrize("case", ["2 models", "battles, 2 models, votes"])
def test_no_model_selected_is_explained_on_every_page(case):
    at = loaded(CASES[case][0]())
    select(at, models=[])
    for page in PAGES:
        visit(at, page)
        if page != "data":
            said = messages(at)
            assert any("Choose at least" in m for m in said) or any(LOG_NEEDED in m or "leaderboard needs" in m
                                                                   for m in said), (page, said)
            assert results(at) == 0, page


def test_one_model_of_two_battles_asks_for_two():
    at = loaded(battles(votes=True))
    select(at, models=["A"])
    for page in ("models", "autoeval"):
        visit(at, page)
        assert any(NEEDS_TWO in m for m in messages(at)), page
        assert not texts(at.error) and results(at) == 0, page


def test_empty_selection_is_explained_on_every_page():
    log = generated_log(3, 24, tasks=2, groups=2)
    log["group"] = log["task"].map({"task-0": "ga", "task-1": "gb"})  # group gb holds no example of task-0
    at = loaded(log)
    select(at, tasks=["task-0"], groups=["gb"])
    for page in list(PAGES)[1:]:
        visit(at, page)
        assert any("No row of the data lies in the selection" in m for m in texts(at.warning)), page
        assert not texts(at.error) and results(at) == 0, page
        assert len(at.get("page_link")) == (page != "models"), page  # the way to the Models page


# ------------------------------------------------------------------------------------------------------------------
# leaderboard


def test_leaderboard_readme_example_compares_its_two_models():
    """The README's example: model-a 1/2 correct, model-b 1/1 (its q2 is unlabeled) on one task."""
    at = loaded(README_EXAMPLE)
    [formats] = [e for e in at.expander if e.label == "Accepted formats and an example"]
    pd.testing.assert_frame_equal(formats.dataframe[0].value, README_EXAMPLE)  # the Data page shows the same file
    visit(at, "leaderboard")
    assert not texts(at.error)
    assert not [s for s in at.slider if s.key == "lb_top"]  # two models: nothing to choose
    board = table_with(at, "model", "scope", "name", "estimate")
    overall = board[board["scope"] == "overall"].set_index("model")["estimate"]
    assert overall.to_dict() == pytest.approx({"model-a": 0.5, "model-b": 1.0})
    [pair] = table_with(at, "model_a", "model_b", "diff").to_dict("records")
    assert (pair["model_a"], pair["model_b"], pair["diff"]) == ("model-b", "model-a", pytest.approx(0.5))
    assert sorted(table_with(at, "model", "rank")["model"]) == ["model-a", "model-b"]
    assert any("needs three task categories" in i for i in texts(at.info))
    # one label (model-b 1 of 1) and all-correct cells: no interval anywhere is a point
    long = table_with(at, "model", "scope", "name", "estimate", "ci_low", "ci_high")
    b = long[long["model"] == "model-b"]
    assert (b["estimate"] == 1.0).all() and (b["ci_high"] == 1.0).all() and (b["ci_low"] < 0.9).all()
    for columns in (("model_a", "model_b", "diff", "ci_low", "ci_high"), ("model", "rank", "ci_low", "ci_high"),
                    ("model", "score", "se", "ci_low", "ci_high")):
        shown = table_with(at, *columns)
        assert (shown["ci_high"] > shown["ci_low"]).all(), columns
    assert (table_with(at, "model", "score", "se")["se"] > 0).all()
    assert not any("(1.000, 1.000)" in str(v) for v in table_with(at, "model", "overall")["overall"])

    at.toggle(key="lb_bayes").set_value(True)
    rerun(at)
    assert not texts(at.error) and any("R-hat" in c for c in texts(at.caption))
    # 2 models x 1 task: the chains cannot agree; the page says so and offers more draws
    board = table_with(at, "model", "scope", "name", "rhat", "ess_bulk", "ess_tail")
    assert board["rhat"].max() > 1.01 or min(board["ess_bulk"].min(), board["ess_tail"].min()) < 400
    assert any("have not converged" in w for w in texts(at.warning))
    at.button(key="lb_draw_more").click()
    rerun(at)
    assert any("4,000 draws per chain" in c for c in texts(at.caption))
    probs = table_with(at, "model", "rank", "probability")
    assert probs.groupby("model")["probability"].sum().to_numpy() == pytest.approx(1.0)
    assert any("needs three task categories" in i for i in texts(at.info))  # the page ran to its end


def test_leaderboard_of_the_demo_narrowed_to_two_models():
    """Any selection of exactly two models (here on the default demo) gets the one pairwise difference."""
    at = open_app()
    chosen = list(select(at).multiselect(key="w_models").options)[:2]
    select(at, models=chosen)
    visit(at, "leaderboard")
    assert not texts(at.error)
    assert not [s for s in at.slider if s.key == "lb_top"]
    [pair] = table_with(at, "model_a", "model_b", "diff").to_dict("records")
    assert {pair["model_a"], pair["model_b"]} == set(chosen)
    assert len(charts(at)) == 5  # overall, pairwise differences, rank intervals, weighted score, weighting map


def test_leaderboard_summary_with_two_models_and_one_task():
    at = loaded(SUMMARY_2)
    visit(at, "leaderboard")
    assert not texts(at.error)
    board = table_with(at, "model", "scope", "name", "estimate")
    overall = board[board["scope"] == "overall"].set_index("model")["estimate"]
    assert overall.to_dict() == pytest.approx({"a": 0.6, "b": 0.7})
    [pair] = table_with(at, "model_a", "model_b", "diff").to_dict("records")
    assert (pair["model_a"], pair["model_b"], pair["diff"]) == ("b", "a", pytest.approx(0.1))
    for method in ("geometric", "avg_rank", "avg_rank_noise", "avg_rank_bins"):
        at.selectbox(key="lb_rank").set_value(method)
        rerun(at)
        assert sorted(table_with(at, "model", "rank")["model"]) == ["a", "b"], method
    at.selectbox(key="lb_norm").set_value("observed")
    rerun(at)
    assert any("Measured coverage of the overall normalized score" in c for c in texts(at.caption))
    at.selectbox(key="lb_norm").set_value("bootstrap")
    rerun(at)
    assert not texts(at.error)
    at.toggle(key="lb_bayes").set_value(True)
    rerun(at)
    probs = table_with(at, "model", "rank", "probability")
    assert probs.groupby("model")["probability"].sum().to_numpy() == pytest.approx(1.0)


def test_leaderboard_top_k_slider_with_many_models():
    log = generated_log(29, 12)
    at = loaded(log)
    visit(at, "leaderboard")
    slider = at.slider(key="lb_top")
    assert (slider.min, slider.max, slider.value) == (2, 8, 3)
    assert len(table_with(at, "model_a", "model_b", "diff")) == 3
    slider.set_value(8)
    rerun(at)
    pairs = table_with(at, "model_a", "model_b", "diff")
    assert len(pairs) == len(list(combinations(range(8), 2))) == 28
    compared = set(pairs["model_a"]) | set(pairs["model_b"])
    board = table_with(at, "model", "scope", "name", "estimate")
    overall = board[board["scope"] == "overall"].set_index("model")["estimate"]
    assert len(compared) == 8
    assert overall[list(compared)].min() >= overall.drop(list(compared)).max()  # the top 8 (ties either way)
    # the rank intervals come from the same simultaneous intervals: a model surely ahead of a top-8 model is observed
    # ahead of it, so among the pairs shown; best rank = 1 + the models surely ahead (model_a is the better observed)
    assert any("all 406 intervals" in c for c in texts(at.caption))
    ranks = table_with(at, "model", "rank", "ci_low", "ci_high").set_index("model")
    ahead = pairs[pairs["ci_low"] > 0].groupby("model_b").size()
    for model in compared:
        assert ranks.loc[model, "ci_low"] == 1 + ahead.get(model, 0), model


@pytest.mark.parametrize("se_source", ["binomial", "bootstrap", "bayes"])
def test_leaderboard_weighting_map_with_two_models(se_source):
    """Three categories but only two models: the map has two possible winners and a gray zone."""
    at = loaded(generated_log(2, 30, tasks=3, categories=3))
    visit(at, "leaderboard")
    at.radio(key="lb_se").set_value(se_source)
    rerun(at)
    assert not texts(at.error)
    regions = table_with(at, "region", "share of weightings")
    assert set(regions["region"]) <= {"model-00", "model-01", "too close to call"}
    assert regions["share of weightings"].sum() == pytest.approx(1.0)


def test_leaderboard_with_two_categories_explains_the_map():
    at = loaded(generated_log(3, 20, tasks=2, categories=2))
    visit(at, "leaderboard")
    assert any("needs three task categories; this data has 2" in i for i in texts(at.info))
    at.toggle(key="lb_bayes").set_value(True)
    rerun(at)
    assert not texts(at.error)
    assert any("needs three task categories" in i for i in texts(at.info))


# ------------------------------------------------------------------------------------------------------------------
# labeling budget


def test_labeling_budget_pool_smaller_than_strata_and_budget():
    """12 examples: the default budget (2) cannot give 10 strata 2 labels each; with 2 strata everything shows."""
    at = loaded(generated_log(1, 12, tasks=1))
    visit(at, "sampling")
    assert any("strata" in e for e in texts(at.error)) or results(at) > 1
    budget = at.number_input(key="sp_budget")
    assert (budget.value, budget.max) == (2, 12)
    at.slider(key="sp_strata").set_value(2)
    budget.set_value(12)  # the whole pool
    rerun(at)
    assert not texts(at.error)
    alloc = table_with(at, "stratum", "N_h", "proportional")
    assert alloc["N_h"].sum() == 12 and alloc["proportional"].sum() == 12
    assert len(table_with(at, "example_id", "proxy", "stratum")) == 12
    for design in ("srs", "proportional", "neyman"):
        at.radio(key="sp_design").set_value(design)
        rerun(at)
        assert not texts(at.error), design


def test_labeling_budget_monte_carlo_needs_a_large_enough_pool():
    at = loaded(generated_log(1, 40, labeled=1.0, tasks=1))
    visit(at, "sampling")
    at.slider(key="sp_strata").set_value(2)
    rerun(at)
    assert not texts(at.error)
    assert any("Monte Carlo check" in s for s in texts(at.subheader))
    assert any("needs a pool of at least 100" in i for i in texts(at.info))


def test_labeling_budget_with_groups_and_calibrated_proxy_on_a_small_pool():
    at = loaded(generated_log(1, 30, tasks=1, groups=3))
    visit(at, "sampling")
    at.slider(key="sp_strata").set_value(2)
    at.number_input(key="sp_budget").set_value(10)
    rerun(at)
    for basis, proxy in (("groups", "confidence"), ("proxy", "calibrated")):
        at.selectbox(key="sp_basis").set_value(basis)
        rerun(at)
        at.selectbox(key="sp_proxy").set_value(proxy)  # one change per run, as in a browser
        rerun(at)
        assert not texts(at.error), (basis, proxy)
        alloc = table_with(at, "stratum", "N_h", "proportional")
        assert alloc["N_h"].sum() == 30 and alloc["proportional"].sum() == 10, (basis, proxy)
        assert len(alloc) == (3 if basis == "groups" else 2), (basis, proxy)


# ------------------------------------------------------------------------------------------------------------------
# AI-assisted evaluation, subgroups, calibration settings on small data


def test_autoeval_without_labels_and_with_very_few():
    at = loaded(generated_log(2, 20).assign(correct=np.nan))
    visit(at, "autoeval")
    assert any("human-labeled metric" in i for i in texts(at.info))

    log = generated_log(2, 20, labeled=0.15, seed=1)  # a few labeled examples (the same for both models)
    n_labeled = log.loc[log["model"] == "model-00", "correct"].notna().sum()
    assert 2 <= n_labeled <= 5
    at = loaded(log)
    visit(at, "autoeval")
    check(at, "autoeval", RESULTS)
    at.selectbox(key="ae_design").set_value("annotator")
    rerun(at)
    at.slider(key="ae_strata").set_value(20)  # more strata than labeled examples
    rerun(at)
    assert any("needs at least 2 labels" in e for e in texts(at.error)), texts(at.error)


def test_autoeval_fully_labeled_small_log_settings():
    """13 fully labeled examples: the split study's bounds collapse to one value without breaking the inputs."""
    at = loaded(generated_log(2, 13, labeled=1.0))
    visit(at, "autoeval")
    check(at, "autoeval", RESULTS)
    assert at.number_input(key="ae_nmin").value == 5
    at.number_input(key="ae_quality_n").set_value(at.number_input(key="ae_quality_n").max)
    rerun(at)
    assert not texts(at.error)


@pytest.mark.parametrize("votes", [True, False])
def test_autoeval_battles_with_two_models(votes):
    frame = battles(votes)
    at = loaded(frame)
    visit(at, "autoeval")
    table = table_with(at, "model", "method", "coefficient", "rank")
    if not votes:  # the AI judge's own ranking, labelled as the judge's (issue 27)
        assert not texts(at.error)
        answer, heading = (h.value.replace("\\", "").replace("\u2060", "") for h in at.subheader)
        assert heading == "The AI judge's Bradley-Terry ranking (no human votes)"
        assert answer.startswith("By the AI judge's verdicts alone (20 battles, no human vote), ")
        assert answer.endswith("the intervals are valid for the judge's preferences, not for people's.")
        assert set(table["method"]) == {"AI judge only (no human votes)"}
        # two models: B's strength against A is the logit of B's mean win probability by the judge
        b_wins = np.where(frame["model_b"] == "B", frame["judge"], 1 - frame["judge"]).mean()
        strength = table.set_index("model")["coefficient"]
        assert strength["B"] - strength["A"] == pytest.approx(np.log(b_wins / (1 - b_wins)), abs=1e-3)
        assert any("not for people's" in c for c in texts(at.caption))
        assert not any("human votes correct" in c for c in texts(at.caption))
    assert set(table["model"]) == {"A", "B"}
    reference = at.selectbox(key="ae_reference").value
    assert (table.loc[table["model"] == reference, "coefficient"] == 0).all()
    at.radio(key="ae_judge").set_value("hard")
    rerun(at)
    assert not texts(at.error)


@pytest.mark.slow
def test_subgroups_on_one_group_with_a_feature():
    """One group and a numeric feature with three well-separated values: automatic subgroups by default."""
    log = generated_log(3, 120, groups=1)
    log["length"] = log["example_id"].str[1:].astype(int) // 40 * 10
    at = loaded(log)
    visit(at, "subgroups")
    assert at.checkbox(key="sg_auto").value  # one group: subgroups formed from the feature by default
    for regressor in ("linear", "mean"):
        at.selectbox(key="sg_reg").set_value(regressor)
        rerun(at)
        assert not texts(at.error), regressor
        table = table_with(at, "model", "group", "n", "eb")
        assert sorted(table["group"].unique()) == ["cluster 01", "cluster 02", "cluster 03"]
        labeled = log[log["correct"].notna()]
        assert table["n"].sum() == len(labeled)
    at.select_slider(key="sg_reps").set_value(50)
    rerun(at)
    at.button(key="sg_run").click()
    rerun(at)
    assert not texts(at.error)
    summary = table_with(at, "method", "mse", "mse_ratio_vs_DT", "coverage", "width")
    assert list(summary["method"]) == ["DT", "SR", "EB"]
    assert any("50 repetitions" in c for c in texts(at.caption))

    at.checkbox(key="sg_auto").set_value(False)  # one group only: explained, with the offer just turned off
    rerun(at)
    assert not texts(at.error)
    assert any(i.startswith("The selection has a single group") and "Form subgroups automatically" in i
               for i in texts(at.info))


def test_calibration_settings_on_one_row():
    at = loaded(generated_log(1, 1, labeled=1.0))
    visit(at, "calibration")
    at.slider(key="cal_bins").set_value(30)
    at.slider(key="cal_coverage").set_value(0.05)
    rerun(at)
    summary = table_with(at, "model", "ece", "accuracy", "n")
    assert summary["n"].tolist() == [1]
    for by in ("category", "group"):
        at.radio(key="cal_by").set_value(by)
        rerun(at)
        assert len(table_with(at, "model", by)) == 1


# ------------------------------------------------------------------------------------------------------------------
# intervals that must never be a point (issue "Every interval honest")


def test_all_correct_log_shows_no_point_interval_on_models_and_leaderboard():
    at = loaded(all_labeled(2, 20, 1.0))
    visit(at, "models")
    table = table_with(at, "model", "n", "estimate", "se", "ci_low", "ci_high")
    assert (table["estimate"] == 1.0).all() and (table["se"] > 0).all() and (table["ci_low"] < 1.0).all()
    visit(at, "leaderboard")
    long = table_with(at, "model", "scope", "name", "estimate", "ci_low", "ci_high")
    assert (long["estimate"] == 1.0).all() and (long["ci_high"] > long["ci_low"]).all()
    for columns in (("model_a", "model_b", "diff", "ci_low", "ci_high"), ("model", "rank", "ci_low", "ci_high"),
                    ("model", "score", "se", "ci_low", "ci_high")):
        shown = table_with(at, *columns)
        assert (shown["ci_high"] > shown["ci_low"]).all(), columns


def test_identical_scores_get_no_interval_and_the_models_page_says_why():
    log = score_only()
    log["score"] = 0.5  # every labeled score identical: sd = 0
    at = loaded(log)
    visit(at, "models")
    table = table_with(at, "model", "n", "estimate", "ci_low", "ci_high")
    assert table[["ci_low", "ci_high"]].isna().all().all() and (table["estimate"] == 0.5).all()
    assert any("No interval for 9 cell(s) of 'score'" in i for i in texts(at.info))  # 3 models x 3 tasks


def test_default_normalized_leaderboard_does_not_move_with_the_seed():
    at = loaded(pd.DataFrame({"model": ["a", "b", "c"] * 2, "task": ["t"] * 3 + ["u"] * 3, "category": "c",
                              "n": 100, "n_correct": [60, 70, 90, 50, 40, 80]}))
    visit(at, "leaderboard")
    at.selectbox(key="lb_norm").set_value("observed")
    rerun(at)
    first = table_with(at, "model", "scope", "name", "estimate")["estimate"].to_numpy()
    at.number_input(key="lb_seed").set_value(1)
    rerun(at)
    assert np.array_equal(table_with(at, "model", "scope", "name", "estimate")["estimate"].to_numpy(), first)
    assert first[:2].tolist() == pytest.approx([0.0, 0.25])  # model a: lowest on t, (50 - 40) / (80 - 40) on u
    at.selectbox(key="lb_norm").set_value("bootstrap")
    rerun(at)
    assert any("change with the seed" in c for c in texts(at.caption))
