"""Known-answer tests of the deterministic demo data generators."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.demo import synthetic as demo
from evalcore.demo import sklearn_models as demo_sklearn

LOG_LABELS = ["model", "example_id", "task", "category", "group"]


@pytest.fixture(scope="module")
def bench() -> demo.SyntheticBenchmark:
    return demo.synthetic_benchmark()


@pytest.fixture(scope="module")
def calibrated() -> demo.SyntheticBenchmark:
    return demo.synthetic_benchmark(miscalibration=0.0)


@pytest.fixture(scope="module")
def battles() -> demo.Battles:
    return demo.pairwise_battles()


@pytest.fixture(scope="module")
def sklearn_log() -> pd.DataFrame:
    return demo_sklearn.sklearn_models()


def _labeled(log: pd.DataFrame) -> pd.DataFrame:
    return log[log["correct"].notna()]


def _assert_string_columns(frame: pd.DataFrame, columns: list[str]) -> None:
    for column in columns:
        assert pd.api.types.is_string_dtype(frame[column]), column
        assert all(isinstance(value, str) for value in frame[column]), column


def _assert_canonical_log(log: pd.DataFrame, features: list[str]) -> None:
    assert list(log.columns) == [*LOG_LABELS, "correct", "confidence", "proxy", *features]
    _assert_string_columns(log, LOG_LABELS)
    for column in ["correct", "confidence", "proxy", *features]:
        assert log[column].dtype == np.float64, column
    assert not log.duplicated(["model", "example_id"]).any()
    assert log["correct"].dropna().isin([0.0, 1.0]).all()
    assert log["confidence"].between(0.0, 1.0).all()
    assert log["proxy"].between(0.0, 1.0).all()
    assert log.drop(columns="correct").notna().all().all()


# --------------------------------------------------------------------------- synthetic benchmark


def test_benchmark_is_deterministic(bench):
    again = demo.synthetic_benchmark()
    pd.testing.assert_frame_equal(bench.log, again.log)
    pd.testing.assert_frame_equal(bench.truth, again.truth)
    other = demo.synthetic_benchmark(seed=1)
    assert not bench.log["confidence"].equals(other.log["confidence"])


def test_benchmark_schema(bench):
    log = bench.log
    _assert_canonical_log(log, ["difficulty_hint"])
    assert (bench.seed, bench.n_models, bench.miscalibration, bench.label_fraction) == (
        0, 5, 1.0, 0.4)
    assert log["model"].nunique() == 5
    n_examples = log["example_id"].nunique()
    assert 8000 <= n_examples <= 10000
    assert len(log) == 5 * n_examples
    assert log["proxy"].gt(0.0).all() and log["proxy"].lt(1.0).all()


def test_benchmark_tasks_and_categories(bench):
    examples = bench.log.drop_duplicates("example_id")
    tasks = examples.groupby("task")["category"].agg(["first", "nunique", "size"])
    assert len(tasks) == 9
    assert (tasks["nunique"] == 1).all()
    assert tasks["first"].value_counts().to_dict() == {
        "natural": 3, "specialized": 3, "structured": 3}
    assert tasks["size"].between(300, 2000).all()
    assert tasks["size"].nunique() == 9
    assert examples["example_id"].str.fullmatch(r"[a-z]+-\d{6}").all()
    assert (examples["example_id"].str.split("-").str[0] == examples["task"]).all()


def test_examples_are_paired(bench):
    ids = bench.log.groupby("model")["example_id"].apply(frozenset)
    assert ids.nunique() == 1
    per_example = bench.log.groupby("example_id")[["task", "category", "group"]].nunique()
    assert (per_example == 1).all().all()


@pytest.mark.parametrize("fraction", [0.1, 0.4, 0.8])
def test_label_fraction_and_pairing(fraction):
    log = demo.synthetic_benchmark(label_fraction=fraction).log
    labeled = log.pivot(index="example_id", columns="model", values="correct").notna()
    assert labeled.eq(labeled.iloc[:, 0], axis=0).all().all(), "labels differ across models"
    n = len(labeled)
    assert abs(labeled.iloc[:, 0].mean() - fraction) < 3 * np.sqrt(fraction * (1 - fraction) / n)


def test_no_and_all_labels():
    assert demo.synthetic_benchmark(label_fraction=0.0).log["correct"].isna().all()
    assert demo.synthetic_benchmark(label_fraction=1.0).log["correct"].notna().all()


def test_subgroup_sizes_are_zipf_like(bench):
    sizes = bench.truth.drop_duplicates("group")["n"]
    assert 50 <= len(sizes) <= 70
    assert sizes.min() == 2
    assert sizes.max() >= 200
    assert (sizes <= 5).sum() >= 9, "every task has tiny subgroups"
    assert bench.truth["group"].str.fullmatch(r"[a-z]+/g\d{2}").all()
    assert (bench.truth["group"].str.split("/").str[0] == bench.truth["task"]).all()


def test_truth_frame(bench):
    truth = bench.truth
    assert list(truth.columns) == [
        "model", "task", "category", "group", "n", "p_true", "accuracy_all"]
    _assert_string_columns(truth, ["model", "task", "category", "group"])
    assert not truth.duplicated(["model", "group"]).any()
    assert (truth.groupby("model")["n"].sum() == bench.log["example_id"].nunique()).all()
    counts = bench.log.groupby(["model", "group"]).size()
    assert (truth.set_index(["model", "group"])["n"] == counts.reindex(
        truth.set_index(["model", "group"]).index)).all()


def test_truth_matches_realised_accuracy(bench):
    overall = demo.true_accuracy(bench).set_index("model")
    labeled = _labeled(bench.log).groupby("model")["correct"].agg(["mean", "size"])
    se = np.sqrt(overall["p_true"] * (1 - overall["p_true"]) / labeled["size"])
    assert ((labeled["mean"] - overall["p_true"]).abs() < 4 * se).all()
    se_all = np.sqrt(overall["p_true"] * (1 - overall["p_true"]) / overall["n"])
    assert ((overall["accuracy_all"] - overall["p_true"]).abs() < 4 * se_all).all()


def test_true_accuracy_aggregates_truth(bench):
    by_task = demo.true_accuracy(bench, by=("model", "task"))
    assert len(by_task) == 5 * 9
    realised = bench.truth.groupby(["model", "task"])["n"].sum()
    assert (by_task.set_index(["model", "task"])["n"] == realised.reindex(
        by_task.set_index(["model", "task"]).index)).all()
    overall = demo.true_accuracy(bench)
    weighted = demo.true_accuracy(bench, by=("model", "category")).assign(
        w=lambda t: t["p_true"] * t["n"]).groupby("model")["w"].sum() / overall["n"].iloc[0]
    np.testing.assert_allclose(overall.set_index("model")["p_true"], weighted[overall["model"]])


def test_accuracy_spread_and_category_specialists():
    bench = demo.synthetic_benchmark(n_models=8)
    overall = demo.true_accuracy(bench)["p_true"]
    assert overall.between(0.45, 0.95).all()
    assert overall.max() - overall.min() > 0.3
    by_category = demo.true_accuracy(bench, by=("model", "category")).pivot(
        index="model", columns="category", values="p_true")
    assert by_category["natural"].idxmax() == "atlas-l"
    assert by_category["structured"].idxmax() == "cirrus"
    assert by_category.max().max() > 0.9


def test_perfect_calibration_at_zero(calibrated):
    log, truth = calibrated.log, calibrated.truth
    mean_conf = log.groupby(["model", "group"])["confidence"].mean()
    p_true = truth.set_index(["model", "group"])["p_true"]
    np.testing.assert_allclose(mean_conf.reindex(p_true.index), p_true, rtol=0, atol=1e-12)
    labeled = _labeled(log)
    assert abs(labeled["confidence"].mean() - labeled["correct"].mean()) < 0.01
    bins = pd.cut(labeled["confidence"], np.linspace(0, 1, 11))
    table = labeled.groupby(bins, observed=True).agg(
        conf=("confidence", "mean"), acc=("correct", "mean"), n=("correct", "size"))
    table = table[table["n"] >= 200]
    se = np.sqrt(table["conf"] * (1 - table["conf"]) / table["n"])
    assert ((table["conf"] - table["acc"]).abs() < 4 * se).all()


def test_miscalibration_moves_confidence_only(bench, calibrated):
    pd.testing.assert_frame_equal(
        bench.log.drop(columns="confidence"), calibrated.log.drop(columns="confidence"))
    pd.testing.assert_frame_equal(bench.truth, calibrated.truth)
    gap = _labeled(bench.log).groupby("model").apply(
        lambda rows: rows["confidence"].mean() - rows["correct"].mean())
    assert gap["atlas-m"] > 0.03, "atlas-m is overconfident"
    assert gap["breeze-7b"] < -0.03, "breeze-7b is underconfident"
    assert abs(gap["atlas-l"]) < 0.02, "atlas-l is well calibrated"


def test_difficulty_hint_tracks_difficulty(calibrated):
    corr = np.corrcoef(calibrated.log["difficulty_hint"], calibrated.log["confidence"])[0, 1]
    assert corr < -0.5


def test_proxy_is_informative(bench):
    labeled = _labeled(bench.log)
    right = labeled.loc[labeled["correct"] == 1.0, "proxy"].mean()
    wrong = labeled.loc[labeled["correct"] == 0.0, "proxy"].mean()
    assert right - wrong > 0.15


def test_fewer_models_is_a_prefix(bench):
    small = demo.synthetic_benchmark(n_models=3)
    prefix = bench.log[bench.log["model"].isin(small.log["model"].unique())]
    pd.testing.assert_frame_equal(small.log, prefix.reset_index(drop=True))
    assert demo.synthetic_benchmark(n_models=8).log["model"].nunique() == 8


@pytest.mark.parametrize(
    "kwargs",
    [{"n_models": 0}, {"n_models": 9}, {"label_fraction": 1.5}, {"miscalibration": -0.1}],
)
def test_benchmark_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        demo.synthetic_benchmark(**kwargs)


# --------------------------------------------------------------------------- pairwise battles


def test_battles_are_deterministic(battles):
    again = demo.pairwise_battles()
    pd.testing.assert_frame_equal(battles.battles, again.battles)
    pd.testing.assert_series_equal(battles.strengths, again.strengths)


def test_battles_schema(battles):
    frame = battles.battles
    assert list(frame.columns) == ["model_a", "model_b", "outcome", "judge"]
    _assert_string_columns(frame, ["model_a", "model_b"])
    assert frame["outcome"].dtype == np.float64 and frame["judge"].dtype == np.float64
    assert len(frame) == 6000
    assert (frame["model_a"] != frame["model_b"]).all()
    assert frame["outcome"].dropna().isin([0.0, 1.0]).all()
    assert frame["judge"].gt(0.0).all() and frame["judge"].lt(1.0).all()
    strengths = battles.strengths
    assert len(strengths) == 8 and strengths.iloc[0] == 0.0
    assert set(frame["model_a"]) | set(frame["model_b"]) == set(strengths.index)
    assert strengths.between(-1.5, 1.5).all()


def test_battle_pairs_are_uniform(battles):
    counts = battles.battles.groupby(["model_a", "model_b"]).size()
    assert len(counts) == 8 * 7
    expected = 6000 / 56
    assert (counts - expected).abs().max() < 5 * np.sqrt(expected)


def test_human_vote_rate():
    for fraction in (0.05, 0.15, 0.5):
        votes = demo.pairwise_battles(human_fraction=fraction).battles["outcome"]
        assert abs(votes.notna().mean() - fraction) < 3 * np.sqrt(fraction * (1 - fraction) / 6000)


def test_judge_agrees_with_humans_and_has_position_bias(battles):
    frame = battles.battles
    voted = frame[frame["outcome"].notna()]
    agreement = ((voted["judge"] > 0.5) == (voted["outcome"] == 1.0)).mean()
    assert agreement > 0.65
    beta = battles.strengths
    diff = frame["model_b"].map(beta).to_numpy() - frame["model_a"].map(beta).to_numpy()
    judge_logit = np.log(frame["judge"] / (1 - frame["judge"])).to_numpy()
    residual = judge_logit - diff
    spread = np.sqrt(np.pi**2 / 3 + demo.JUDGE_NOISE_SD**2)  # the battle's logistic margin plus the judge's noise
    assert abs(residual.mean() - demo.JUDGE_POSITION_BIAS) < 3 * spread / np.sqrt(len(frame))
    assert abs(residual.std() - spread) < 0.05
    # informative beyond the pair: among votes on the same pair the judge is higher where b won
    same = voted.assign(logit=np.log(voted["judge"] / (1 - voted["judge"])))
    centred = same["logit"] - same.groupby(["model_a", "model_b"])["logit"].transform("mean")
    assert centred[same["outcome"] == 1.0].mean() > centred[same["outcome"] == 0.0].mean() + 1.0


def test_human_wins_follow_bradley_terry(battles):
    voted = battles.battles.dropna(subset=["outcome"])
    wins = pd.concat(
        [
            pd.DataFrame({"model": voted["model_b"], "win": voted["outcome"]}),
            pd.DataFrame({"model": voted["model_a"], "win": 1.0 - voted["outcome"]}),
        ]
    )
    win_rate = wins.groupby("model")["win"].mean()
    rho = win_rate.rank().corr(battles.strengths.reindex(win_rate.index).rank())
    assert rho > 0.8


def test_battles_reject_bad_arguments():
    with pytest.raises(ValueError):
        demo.pairwise_battles(n_models=1)
    with pytest.raises(ValueError):
        demo.pairwise_battles(human_fraction=-0.1)


# --------------------------------------------------------------------------- scikit-learn models

SKLEARN_MODELS = ["logreg", "naive-bayes", "random-forest", "knn-15", "tree-d6", "svm-rbf"]
DATASET_SIZES = {"digits": 1797, "breast_cancer": 569, "wine": 178, "iris": 150}


@pytest.mark.slow
def test_sklearn_models_schema(sklearn_log):
    _assert_canonical_log(sklearn_log, ["margin"])
    assert list(sklearn_log["model"].unique()) == SKLEARN_MODELS
    assert len(sklearn_log) == len(SKLEARN_MODELS) * sum(DATASET_SIZES.values())
    sizes = sklearn_log.groupby(["model", "task"]).size().unstack()
    assert sizes.eq(pd.Series(DATASET_SIZES), axis=1).all().all()
    assert sklearn_log["correct"].notna().all()
    assert sklearn_log["margin"].between(0.0, 1.0).all()
    assert (sklearn_log["margin"] <= sklearn_log["confidence"]).all()
    category = sklearn_log.groupby("task")["category"].agg(set)
    assert category.to_dict() == {
        "digits": {"image"}, "breast_cancer": {"tabular"}, "wine": {"tabular"}, "iris": {"tabular"}}
    assert (sklearn_log["group"].str.split("/class ").str[0] == sklearn_log["task"]).all()
    assert sklearn_log.loc[sklearn_log["task"] == "digits", "group"].nunique() == 10
    assert sklearn_log["example_id"].str.fullmatch(r"[a-z_]+-\d{4}").all()


@pytest.mark.slow
def test_sklearn_models_accuracy_and_calibration(sklearn_log):
    accuracy = sklearn_log.groupby(["model", "task"])["correct"].mean()
    assert accuracy.between(0.6, 1.0).all()
    assert accuracy["logreg", "digits"] > 0.9
    assert accuracy["svm-rbf", "digits"] > 0.9
    digits_nb = sklearn_log[(sklearn_log["model"] == "naive-bayes")
                            & (sklearn_log["task"] == "digits")]
    assert digits_nb["confidence"].mean() > digits_nb["correct"].mean() + 0.05


@pytest.mark.slow
def test_sklearn_proxy_comes_from_another_model(sklearn_log):
    by_model = sklearn_log.set_index(["model", "example_id"])
    forest = by_model.loc["random-forest"]
    logreg = by_model.loc["logreg"]
    assert not np.allclose(forest["proxy"], forest["confidence"])
    # Where the forest's class is also the logistic regression's, the proxies swap confidences.
    same = (forest["correct"] == 1.0) & (logreg["correct"] == 1.0)
    np.testing.assert_allclose(forest.loc[same, "proxy"], logreg.loc[same, "confidence"])
    np.testing.assert_allclose(logreg.loc[same, "proxy"], forest.loc[same, "confidence"])


@pytest.mark.slow
def test_sklearn_models_are_deterministic(sklearn_log):
    pd.testing.assert_frame_equal(sklearn_log, demo_sklearn.sklearn_models())
