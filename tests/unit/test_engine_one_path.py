"""One path for every log: a frame in memory is a LazyLog DuckDB reads in place (evalcore.engine.frames), and
per-example columns come back through one bounded function (evalcore.engine.fetch)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalcore.data.repeats import per_example
from evalcore.data.validation import validate
from evalcore.engine import ExamplesTooLarge, as_log, fetch, from_frame, scan
from evalcore.engine.examples import TEXT_OVERHEAD, estimated_bytes
from evalcore.leaderboard import bootstrap as aggregate
from evalcore.stats.summaries import mean_table


def _log(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "model": np.repeat(["a", "b"], n), "example_id": np.tile([f"q{i}" for i in range(n)], 2),
        "task": np.tile([f"t{i % 3}" for i in range(n)], 2),
        "correct": (rng.random(2 * n) < 0.7).astype(float), "confidence": rng.uniform(0.3, 1.0, 2 * n)})


def test_a_frame_and_its_parquet_file_give_the_same_numbers(tmp_path):
    raw = _log()
    raw.loc[::7, "correct"] = np.nan  # unlabeled rows
    raw.to_parquet(tmp_path / "log.parquet")
    memory, stored = as_log(validate(raw)), scan(tmp_path / "log.parquet")
    assert memory.frame is not None and stored.frame is None
    pd.testing.assert_frame_equal(mean_table(memory, ["model", "task"], "correct"),
                                  mean_table(stored, ["model", "task"], "correct"))
    pd.testing.assert_frame_equal(aggregate.leaderboard(memory, n_boot=300, seed=2),
                                  aggregate.leaderboard(stored, n_boot=300, seed=2))


def test_nan_in_a_frame_is_missing_in_the_engine():
    frame = validate(_log())
    frame.loc[:9, "confidence"] = np.nan
    log = from_frame(frame, "frame")
    assert log.count("confidence") == len(frame) - 10 and log.n_rows == len(frame)


def test_restrict_and_fetch_hand_back_the_selected_rows(tmp_path):
    frame = validate(_log())
    frame.to_parquet(tmp_path / "log.parquet")
    expected = frame[(frame["model"] == "b") & frame["task"].isin(["t0", "t2"])]
    memory = as_log(frame).restrict(model=("b",), task=("t0", "t2"), group=())
    assert memory.n_rows == len(expected) and memory.selected == (("model", ("b",)), ("task", ("t0", "t2")))
    pd.testing.assert_frame_equal(fetch(memory, "test"), expected)  # the frame itself, restricted
    stored = scan(tmp_path / "log.parquet").restrict(model=("b",), task=("t0", "t2"))
    got = fetch(stored, "test", ["example_id", "correct"]).sort_values("example_id", ignore_index=True)
    want = expected[["example_id", "correct"]].sort_values("example_id", ignore_index=True)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)


def test_the_size_estimate_is_the_hand_computed_one(tmp_path):
    raw = pd.DataFrame({"model": ["ab", "ab", "abcd"], "example_id": ["x", "yy", "zzz"], "correct": [1.0, 0.0, 1.0]})
    raw.to_parquet(tmp_path / "tiny.parquet")
    log = scan(tmp_path / "tiny.parquet")
    # numbers: 8 bytes a row; text: its characters plus the str object's overhead per row
    assert estimated_bytes(log, ["correct"]) == 3 * 8
    assert estimated_bytes(log, ["model", "example_id"]) == (2 + 2 + 4) + (1 + 2 + 3) + 2 * 3 * TEXT_OVERHEAD


def test_beyond_the_bound_fetch_refuses_with_what_to_do(tmp_path, monkeypatch):
    raw = _log(n=3000)
    raw["example_id"] = raw["example_id"] + "-" + "x" * 200
    raw.to_parquet(tmp_path / "log.parquet")
    log = scan(tmp_path / "log.parquet")
    monkeypatch.setenv("EVALCORE_FETCH_MB", "1")
    with pytest.raises(ExamplesTooLarge) as caught:
        fetch(log, "The holdout study", ["example_id", "correct"])
    message = str(caught.value)
    assert str(tmp_path / "log.parquet") in message and "The holdout study" in message
    assert "6,000 rows" in message and "1 MB" in message and "EVALCORE_FETCH_MB" in message
    assert "Models page" in message
    small = log.restrict(model=("a",), task=("t0",))  # a selection of 1,000 rows fits
    assert len(fetch(small, "The holdout study", ["example_id", "correct"])) == 1000


def test_repeated_samples_are_averaged_per_example_on_the_one_path():
    """Known answer: five identical samples of every example give the numbers (and interval widths) of one."""
    one = validate(_log())
    five = validate(pd.concat([_log().assign(repeat=r) for r in range(5)], ignore_index=True))
    units = as_log(five)
    assert units.n_rows == len(one) and "n_repeats" in units
    pd.testing.assert_frame_equal(mean_table(units, ["model"], "correct"), mean_table(one, ["model"], "correct"))
    pd.testing.assert_frame_equal(aggregate.leaderboard(units, n_boot=300), aggregate.leaderboard(one, n_boot=300))
    # disagreeing samples: the per-example means of evalcore.data.repeats
    mixed = validate(pd.concat([_log(seed=s).assign(repeat=s) for s in range(3)], ignore_index=True))
    got = fetch(as_log(mixed), "test").sort_values(["model", "example_id"], ignore_index=True)
    want = per_example(mixed).sort_values(["model", "example_id"], ignore_index=True)
    np.testing.assert_allclose(got["correct"], want["correct"])
