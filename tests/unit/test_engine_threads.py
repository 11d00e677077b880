"""Threads sharing one log never run two queries at once on its connection (evalcore.engine.connection).

Two threads querying one DuckDB connection deadlock inside DuckDB while holding the GIL, which stops the whole
process, the test runner included. So the threads run in a child process with a time limit: a hang fails the test
instead of freezing the suite.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import ibis
import pandas as pd

from evalcore.engine import duckdb_connection, execute
from evalcore.engine.connection import lock_of

CHILD_TIMEOUT_S = 120

_THREADS = textwrap.dedent("""
    import sys, threading
    import numpy as np, pandas as pd
    from evalcore.data.validation import validate
    from evalcore.engine import from_frame, scan
    from evalcore.leaderboard import bootstrap

    rng = np.random.default_rng(0)
    n = 3000
    raw = pd.DataFrame({"model": np.repeat(["a", "b", "c"], n), "example_id": np.tile([f"q{i}" for i in range(n)], 3),
                        "task": np.tile([f"t{i % 4}" for i in range(n)], 3),
                        "correct": (rng.random(3 * n) < 0.7).astype(float)})
    raw.to_parquet(sys.argv[1])
    expected = sorted(raw["model"].unique())
    for log in (from_frame(validate(raw), "frame"), scan(sys.argv[1])):
        for trial in range(3):
            lazy = log if trial == 0 else from_frame(validate(raw), "frame") if log.frame is not None else scan(sys.argv[1])
            out, errors = [], []

            def work(i):
                try:
                    out.append(lazy.distinct("model"))
                    lazy.restrict(task=(f"t{i % 4}",)).count("correct")
                    bootstrap.leaderboard(lazy, n_boot=20, seed=i)
                except Exception as exc:
                    errors.append(repr(exc))

            threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors, errors
            assert out == [expected] * 6, out
    print("ok")
""")


def test_threads_sharing_a_log_finish_with_the_right_answers(tmp_path):
    """Six threads query one in-memory log and one scanned Parquet log at once (distinct models, a restricted count, a
    bootstrap leaderboard): all finish, none fails, each sees the three models. This hung for good before every query
    took its connection's lock."""
    done = subprocess.run([sys.executable, "-c", _THREADS, str(tmp_path / "log.parquet")], capture_output=True,
                          text=True, timeout=CHILD_TIMEOUT_S)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def test_each_connection_has_its_own_lock_and_queries_wait_for_it():
    """Two in-memory DuckDBs compare equal in Ibis (one "database"), yet each has its own lock; a query on a
    connection whose lock another thread holds waits until it is released."""
    first, second = duckdb_connection(), duckdb_connection()
    assert first == second and lock_of(first) is not lock_of(second)
    assert lock_of(first) is lock_of(first)
    table = first.create_table("t", pd.DataFrame({"x": [1, 2, 3]}))
    started, finished = threading.Event(), threading.Event()
    answer = []

    def query():
        started.set()
        answer.append(int(execute(table.x.sum())))
        finished.set()

    with lock_of(first):
        worker = threading.Thread(target=query)
        worker.start()
        started.wait(10)
        assert not finished.wait(0.5)  # blocked on the lock held here
    worker.join(30)
    assert finished.is_set() and answer == [6]
    assert int(execute(ibis.memtable({"y": [4, 5]}).y.sum())) == 9  # an expression on the default backend
