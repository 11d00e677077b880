"""The bounded worker: results and errors come back; memory, time and concurrency bounds hold."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from evalcore.data.validation import EvalDataError, read_and_validate
from evalcore.data.limits import MB
from evalcore.data.sandbox import WorkLimits, run_bounded


def allocate(n_bytes: int) -> int:
    return int(np.ones(n_bytes, dtype=np.uint8).sum())


def fail_plainly() -> None:
    raise RuntimeError("boom")


def test_the_result_comes_back():
    table = run_bounded(read_and_validate, b"model,correct\na,1\nb,0\n")
    assert table.columns == ("model", "correct") and table.n_rows == 2
    assert table.frame["correct"].tolist() == [1.0, 0.0]


def test_a_data_error_comes_back_as_it_was():
    with pytest.raises(EvalDataError, match="The file is empty"):
        run_bounded(read_and_validate, b"")


def test_memory_beyond_the_bound_stops_the_work_with_a_message():
    with pytest.raises(EvalDataError, match="needed more than 512 MB.*EVALCORE_WORKER_MEMORY_MB"):
        run_bounded(allocate, 2048 * MB, limits=WorkLimits(memory_bytes=512 * MB))
    assert run_bounded(allocate, 64 * MB, limits=WorkLimits(memory_bytes=512 * MB)) == 64 * MB


def test_time_beyond_the_deadline_stops_the_work_with_a_message():
    start = time.monotonic()
    with pytest.raises(EvalDataError, match="took longer than 1 s.*EVALCORE_WORKER_SECONDS"):
        run_bounded(time.sleep, 30, limits=WorkLimits(seconds=1))
    assert time.monotonic() - start < 10


def test_an_unexpected_failure_is_reported_not_raised_as_is():
    with pytest.raises(EvalDataError, match="failed unexpectedly.*RuntimeError: boom"):
        run_bounded(fail_plainly)


def test_at_most_the_configured_number_of_workers_run_at_once():
    limits = WorkLimits(seconds=30, workers=1)
    finished: list[float] = []

    def one() -> None:
        run_bounded(time.sleep, 1.0, limits=limits)
        finished.append(time.monotonic())

    start = time.monotonic()
    threads = [threading.Thread(target=one) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(finished)[1] - start >= 2.0  # the second waited for the first


def test_callers_with_different_limits_share_the_slots():
    """One count of running children per process: a caller allowing one worker waits while another caller's
    child runs, whatever limits that caller passed (slots kept per ``workers`` value let both run)."""
    started: list[float] = []

    def one(limits: WorkLimits, delay: float) -> None:
        time.sleep(delay)
        run_bounded(time.sleep, 1.5, limits=limits)
        started.append(time.monotonic())

    start = time.monotonic()
    threads = [threading.Thread(target=one, args=(WorkLimits(seconds=30, workers=2), 0.0)),
               threading.Thread(target=one, args=(WorkLimits(seconds=30, workers=1), 0.3))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(started)[1] - start >= 3.0  # the second waited for the first


def test_environment_configures_the_bounds(monkeypatch):
    monkeypatch.setenv("EVALCORE_WORKER_MEMORY_MB", "100")
    monkeypatch.setenv("EVALCORE_WORKER_SECONDS", "7")
    monkeypatch.setenv("EVALCORE_WORKERS", "3")
    assert WorkLimits.from_env() == WorkLimits(memory_bytes=100 * MB, seconds=7.0, workers=3)


def test_the_worker_never_runs_the_callers_main_script(tmp_path, monkeypatch):
    """Under Streamlit, ``__main__`` is the dashboard's app.py (a fake module with its ``__file__``): a worker that
    re-ran it failed outside a script run (with sign-in, on ``st.user``). The worker must not touch it."""
    import sys
    import types

    marker = tmp_path / "ran"
    script = tmp_path / "app.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('ran')\nraise SystemExit('the main script ran')\n")
    fake_main = types.ModuleType("__main__")
    fake_main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", fake_main)
    table = run_bounded(read_and_validate, b"model,correct\na,1\nb,0\n")
    assert table.n_rows == 2
    assert not marker.exists()


def abort_like_arrow() -> None:
    """What Arrow's CSV parser does when an allocation fails under the cap: a message on stderr, then abort."""
    import os
    import sys

    sys.stderr.write("Check failed: _s.ok() Bad status: Out of memory: realloc of size 524288 failed\n")
    sys.stderr.flush()
    os.abort()


def test_a_native_abort_for_memory_is_reported_as_the_memory_bound(capfd):
    with pytest.raises(EvalDataError, match="needed more than 4,096 MB.*EVALCORE_WORKER_MEMORY_MB"):
        run_bounded(abort_like_arrow)
    assert "Out of memory" not in capfd.readouterr().err  # the child's own words stay out of the caller's output
