"""The dashboard's one cache: a process-wide store bounded by memory, and the decorator every cached step uses.

Streamlit's own caches are bounded by entry counts only, so a few large uploads could hold gigabytes. Here every
stored value is measured (:func:`sizeof`: frames by their deep memory use, arrays by their buffers, containers
and dataclasses by their parts) and the least recently used values are evicted once the total passes the budget,
``EVALCORE_CACHE_MB`` megabytes (default 1,024). A value larger than a quarter of the budget is returned but not
kept.

Keys hold the content digest of the data and every analysis parameter (arguments whose name starts with ``_``
are not part of the key, as in Streamlit's caches), so a result is only ever served to a session that holds the
same data. Stored values are shared between sessions: read-only.

A value is computed once however many sessions ask for it at the same moment (:func:`once`): the others wait for
the first one's result.

``st.cache_data`` cannot drive a progress bar created outside the cached function, so long computations
(bootstraps) go through :func:`compute_with_progress`, which uses the same store.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable

import numpy as np
import pandas as pd
import streamlit as st

from evalcore.data.limits import MB, env_number

_MISSING = object()


def sizeof(value: Any, _seen: set[int] | None = None) -> int:
    """Bytes held by ``value``: deep for frames, series and arrays, recursive through containers and dataclasses."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(deep=True, index=True).sum())
    if isinstance(value, (pd.Series, pd.Index)):
        return int(value.memory_usage(deep=True))
    if isinstance(value, np.ndarray):
        return int(value.nbytes) + 112
    if isinstance(value, (bytes, bytearray, str)):
        return sys.getsizeof(value)
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(sizeof(k, seen) + sizeof(v, seen) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return sys.getsizeof(value) + sum(sizeof(v, seen) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return sys.getsizeof(value) + sum(sizeof(getattr(value, f.name), seen) for f in dataclasses.fields(value))
    if hasattr(value, "__dict__"):
        return sys.getsizeof(value) + sizeof(vars(value), seen)
    return sys.getsizeof(value)


class ResultStore:
    """A thread-safe LRU mapping bounded by the total :func:`sizeof` of its values."""

    def __init__(self, max_bytes: int) -> None:
        self._data: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.max_bytes = max_bytes
        self.bytes = 0

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            if key not in self._data:
                return default
            self._data.move_to_end(key)
            return self._data[key][0]

    def put(self, key: Hashable, value: Any) -> None:
        size = sizeof(value)
        with self._lock:
            if key in self._data:
                self.bytes -= self._data.pop(key)[1]
            if size > self.max_bytes // 4:
                return  # too large to keep: recomputed when asked again
            self._data[key] = (value, size)
            self.bytes += size
            while self.bytes > self.max_bytes:
                self.bytes -= self._data.popitem(last=False)[1][1]

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.bytes = 0


_STORE = ResultStore(env_number("EVALCORE_CACHE_MB", 1024) * MB)


def store() -> ResultStore:
    """The process-wide store."""
    return _STORE


def _key_part(value: Any) -> Hashable:
    try:
        hash(value)
        return value
    except TypeError:
        if isinstance(value, dict):
            return tuple(sorted((k, _key_part(v)) for k, v in value.items()))
        if isinstance(value, (list, tuple, set)):
            return tuple(_key_part(v) for v in value)
        return repr(value)


def cached(spinner: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Cache a step in the store, keyed by its function and its arguments not starting with ``_``; ``spinner``
    is shown while it computes. Exceptions are not cached."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            key = (fn.__module__, fn.__qualname__,
                   tuple((name, _key_part(v)) for name, v in bound.arguments.items() if not name.startswith("_")))
            value = _STORE.get(key, _MISSING)
            if value is _MISSING:
                with st.spinner(spinner):
                    value = once(key, lambda: fn(*args, **kwargs))
            return value

        return wrapper

    return decorate


class _Flight:
    """One computation of a key in progress: ``done`` is set when it ends, ``value`` is its result (or missing when
    it raised or was stopped)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = _MISSING


_FLIGHTS: dict[Hashable, _Flight] = {}
_FLIGHTS_LOCK = threading.Lock()


def once(key: Hashable, compute: Callable[[], Any]) -> Any:
    """The stored value of ``key``, computed by ``compute()`` and stored when missing, and computed once however many
    sessions ask at the same moment: the first computes, the others wait for its result (a dozen people opening the
    dashboard together cost one computation, not twelve on two cores). A computation that raises, or that Streamlit
    stops, hands over to one of the waiters. A waiter holds no lock while it waits, and keys depend on each other
    without cycles (a cycle would recurse forever in one session too), so waiting never deadlocks."""
    while True:
        value = _STORE.get(key, _MISSING)
        if value is not _MISSING:
            return value
        with _FLIGHTS_LOCK:
            flight = _FLIGHTS.get(key)
            leader = flight is None
            if leader:
                flight = _FLIGHTS[key] = _Flight()
        if not leader:
            flight.done.wait()
            if flight.value is not _MISSING:  # also a value too large to store
                return flight.value
            continue  # it raised or was stopped: compute here (or wait for another session that does)
        try:
            flight.value = compute()
            _STORE.put(key, flight.value)
            return flight.value
        finally:
            with _FLIGHTS_LOCK:
                del _FLIGHTS[key]
            flight.done.set()


def computed(key: Hashable, sub: Hashable = ()) -> Any:
    """What :func:`compute_with_progress` stored for ``key`` and job ``sub``, or None when it has not computed it
    (or it was evicted): lets a page show a result computed on request (a button) on later reruns."""
    value = _STORE.get(("progress", key, sub), _MISSING)
    return None if value is _MISSING else value


def compute_with_progress(key: Hashable, label: str, jobs: list[tuple[Hashable, Callable[..., Any]]]) -> list[Any]:
    """Run ``jobs`` (sub-key, fn(progress)) under one progress bar, reusing stored results.

    Each ``fn`` receives a ``progress(fraction)`` callback. Updating the bar is a point where Streamlit stops
    the run when the user changes an input, so a long computation is cancelled by changing inputs.
    """
    results: list[Any] = [_STORE.get(("progress", key, sub), _MISSING) for sub, _ in jobs]
    todo = [i for i, r in enumerate(results) if r is _MISSING]
    if not todo:
        return results
    bar = st.progress(0.0, text=label)
    for done, i in enumerate(todo):
        sub, fn = jobs[i]

        def progress(fraction: float, done: int = done) -> None:
            bar.progress(min(1.0, (done + fraction) / len(todo)), text=label)

        results[i] = once(("progress", key, sub), lambda: fn(progress))
        progress(1.0)
    bar.empty()
    return results
