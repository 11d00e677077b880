"""The dashboard's cache: bounded by memory (bytes), not by entry counts; keyed by non-underscore arguments."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pages.common import store as store_module
from pages.common.store import ResultStore, cached, sizeof


def frame_of(n_rows: int) -> pd.DataFrame:
    return pd.DataFrame({"x": np.arange(n_rows, dtype=np.float64), "s": [f"name-{i}" for i in range(n_rows)]})


def test_sizeof_counts_the_data_not_the_object_header():
    small, large = frame_of(10), frame_of(100_000)
    assert sizeof(large) > 1_600_000  # 100,000 float64 (800 KB) plus 100,000 strings
    assert sizeof(large) > 100 * sizeof(small)
    assert sizeof(np.zeros(1000)) >= 8000
    pair = (large, np.zeros(1000))
    assert sizeof(pair) >= sizeof(large) + 8000
    assert sizeof([large, large]) < 1.5 * sizeof(large)  # one object held twice counts once


def test_the_least_recently_used_values_leave_once_the_bytes_exceed_the_budget():
    unit = sizeof(frame_of(10_000))
    store = ResultStore(max_bytes=int(3.5 * unit) * 4)  # room for about 14 values; each under a quarter
    for i in range(20):
        store.put(i, frame_of(10_000))
        assert store.bytes <= store.max_bytes
    kept = [i for i in range(20) if store.get(i) is not None]
    assert kept == list(range(20 - len(kept), 20)) and 10 <= len(kept) <= 14
    store.get(kept[0])  # used again: now the most recent
    store.put("new", frame_of(10_000))
    assert store.get(kept[0]) is not None and store.get(kept[1]) is None


def test_a_value_larger_than_a_quarter_of_the_budget_is_not_kept():
    store = ResultStore(max_bytes=4 * sizeof(frame_of(1000)))
    store.put("small", frame_of(100))
    store.put("large", frame_of(5000))
    assert store.get("large") is None and store.get("small") is not None


def test_cached_keys_on_named_arguments_only(monkeypatch):
    monkeypatch.setattr(store_module, "_STORE", ResultStore(max_bytes=10**8))
    calls = []

    @cached("computing...")
    def double(key: str, factor: int, _data: list[int]) -> list[int]:
        calls.append(key)
        return [factor * v for v in _data]

    assert double("a", 2, [1, 2]) == [2, 4]
    assert double("a", 2, [9, 9]) == [2, 4]  # _data is not part of the key: same key, same result
    assert double("a", 3, [1, 2]) == [3, 6]
    assert double(key="b", factor=2, _data=[5]) == [10]
    assert calls == ["a", "a", "b"]


def test_exceptions_are_not_cached(monkeypatch):
    monkeypatch.setattr(store_module, "_STORE", ResultStore(max_bytes=10**8))
    attempts = []

    @cached("computing...")
    def flaky(key: str) -> str:
        attempts.append(key)
        if len(attempts) == 1:
            raise ValueError("first time")
        return "ok"

    with pytest.raises(ValueError):
        flaky("k")
    assert flaky("k") == "ok" and flaky("k") == "ok"
    assert len(attempts) == 2


def test_the_budget_comes_from_the_environment(monkeypatch):
    import importlib

    monkeypatch.setenv("EVALCORE_CACHE_MB", "3")
    reloaded = importlib.reload(store_module)
    try:
        assert reloaded.store().max_bytes == 3 * 2**20
    finally:
        monkeypatch.delenv("EVALCORE_CACHE_MB")
        importlib.reload(store_module)
