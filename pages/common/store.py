"""A process-wide result store for long computations that report progress.

``st.cache_data`` cannot drive a progress bar created outside the cached function, so long computations
(bootstraps) go through :func:`compute_with_progress`: the key holds the content digest of the data and every
analysis parameter, so a result is only ever served to a session that holds the same data.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable

import streamlit as st

_MAX_ENTRIES = 256


class ResultStore:
    """A small thread-safe LRU mapping."""

    def __init__(self, max_entries: int = _MAX_ENTRIES) -> None:
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._max = max_entries

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            if key not in self._data:
                return None
            self._data.move_to_end(key)
            return self._data[key]

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._max:
                self._data.popitem(last=False)


@st.cache_resource
def _store() -> ResultStore:
    return ResultStore()


def compute_with_progress(key: Hashable, label: str, jobs: list[tuple[Hashable, Callable[..., Any]]]) -> list[Any]:
    """Run ``jobs`` (sub-key, fn(progress)) under one progress bar, reusing stored results.

    Each ``fn`` receives a ``progress(fraction)`` callback. Updating the bar is a point where Streamlit stops
    the run when the user changes an input, so a long computation is cancelled by changing inputs.
    """
    store = _store()
    results: list[Any] = [store.get((key, sub)) for sub, _ in jobs]
    todo = [i for i, r in enumerate(results) if r is None]
    if not todo:
        return results
    bar = st.progress(0.0, text=label)
    for done, i in enumerate(todo):
        sub, fn = jobs[i]

        def progress(fraction: float, done: int = done) -> None:
            bar.progress(min(1.0, (done + fraction) / len(todo)), text=label)

        results[i] = fn(progress)
        store.put((key, sub), results[i])
        progress(1.0)
    bar.empty()
    return results
