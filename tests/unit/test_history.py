"""Series of runs (issue 40): the minimum detectable difference against hand computation and simulation, the
changes of a series against known planted ones (false discovery proportion and power by seeded simulation), the
unpaired path, the sentence, and the workspace's series (catalog version 3, an older catalog upgraded)."""

from __future__ import annotations

import math
import sqlite3

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalcore.compare.paired import newcombe_interval
from evalcore.compare.power import (examples_needed, interval_power, mcnemar_power, minimum_detectable_difference,
                                    minimum_detectable_shift)
from evalcore.data.validation import validate
from evalcore.history import Run, history_sentence, series_changes, stored_trend, trend
from evalcore.history.summary import run_summary
from evalcore.workspace import Workspace
from evalcore.workspace.catalog import SCHEMA_VERSION



def _power_by_hand(n: int, psi: float, delta: float, rejects) -> float:
    """A test's power by enumeration of every (m, c) with math.comb: P(M = m) P(C = c | m), summed where ``rejects(m,
    c)`` (c = 0..m, an array) says the test rejects."""
    pi = (1 + delta / psi) / 2
    total = 0.0
    for m in range(n + 1):
        pm = math.comb(n, m) * psi**m * (1 - psi) ** (n - m)
        if pm < 1e-15:
            continue
        for c in np.flatnonzero(rejects(m, np.arange(m + 1))):
            total += pm * math.comb(m, int(c)) * pi**c * (1 - pi) ** (m - c)
    return total


def _exact_power_by_hand(n: int, psi: float, delta: float, alpha: float = 0.05) -> float:
    """The exact McNemar test's power: it rejects where the two-sided exact p-value
    min(1, 2 P(Bin(m, 1/2) <= min(c, m - c))) is below alpha."""
    def rejects(m, c):
        return np.array([min(1.0, 2 * sum(math.comb(m, j) for j in range(min(k, m - k) + 1)) / 2**m) < alpha
                         for k in c])
    return _power_by_hand(n, psi, delta, rejects)


def _interval_power_by_hand(n: int, psi: float, share: float, delta: float) -> float:
    """The power of Newcombe's interval (95%) to exclude 0 for the table (a, m - c, c, d), a = round(share (n - m))
    of the concordant examples right in both."""
    def rejects(m, c):
        a = round(share * (n - m))
        low, high = newcombe_interval(a, m - c, c, n - m - a, 0.95)
        return (low > 0) | (high < 0)
    return _power_by_hand(n, psi, delta, rejects)


def test_minimum_detectable_difference_is_the_interval_s_80_percent():
    # n = 200 shared examples, 40 discordant (psi = 0.2), 120 right in both (3/4 of the concordant), 95%: the power
    # of the comparison's interval (Newcombe's) at the MDD, enumerated by hand, is 80%, and a difference 0.2 points
    # smaller has less; the exact McNemar test, more conservative at this n, has less than 80% there
    delta = minimum_detectable_difference(200, 40, 120, 0.95)
    assert _interval_power_by_hand(200, 0.2, 0.75, delta) == pytest.approx(0.8, abs=1e-5)
    assert _interval_power_by_hand(200, 0.2, 0.75, delta - 0.002) < 0.8
    assert interval_power(200, 0.2, 0.75, delta, 0.95) == pytest.approx(0.8, abs=1e-6)
    assert _exact_power_by_hand(200, 0.2, delta) < 0.8
    # no disagreement seen: the difference is all one-way disagreement (psi = delta)
    zero = minimum_detectable_difference(100, 0, 70, 0.95)
    assert _interval_power_by_hand(100, zero, 0.7, zero) == pytest.approx(0.8, abs=1e-5)
    assert math.isnan(minimum_detectable_difference(0, 0, 0, 0.95))
    # planning (before a table exists) is for the exact McNemar test, by hand
    needed = examples_needed(0.03, 0.1, 0.95)
    assert mcnemar_power(needed, 0.1, 0.03, 0.95) >= 0.8 > mcnemar_power(needed - 1, 0.1, 0.03, 0.95)
    assert _exact_power_by_hand(200, 0.2, 0.1) == pytest.approx(mcnemar_power(200, 0.2, 0.1, 0.95), abs=1e-6)
    # the paired t's: its power at the MDD, by the noncentral t with n - 1 = 100 degrees of freedom, is 80%
    shift = minimum_detectable_shift(101, 0.5, 0.9)
    t = stats.t(100).ppf(0.95)
    nc = shift * math.sqrt(101) / 0.5
    assert stats.nct(100, nc).sf(t) + stats.nct(100, nc).cdf(-t) == pytest.approx(0.8, abs=1e-7)
    with pytest.raises(ValueError):
        examples_needed(0.2, 0.1, 0.95)


def test_a_difference_of_the_mdd_is_detected_80_percent_of_the_time():
    """Seeded simulation: 2x2 tables drawn from the multinomial (the concordant split drawn too, not fixed) with a
    true difference of the MDD; the comparison's interval excludes 0 in 80% of them (within 1.5 points over 20,000
    draws; sd 0.3 points)."""
    rng = np.random.default_rng(11)
    for n, psi, both in ((100, 0.2, 0.6), (1000, 0.1, 0.7), (12000, 0.06, 0.5)):
        delta = minimum_detectable_difference(n, round(n * psi), round(n * both), 0.95)
        cells = [both, (psi - delta) / 2, (psi + delta) / 2, 1 - both - psi]
        a, b, c, d = rng.multinomial(n, cells, 20_000).T
        low, high = newcombe_interval(a, b, c, d, 0.95)
        power = float(((low > 0) | (high < 0)).mean())
        assert abs(power - 0.8) <= 0.015, (n, psi, power)


def _series(rng, n_runs: int, planted: dict[int, str], n: int = 800, drop: float = 0.35) -> list[Run]:
    """``n_runs`` runs of one model on the same ``n`` examples in 4 tasks: each the truth with 3% of answers
    flipped; run i in ``planted`` loses ``drop`` of its right answers on that task."""
    truth = rng.random(n) < 0.7
    task = np.array(["a", "b", "c", "d"])[np.arange(n) % 4]
    runs = []
    for i in range(n_runs):
        right = truth.copy()
        flip = rng.random(n) < 0.03
        right[flip] = ~right[flip]
        if i in planted:
            hit = task == planted[i]
            right[hit] &= rng.random(hit.sum()) >= drop
        runs.append(Run(f"r{i:02d}", f"2026-11-{1 + i:02d}T00:00:00+00:00",
                        pd.DataFrame({"model": "m", "example_id": np.arange(n), "task": task,
                                      "correct": right.astype(float)})))
    return runs


def test_flagged_changes_keep_the_false_discovery_rate_over_runs_and_slices():
    """Seeded simulation with known truth, against the pinned first run: a (run, slice) change is real when the
    run has a planted loss there (its overall too); the false discovery proportion averages below the 10% asked and
    the planted losses are found."""
    rng = np.random.default_rng(7)
    fdp, found = [], []
    for _ in range(12):
        planted = {3: "a", 7: "c", 8: "b"}
        runs = _series(rng, 10, planted)
        out = series_changes(runs, baseline="r00", fdr=0.1)
        real = [(f"r{i:02d}", s) for i, t in planted.items() for s in ("overall", f"task={t}")]
        flagged = out[out["flagged"]]
        false = [(r, s) for r, s in zip(flagged["run"], flagged["slice"]) if (r, s) not in real]
        fdp.append(len(false) / max(len(flagged), 1))
        found.append(np.mean([((out["run"] == r) & (out["slice"] == s) & out["flagged"]).any() for r, s in real]))
    assert np.mean(fdp) <= 0.1 and np.mean(found) >= 0.9


def test_unpaired_runs_say_so_and_the_sentence_names_the_last_change():
    rng = np.random.default_rng(3)
    runs = _series(rng, 4, {3: "a"})
    moved = runs[1].rows.assign(example_id=runs[1].rows["example_id"] + 10_000)  # no shared example with r00
    runs[1] = Run(runs[1].name, runs[1].time, moved)
    out = series_changes(runs)
    assert set(out.loc[out["run"] == "r01", "method"]) == {"unpaired (no shared example)"}
    assert set(out.loc[out["run"] == "r03", "method"]) == {"paired"}
    assert out.loc[(out["run"] == "r03") & (out["slice"] == "task=a"), "direction"].item() == "worse"
    line = history_sentence("m", trend(runs, "correct", 0.95), out, 0.95, 0.1)
    assert line.startswith("m's accuracy in the latest of 4 runs, r03 (2026-11-04), is ")
    assert "the last change flagged came with it: worse by" in line and "on task=a against r02 (paired)" in line


def test_the_trend_from_stored_counts_is_the_trend_from_the_rows():
    runs = _series(np.random.default_rng(5), 3, {})
    stored, missing = stored_trend([(r.name, r.time, run_summary(validate(r.rows))) for r in runs], "m", 0.9)
    from_rows = trend(runs, "correct", 0.9)
    assert missing == [] and list(stored["run"]) == ["r00", "r01", "r02"]
    for column in ("estimate", "ci_low", "ci_high", "n", "n_tasks"):
        assert stored[column].to_numpy(float) == pytest.approx(from_rows[column].to_numpy(float), abs=1e-12)
    scored = run_summary(validate(runs[0].rows.assign(score=runs[0].rows["correct"]).drop(columns="correct")))
    assert stored_trend([("s", "t", scored)], "m", 0.9)[1] == ["s"]  # a score: from its rows


def test_workspace_series_upgrade_an_older_catalog_and_leave_with_their_dataset(tmp_path):
    root = tmp_path / "ws"
    Workspace(root)
    with sqlite3.connect(root / "catalog.sqlite") as db:  # a version-2 catalog, as the previous release left it
        db.execute("DROP TABLE series_runs")
        db.execute("DROP TABLE series")
        db.execute("PRAGMA user_version = 2")
    ws = Workspace(root)
    assert sqlite3.connect(root / "catalog.sqlite").execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    runs = _series(np.random.default_rng(2), 3, {})
    ids = []
    for i, run in enumerate(runs):
        record = ws.add_dataset(validate(run.rows), run.name)
        ids.append(record.id)
        ws.add_to_series(record.id, "m / nightly", f"2026-11-0{3 - i}T12:00:00+02:00", {"commit": f"c{i}"})
    assert [r.name for r in ws.series_runs("m / nightly")] == ["r02", "r01", "r00"]  # by run time, not save order
    assert ws.series_runs("m / nightly")[0].run_time == "2026-11-01T10:00:00+00:00"  # kept in UTC
    assert ws.series() == [("m / nightly", 3, "2026-11-03T10:00:00+00:00")]
    ws.pin_baseline("m / nightly", ids[1])
    assert ws.series_baseline("m / nightly") == ids[1]
    ws.delete(ids[1])
    assert [r.name for r in ws.series_runs("m / nightly")] == ["r02", "r00"] and ws.series_baseline("m / nightly") is None
    with pytest.raises(Exception, match="ISO 8601"):
        ws.add_to_series(ids[0], "m / nightly", "yesterday")


def test_a_run_without_a_time_takes_the_one_its_log_records(tmp_path, shared_file):
    """Inspect AI records when the run started (eval.created, 2025-10-21T01:12:03+02:00): the series keeps it in UTC;
    a plain table records none: the save time."""
    from evalcore.data.validation import load_eval_log

    ws = Workspace(tmp_path / "ws")
    inspect = ws.add_dataset(load_eval_log(shared_file("ecosystem/inspect_ai/data_arc_qwen.json")), "qwen")
    assert ws.add_to_series(inspect.id, "arc").run_time == "2025-10-20T23:12:03+00:00"
    plain = ws.add_dataset(validate(_series(np.random.default_rng(1), 1, {})[0].rows), "plain")
    assert ws.add_to_series(plain.id, "arc").run_time == plain.created
