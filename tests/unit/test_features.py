"""Default features: which extra numeric columns are set aside, and why (evalcore.data.features), with known answers."""

import numpy as np
import pandas as pd
import pytest

from evalcore.data.validation import report_of, validate
from evalcore.data.features import default_features, fill_missing, numeric_columns, screen_features
from evalcore.subgroups.estimates import direct_estimates, empirical_bayes, unit_features

N = 300
MODELS = ("m0", "m1", "m2")


def generated_raw(seed: int = 0) -> pd.DataFrame:
    """3 models x 300 examples, 30% unlabeled, with one column of each kind the rules set aside and four genuine
    features (two floats, one with missing values, and two integer counts)."""
    rng = np.random.default_rng(seed)
    emb_0, emb_1 = rng.normal(size=N), rng.normal(size=N)
    emb_1[rng.random(N) < 0.1] = np.nan  # genuine, with some missing values
    n_tokens = rng.poisson(200, size=N)
    class_id = rng.integers(0, 10, size=N)
    bucket = rng.permutation(np.arange(N) % 50)  # integer codes 0..49, every one used
    n_steps = np.where(rng.random(N) < 0.7, 12, rng.integers(1, 12, N))  # 1..12 all used, but mostly 12
    parts = []
    for m, model in enumerate(MODELS):
        correct = (rng.random(N) < 0.3 + 0.2 * m).astype(float)
        correct[rng.random(N) < 0.3] = np.nan
        sparse = rng.normal(size=N)
        sparse[rng.random(N) < 0.7] = np.nan
        parts.append(pd.DataFrame({
            "model": model, "example_id": [f"q{i:03d}" for i in range(N)], "correct": correct,
            "position": np.arange(1, N + 1),          # numbers each model's rows 1..N
            "class_id": class_id, "bucket": bucket,
            "leak": np.nan_to_num(correct, nan=0.5) + rng.normal(0, 0.05, N),  # nearly the label
            "target_prob": rng.random(N),             # a label word in the name
            "only_labeled": np.where(np.isnan(correct), np.nan, rng.normal(size=N)),
            "is_big": float(m == 2),                  # a property of the model
            "const": 5.0, "sparse": sparse,
            "emb_0": emb_0, "emb_1": emb_1, "n_tokens": n_tokens, "n_steps": n_steps,
        }))
    raw = pd.concat(parts, ignore_index=True)
    raw.insert(0, "Unnamed: 0", np.arange(len(raw)))  # a pandas index written to the file
    return raw


EXPECTED_REASONS = {
    "Unnamed: 0": "index-like: named like a row index",
    "position": "index-like: consecutive integers numbering the rows",
    "class_id": "identifier-like: integer codes, 'id' in the name",
    "bucket": "identifier-like: integer codes 0 to 49",
    "leak": "label-derived: correlation",
    "target_prob": "label-derived: 'target' in the name",
    "only_labeled": "label-derived: has values exactly on the labeled rows",
    "is_big": "model-level: constant within each model",
    "const": "constant: one value",
    "sparse": "mostly missing: ",
}


def test_defaults_are_exactly_the_genuine_features_and_every_other_column_has_its_reason():
    log = validate(generated_raw())
    assert numeric_columns(log) == [c for c in generated_raw().columns if c not in ("model", "example_id",
                                                                                     "correct")]
    screen = screen_features(log)
    assert screen.features == ("emb_0", "emb_1", "n_tokens", "n_steps")
    assert default_features(log, "correct") == ["emb_0", "emb_1", "n_tokens", "n_steps"]
    reasons = dict(screen.set_aside)
    assert set(reasons) == set(EXPECTED_REASONS)
    for column, reason in EXPECTED_REASONS.items():
        assert reasons[column].startswith(reason), (column, reasons[column])
    assert float(reasons["leak"].split("correlation ")[1].split()[0]) > 0.9
    assert float(reasons["sparse"].split(": ")[1].split("%")[0]) == pytest.approx(70, abs=6)


def test_validation_reports_the_set_aside_columns_and_keeps_them():
    log = validate(generated_raw())
    report = report_of(log)
    assert set(EXPECTED_REASONS) <= set(report.features)  # kept: a user may still choose them
    [note] = [n for n in report.notes if n.startswith("Columns set aside as features by default")]
    assert "class_id (identifier-like: integer codes, 'id' in the name)" in note
    assert "Unnamed: 0 (index-like" in note and "emb_0" not in note
    assert note.endswith("Choose them on the Subgroups page if you want them.")


def test_genuine_float_features_alone_give_no_note():
    raw = generated_raw()[["model", "example_id", "correct", "emb_0", "emb_1"]]
    assert not any("set aside" in n for n in report_of(validate(raw)).notes)
    assert screen_features(validate(raw)).note() is None


@pytest.mark.parametrize("name, values, reason", [
    ("predictedClass", [3, 17, 3, 42, 9, 17], "identifier-like: integer codes, 'class' in the name"),
    ("pred", [3, 1, 4, 1, 5, 3], "identifier-like: integer codes, 'pred' in the name"),
    ("superclass", [0, 2, 2, 1, 0, 1], "identifier-like: integer codes, 'superclass' in the name"),
    ("qid", [10, 20, 30, 10, 40, 50], "identifier-like: integer codes, 'qid' in the name"),
    ("index", [0.5, 1.5, 2.5, 0.5, 1.5, 2.5], "index-like: named like a row index"),
    ("correct_real", [1, 0, np.nan, 1, 1, 0], "label-derived: 'correct' in the name"),
    ("y_true", [0.1, 0.9, 0.3, 0.4, 0.2, 0.8], "label-derived: 'y' in the name"),
    ("x", [0.1, np.inf, 0.3, 0.4, -np.inf, 0.8], "infinite values on 2 rows"),
])
def test_name_rules(name, values, reason):
    log = pd.DataFrame({"model": ["a", "a", "a", "b", "b", "b"], "example_id": ["1", "2", "3"] * 2,
                        name: values})
    assert dict(screen_features(log).set_aside) == {name: reason}


def test_integer_quantities_and_binary_flags_stay_features():
    """Counts with a wide range, a small number of options (3..6, not from 0/1) and an example-level 0/1 flag
    named like nothing in particular are genuine."""
    rng = np.random.default_rng(1)
    n = 200
    log = pd.DataFrame({"model": np.repeat(["a", "b"], n), "example_id": np.tile(np.arange(n).astype(str), 2),
                        "correct": rng.integers(0, 2, 2 * n).astype(float),
                        "n_options": np.tile(rng.integers(3, 7, n), 2), "length": np.tile(rng.poisson(80, n), 2),
                        "has_image": np.tile(rng.integers(0, 2, n), 2)})
    assert default_features(log) == ["n_options", "length", "has_image"]


def test_score_metric_leak_is_checked_against_score():
    rng = np.random.default_rng(2)
    score = rng.random(100)
    log = pd.DataFrame({"model": "a", "example_id": np.arange(100).astype(str), "score": score,
                        "neg_copy": -2 * score + rng.normal(0, 0.01, 100), "hint": rng.random(100)})
    reasons = dict(screen_features(log, "score").set_aside)
    assert reasons["neg_copy"].startswith("label-derived: correlation -1.00")
    assert default_features(log, "score") == ["hint"]


def test_fill_missing_uses_the_column_mean():
    filled = fill_missing(pd.DataFrame({"a": [1.0, np.nan, 3.0], "b": [np.nan, 4.0, 8.0]}))
    assert filled.to_dict("list") == {"a": [1.0, 2.0, 3.0], "b": [6.0, 4.0, 8.0]}


def test_subgroup_regression_uses_the_defaults_and_skips_missing_values():
    log = validate(generated_raw()).assign(group=lambda f: "g" + (f["n_tokens"] % 5).astype(int).astype(str))
    units = direct_estimates(log)
    x = unit_features(log, units, "correct", None)
    assert [c for c in x.columns if c.startswith("mean_")] == ["mean_emb_0", "mean_emb_1", "mean_n_tokens",
                                                                "mean_n_steps"]
    one = (log["model"] == "m0") & (log["group"] == "g0")
    assert x.loc[(units["model"] == "m0").to_numpy() & (units["group"] == "g0").to_numpy(), "mean_emb_1"].item() \
        == pytest.approx(log.loc[one, "emb_1"].dropna().mean())
    table = empirical_bayes(log, regressor="linear")
    assert table["eb"].notna().all() and len(table) == 15


def test_imagenet_x_class_ids_and_the_second_label_are_set_aside(shared_file):
    from evalcore.data.validation import load_eval_log

    log = load_eval_log(shared_file("imagenet_x_predictions.csv.gz"))
    reasons = dict(screen_features(log).set_aside)
    for column in ("label", "predicted_class", "metaclass_id"):
        assert reasons[column].startswith("identifier-like"), (column, reasons[column])
    assert reasons["correct_real"].startswith("label-derived")
    assert default_features(log) == []  # real_labels_available: 'labels' in the name
    assert {"label", "predicted_class", "metaclass_id", "correct_real"} <= set(numeric_columns(log))


def test_model_vs_human_trials_counters_and_subject_traits_are_set_aside(shared_file):
    from evalcore.data.reading import read_table

    raw = read_table(shared_file("model_vs_human_trials.csv.gz")).rename(columns={"category": "object_category"})
    log = validate(raw, mapping={"subject": "model", "dataset": "task", "condition": "group", "correct": "correct"})
    reasons = dict(screen_features(log).set_aside)
    assert {c: r.split(":")[0] for c, r in reasons.items()} == {
        "is_human": "model-level", "session": "constant", "trial": "identifier-like", "rt": "mostly missing"}
    assert default_features(log) == []


def test_mmlu_pro_number_of_options_stays_a_feature(shared_file):
    """n_options runs 1..10 with every value used, but 10 holds most questions: a quantity, not codes."""
    from evalcore.data.validation import load_eval_log

    log = load_eval_log(shared_file("mmlu_pro_per_question.csv.gz"))
    assert default_features(log) == ["n_options"]
