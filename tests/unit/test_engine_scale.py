"""evalcore.engine at scale and with repeated samples: a log with a ``repeat`` column is averaged per example in the
engine exactly as :func:`evalcore.data.repeats.per_example` does in memory, five identical samples give the tables
of one, the value checks see the raw samples, and duplicates are refused in one hash pass."""

from __future__ import annotations

import ibis
import ibis.expr.types as ir
import numpy as np
import pandas as pd
import pytest

from benchmarks.engine import bare_passes
from evalcore.data.repeats import N_REPEATS, per_example
from evalcore.data.validation import load_eval_log
from evalcore.engine import reductions, scan
from evalcore.engine.poisson import bucket_weights, replicate_totals
from evalcore.errors import EvalDataError
from evalcore.leaderboard import leaderboard
from evalcore.stats.summaries import mean_table
from test_engine import generated

ROLES = ["model", "example_id", "task", "category", "group", "correct", "confidence", "proxy", N_REPEATS]


def _five_identical(base: pd.DataFrame) -> pd.DataFrame:
    """Every row of ``base`` five times, numbered 0..4 in an ``epoch`` column (the role ``repeat``)."""
    return pd.concat([base.assign(epoch=e) for e in range(5)], ignore_index=True)


def _different_samples(seed: int = 3) -> pd.DataFrame:
    """1 to 4 samples per (model, example) with their own label (some missing, some examples never labeled),
    confidence and proxy."""
    rng = np.random.default_rng(seed)
    base = generated(n_examples=240, seed=seed)
    parts = []
    for _, row in base.iterrows():
        k = int(rng.integers(1, 5))
        labeled = rng.random(k) < (0.8 if np.isfinite(row["correct"]) else 0.0)
        parts.append(pd.DataFrame({
            "model": row["model"], "example_id": row["example_id"], "task": row["task"],
            "category": row["category"], "epoch": np.arange(k),
            "correct": np.where(labeled, (rng.random(k) < 0.6).astype(float), np.nan),
            "confidence": rng.uniform(0, 1, k), "proxy": rng.uniform(0, 1, k)}))
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def one_and_five(tmp_path_factory):
    """(LazyLog of a log, LazyLog of the same log with every row sampled five times)."""
    folder = tmp_path_factory.mktemp("repeats")
    base = generated()
    base.to_parquet(folder / "one.parquet")
    _five_identical(base).to_parquet(folder / "five.parquet")
    return scan(folder / "one.parquet"), scan(folder / "five.parquet")


def test_five_identical_samples_give_the_leaderboard_of_one(one_and_five):
    one, five = one_and_five
    keys = ["model", "scope", "name"]
    expected = leaderboard(one, n_boot=200, seed=0).sort_values(keys, ignore_index=True)
    got = leaderboard(five, n_boot=200, seed=0).sort_values(keys, ignore_index=True)
    pd.testing.assert_frame_equal(got, expected, rtol=0, atol=1e-12)
    assert (got["ci_high"] > got["ci_low"]).all()  # the width is kept, not shrunk by the copies


def test_five_identical_samples_give_the_table_of_means_of_one(one_and_five):
    one, five = one_and_five
    for by in (["model"], ["model", "task"]):
        for metric in ("correct", "proxy"):
            pd.testing.assert_frame_equal(mean_table(five, by, metric), mean_table(one, by, metric), rtol=1e-12,
                                          atol=1e-12)


def test_the_rows_of_a_repeated_log_are_its_examples(one_and_five):
    one, five = one_and_five
    assert five.n_rows == one.n_rows == 1800
    assert five.mapping["repeat"] == "epoch"
    note = next(n for n in five.notes if "several samples" in n)
    assert "1,800 of 1,800 (model, task, example)" in note and "'epoch', up to 5" in note
    assert "The example is the unit" in note
    assert not any("several samples" in n for n in one.notes) and N_REPEATS not in one.table.columns


def test_different_samples_are_averaged_as_in_memory(tmp_path):
    raw = _different_samples()
    raw.to_parquet(tmp_path / "samples.parquet")
    lazy = scan(tmp_path / "samples.parquet")
    memory = per_example(load_eval_log(tmp_path / "samples.parquet"))
    assert lazy.n_rows == len(memory) == 720 and len(raw) > 720
    got = lazy.table.to_pandas()[ROLES].sort_values(["model", "example_id"], ignore_index=True)
    expected = memory[ROLES].sort_values(["model", "example_id"], ignore_index=True)
    pd.testing.assert_frame_equal(got, expected, check_dtype=False, rtol=1e-12, atol=1e-12)
    assert got["correct"].isna().any() and (got["correct"] % 1 != 0).any()  # never labeled; fractional means


def test_values_are_checked_on_the_samples_before_averaging(tmp_path):
    raw = pd.DataFrame({"model": ["a", "a"], "example_id": [1, 1], "attempt": [0, 1], "correct": [0.0, 2.0]})
    raw.to_parquet(tmp_path / "two.parquet")  # averaged, the example's 1.0 would pass
    with pytest.raises(EvalDataError, match=r"Column 'correct' must be 0 or 1.*1 row holds other values \(from 2 to 2"):
        scan(tmp_path / "two.parquet")


def test_a_sample_without_a_number_is_refused(tmp_path):
    raw = pd.DataFrame({"model": ["a", "a"], "example_id": [1, 1], "epoch": [0, None], "correct": [0, 1]})
    raw.to_parquet(tmp_path / "gap.parquet")
    with pytest.raises(EvalDataError, match=r"Column 'epoch' \(role 'repeat'\) is empty in 1 rows"):
        scan(tmp_path / "gap.parquet")


@pytest.mark.parametrize("frame, message", [
    (pd.DataFrame({"model": ["a", "a", "a"], "example_id": [1, 1, 2], "epoch": [0, 0, 0], "correct": [1, 0, 1]}),
     r"dup\.parquet: each \(model, task, example, repeat\) must appear once, but 1 repeat \('model', 'example_id', "
     r"'epoch'\), e\.g\. model='a', task='all', example_id='1', repeat='0'\. Remove the duplicates"),
    (pd.DataFrame({"model": ["a", "a", "b", "b"], "example_id": [1, 1, 2, 2], "correct": [1, 0, 1, 1]}),
     r"dup\.parquet: each \(model, task, example\) must appear once, but 2 repeat \('model', 'example_id'\), e\.g\. "
     r"model='a', task='all', example_id='1'\..*map the column that numbers them to the role 'repeat'"),
])
def test_duplicates_are_refused_naming_the_columns(tmp_path, frame, message):
    frame.to_parquet(tmp_path / "dup.parquet")
    with pytest.raises(EvalDataError, match=message):
        scan(tmp_path / "dup.parquet")


def test_rows_whose_hashes_collide_are_told_apart_by_their_keys(tmp_path, monkeypatch):
    """Every row's key hashed to 0: the second pass groups by the keys themselves and finds no duplicate."""
    generated(n_examples=50).to_parquet(tmp_path / "log.parquet")
    monkeypatch.setattr(ir.StructValue, "hash", lambda self: ibis.literal(0, "int64"))
    assert scan(tmp_path / "log.parquet").n_rows == 150
    pd.DataFrame({"model": ["a", "a", "a"], "example_id": [1, 2, 2], "correct": [1, 0, 1]}).to_parquet(
        tmp_path / "dup.parquet")
    with pytest.raises(EvalDataError, match=r"but 1 repeat.*example_id='2'"):
        scan(tmp_path / "dup.parquet")


def test_the_benchmarks_bare_duckdb_passes_are_the_engines_statistics(tmp_path):
    """benchmarks/engine.py times hand-written SQL against the engine: it must compute the same cell moments,
    calibration bins and bucket sums (hence the same replicates)."""
    path = tmp_path / "log.parquet"
    raw = generated(n_examples=900).assign(correct=lambda f: f["correct"].astype("float32"))
    raw.loc[:2, "confidence"] = [-1e-7, 1 + 1e-7, np.nan]  # clipped, clipped, missing
    raw.to_parquet(path)
    log, bare = scan(path), {name: t.to_pandas() for name, t in bare_passes(str(path)).items()}
    weights = bucket_weights(50, 0)

    by = ["model", "category", "task"]
    cells = reductions.cell_moments(log, by, "correct")
    got = bare["cells"].sort_values(by, ignore_index=True)
    np.testing.assert_allclose(got[["n", "total", "total_sq"]], cells[["n", "total", "total_sq"]], rtol=1e-12)
    assert (got["rows"] - got["n"]).tolist() == cells["n_unlabeled"].tolist()
    index = pd.MultiIndex.from_frame(cells[["model", "task"]])
    engine = reductions.bucket_replicates(log, ["model", "task"], index, {"correct": log.table.correct}, 50, 0,
                                          where=log.table.correct.notnull())
    mine = replicate_totals(_numbered(bare["cell_buckets"], index), len(index), ["rows", "correct"], weights)
    for column in ("rows", "correct"):
        np.testing.assert_allclose(mine[column], engine[column], rtol=1e-12)

    table, reps = reductions.calibration_bins(log, 15, 50, 0)
    got = bare["bins"].sort_values(["model", "bin"], ignore_index=True)
    np.testing.assert_allclose(got[table.columns[2:]], table[table.columns[2:]], rtol=1e-12)
    assert got["bin"].tolist() == table["bin"].tolist()
    cells = pd.MultiIndex.from_frame(table[["model", "bin"]])
    mine = replicate_totals(_numbered(bare["bin_buckets"], cells), len(cells), ["rows", "residual"], weights,
                            groups={"rows": pd.factorize(table["model"])[0]})
    np.testing.assert_allclose(mine["residual"], reps["residual"], rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(mine["rows"], reps["model_rows"], rtol=1e-12)


def _numbered(sums: pd.DataFrame, cells: pd.MultiIndex) -> list[dict[str, np.ndarray]]:
    """Bucket sums keyed by text, as the bare passes return them, with each row's position in ``cells`` (one part)."""
    position = cells.get_indexer(pd.MultiIndex.from_frame(sums[list(cells.names)]))
    assert (position >= 0).all()
    return [{"cell": position} | {name: sums[name].to_numpy() for name in sums.columns}]


def test_probabilities_are_clipped_as_in_memory(tmp_path):
    """Within rounding of [0, 1] a confidence, or a proxy beside a label, is clipped; NaN is missing; a proxy of a
    log without labels is neither checked nor clipped (as :func:`evalcore.data.validation.validate` does)."""
    labeled = pd.DataFrame({"model": "a", "example_id": [1, 2, 3, 4], "correct": [1.0, 0.0, 1.0, np.nan],
                            "confidence": [-1e-7, 1 + 1e-7, np.nan, 0.5], "proxy": [1 + 1e-7, 0.2, -1e-7, np.nan]})
    labeled.to_parquet(tmp_path / "labeled.parquet")
    got = scan(tmp_path / "labeled.parquet").table.to_pandas().sort_values("example_id", ignore_index=True)
    expected = load_eval_log(tmp_path / "labeled.parquet").sort_values("example_id", ignore_index=True)
    pd.testing.assert_frame_equal(got[["confidence", "proxy"]], expected[["confidence", "proxy"]], rtol=0, atol=0)
    assert got["confidence"].tolist()[:2] == [0.0, 1.0] and np.isnan(got["confidence"][2])
    labeled.drop(columns=["correct", "confidence"]).assign(score=[0.1, 0.2, 0.3, 0.4], proxy=[50.0, 0.2, -3.0, 1.0]
                                                           ).to_parquet(tmp_path / "scores.parquet")
    assert scan(tmp_path / "scores.parquet").table.to_pandas()["proxy"].sort_values().tolist() == [-3.0, 0.2, 1.0, 50.0]
