"""evalcore.engine on DuckDB: equality with the in-memory methods on generated logs, the Poisson bootstrap's
independence of how the rows are split into files, its coverage with known truth, and bad sources."""

from __future__ import annotations

import gzip

import ibis
import numpy as np
import pandas as pd
import pytest

from evalcore.leaderboard import bootstrap as aggregate
from evalcore.calibration import estimators as calibration
from evalcore.ppi import means as ppi
from evalcore.stats import summaries
from evalcore.ppi.bradley_terry import bradley_terry_of_log
from evalcore.demo.synthetic import pairwise_battles
from evalcore.sampling.kmeans1d import kmeans_1d, kmeans_1d_binned
from evalcore.sampling.designs import design_efficiency_of_log
from evalcore.sampling.plan import SOURCES
from evalcore.subgroups.estimates import empirical_bayes
from evalcore.data.validation import validate
from evalcore.engine import duckdb_connection, is_lazy, scan
from evalcore.engine.poisson import BUCKETS, example_bucket
from evalcore.errors import EvalDataError


def generated(n_models: int = 3, n_examples: int = 600, tasks: int = 4, labeled: float = 0.6,
              seed: int = 0) -> pd.DataFrame:
    """A canonical log: example i of task i % tasks, category by task, model m right with probability depending
    on m and the example's difficulty; confidence near the truth; a proxy; a share ``labeled`` of the examples
    carries the label (the same examples for every model)."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0, 1, n_examples)
    has_label = rng.random(n_examples) < labeled
    parts = []
    for m in range(n_models):
        p = 1 / (1 + np.exp(-(0.4 + 0.5 * m - difficulty)))
        correct = (rng.random(n_examples) < p).astype(float)
        parts.append(pd.DataFrame({
            "model": f"model-{m}", "example_id": [f"q{i}" for i in range(n_examples)],
            "task": [f"task-{i % tasks}" for i in range(n_examples)],
            "category": [f"cat-{(i % tasks) % 2}" for i in range(n_examples)],
            "correct": np.where(has_label, correct, np.nan),
            "confidence": np.clip(p + rng.normal(0, 0.08, n_examples), 0, 1),
            "proxy": np.clip(0.7 * correct + 0.3 * p + rng.normal(0, 0.1, n_examples), 0, 1)}))
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """(in-memory canonical frame, LazyLog of the same rows from Parquet)."""
    raw = generated()
    path = tmp_path_factory.mktemp("engine") / "log.parquet"
    raw.to_parquet(path)
    return validate(raw), scan(path)


def test_scan_reads_roles_and_notes(pair):
    frame, lazy = pair
    assert is_lazy(lazy) and not is_lazy(frame)
    assert lazy.n_rows == len(frame) == 1800
    assert lazy.mapping["example_id"] == "example_id"
    assert any("have no 'correct' label" in note for note in lazy.notes)


def test_mean_table_equals_the_in_memory_table(pair):
    frame, lazy = pair
    for by in (["model"], ["model", "task"]):
        expected, got = summaries.mean_table(frame, by, "correct", 0.1), summaries.mean_table(lazy, by, "correct", 0.1)
        pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True), check_dtype=False,
                                      rtol=1e-12, atol=1e-12)
    real = summaries.mean_table(frame, ["model"], "proxy", 0.05)
    pd.testing.assert_frame_equal(summaries.mean_table(lazy, ["model"], "proxy", 0.05), real, check_dtype=False,
                                  rtol=1e-10, atol=1e-12)


def test_leaderboard_point_estimates_equal_and_intervals_agree(pair):
    frame, lazy = pair
    memory = aggregate.leaderboard(frame, level=0.9, n_boot=1000, seed=0)
    engine = aggregate.leaderboard(lazy, level=0.9, n_boot=1000, seed=0)
    both = memory.merge(engine, on=["model", "scope", "name"], suffixes=("", "_engine"))
    assert len(both) == len(memory) == len(engine)
    np.testing.assert_allclose(both["estimate_engine"], both["estimate"], rtol=0, atol=1e-12)
    width = both["ci_high"] - both["ci_low"]
    for end in ("ci_low", "ci_high"):  # Monte Carlo error of a 5 % quantile of 1,000 replicates: a few % of the width
        assert ((both[f"{end}_engine"] - both[end]).abs() < 0.2 * width).all()
    assert engine.attrs["paired"]


def test_pairwise_differences_and_ranks_run_on_a_lazy_log(pair):
    frame, lazy = pair
    diffs = aggregate.pairwise_differences(lazy, level=0.9, n_boot=500, seed=1)
    expected = aggregate.pairwise_differences(frame, level=0.9, n_boot=500, seed=1)
    np.testing.assert_allclose(diffs["diff"], expected["diff"], atol=1e-12)
    ranks = aggregate.rank_intervals(lazy, level=0.9, n_boot=500, seed=1)
    assert ranks.sort_values("model")["rank"].tolist() == [3.0, 2.0, 1.0]


def test_calibration_by_model_same_ece_and_close_intervals(pair):
    frame, lazy = pair
    memory = calibration.calibration_by_model(frame, n_bins=15, n_boot=500, seed=0)
    engine = calibration.calibration_by_model(lazy, n_bins=15, n_boot=500, seed=0)
    assert memory["model"].tolist() == engine["model"].tolist() == ["model-0", "model-1", "model-2"]
    assert (memory["n"] == engine["n"]).all()
    np.testing.assert_allclose(engine["ece"], memory["ece"], rtol=1e-12, atol=1e-15)
    width = memory["ci_high"] - memory["ci_low"]
    assert ((engine["ci_high"] - memory["ci_high"]).abs() < 0.35 * width).all()
    assert ((engine["ci_low"] - memory["ci_low"]).abs() < 0.35 * width + 0.005).all()


def test_uniform_bins_match_memory_at_the_edges(tmp_path):
    """Confidences on the bin edges (0.3 * 10 rounds up, (1/49) * 49 rounds down) fall in the same bins."""
    conf = np.array([0.0, 0.1, 0.3, 0.7, 1 / 49, 48 / 49, 0.5, 1.0, 0.2, 0.6])
    raw = pd.DataFrame({"model": "m", "example_id": np.arange(len(conf)).astype(str),
                        "correct": [1, 0, 1, 1, 0, 1, 0, 1, 1, 0], "confidence": conf})
    raw.to_parquet(tmp_path / "edges.parquet")
    lazy = scan(tmp_path / "edges.parquet")
    for n_bins in (10, 49, 15):
        memory = calibration.calibration_by_model(validate(raw), n_bins=n_bins, n_boot=50)
        engine = calibration.calibration_by_model(lazy, n_bins=n_bins, n_boot=50)
        assert engine["ece"].iloc[0] == pytest.approx(memory["ece"].iloc[0], abs=1e-15)
        expected = calibration.expected_calibration_error(conf, raw["correct"], n_bins)
        assert engine["ece"].iloc[0] == pytest.approx(expected, abs=1e-15)


def test_ppi_from_moments_equals_ppi_mean(pair):
    frame, lazy = pair
    memory = ppi.ppi_mean_by_model(frame, "proxy", alpha=0.1)
    engine = ppi.ppi_mean_by_model(lazy, "proxy", alpha=0.1)
    pd.testing.assert_frame_equal(engine, memory, check_dtype=False, rtol=1e-9, atol=1e-12)
    assert (engine["N"] > 0).all() and (engine["lam"] > 0).all()
    pd.testing.assert_frame_equal(ppi.ppi_mean(lazy, "proxy", alpha=0.1), engine)


def test_empirical_bayes_of_a_lazy_log_equals_the_in_memory_fit(tmp_path):
    raw = generated(n_models=3, n_examples=900)
    raw["group"] = [f"g{i % 12}" for i in range(len(raw))]
    raw.to_parquet(tmp_path / "groups.parquet")
    memory = empirical_bayes(validate(raw), seed=3, features=[])
    engine = empirical_bayes(scan(tmp_path / "groups.parquet"), seed=3)
    pd.testing.assert_frame_equal(engine, memory, rtol=1e-9, atol=1e-12)
    # every model is labeled on the same examples: the feature is off both ways (the reasons' wording differs)
    assert engine.attrs["group_difficulty"][0] is memory.attrs["group_difficulty"][0] is False
    assert len(engine) == 36 and (engine["eb_low"] <= engine["eb"]).all()


def test_group_difficulty_of_a_lazy_log_with_each_models_own_examples_equals_the_in_memory_fit(tmp_path):
    """Each model labeled on its own examples: the feature is on both ways and the fits agree (in an engine it
    is the other models' totals in the group, which is the in-memory per-example formula in this case)."""
    raw = generated(n_models=3, n_examples=900, labeled=1.0)
    raw["example_id"] = raw["model"] + "-" + raw["example_id"]  # disjoint examples
    raw["group"] = [f"g{i % 12}" for i in range(len(raw))]
    raw.to_parquet(tmp_path / "own.parquet")
    memory = empirical_bayes(validate(raw), seed=3, features=[], regressor="linear")
    engine = empirical_bayes(scan(tmp_path / "own.parquet"), seed=3, regressor="linear")
    assert memory.attrs["group_difficulty"][0] is engine.attrs["group_difficulty"][0] is True
    pd.testing.assert_frame_equal(engine, memory, rtol=1e-9, atol=1e-12)


def test_labeling_design_from_a_proxy_histogram(tmp_path):
    raw = generated(n_models=2, n_examples=3000)
    raw["confidence"] = raw["confidence"].round(2)  # one distinct value per histogram bin: the same strata
    raw.to_parquet(tmp_path / "pool.parquet")
    memory = design_efficiency_of_log(validate(raw), "model-1", [100, 400])
    engine = design_efficiency_of_log(scan(tmp_path / "pool.parquet"), "model-1", [100, 400])
    pd.testing.assert_frame_equal(engine, memory, rtol=1e-9, atol=1e-15)
    assert (memory.loc[memory["design"] == "neyman", "relative_efficiency"] < 1).all()


def test_binned_kmeans_is_exact_with_one_value_per_bin():
    rng = np.random.default_rng(5)
    values = rng.choice(np.linspace(0.01, 0.99, 60), size=5000)
    exact = kmeans_1d(values, 6)
    distinct, counts = np.unique(values, return_counts=True)
    bounds = kmeans_1d_binned(counts, distinct * counts, distinct**2 * counts, 6)
    labels = np.searchsorted(distinct[bounds[1:-1]], values, side="right")
    assert (labels == exact.labels).all()


def test_the_report_of_a_lazy_log_holds_the_in_memory_point_estimates(pair):
    from evalcore.report import Settings, build_report
    from evalcore.stats.overall import overall_table

    frame, lazy = pair
    report = build_report(lazy, settings=Settings(n_boot=200))
    assert [s.key for s in report.sections] == ["accuracy", "leaderboard", "calibration", "labeling", "ppi"]
    assert report.provenance.rows == 1800 and report.provenance.models == 3
    numbers = report.numbers()["sections"]
    accuracy = pd.DataFrame(numbers["accuracy"]["tables"]["by model"]).set_index("model")
    expected = overall_table(frame, "correct", 0.05).set_index("model")  # the one overall number: mean over tasks
    np.testing.assert_allclose(accuracy.loc[expected.index, "estimate"], expected["estimate"], atol=1e-12)
    ece = pd.DataFrame(numbers["calibration"]["tables"]["ece by model"]).set_index("model").sort_index()
    memory = calibration.calibration_by_model(frame, n_bins=10, n_boot=50).set_index("model")
    np.testing.assert_allclose(ece["ece"], memory["ece"], atol=1e-12)
    section = next(s for s in report.sections if s.key == "calibration")
    assert len(section.figures) == 3 + 1 and not section.notes  # 3 reliability diagrams and the selective curves
    assert "Top model: model-2" in report.summary[0]
    # one path: the report of the frame in memory holds the same numbers, intervals included
    same = build_report(frame, settings=Settings(n_boot=200)).numbers()["sections"]
    for key in ("accuracy", "leaderboard", "calibration", "labeling", "ppi"):
        assert same[key]["tables"] == numbers[key]["tables"], key


def test_the_reports_labeling_plan_is_calibrated_on_the_logs_labels(pair):
    """The report plans labels as the Labeling budget page does: from the top model's labels at hand (a Platt fit,
    its least favourable point), never assuming the proxy calibrated; with fewer than MIN_PILOT labels it plans for
    the worst miscalibration."""
    from evalcore.report import Settings, build_report
    from evalcore import sampling

    frame, _ = pair
    settings = Settings(n_boot=50)
    report = build_report(frame, settings=settings)
    section = next(s for s in report.sections if s.key == "labeling")
    model = section.facts["model"]
    rows = frame[frame["model"] == model].sort_values("example_id")
    source = next(c for c in SOURCES if c in rows)  # the report's choice, the page's too (evalcore.sampling.plan)
    proxy, labels = rows[source].to_numpy(float), rows["correct"].to_numpy(float)
    strata = sampling.kmeans_strata(proxy, settings.n_strata, seed=settings.seed)
    expected = sampling.labels_needed(proxy, settings.target_width, alpha=settings.alpha, n_strata=settings.n_strata,
                                      seed=settings.seed, strata=strata, labels=labels)
    assert expected.attrs["basis"] == "labels"
    shown = section.tables["labels needed"].set_index(["design", "estimator"])["labels_needed"]
    assert (shown == expected.set_index(["design", "estimator"])["labels_needed"]).all()
    assert "calibrated on this model's labels" in section.meaning and "meets_target" in section.meaning
    few = sampling.labels_needed(proxy, settings.target_width, alpha=settings.alpha, n_strata=settings.n_strata,
                                 seed=settings.seed, strata=strata,
                                 labels=np.where(np.arange(len(labels)) < sampling.MIN_PILOT - 1, labels, np.nan))
    assert few.attrs["basis"] == "worst case"  # too few labels to calibrate on: the worst miscalibration


def test_sections_beyond_the_memory_bound_say_what_they_leave_out(pair, monkeypatch):
    from evalcore.report import Settings, build_report

    monkeypatch.setattr("evalcore.engine.examples.fetch_bound_mb", lambda: 0)
    _, lazy = pair
    report = build_report(lazy, settings=Settings(n_boot=200))
    notes = [n for s in report.sections for n in s.notes]
    assert any(n.startswith("Selective prediction is not in this report") and "EVALCORE_FETCH_MB" in n for n in notes)
    assert any(line.startswith("Labeling budget:") and "EVALCORE_FETCH_MB" in line for line in report.skipped)


def test_bradley_terry_from_per_pair_statistics_equals_the_in_memory_fit(tmp_path):
    raw = pairwise_battles(0).battles
    raw.to_parquet(tmp_path / "battles.parquet")
    lazy = scan(tmp_path / "battles.parquet")
    assert lazy.kind == "battles" and lazy.n_rows == len(raw)
    for lam in (None, 0.0, 1.0):
        memory, engine = bradley_terry_of_log(validate(raw), lam=lam), bradley_terry_of_log(lazy, lam=lam)
        pd.testing.assert_frame_equal(engine, memory, rtol=1e-9, atol=1e-12)
    assert 0 < engine.attrs["N"] and memory.attrs["n"] == engine.attrs["n"]
    from evalcore.report import build_report

    report = build_report(lazy)
    assert [s.key for s in report.sections] == ["battles"] and "Strongest model" in report.summary[0]


def test_battles_out_of_range_are_refused_in_the_engine(tmp_path):
    raw = pd.DataFrame({"model_a": ["a", "b"], "model_b": ["b", "a"], "outcome": [1.0, 2.0]})
    raw.to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(EvalDataError, match=r"Column 'outcome' must lie in \[0, 1\].*1 row holds values from 2 to 2"):
        scan(tmp_path / "bad.parquet")


def test_the_bootstrap_does_not_depend_on_how_rows_are_split_into_files(tmp_path):
    raw = generated(seed=4).sample(frac=1.0, random_state=3)  # rows in another order
    raw.to_parquet(tmp_path / "one.parquet")
    folder = tmp_path / "eight"
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(raw)), 8)):
        raw.iloc[rows].to_parquet(folder / f"part-{i}.parquet")
    one = aggregate.leaderboard(scan(tmp_path / "one.parquet"), level=0.95, n_boot=300, seed=7)
    eight = aggregate.leaderboard(scan(folder), level=0.95, n_boot=300, seed=7)
    globbed = aggregate.leaderboard(scan(str(folder / "part-*.parquet")), level=0.95, n_boot=300, seed=7)
    pd.testing.assert_frame_equal(one, eight)
    pd.testing.assert_frame_equal(one, globbed)
    other_seed = aggregate.leaderboard(scan(folder), level=0.95, n_boot=300, seed=8)
    assert not np.allclose(one["ci_low"], other_seed["ci_low"])
    cal_one = calibration.calibration_by_model(scan(tmp_path / "one.parquet"), n_boot=200, seed=7)
    pd.testing.assert_frame_equal(cal_one, calibration.calibration_by_model(scan(folder), n_boot=200, seed=7))


def test_every_model_of_an_example_shares_its_bucket_and_buckets_are_uniform():
    n = 40_000
    table = ibis.memtable(pd.DataFrame({"task": np.repeat(["a", "b"], n // 2),
                                        "example_id": [str(i) for i in range(n)]}))
    buckets = table.select(bucket=example_bucket(table, seed=0, buckets=64)).to_pandas()["bucket"]
    counts = np.bincount(buckets, minlength=64)
    expected = n / 64
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 120  # 63 degrees of freedom: the 0.9999 quantile is about 115
    again = table.select(bucket=example_bucket(table, seed=0, buckets=64)).to_pandas()["bucket"]
    assert (again == buckets).all() and BUCKETS >= 4096
    other = table.select(bucket=example_bucket(table, seed=1, buckets=64)).to_pandas()["bucket"]
    assert (other != buckets).mean() > 0.9


@pytest.mark.slow
def test_poisson_bootstrap_covers_the_true_accuracies(tmp_path):
    """Known truth: 2 models with accuracies 0.7 and 0.75 on 300 examples (correlated answers); the 90 % interval
    of each model and of their difference covers the truth in about 90 % of 200 simulated logs."""
    rng = np.random.default_rng(11)
    hits = {"a": 0, "b": 0, "diff": 0}
    runs = 200
    for r in range(runs):
        easy = rng.random(300) < 0.5
        a = np.where(easy, rng.random(300) < 0.9, rng.random(300) < 0.5)
        b = np.where(easy, rng.random(300) < 0.95, rng.random(300) < 0.55)
        raw = pd.DataFrame({"model": np.repeat(["a", "b"], 300), "example_id": np.tile(np.arange(300), 2),
                            "correct": np.concatenate([a, b]).astype(int)})
        table = ibis.memtable(raw)
        lazy = scan(table)
        board = aggregate.leaderboard(lazy, level=0.9, n_boot=400, seed=r).set_index(["model", "scope"])
        for model, truth in (("a", 0.7), ("b", 0.75)):
            row = board.loc[(model, "overall")]
            hits[model] += row["ci_low"] <= truth <= row["ci_high"]
        diff = aggregate.pairwise_differences(lazy, level=0.9, n_boot=400, seed=r).iloc[0]
        sign = 1 if diff["model_a"] == "b" else -1
        hits["diff"] += diff["ci_low"] <= sign * 0.05 <= diff["ci_high"]
    for what, count in hits.items():
        assert 0.84 <= count / runs <= 0.96, (what, count / runs)


def test_a_log_in_duckdb_is_queried_through_a_view_of_its_validated_table(tmp_path):
    """scan registers the validated table (text identities, NaN as missing, clipped confidences) as a temporary
    view of its connection, one per log: queries compile against its name and read the validated values."""
    pd.DataFrame({"model": ["a", "a", "b", "b"], "example_id": [1, 2, 1, 2], "correct": [1.0, np.nan, 0.0, 1.0],
                  "confidence": [1 + 1e-7, 0.2, -1e-7, 0.9]}).to_parquet(tmp_path / "log.parquet")
    con = duckdb_connection()
    first, second = (scan(tmp_path / "log.parquet", connection=con) for _ in range(2))
    assert first.table.get_name() != second.table.get_name()
    query = first.table.group_by("model").aggregate(n=first.table.correct.count())
    sql = con.compile(query)
    assert first.table.get_name() in sql and "parquet" not in sql.lower() and "isnan" not in sql.lower()
    assert first.run(query).sort_values("model")["n"].tolist() == [1, 2]
    rows = second.run(second.table.order_by(["model", "example_id"]))
    assert rows["confidence"].tolist() == [1.0, 0.2, 0.0, 0.9] and rows["example_id"].tolist() == ["1", "2", "1", "2"]


def test_a_duckdb_table_and_an_ibis_expression_are_sources(tmp_path, pair):
    frame, lazy = pair
    path = tmp_path / "evals.duckdb"
    con = ibis.duckdb.connect(str(path))
    con.create_table("runs", generated())
    con.disconnect()
    from_db = scan(path, table="runs")
    expected = summaries.mean_table(lazy, ["model"], "correct")
    pd.testing.assert_frame_equal(summaries.mean_table(from_db, ["model"], "correct"), expected)
    with pytest.raises(EvalDataError, match="name the table of the log.*runs"):
        scan(path)
    renamed = ibis.memtable(generated().rename(columns={"correct": "is_right", "example_id": "qid"}))
    mapped = scan(renamed, mapping={"is_right": "correct", "qid": "example_id"})
    pd.testing.assert_frame_equal(summaries.mean_table(mapped, ["model"], "correct"), expected)


@pytest.mark.parametrize("make, message", [
    (lambda d: d / "missing.parquet", r"missing\.parquet: no such file or folder"),
    (lambda d: d / "none-*.parquet", r"none-\*\.parquet: no Parquet or CSV file matches"),
    (lambda d: _write(d / "broken.parquet", b"PAR1 this is not parquet"), r"broken\.parquet: cannot be read as parquet"),
    (lambda d: _frame(d / "no_model.parquet", pd.DataFrame({"example_id": [1, 2], "correct": [1, 0]})),
     r"no_model\.parquet: no column for the role\(s\) model"),
    (lambda d: _frame(d / "two.parquet", pd.DataFrame({"model": ["a", "a"], "example_id": [1, 2],
                                                       "correct": [1, 2]})),
     r"Column 'correct' must be 0 or 1.*1 row holds other values \(from 2 to 2\)"),
    (lambda d: _frame(d / "pct.parquet", pd.DataFrame({"model": ["a", "a"], "example_id": [1, 2], "correct": [1, 0],
                                                       "confidence": [80.0, 40.0]})),
     r"Column 'confidence' must lie in \[0, 1\]; 2 rows hold values from 40 to 80.*percentages"),
    (lambda d: _frame(d / "dup.parquet", pd.DataFrame({"model": ["a", "a"], "example_id": [1, 1],
                                                       "correct": [1, 0]})),
     r"dup\.parquet: each \(model, task, example\) must appear once, but 1 repeat.*example_id='1'"),
    (lambda d: _write(d / "empty.csv", b"model,example_id,correct\n"), r"empty\.csv: the table has a header but no data"),
    (lambda d: _write(d / "mixed" / "a.csv", b"model,example_id,correct\na,1,1\n") and
     _frame(d / "mixed" / "b.parquet", pd.DataFrame({"model": ["b"], "example_id": [1], "correct": [1]})) and d / "mixed",
     r"mixed: expected Parquet or CSV files of one kind"),
])
def test_bad_sources_get_a_message_naming_the_problem(tmp_path, make, message):
    with pytest.raises(EvalDataError, match=message):
        scan(make(tmp_path))


def test_csv_and_compressed_csv_sources(tmp_path, pair):
    frame, lazy = pair
    raw = generated()
    raw.to_csv(tmp_path / "log.csv", index=False)
    with gzip.open(tmp_path / "log.csv.gz", "wt") as handle:
        raw.to_csv(handle, index=False)
    expected = summaries.mean_table(lazy, ["model", "task"], "correct")
    for name in ("log.csv", "log.csv.gz"):
        got = summaries.mean_table(scan(tmp_path / name), ["model", "task"], "correct")
        pd.testing.assert_frame_equal(got, expected, rtol=1e-12)


def test_methods_name_the_roles_a_lazy_log_lacks(tmp_path):
    generated().drop(columns=["confidence", "proxy"]).to_parquet(tmp_path / "plain.parquet")
    lazy = scan(tmp_path / "plain.parquet")
    with pytest.raises(EvalDataError, match=r"Calibration needs the column\(s\) 'confidence'"):
        calibration.calibration_by_model(lazy)
    with pytest.raises(EvalDataError, match=r"Prediction-powered inference needs the column\(s\) 'proxy'"):
        ppi.ppi_mean_by_model(lazy, "proxy")
    with pytest.raises(EvalDataError, match=r"The table of means needs the column\(s\) 'score'"):
        summaries.mean_table(lazy, ["model"], "score")


def test_the_mapping_must_name_existing_columns(tmp_path):
    generated().to_parquet(tmp_path / "log.parquet")
    with pytest.raises(EvalDataError, match="the mapping names a column 'acc' that is not in the table"):
        scan(tmp_path / "log.parquet", mapping={"acc": "correct"})


def _write(path, data: bytes):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _frame(path, frame: pd.DataFrame):
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(path)
    return path


def test_nan_in_a_value_column_means_missing_as_in_memory(tmp_path):
    """A Parquet file written from numpy arrays keeps NaN as a float value, not as null (pandas' writer turns it into
    null): NaN in ``correct``, ``confidence`` or ``proxy`` is a missing value in the engine as in memory."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    raw = generated()
    path = tmp_path / "nan.parquet"
    pq.write_table(pa.table({column: pa.array(raw[column].to_numpy(), from_pandas=False) for column in raw.columns}),
                   path)
    assert pq.read_table(path).column("correct").null_count == 0  # the NaN really are NaN in the file
    lazy, frame = scan(path), validate(raw)
    unlabeled = int(frame["correct"].isna().sum())
    assert any(f"{unlabeled:,} of 1,800 rows have no 'correct' label" in note for note in lazy.notes)
    for by in (["model"], ["model", "task"]):
        pd.testing.assert_frame_equal(summaries.mean_table(lazy, by, "correct").reset_index(drop=True),
                                      summaries.mean_table(frame, by, "correct").reset_index(drop=True),
                                      check_dtype=False, rtol=1e-12, atol=1e-12)
