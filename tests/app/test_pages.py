"""The dashboard's pages driven headlessly through ``streamlit.testing.v1.AppTest``.

Every test starts from app.py (the real entry point with its st.navigation and sidebar) and moves between pages
with ``AppTest.switch_page``, loading demos and files through the Data page's widgets as a user would. Expected
numbers are computed independently in the tests (by hand or straight from evalcore), never read back from the app.
"""

from __future__ import annotations

import gzip
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from evalcore.demo import synthetic as demo
from evalcore.data.validation import validate
from evalcore.data.display import WORD_JOINER

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 180  # seconds per run: the first calibration run bootstraps
REPORT = re.compile(r"a \*\*(\w+)\*\* table with ([\d,]+) rows and (\d+) models")


# ------------------------------------------------------------------------------------------------------------------
# driving the app


def open_app() -> AppTest:
    """A new session on its first page (the Data page with the default demo)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert_no_exception(at)
    assert [t.value for t in at.title] == ["Data"]
    return at


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert_no_exception(at)
    titles = [t.value for t in at.title]
    assert titles == [page.capitalize()], f"expected the {page} page, got titles {titles}"
    return at


def open_page(page: str, **query: str) -> AppTest:
    """A new session opened at ``pages/<page>.py`` with the address's query parameters ``query``, as a link
    opens it."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in query.items():
        at.query_params[key] = value
    return goto(at, page)


def load_demo(at: AppTest, name: str) -> AppTest:
    goto(at, "data")
    at.selectbox(key="demo_choice").set_value(name)
    [load] = [b for b in at.button if b.label == "Load demo"]
    load.click()
    at.run()
    assert_no_exception(at)
    assert at.selectbox(key="demo_choice").value == name
    return at


def upload(at: AppTest, filename: str, content: bytes, mime: str = "text/csv") -> AppTest:
    goto(at, "data")
    at.file_uploader(key="uploader").set_value((filename, content, mime))
    at.run()
    assert_no_exception(at)
    return at


# ------------------------------------------------------------------------------------------------------------------
# reading what the app shows


def assert_no_exception(at: AppTest) -> None:
    problems = [f"{e.message}\n{''.join(e.stack_trace)}" for e in at.exception]
    assert not problems, "the page raised:\n" + "\n".join(problems)


_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def shown(markdown: str) -> str:
    """The text a browser shows for Markdown whose user strings went through ``evalcore.data.display.literal``:
    backslash escapes resolved, word joiners (invisible) dropped."""
    return _ESCAPE.sub(r"\1", markdown).replace(WORD_JOINER, "")


def texts(elements) -> list[str]:
    """What the elements (captions, alerts, ...) show, as text."""
    return [shown(e.value) for e in elements]


def report_counts(at: AppTest) -> tuple[str, int, int]:
    """(kind, rows, models) from the Data page's validation report."""
    successes = texts(at.success)
    assert len(successes) == 1, f"expected one validation report, got {successes}; errors: {texts(at.error)}"
    match = REPORT.search(successes[0])
    assert match, successes[0]
    return match.group(1), int(match.group(2).replace(",", "")), int(match.group(3))


def table_with(at: AppTest, *columns: str) -> pd.DataFrame:
    """The first table on the page that has all ``columns``."""
    for element in at.dataframe:
        frame = element.value
        if all(c in frame.columns for c in columns):
            return frame
    shown = [list(e.value.columns) for e in at.dataframe]
    raise AssertionError(f"no table with columns {columns}; tables shown: {shown}")


def charts(at: AppTest) -> list:
    return list(at.get("plotly_chart"))


def assert_lazy_reliability_tab(at: AppTest) -> None:
    """Calibration charts: ECE by model, the reliability diagram of the open tab only (the first model's), the
    selective-prediction curves and the breakdown."""
    keys = [c.key for c in charts(at)]
    assert len(keys) == 4, keys
    first = shown(at.tabs[0].label)
    assert sum(k.startswith("chart-reliability-") for k in keys) == 1
    assert any(k.startswith("chart-reliability-") and k.endswith(render_key_hash(f"reliability {first}"))
               for k in keys), (first, keys)


def render_key_hash(name: str) -> str:
    import hashlib

    return hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]


def chart_config(chart) -> dict:
    return json.loads(chart.proto.config)


def sidebar_captions(at: AppTest) -> list[str]:
    return texts(at.sidebar.caption)


def assert_tables_downloadable(at: AppTest) -> None:
    """Every table shown on the page has a CSV download button (input tables, st.data_editor, are not results)."""
    labels = [b.label for b in at.get("download_button")]
    csv = [label for label in labels if "(CSV)" in label]  # other downloads (figure files) may sit beside them
    shown = [d for d in at.dataframe if d.editing_mode == "read_only"]
    assert len(shown) > 0
    assert len(csv) >= len(shown), f"{len(shown)} tables but CSV downloads {labels}"


def by_model(frame: pd.DataFrame, column: str) -> dict[str, float]:
    return dict(zip(frame["model"], frame[column]))


# ------------------------------------------------------------------------------------------------------------------
# test data


def small_log() -> pd.DataFrame:
    """3 models x 8 examples, two tasks, two groups, 4 unlabeled rows; confidences away from bin edges."""
    correct = {
        "m-alpha": [1, 1, 0, 1, None, 1, 0, 1],
        "m-beta": [0, 1, 0, None, None, 1, 1, 0],
        "m-gamma": [1, 1, 1, 1, 0, 1, None, 1],
    }
    confidence = {
        "m-alpha": [0.95, 0.85, 0.65, 0.75, 0.55, 0.92, 0.62, 0.88],
        "m-beta": [0.55, 0.72, 0.45, 0.66, 0.51, 0.83, 0.77, 0.35],
        "m-gamma": [0.97, 0.93, 0.91, 0.86, 0.64, 0.99, 0.58, 0.94],
    }
    rows = []
    for model in correct:
        for i in range(8):
            rows.append({"model": model, "example_id": f"q{i + 1}", "task": "t1" if i < 4 else "t2",
                         "group": "g1" if i % 2 == 0 else "g2", "correct": correct[model][i],
                         "confidence": confidence[model][i]})
    return pd.DataFrame(rows)


SMALL_LOG_ACCURACY = {"m-alpha": 5 / 7, "m-beta": 3 / 6, "m-gamma": 6 / 7}  # labeled accuracy, counted by hand
SMALL_LOG_LABELED = {"m-alpha": 7, "m-beta": 6, "m-gamma": 7}
#: the mean over tasks t1 (q1-q4) and t2 (q5-q8): alpha (3/4 + 2/3) / 2, beta (1/3 + 2/3) / 2, gamma (4/4 + 2/3) / 2
SMALL_LOG_OVER_TASKS = {"m-alpha": 17 / 24, "m-beta": 1 / 2, "m-gamma": 5 / 6}


def hand_ece(conf: list[float], corr: list[float], n_bins: int = 10) -> float:
    """Plug-in ECE over equal-width bins, written out: sum_b |B_b|/n * |acc(B_b) - conf(B_b)|."""
    pairs = [(c, y) for c, y in zip(conf, corr) if y is not None and not pd.isna(y)]
    bins: dict[int, list[tuple[float, float]]] = {}
    for c, y in pairs:
        bins.setdefault(min(int(c * n_bins), n_bins - 1), []).append((c, y))
    total = 0.0
    for members in bins.values():
        acc = sum(y for _, y in members) / len(members)
        mean_conf = sum(c for c, _ in members) / len(members)
        total += len(members) / len(pairs) * abs(acc - mean_conf)
    return total


def csv_bytes(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode("utf-8")


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def independent_demo(name: str) -> pd.DataFrame:
    """The demo's canonical frame, built here straight from evalcore (not from the app's cache)."""
    if name == "synthetic":
        return validate(demo.synthetic_benchmark(seed=0).log)
    if name == "battles":
        return validate(demo.pairwise_battles(seed=0).battles)
    raise KeyError(name)


# ------------------------------------------------------------------------------------------------------------------
# 1. every page with every built-in demo


def check_log_demo_pages(at: AppTest, expected: pd.DataFrame | None) -> None:
    _, n_rows, n_models = report_counts(at)
    assert not texts(at.error)
    assert_tables_downloadable(at)
    if expected is not None:
        assert n_rows == len(expected)
        assert n_models == expected["model"].nunique()

    goto(at, "models")
    assert not texts(at.error) and not texts(at.warning)
    models_table = table_with(at, "model", "estimate", "ci_low", "ci_high", "n")
    assert len(models_table) == n_models
    assert (models_table["ci_low"] <= models_table["estimate"]).all()
    assert (models_table["estimate"] <= models_table["ci_high"]).all()
    assert len(charts(at)) == 1
    assert_tables_downloadable(at)
    if expected is not None:
        over_tasks = expected.groupby(["model", "task"])["correct"].mean().groupby("model").mean()
        for model, estimate in by_model(models_table, "estimate").items():  # the mean over tasks, as the Leaderboard
            assert estimate == pytest.approx(over_tasks[model], abs=1e-9), model

    goto(at, "calibration")
    assert not texts(at.error) and not texts(at.warning)
    summary = table_with(at, "model", "ece", "ci_low", "ci_high", "accuracy", "mean_confidence")
    models = sorted(models_table["model"])
    assert sorted(summary["model"]) == models
    assert ((summary["ci_low"] <= summary["ece"] + 1e-12) & (summary["ece"] >= 0)).all()
    selective = table_with(at, "model", "area", "area_low", "area_high", "accuracy_at_coverage")
    assert sorted(selective["model"]) == models
    leader = models_table["model"].iloc[0]  # the Models page's first row: the best overall number
    # one reliability diagram tab per model, the selection's leader first (as the report), then the table's order
    assert [shown(t.label) for t in at.tabs] == [leader, *[m for m in summary["model"] if m != leader]]
    # ECE by model, one reliability diagram per model, selective prediction, ECE breakdown
    assert_lazy_reliability_tab(at)
    assert_tables_downloadable(at)
    if expected is not None:
        usable = expected[expected["correct"].notna() & expected["confidence"].notna()]
        assert by_model(summary, "n") == usable.groupby("model").size().to_dict()
        accuracy = usable.groupby("model")["correct"].mean()
        for model, value in by_model(summary, "accuracy").items():
            assert value == pytest.approx(accuracy[model], abs=1e-9), model
    check_subgroups_page(at, expected)
    check_leaderboard_page(at, expected)


def check_leaderboard_page(at: AppTest, expected: pd.DataFrame | None) -> None:
    """Leaderboard: overall scores inside their intervals, three charts, the interval method stated."""
    goto(at, "leaderboard")
    assert not texts(at.error)
    board = table_with(at, "model", "scope", "name", "estimate", "ci_low", "ci_high")
    assert ((board["ci_low"] <= board["estimate"] + 1e-12) & (board["estimate"] <= board["ci_high"] + 1e-12)).all()
    n_categories = board.loc[board["scope"] == "category", "name"].nunique()
    if n_categories >= 3:
        assert len(charts(at)) == 5  # overall, pairwise differences, rank intervals, weighted score, weighting map
        static = [b for b in at.get("download_button") if "static map" in b.label]
        assert len(static) == 1 and "python-ternary" in static[0].label
    else:  # no trade-off between categories to map: explained instead
        assert len(charts(at)) == 4 and any("needs three task categories" in t for t in texts(at.info))
    assert any("bootstrap percentile intervals" in c for c in texts(at.caption))
    assert_tables_downloadable(at)
    if expected is not None:
        labeled = expected[expected["correct"].notna()]
        overall = labeled.groupby(["model", "task"])["correct"].mean().groupby("model").mean()
        got = board[board["scope"] == "overall"].set_index("model")["estimate"]
        assert got.to_dict() == pytest.approx(overall.to_dict())


def check_subgroups_page(at: AppTest, expected: pd.DataFrame | None) -> None:
    """Subgroups: DT/SR/EB table with ordered intervals, the average-coverage note, forest and shrinkage plots."""
    goto(at, "subgroups")
    assert not texts(at.error) and not texts(at.warning)
    assert any("on average across subgroups" in t for t in texts(at.info))
    table = table_with(at, "model", "group", "n", "direct", "synthetic", "eb", "eb_low", "eb_high", "shrinkage")
    assert ((table["eb_low"] <= table["eb"]) & (table["eb"] <= table["eb_high"])).all()
    assert (table["eb_high"] - table["eb_low"] > 0).all()
    assert table["shrinkage"].between(0, 1).all()
    assert len(charts(at)) == 2  # forest plot of one model, shrinkage plot
    assert_tables_downloadable(at)
    if expected is not None:
        labeled = expected[expected["correct"].notna()]
        direct = labeled.groupby(["model", "group"])["correct"].agg(["mean", "size"])
        got = table.set_index(["model", "group"])
        assert got["n"].to_dict() == direct["size"].to_dict()
        assert got["direct"].to_dict() == pytest.approx(direct["mean"].to_dict())


def test_synthetic_demo_is_the_default_and_every_page_renders():
    at = open_app()
    assert at.selectbox(key="demo_choice").value == "synthetic"
    assert sidebar_captions(at)[0].startswith("Data: demo")
    check_log_demo_pages(at, independent_demo("synthetic"))
    # loading it explicitly through the button gives the same data
    load_demo(at, "synthetic")
    assert report_counts(at)[1] == len(independent_demo("synthetic"))


@pytest.mark.slow
def test_sklearn_demo_renders_every_page():
    at = open_app()
    load_demo(at, "sklearn")
    kind, _, n_models = report_counts(at)
    assert kind == "log" and n_models >= 2
    assert "scikit-learn" in sidebar_captions(at)[0]
    check_log_demo_pages(at, None)


def test_battles_demo_renders_every_page_and_calibration_explains():
    expected = independent_demo("battles")
    at = open_app()
    load_demo(at, "battles")
    kind, n_rows, n_models = report_counts(at)
    assert (kind, n_rows) == ("battles", len(expected))
    assert n_models == len(set(expected["model_a"]) | set(expected["model_b"]))
    assert not texts(at.error)
    assert_tables_downloadable(at)

    goto(at, "models")
    assert not texts(at.error)
    wins = table_with(at, "model", "estimate", "n")
    votes = expected[expected["outcome"].notna()]
    long = pd.concat([pd.DataFrame({"model": votes["model_a"], "win": 1 - votes["outcome"]}),
                      pd.DataFrame({"model": votes["model_b"], "win": votes["outcome"]})])
    for model, rate in by_model(wins, "estimate").items():
        assert rate == pytest.approx(long.loc[long["model"] == model, "win"].mean(), abs=1e-9), model
    assert by_model(wins, "n") == long.groupby("model").size().to_dict()
    assert_tables_downloadable(at)

    goto(at, "calibration")
    assert not texts(at.error), "pairwise data must get an explanation, not an error"
    [info] = texts(at.info)
    assert "per-example log" in info and "confidence" in info
    assert charts(at) == [] and len(at.dataframe) == 0
    assert len(at.get("page_link")) == 1  # a way back to the Data page

    goto(at, "subgroups")
    assert not texts(at.error)
    assert any("per-example log" in t for t in texts(at.info))
    assert charts(at) == []

    goto(at, "leaderboard")
    assert not texts(at.error)
    assert any("leaderboard needs" in t for t in texts(at.info))
    assert charts(at) == []


# ------------------------------------------------------------------------------------------------------------------
# 2. the upload flow


def test_csv_upload_validates_and_drives_models_and_calibration():
    log = small_log()
    at = open_app()
    upload(at, "my_eval.csv", csv_bytes(log))
    assert not texts(at.error)
    assert report_counts(at) == ("log", 24, 3)
    notes = texts(at.info)
    assert any("4 of 24 rows" in n and "unlabeled" in n for n in notes), notes
    mapping = table_with(at, "role", "column in the file")
    assert dict(zip(mapping["role"], mapping["column in the file"])) == {
        c: c for c in ("model", "example_id", "task", "group", "correct", "confidence")}
    assert sidebar_captions(at)[0] == "Data: upload · my_eval.csv"
    assert sidebar_captions(at)[1].startswith("3 model(s)")
    assert_tables_downloadable(at)

    goto(at, "models")
    assert at.radio(key="w_over").value == "tasks"  # the default: the mean over tasks, as Leaderboard and report
    for over, expected in (("tasks", SMALL_LOG_OVER_TASKS), ("examples", SMALL_LOG_ACCURACY)):
        at.radio(key="w_over").set_value(over)
        at.run()
        table = table_with(at, "model", "estimate", "n", "n_unlabeled")
        assert list(table["model"]) == sorted(expected, key=expected.get, reverse=True)  # best first
        assert by_model(table, "estimate") == pytest.approx(expected, abs=1e-12)
        assert by_model(table, "n") == SMALL_LOG_LABELED
        assert by_model(table, "n_unlabeled") == {m: 8 - n for m, n in SMALL_LOG_LABELED.items()}
        assert len(charts(at)) == 1
    assert any("pooled over examples" in c for c in texts(at.caption))

    goto(at, "calibration")
    assert not texts(at.error) and not texts(at.warning)
    assert_lazy_reliability_tab(at)
    assert any("Using 20 labeled rows" in c and "4 unlabeled rows" in c for c in texts(at.caption))
    summary = table_with(at, "model", "ece", "accuracy", "n")
    assert by_model(summary, "n") == SMALL_LOG_LABELED
    for model, row in summary.set_index("model").iterrows():
        assert row["accuracy"] == pytest.approx(SMALL_LOG_ACCURACY[model], abs=1e-12), model
        rows = log[log["model"] == model]
        assert row["ece"] == pytest.approx(hand_ece(list(rows["confidence"]), list(rows["correct"])), abs=1e-12)
    assert_tables_downloadable(at)
    # ECE by model, the open tab's reliability table, selective prediction, ECE breakdown
    assert len(at.get("download_button")) == 1 + 1 + 1 + 1


@pytest.mark.parametrize("filename, encode, mime", [
    ("my_eval.csv.gz", lambda f: gzip.compress(csv_bytes(f)), "application/gzip"),
    ("my_eval.parquet", parquet_bytes, "application/octet-stream"),
    ("my_eval.tsv", lambda f: f.to_csv(index=False, sep="\t").encode("utf-8"), "text/tab-separated-values"),
])
def test_compressed_and_binary_formats_validate(filename, encode, mime):
    at = open_app()
    upload(at, filename, encode(small_log()), mime)
    assert not texts(at.error)
    assert report_counts(at) == ("log", 24, 3)
    assert any("4 of 24 rows" in n for n in texts(at.info))
    goto(at, "models")
    table = table_with(at, "model", "estimate")
    for model, estimate in by_model(table, "estimate").items():
        assert estimate == pytest.approx(SMALL_LOG_OVER_TASKS[model], abs=1e-12), model


# ------------------------------------------------------------------------------------------------------------------
# 3. bad uploads: a clear message, never an exception


def _bad_confidence() -> bytes:
    log = small_log().head(6).copy()
    log.loc[2, "confidence"] = 1.7  # the third data row
    return csv_bytes(log)


BAD_UPLOADS = {
    "confidence-out-of-range": ("scores.csv", _bad_confidence, ["'confidence'", "row 3", "1.7", "[0, 1]"]),
    "no-model-column": ("nomodel.csv", lambda: csv_bytes(small_log().drop(columns="model")), ["model"]),
    "empty-file": ("empty.csv", lambda: b"", ["empty"]),
    "random-bytes": ("random.csv", lambda: np.random.default_rng(0).bytes(4096), ["binary"]),
    "latin-1": ("latin1.csv", lambda: "model,example_id,correct,confidence\nmodèle-a,q1,1,0.9\nb,q1,0,0.4\n"
                .encode("latin-1"), ["UTF-8", "line 2"]),
}


@pytest.mark.parametrize("case", list(BAD_UPLOADS))
def test_bad_upload_shows_a_clear_error_on_every_page(case):
    filename, make, phrases = BAD_UPLOADS[case]
    at = open_app()
    upload(at, filename, make())
    errors = texts(at.error)
    assert len(errors) == 1, errors
    for phrase in phrases:
        assert phrase in errors[0], f"{phrase!r} not in {errors[0]!r}"
    assert not texts(at.success), "a bad file must not get a validation report"
    assert sidebar_captions(at)[0] == "Data: the upload needs fixing (see the Data page)."

    for page in ("calibration", "models", "subgroups", "leaderboard"):
        goto(at, page)
        assert texts(at.error), f"{page} page should explain that the upload cannot be used"
        assert charts(at) == [] and len(at.dataframe) == 0
        assert len(at.get("page_link")) == 1  # "Fix it on the Data page"

    # the session recovers: a valid upload replaces the bad one
    upload(at, "fixed.csv", csv_bytes(small_log()))
    assert not texts(at.error)
    assert report_counts(at) == ("log", 24, 3)


# ------------------------------------------------------------------------------------------------------------------
# 4. column mapping


def test_column_mapping_with_non_standard_names():
    odd = pd.DataFrame({
        "system": ["A"] * 5 + ["B"] * 5,
        "qid": [1, 2, 3, 4, 5] * 2,
        "is_right": [1, 0, 1, 1, None, 0, 0, 1, None, None],
        "p": [0.9, 0.3, 0.8, 0.7, 0.6, 0.4, 0.2, 0.85, 0.5, 0.45],
    })
    at = open_app()
    upload(at, "odd.csv", csv_bytes(odd))
    assert at.selectbox(key="role_model").value == "system"  # suggested from the name
    assert at.selectbox(key="role_correct").value == "(not in the file)"
    [error] = texts(at.error)
    assert "value column" in error and "is_right" in error  # says what is missing and lists the columns

    at.selectbox(key="role_example_id").set_value("qid")
    at.selectbox(key="role_correct").set_value("is_right")
    at.selectbox(key="role_confidence").set_value("p")
    at.run()
    assert_no_exception(at)
    assert not texts(at.error)
    assert report_counts(at) == ("log", 10, 2)
    mapping = table_with(at, "role", "column in the file")
    assert dict(zip(mapping["role"], mapping["column in the file"])) == {
        "model": "system", "example_id": "qid", "correct": "is_right", "confidence": "p"}
    assert not any("No example_id column" in n for n in texts(at.info))
    assert any("3 of 10 rows" in n for n in texts(at.info))
    assert at.selectbox(key="role_correct").value == "is_right"

    goto(at, "models")
    table = table_with(at, "model", "estimate", "n")
    assert by_model(table, "estimate") == pytest.approx({"A": 3 / 4, "B": 1 / 3})
    assert by_model(table, "n") == {"A": 4, "B": 3}
    goto(at, "calibration")
    assert not texts(at.error)
    assert sorted(table_with(at, "model", "ece")["model"]) == ["A", "B"]

    # the mapping is kept when coming back to the Data page
    goto(at, "data")
    assert at.selectbox(key="role_confidence").value == "p"
    assert report_counts(at) == ("log", 10, 2)


# ------------------------------------------------------------------------------------------------------------------
# 5. the selection persists across pages


def test_selection_persists_across_pages():
    at = open_app()
    goto(at, "models")
    all_models = list(at.multiselect(key="w_models").value)
    assert len(all_models) == 5 and at.select_slider(key="w_level").value == 0.95
    dropped = all_models[2]
    kept = [m for m in all_models if m != dropped]
    at.multiselect(key="w_models").unselect(dropped)
    at.select_slider(key="w_level").set_value(0.9)
    at.run()
    assert_no_exception(at)
    assert sorted(table_with(at, "model", "estimate")["model"]) == sorted(kept)
    assert sidebar_captions(at)[1] == "4 model(s) · all tasks · all groups · level 90%"

    goto(at, "calibration")
    assert sidebar_captions(at)[1] == "4 model(s) · all tasks · all groups · level 90%"
    summary = table_with(at, "model", "ece")
    assert sorted(summary["model"]) == sorted(kept)
    assert [shown(t.label) for t in at.tabs] == kept
    assert any("about 90% of the time" in c for c in texts(at.caption))

    goto(at, "models")
    assert list(at.multiselect(key="w_models").value) == kept
    assert at.select_slider(key="w_level").value == 0.9
    assert sidebar_captions(at)[1] == "4 model(s) · all tasks · all groups · level 90%"
    table = table_with(at, "model", "estimate", "ci_low")
    assert sorted(table["model"]) == sorted(kept)

    goto(at, "data")
    goto(at, "models")
    assert list(at.multiselect(key="w_models").value) == kept


def test_the_sidebar_level_is_the_level_of_every_page():
    at = open_app()
    goto(at, "models")
    at.select_slider(key="w_level").set_value(0.9)
    at.run()
    assert_no_exception(at)
    assert any("with 90% " in c for c in texts(at.caption))
    goto(at, "leaderboard")
    assert_no_exception(at)
    shown = " ".join(texts(at.caption))
    assert "Intervals: 90% bootstrap percentile intervals" in shown and "simultaneous 90% intervals" in shown
    assert "with 90% intervals that hold for all models together" in shown
    assert "83.4%" not in shown and "95%" not in shown.replace("at 95% (benchmarks", "")
    at.toggle(key="lb_compare").set_value(True)
    at.run()
    assert any("Intervals: 83.4% bootstrap percentile intervals" in c and "Comparison intervals (83.4%, not the "
               "chosen 90%)" in c for c in texts(at.caption))
    for page in ("sampling", "autoeval"):  # Labeling budget, AI-assisted evaluation
        at.switch_page(f"pages/{page}.py")
        at.run()
        assert_no_exception(at)
        assert at.select_slider(key="w_level").value == 0.9
        shown = " ".join(texts(at.caption))
        assert "90%" in shown and "95% interval" not in shown and "95% normal" not in shown


# ------------------------------------------------------------------------------------------------------------------
# 6. sessions are independent


def test_two_sessions_see_only_their_own_upload():
    log = small_log()
    # same file name in both sessions, different content: the caches must key on content, not name
    first = log[log["model"] != "m-gamma"]
    second = log.assign(model=log["model"].str.replace("m-", "other-"))
    a, b = open_app(), open_app()
    upload(a, "log.csv", csv_bytes(first))
    upload(b, "log.csv", csv_bytes(second))
    assert report_counts(a) == ("log", 16, 2)
    assert report_counts(b) == ("log", 24, 3)

    goto(a, "calibration")
    goto(b, "calibration")
    assert sorted(table_with(a, "model", "ece")["model"]) == ["m-alpha", "m-beta"]
    assert sorted(table_with(b, "model", "ece")["model"]) == ["other-alpha", "other-beta", "other-gamma"]

    goto(a, "data")
    goto(b, "data")
    assert report_counts(a) == ("log", 16, 2)
    assert report_counts(b) == ("log", 24, 3)
    assert sidebar_captions(a)[1].startswith("2 model(s)")
    assert sidebar_captions(b)[1].startswith("3 model(s)")
    goto(a, "models")
    assert sorted(table_with(a, "model", "estimate")["model"]) == ["m-alpha", "m-beta"]


# ------------------------------------------------------------------------------------------------------------------
# 7. chart download format


def test_chart_download_format_in_the_sidebar():
    at = open_app()
    radio = at.sidebar.radio(key="chart_format")
    assert radio.options == ["PNG", "SVG"]
    assert radio.value == "png"
    goto(at, "models")
    [chart] = charts(at)
    assert chart_config(chart)["toImageButtonOptions"]["format"] == "png"

    at.sidebar.radio(key="chart_format").set_value("svg")
    at.run()
    assert_no_exception(at)
    [chart] = charts(at)
    assert chart_config(chart)["toImageButtonOptions"]["format"] == "svg"

    goto(at, "calibration")
    assert at.sidebar.radio(key="chart_format").value == "svg"
    formats = {chart_config(c)["toImageButtonOptions"]["format"] for c in charts(at)}
    assert formats == {"svg"}


# ------------------------------------------------------------------------------------------------------------------
# regressions and navigation


def test_battles_upload_without_human_votes_explains_instead_of_crashing():
    battles = pd.DataFrame({"model_a": ["A", "B", "A", "C"], "model_b": ["B", "C", "C", "A"],
                            "judge": [0.6, 0.3, 0.8, 0.5]})
    at = open_app()
    upload(at, "judged.csv", csv_bytes(battles))
    assert report_counts(at) == ("battles", 4, 3)
    goto(at, "models")
    assert any("no human votes" in i for i in texts(at.info))
    goto(at, "calibration")
    assert any("per-example log" in i for i in texts(at.info))


def test_model_names_differing_only_in_case_or_punctuation():
    log = small_log()
    log["model"] = log["model"].map({"m-alpha": "Model-A", "m-beta": "model_a", "m-gamma": "model a"})
    at = open_app()
    upload(at, "names.csv", csv_bytes(log))
    assert report_counts(at) == ("log", 24, 3)
    goto(at, "calibration")
    assert [shown(t.label) for t in at.tabs] == ["model a", "Model-A", "model_a"]  # the leader (5/6) first
    assert_lazy_reliability_tab(at)
    assert_tables_downloadable(at)


def test_first_visit_deep_link_runs_through_app_py(fresh_server):
    """A fresh server's first visitor opening /models still gets app.py's sidebar and navigation."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.switch_page("pages/models.py")  # before any run: requested by file name, as a browser URL does
    at.run()
    assert_no_exception(at)
    assert [t.value for t in at.title] == ["Models"]
    assert at.sidebar.radio(key="chart_format").value == "png"
    assert sidebar_captions(at)[0].startswith("Data: demo")


def test_one_column_chosen_for_two_roles_is_refused():
    at = open_app()
    csv = b"system,qid,is_right,p\na,1,1,0.9\na,2,0,0.4\nb,1,1,0.8\nb,2,1,0.7\n"
    at.file_uploader[0].set_value(("odd.csv", csv, "text/csv"))
    at.run()
    at.selectbox(key="role_model").set_value("system")
    at.selectbox(key="role_example_id").set_value("system")
    at.run()
    assert not at.exception
    assert any("'system' is chosen for the roles model and example_id" in e for e in texts(at.error))


def test_same_bytes_under_a_new_name_update_the_label():
    at = open_app()
    csv = b"model,example_id,correct,confidence\na,1,1,0.9\na,2,0,0.4\nb,1,1,0.8\nb,2,1,0.7\n"
    at.file_uploader[0].set_value(("first.csv", csv, "text/csv"))
    at.run()
    at.file_uploader[0].set_value(("second.csv", csv, "text/csv"))
    at.run()
    assert any("second.csv" in c for c in texts(at.sidebar.caption))


def test_subgroups_page_on_an_upload_and_its_holdout_study():
    log = small_log()
    at = open_app()
    upload(at, "my_eval.csv", csv_bytes(log))
    check_subgroups_page(at, log)
    at.button(key="sg_run").click()
    at.run()
    assert not at.exception
    assert any("too small for a holdout study" in e for e in texts(at.error))  # 8 examples: nothing to hold out

    at = open_app()  # the synthetic demo: groups large enough
    goto(at, "subgroups")
    at.selectbox(key="sg_reg").set_value("mean")
    at.select_slider(key="sg_reps").set_value(50)
    at.run()
    at.button(key="sg_run").click()
    at.run()
    assert not at.exception and not texts(at.error)
    summary = table_with(at, "method", "mse", "mse_ratio_vs_DT", "coverage", "width")
    assert list(summary["method"]) == ["DT", "SR", "EB"]
    assert summary.loc[summary["method"] == "DT", "mse_ratio_vs_DT"].item() == pytest.approx(1.0)
    assert len(charts(at)) == 4  # forest, shrinkage, holdout MSE ratios, coverage vs width
    assert any("50 repetitions" in c for c in texts(at.caption))


def test_leaderboard_bayesian_model_on_request():
    at = open_app()
    goto(at, "leaderboard")
    assert not any("R-hat" in c for c in texts(at.caption))  # not fitted until asked
    at.toggle(key="lb_bayes").set_value(True)
    at.run()
    assert not at.exception and not texts(at.error)
    assert any("R-hat" in c and "posterior predictive" in c for c in texts(at.caption))
    board = table_with(at, "model", "scope", "name", "estimate", "ci_low", "ci_high", "rhat", "ess_bulk", "ess_tail")
    assert board["estimate"].between(0, 1).all() and (board["ci_low"] <= board["ci_high"]).all()
    probs = table_with(at, "model", "rank", "probability")
    assert probs.groupby("model")["probability"].sum().to_numpy() == pytest.approx(1.0)
    assert len(charts(at)) == 6  # + posterior rank probabilities


def test_vtab_summary_upload_through_the_leaderboard(shared_file):
    """The real VTAB-1k leaderboard uploaded as a summary: Table 6, weights, chance/ceiling, Bayesian gray zone."""
    at = open_app()
    upload(at, "vtab_1k.csv", shared_file("vtab_1k.csv").read_bytes())
    assert report_counts(at)[0] == "summary"
    goto(at, "leaderboard")
    assert not texts(at.error)
    at.toggle(key="lb_compare").set_value(True)  # Table 6's intervals are the 83.4% comparison intervals
    at.run()
    table_with(at, "model", "natural", "specialized", "structured", "overall")  # the wide leaderboard is shown
    long = table_with(at, "model", "scope", "name", "estimate", "ci_low", "ci_high").set_index(["model", "name"])
    for cell, published in ((("Sup-Rotation-100%", "overall"), (68.0, 67.8, 68.1)),  # Table 6
                            (("Rotation", "structured"), (57.3, 57.0, 57.6))):
        shown = np.round(100 * long.loc[cell, ["estimate", "ci_low", "ci_high"]].to_numpy(dtype=float), 1)
        assert shown[0] == published[0] and shown[1:] == pytest.approx(published[1:], abs=0.1 + 1e-9), cell

    # all weight on the structured tasks: Rotation comes first (the paper's Section 3.3)
    for category, value in (("natural", 0.0), ("specialized", 0.0), ("structured", 1.0)):
        at.number_input(key=f"lb_w_{category}").set_value(value)
    at.run()
    scores = table_with(at, "model", "score", "se", "ci_low", "ci_high")
    assert scores.iloc[0]["model"] == "Rotation"
    assert any("structured 1.00" in c for c in texts(at.caption))

    # chance/ceiling normalization: chance 0.5 on one task moves that task's score to (p - 0.5) / 0.5
    at.selectbox(key="lb_norm").set_value("chance")
    at.run()
    long = table_with(at, "model", "scope", "name", "estimate").set_index(["model", "name"])
    task = long.index.get_level_values("name")[0]
    raw = long.at[("Rotation", task), "estimate"]
    at.session_state["lb_bounds"] = {"edited_rows": {0: {"chance": 0.5}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not texts(at.error)
    long = table_with(at, "model", "scope", "name", "estimate").set_index(["model", "name"])
    assert long.at[("Rotation", task), "estimate"] == pytest.approx((raw - 0.5) / 0.5)
    assert any("your chance and ceiling" in c for c in texts(at.caption))
    at.session_state["lb_bounds"] = {"edited_rows": {0: {"chance": 1.0}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert any("0 <= chance < ceiling <= 1" in e for e in texts(at.error))  # explained, not a traceback
    at.selectbox(key="lb_norm").set_value("raw")
    at.run()

    # the gray zone from the Bayesian posterior, with user-given truncated normal priors
    at.radio(key="lb_se").set_value("bayes")
    at.run()
    assert not texts(at.error)
    assert any("posterior standard deviations of the Bayesian model" in c for c in texts(at.caption))
    at.toggle(key="lb_bayes").set_value(True)
    at.run()
    at.select_slider(key="lb_draws").set_value(1000)
    at.radio(key="lb_prior").set_value("normal")
    at.run()
    assert not texts(at.error)
    assert any("truncated normal priors" in c for c in texts(at.caption))
    probs = table_with(at, "model", "rank", "probability")
    first = probs[probs["rank"] == 1].set_index("model")["probability"]
    assert first.idxmax() == "Rotation"  # weights still all on structured tasks (the paper's Figure 5)
    assert_tables_downloadable(at)


# ------------------------------------------------------------------------------------------------------------------
# labeling budget


def goto_sampling(at: AppTest) -> AppTest:
    at.switch_page("pages/sampling.py")
    at.run()
    assert_no_exception(at)
    assert [t.value for t in at.title] == ["Labeling budget"]
    return at


def test_labeling_budget_on_the_fully_labeled_sklearn_demo():
    at = open_app()
    load_demo(at, "sklearn")
    goto_sampling(at)
    assert not texts(at.error)
    budget = at.number_input(key="sp_budget").value
    alloc = table_with(at, "stratum", "N_h", "proportional", "neyman (actual, from the proxy)",
                       "neyman (ideal, from the labels)")
    for column in ("proportional", "neyman (actual, from the proxy)", "neyman (ideal, from the labels)"):
        assert alloc[column].sum() == budget and (alloc[column] >= 2).all() and (alloc[column] <= alloc["N_h"]).all()
    precision = table_with(at, "budget", "design", "estimator", "predicted_mse", "relative_efficiency",
                           "efficiency_low", "efficiency_high")
    baseline = precision[(precision["design"] == "srs") & (precision["estimator"] == "ht")]
    assert baseline["relative_efficiency"].item() == pytest.approx(1.0)
    # the prediction comes with its range under miscalibration; proportional is at worst about as good as SRS
    assert (precision["efficiency_low"] <= precision["relative_efficiency"] + 1e-9).all()
    assert (precision["relative_efficiency"] <= precision["efficiency_high"] + 1e-9).all()
    proportional = precision[precision["design"] == "proportional"]
    assert proportional["efficiency_high"].between(0.95, 1.05).all()
    assert at.radio(key="sp_design").value == "proportional"
    assert any("What each number rests on" in m and "calibrated" in m for m in texts(at.markdown))
    needed = table_with(at, "design", "estimator", "labels_needed", "meets_target", "labels_for_probability",
                        "labels_needed_calibrated", "labels_needed_worst")
    # the demo pool is fully labeled: the plan rests on its labels (a Platt fit), not on the worst case
    assert len(needed) == 6 and (needed["labels_needed_worst"] >= needed["labels_needed"]).all()
    assert (needed["labels_for_probability"] >= needed["labels_needed"]).all()
    assert any("Planned from the labels at hand" in c for c in texts(at.caption))
    picked = table_with(at, "example_id", "proxy", "stratum")
    assert len(picked) == budget and picked["example_id"].is_unique
    ests = table_with(at, "estimator", "estimate", "se", "ci_low", "ci_high")
    assert list(ests["estimator"]) == ["ht", "df", "df_tuned"]
    assert ((ests["ci_low"] < ests["estimate"]) & (ests["estimate"] < ests["ci_high"])).all()
    assert any("Dotted line: the pool's true accuracy" in c for c in texts(at.caption))
    assert len(charts(at)) == 5  # labels needed (the answer's chart), strata, allocation, efficiency, estimates

    at.select_slider(key="sp_reps").set_value(200)
    at.multiselect(key="sp_mc_budgets").set_value([100, 500])
    at.button(key="sp_mc_run").click()
    at.run()
    assert not at.exception and not texts(at.error)
    mc = table_with(at, "budget", "design", "estimator", "mse", "mse_se", "coverage", "predicted_mse",
                    "predicted_low", "predicted_high")
    assert len(mc) == 12 and mc["coverage"].between(0.6, 1.0).all()
    assert (mc["predicted_low"] <= mc["predicted_high"]).all()
    baseline = mc[(mc["design"] == "srs") & (mc["estimator"] == "ht")]
    assert baseline["coverage"].between(0.85, 1.0).all()  # 200 samples: coverage SE ~ 0.015
    assert len(charts(at)) == 6
    assert_tables_downloadable(at)


def test_labeling_budget_labels_uploaded_for_the_selected_examples():
    at = open_app()  # the synthetic demo: 40% of the rows labeled
    goto_sampling(at)
    at.number_input(key="sp_budget").set_value(60)
    at.slider(key="sp_strata").set_value(5)
    at.run()
    assert not texts(at.error)
    picked = table_with(at, "example_id", "proxy", "stratum")
    assert len(picked) == 60
    assert any("selected examples have no label yet" in i for i in texts(at.info))

    # the annotators' answers for exactly the selected ids: the estimates appear
    rng = np.random.default_rng(1)
    answers = pd.DataFrame({"example_id": picked["example_id"], "correct": rng.integers(0, 2, len(picked))})
    at.file_uploader(key="sp_labels").set_value(("labels.csv", csv_bytes(answers), "text/csv"))
    at.run()
    assert not at.exception and not texts(at.error)
    ests = table_with(at, "estimator", "estimate", "se", "ci_low", "ci_high").set_index("estimator")
    # HT under proportional allocation: the stratified mean of the uploaded labels, weights N_h / N
    counts = picked.groupby("stratum")["example_id"].size()
    alloc = table_with(at, "stratum", "N_h", "proportional").set_index("stratum")
    assert (counts == alloc["proportional"]).all()
    strata_means = answers.assign(stratum=picked["stratum"].to_numpy()).groupby("stratum")["correct"].mean()
    weights = alloc["N_h"] / alloc["N_h"].sum()
    assert ests.at["ht", "estimate"] == pytest.approx(float((weights * strata_means).sum()))

    # an id that was not selected is refused with its name
    wrong = pd.concat([answers, pd.DataFrame({"example_id": ["not-selected-1"], "correct": [1]})])
    at.file_uploader(key="sp_labels").set_value(("labels.csv", csv_bytes(wrong), "text/csv"))
    at.run()
    assert not at.exception
    assert any("not selected for labeling: 'not-selected-1'" in e for e in texts(at.error))


def test_labeling_budget_all_correct_labels_get_a_bounded_interval_of_positive_width():
    at = open_app()  # the synthetic demo
    goto_sampling(at)
    at.number_input(key="sp_budget").set_value(40)
    at.slider(key="sp_strata").set_value(4)
    at.run()
    picked = table_with(at, "example_id", "proxy", "stratum")
    answers = pd.DataFrame({"example_id": picked["example_id"], "correct": 1})
    at.file_uploader(key="sp_labels").set_value(("labels.csv", csv_bytes(answers), "text/csv"))
    at.run()
    assert not at.exception and not texts(at.error)
    ests = table_with(at, "estimator", "estimate", "se", "ci_low", "ci_high").set_index("estimator")
    assert (ests["ci_high"] <= 1.0).all() and (ests["estimate"] <= 1.0).all()
    assert (ests["ci_low"] < ests["ci_high"]).all()
    # HT: SE 0, so the Wilson interval at p = 1 with n_eff = 1 / sum_h W_h^2 (1 - f_h) / n_h, not "1 (1, 1)"
    alloc = table_with(at, "stratum", "N_h", "proportional")
    weights, fraction = alloc["N_h"] / alloc["N_h"].sum(), alloc["proportional"] / alloc["N_h"]
    n_eff = 1 / float((weights**2 * (1 - fraction) / alloc["proportional"]).sum())
    assert ests.at["ht", "se"] == 0.0 and ests.at["ht", "estimate"] == 1.0
    assert ests.at["ht", "ci_low"] == pytest.approx(n_eff / (n_eff + 1.959963984540054**2))


def test_labeling_budget_one_stratum_is_simple_random_sampling():
    at = open_app()
    goto_sampling(at)
    at.slider(key="sp_strata").set_value(1)
    at.number_input(key="sp_budget").set_value(15)
    at.run()
    assert not at.exception and not texts(at.error)
    alloc = table_with(at, "stratum", "N_h", "proportional")
    assert alloc["stratum"].tolist() == [1] and alloc["proportional"].tolist() == [15]


def test_labeling_budget_tiny_pool_advice_can_be_followed():
    at = open_app()
    upload(at, "small.csv", csv_bytes(small_log()))  # 8 examples per model
    goto_sampling(at)
    assert not at.exception
    errors = texts(at.error)
    assert errors and ("fewer strata" in errors[0] or "reduce the number of strata" in errors[0]), errors
    assert "Stratum 0" not in errors[0]  # strata are numbered from 1, as in the tables
    at.slider(key="sp_strata").set_value(1)  # the advice: one stratum (simple random sampling)
    at.run()
    assert not at.exception and not texts(at.error)
    assert len(table_with(at, "example_id", "proxy", "stratum")) == at.number_input(key="sp_budget").value == 2


def test_labeling_budget_explains_what_it_needs():
    at = open_app()
    load_demo(at, "battles")
    goto_sampling(at)
    assert any("needs a per-example log with 0/1 correctness" in i for i in texts(at.info))
    at = open_app()
    goto_sampling(at)
    at.number_input(key="sp_budget").set_value(15)  # fewer than 2 per stratum for 10 strata
    at.run()
    assert not at.exception
    assert any("reduce the number of strata" in e for e in texts(at.error))


def test_labeling_budget_strata_from_features_and_groups():
    at = open_app()
    load_demo(at, "sklearn")
    goto_sampling(at)
    for basis in ("features", "groups"):
        at.selectbox(key="sp_basis").set_value(basis)
        at.run()
        assert not at.exception and not texts(at.error), basis
        alloc = table_with(at, "stratum", "N_h", "proportional")
        assert alloc["proportional"].sum() == at.number_input(key="sp_budget").value


def test_labeling_budget_with_the_cross_fitted_calibrated_proxy():
    at = open_app()  # synthetic demo: 40% labeled rows to calibrate on
    goto_sampling(at)
    at.selectbox(key="sp_proxy").set_value("calibrated")
    at.run()
    assert not at.exception and not texts(at.error)
    assert any("cross-fitted: no example's calibrated value uses its own label" in c for c in texts(at.caption))
    picked = table_with(at, "example_id", "proxy", "stratum")
    assert picked["proxy"].between(0, 1).all() and len(picked) == at.number_input(key="sp_budget").value


def test_labeling_budget_pool_without_a_proxy_for_some_examples_is_explained():
    log = small_log()
    log.loc[log.index[:2], "confidence"] = None  # m-alpha's first two examples have no confidence
    at = open_app()
    upload(at, "no_proxy.csv", csv_bytes(log))
    goto_sampling(at)
    assert not at.exception
    at.selectbox(key="sp_model").set_value("m-alpha")  # the page opens on the leader, m-gamma
    at.run()
    assert any("Pool of m-alpha" in e and "missing or infinite at positions 0, 1" in e for e in texts(at.error))
