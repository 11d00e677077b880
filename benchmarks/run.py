"""Run the benchmarks and print a Markdown table of medians.

Usage: ``python -m benchmarks.run [--repeats N] [--only NAME...]`` (``make bench`` runs them all).

Targets come from the performance issue and hold for this project's reference machine (2 cores); the table says
whether each median meets its target but nothing fails on a miss: timings are reports, not assertions. The table
is also written to ``benchmarks/results/latest.md`` (git-ignored).

Benchmarks (``--only`` takes these names):

* ``read-csv``: ``evalcore.data.reading.read_table`` of the 1,000,000-row CSV beside pyarrow's reader alone;
* ``load-csv``, ``load-parquet``: ``evalcore.data.validation.load_eval_log(path)`` (read + validate) of a 1,000,000-row log;
* ``import-inspect``: ``load_eval_log`` of a generated 100,000-sample Inspect AI ``.eval`` log (zip), with and
  without the ``summaries.json`` a completed run writes (:mod:`benchmarks.inspect_log`);
* ``workspace-open``: ``evalcore.workspace.Workspace.dataset`` of a saved 1,000,000-row dataset;
* ``workspace-page``: one run of the Workspace page (Streamlit's AppTest, the script run without a browser) on a
  workspace of 1,000 saved datasets and 1,000 saved analyses;
* ``calibration``: ECE + reliability table + selective-prediction curve of 1,000,000 predictions;
* ``ece-interval``, ``area-interval``: their bootstrap intervals with 200 replicates (no target);
* ``report-mmlu``: ``evalcore report`` on the MMLU-Pro per-question log (347,215 rows, 29 models) end to end in a
  subprocess, with the time of each section (skipped without ../shared/data);
* ``server-start``: ``python -m streamlit run app.py`` until ``/_stcore/health`` answers 200;
* ``page-render``: first render of the Data, Models and Calibration pages with the demo in chromium, on a fresh
  server (cold cache) and on a second visit (warm cache);
* ``eb-1000``: ``evalcore.subgroups.estimates.empirical_bayes`` (XGBoost tuned, robust intervals) for 1,000 units;
* ``auto-groups-demo``: ``evalcore.subgroups.clustering.auto_groups`` with its defaults on the validated synthetic demo
  (8,700 examples; one feature, two clusters);
* ``cva-1000``: ``evalcore.subgroups.robust_intervals.robust_critical_value`` for 1,000 distinct m2 at kappa = 3 and at kappa = inf, with
  the max abs error against the per-value reference solver ``_cva_direct``;
* ``holdout-mmlu``: ``evalcore.subgroups.holdout.holdout_study`` with 200 repetitions on MMLU-Pro (29 LLMs, 91 subgroups; at
  most 3 repeats), with its MSE ratios, coverage and width (skipped without ../shared/data).
* ``boot-summary``: ``evalcore.leaderboard.bootstrap.bootstrap_summary(n_boot=10000)`` of the VTAB-1k leaderboard (16 x 19;
  skipped without ../shared/data);
* ``boot-paired``: ``evalcore.leaderboard.bootstrap.bootstrap_replicates(n_boot=2000)`` of a simulated paired VTAB-sized log
  (16 models, 387,904 examples, 19 tasks; built once, untimed), with the speed-up over naive index resampling;
* ``bhm-5000``: ``evalcore.leaderboard.bayes.fit(draws=5000, chains=4)`` on VTAB-1k (skipped without ../shared/data);
* ``ternary-1pct``: ``evalcore.leaderboard.weighting.ternary_winner_map(step=0.01, z=2.0)`` on VTAB-1k (skipped without
  ../shared/data);
* ``strata-1m``: ``evalcore.sampling.designs.kmeans_strata`` (10 strata) of 1,000,000 simulated Beta(5, 1) confidences,
  with sklearn ``KMeans(n_init=10)``'s time and both WCSS (and ssepy's stratification when installed);
* ``sample-estimate``: ``allocate_budget`` (Neyman) + ``draw_sample`` + ``estimate`` (DF), N = 1,000,000,
  n = 1,000 (ssepy's equivalent steps in the note when installed);
* ``efficiency-50``: ``evalcore.sampling.designs.design_efficiency`` over 50 budgets, N = 1,000,000 (see
  :mod:`benchmarks.sampling`; ``requirements-bench.txt`` pins the optional ssepy);
* ``ppi-mean-10``: ``evalcore.ppi.means.ppi_mean`` (tuned λ) for n = 1,000, N = 1,000,000, 10 models, against
  ``ppi_py`` called once per model in the same run (``ppi-mean-10-ppi_py``);
* ``bt-20``: ``evalcore.ppi.bradley_terry.ppi_bradley_terry`` (PPI++) for 20 models, n = 1,000, N = 100,000;
* ``ess-curve``: ``evalcore.ppi.curves.ess_curves``, 20 sizes x 250 splits, 4 models, T = 50,000;
* ``bt-ess-curve``: ``evalcore.ppi.curves.bt_ess_curves``, 12 sizes x 250 splits, 20 models, 16,000 battles (no
  target; see :mod:`benchmarks.ppi`).
* ``compare-10m``: ``evalcore compare LOG --base A --new B`` in a subprocess on a generated 10,000,000-row two-model
  Parquet log, median of 3 runs (:mod:`benchmarks.compare_speed`).
* ``validate-cpu``: ``evalcore validate`` of a 6-row CSV beside ``python -c "import pandas"``, CPU seconds (user +
  system) of each, interleaved; the ratio of the medians in the note, target 1.5x (:mod:`benchmarks.validate_speed`).
* ``label-team``: the Label page in chromium with an AI judge and overlap 2: a key press until the next example is
  shown and until the page has settled, opening a campaign with 1,000 labels, its agreement section
  (:mod:`benchmarks.label_team`).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

from benchmarks.core import Result, markdown_table, progress_line, time_calls

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"
DEFAULT_REPEATS = 5
DEFAULT_SERVER_REPEATS = 3
N_BOOT = 200


class _LogFiles:
    """The 1,000,000-row log as CSV and Parquet, generated once per run into a temporary folder."""

    def __init__(self) -> None:
        self._dir: tempfile.TemporaryDirectory | None = None
        self._paths: dict[str, Path] | None = None

    def get(self, fmt: str) -> Path:
        if self._paths is None:
            from benchmarks import datasets

            self._dir = tempfile.TemporaryDirectory(prefix="evalcore-bench-")
            start = time.perf_counter()
            self._paths = datasets.write_eval_log(Path(self._dir.name))
            sizes = ", ".join(f"{k} {p.stat().st_size / 1e6:.0f} MB" for k, p in self._paths.items())
            print(f"  generated the 1,000,000-row log in {time.perf_counter() - start:.1f} s ({sizes})", flush=True)
        return self._paths[fmt]

    def cleanup(self) -> None:
        if self._dir is not None:
            self._dir.cleanup()


# ------------------------------------------------------------------------------------------------ benchmarks


def bench_load(logs: _LogFiles, fmt: str, target: float, repeats: int) -> list[Result]:
    from evalcore.data.validation import load_eval_log

    path = logs.get(fmt)
    what = f"`load_eval_log` (read + validate) of a 1,000,000-row log from {fmt.upper() if fmt == 'csv' else 'Parquet'}"
    return [Result(f"load-{fmt}", what, time_calls(partial(load_eval_log, path), repeats), target)]


def _predictions():
    from benchmarks import datasets

    return datasets.predictions()


def bench_calibration(repeats: int) -> list[Result]:
    from evalcore.calibration import estimators as cal

    conf, corr = _predictions()

    def three():
        return (cal.expected_calibration_error(conf, corr), cal.reliability_table(conf, corr),
                cal.selective_prediction_curve(conf, corr))

    what = "`expected_calibration_error` + `reliability_table` + `selective_prediction_curve`, 1,000,000 predictions"
    return [Result("calibration", what, time_calls(three, repeats), 0.3)]


def bench_ece_interval(repeats: int) -> list[Result]:
    from evalcore.calibration.estimators import ece_interval

    conf, corr = _predictions()
    what = f"`ece_interval(n_boot={N_BOOT})`, 1,000,000 predictions"
    return [Result("ece-interval", what, time_calls(partial(ece_interval, conf, corr, n_boot=N_BOOT), repeats))]


def bench_area_interval(repeats: int) -> list[Result]:
    from evalcore.calibration.estimators import area_interval

    conf, corr = _predictions()
    what = f"`area_interval(n_boot={N_BOOT})`, 1,000,000 predictions"
    return [Result("area-interval", what, time_calls(partial(area_interval, conf, corr, n_boot=N_BOOT), repeats))]


def bench_server_start(repeats: int) -> list[Result]:
    from benchmarks.server import streamlit_server

    samples = []
    for _ in range(repeats):
        with streamlit_server() as server:
            samples.append(server.startup_seconds)
    what = "`python -m streamlit run app.py` spawned until `/_stcore/health` answers 200 (polled every 50 ms)"
    return [Result("server-start", what, samples)]


def bench_page_render(repeats: int) -> list[Result]:
    from benchmarks import browser
    from benchmarks.server import streamlit_server

    titles = {"data": "Data", "models": "Models", "calibration": "Calibration", "subgroups": "Subgroups"}
    content = {"data": "validation report and preview table", "models": "a plotly chart",
               "calibration": "a plotly chart", "subgroups": "a plotly chart"}
    cold = {p: Result(f"render-{p}-cold", "", target=3.0) for p in browser.PAGES}
    warm = {p: Result(f"render-{p}-warm", "", target=3.0) for p in browser.PAGES}
    for p in browser.PAGES:
        url_path = f"/{browser.PAGES[p]}"
        cold[p].measures = (f"{titles[p]} page (`{url_path}`), demo data, first visit on a fresh server (cold cache): "
                            f"`goto` until script state notRunning and {content[p]} visible")
        warm[p].measures = (f"{titles[p]} page (`{url_path}`), a later visit in a new browser context (warm server "
                            f"cache, empty browser cache)")
    switch = {p: Result(f"switch-{p}", f"click on the sidebar link of the {titles[p]} page after opening the "
                                        f"Data page in the same browser context, until {content[p]} visible (fresh "
                                        "server: its first visit of the page computes)", target=3.0)
              for p in browser.PAGES if p != "data"}
    results = [*cold.values(), *warm.values(), *switch.values()]
    if not browser.chromium_available():
        for r in results:
            r.note = f"skipped: {browser.CHROMIUM} not found"
        return results
    with browser.chromium() as chromium:
        for p in browser.PAGES:
            for _ in range(repeats):  # a fresh server per repeat: its first visit computes and caches
                with streamlit_server() as server:
                    cold[p].samples.append(browser.time_first_render(chromium, server.url, p))
                    warm[p].samples.append(browser.time_first_render(chromium, server.url, p))
                if p in switch:
                    with streamlit_server() as server:
                        switch[p].samples.append(browser.time_page_switch(chromium, server.url, p))
    return results


def bench_eb(repeats: int) -> list[Result]:
    from benchmarks.subgroups import EB_GROUPS, EB_MODELS, eb_log
    from evalcore.subgroups.estimates import empirical_bayes

    log = eb_log()
    empirical_bayes(log)  # untimed warm-up: the first call imports xgboost
    labeled = log[log["correct"].notna()].groupby(["model", "group"]).size()
    what = (f"`empirical_bayes(regressor='xgboost')` with robust intervals, {len(labeled):,} units = "
            f"{len(EB_MODELS)} models x {EB_GROUPS} groups, {labeled.min()}-{labeled.max()} labeled examples per "
            f"unit ({len(log):,} rows with confidence and one numeric feature), after one untimed warm-up call")
    return [Result("eb-1000", what, time_calls(partial(empirical_bayes, log), repeats), 5.0)]


def bench_auto_groups(repeats: int) -> list[Result]:
    from evalcore.subgroups.clustering import auto_groups
    from evalcore.data.validation import validate
    from evalcore.demo.synthetic import synthetic_benchmark

    log = validate(synthetic_benchmark(seed=0).log)
    groups = auto_groups(log)
    what = (f"`auto_groups` (default features, k = 2..20 by silhouette on a seeded subsample, then all examples) "
            f"on the synthetic demo ({log['example_id'].nunique():,} examples, {len(log):,} rows)")
    return [Result("auto-groups-demo", what, time_calls(partial(auto_groups, log), repeats), 10.0,
                   note=f"{groups.nunique()} clusters")]


def bench_cva(repeats: int) -> list[Result]:
    import numpy as np

    from benchmarks.subgroups import m2_values
    from evalcore.subgroups.robust_intervals import _cva_direct, robust_critical_value

    m2 = m2_values()
    rows = []
    for name, kappa in (("cva-1000-k3", 3.0), ("cva-1000-kinf", np.inf)):
        samples = time_calls(partial(robust_critical_value, m2, kappa, 0.05), repeats)
        fast = robust_critical_value(m2, kappa, 0.05)
        direct = np.array([_cva_direct(float(v), kappa, 0.05) for v in m2])
        error = float(np.max(np.abs(fast - direct)))
        what = (f"`robust_critical_value` of {len(np.unique(m2)):,} distinct m2 (0 and log-spaced 1e-3..1e3), "
                f"kappa = {kappa:g}, alpha = 0.05")
        rows.append(Result(name, what, samples, 1.0,
                           note=f"max abs error vs `_cva_direct` on the same values: {error:.1e} "
                                f"(largest value {fast.max():.2f})"))
    return rows


HOLDOUT_REPEATS = 3  # each repeat is a whole 200-repetition study


def bench_holdout_mmlu(repeats: int) -> list[Result]:
    import gc
    import statistics

    from benchmarks.subgroups import cpu_seconds, mmlu_pro_path
    from evalcore.data.validation import load_eval_log
    from evalcore.subgroups.holdout import holdout_study

    what = ("`holdout_study(n_repetitions=200, regressor='xgboost', n_jobs=-1)` on MMLU-Pro (all models and "
            "`src` subgroups, proportional design, seed 0), log loaded once beforehand")
    path = mmlu_pro_path()
    if path is None:
        return [Result("holdout-mmlu", what, target=120.0, note="skipped: ../shared/data is absent")]
    log = load_eval_log(path)
    samples, cpu, loads = [], [], []
    for _ in range(min(repeats, HOLDOUT_REPEATS)):
        gc.collect()
        cpu_before, start = cpu_seconds(), time.perf_counter()
        result = holdout_study(log, n_repetitions=200, n_jobs=-1)
        samples.append(time.perf_counter() - start)
        cpu_after = cpu_seconds()
        if cpu_before is not None and cpu_after is not None:
            cpu.append(cpu_after - cpu_before)
        loads.append(os.getloadavg()[0])
    summary = result.summary.set_index("method")
    what += (f"; {log['model'].nunique()} models x {log['group'].nunique()} groups = {len(result.units):,} units; "
             "the first repeat includes starting the joblib workers")
    busy = (f"CPU time of the process and its workers {statistics.median(cpu):.0f} s, i.e. about "
            f"{statistics.median(cpu) / 2:.0f} s of wall-clock time on 2 otherwise idle cores; "
            if cpu else "")
    note = (f"{busy}1-minute load average after each repeat {', '.join(f'{x:.1f}' for x in loads)}. Results: "
            f"EB/DT MSE ratio {summary.loc['EB', 'mse_ratio_vs_DT']:.3f}, "
            f"SR/DT {summary.loc['SR', 'mse_ratio_vs_DT']:.3f}; coverage EB {summary.loc['EB', 'coverage']:.3f}, "
            f"DT {summary.loc['DT', 'coverage']:.3f}; mean width EB {summary.loc['EB', 'width']:.4f}, "
            f"DT {summary.loc['DT', 'width']:.4f}")
    print(f"  MMLU-Pro holdout summary (200 repetitions, seed 0):\n{result.summary.to_string(index=False)}",
          flush=True)
    return [Result("holdout-mmlu", what, samples, 120.0, note=note)]


def _vtab():
    """The VTAB-1k leaderboard loaded with ``load_eval_log``, or None when ../shared/data is absent."""
    from benchmarks.aggregate import vtab_path
    from evalcore.data.validation import load_eval_log

    path = vtab_path()
    return None if path is None else load_eval_log(path)


def bench_boot_summary(repeats: int) -> list[Result]:
    from evalcore.leaderboard.bootstrap import bootstrap_summary

    what = "`bootstrap_summary(n_boot=10000)` (binomial bootstrap) of VTAB-1k, 16 models x 19 tasks"
    vtab = _vtab()
    if vtab is None:
        return [Result("boot-summary", what, target=1.0, note="skipped: ../shared/data/vtab_1k.csv is absent")]
    return [Result("boot-summary", what, time_calls(partial(bootstrap_summary, vtab, n_boot=10000), repeats), 1.0)]


NAIVE_REPLICATES = 20  # naive index resampling is timed on 20 replicates and scaled to 2,000


def bench_boot_paired(repeats: int) -> list[Result]:
    import statistics

    from benchmarks.aggregate import correctness_matrices, naive_resampling, paired_log
    from evalcore.leaderboard.bootstrap import bootstrap_replicates

    start = time.perf_counter()
    log = paired_log()
    n_examples = int(log.groupby("task", observed=True)["example_id"].nunique().sum())
    print(f"  built the {len(log):,}-row paired log in {time.perf_counter() - start:.1f} s", flush=True)
    rep = bootstrap_replicates(log, n_boot=2)  # untimed check that the log gets the paired bootstrap
    samples = time_calls(partial(bootstrap_replicates, log, n_boot=2000), repeats)
    mats = correctness_matrices(log)
    naive = time_calls(partial(naive_resampling, mats, NAIVE_REPLICATES), min(repeats, 3))
    scaled = statistics.median(naive) * 2000 / NAIVE_REPLICATES
    speedup = scaled / statistics.median(samples)
    what = (f"`bootstrap_replicates(n_boot=2000)` (paired bootstrap) of a simulated paired log: "
            f"{log['model'].nunique()} models x {n_examples:,} examples in {log['task'].nunique()} tasks (VTAB "
            f"test-set sizes; {len(log):,} rows, Categorical columns), includes reading and checking the log; "
            f"the log is built once, untimed")
    note = (f"paired={rep.paired}; naive index resampling (`C[:, idx].mean(axis=1)` per replicate and task): "
            f"{statistics.median(naive):.2f} s for {NAIVE_REPLICATES} replicates (median of {len(naive)}), i.e. "
            f"{scaled:.0f} s scaled to 2,000: speed-up x{speedup:.1f}")
    return [Result("boot-paired", what, samples, 10.0, note=note)]


def bench_bhm(repeats: int) -> list[Result]:
    from evalcore.leaderboard.bayes import fit

    what = "`evalcore.leaderboard.bayes.fit(draws=5000, chains=4, seed=0)` (Gibbs, beta-binomial BHM) on VTAB-1k, 16 x 19"
    vtab = _vtab()
    if vtab is None:
        return [Result("bhm-5000", what, target=5.0, note="skipped: ../shared/data/vtab_1k.csv is absent")]
    samples = time_calls(partial(fit, vtab, draws=5000, chains=4, seed=0), repeats)
    return [Result("bhm-5000", what, samples, 5.0)]


def bench_ternary(repeats: int) -> list[Result]:
    from evalcore.leaderboard.weighting import ternary_winner_map

    what = "`ternary_winner_map(step=0.01, z=2.0)` (5,151 weight vectors, binomial SE) on VTAB-1k, 16 x 19"
    vtab = _vtab()
    if vtab is None:
        return [Result("ternary-1pct", what, target=0.5, note="skipped: ../shared/data/vtab_1k.csv is absent")]
    samples = time_calls(partial(ternary_winner_map, vtab, step=0.01, z=2.0), repeats)
    return [Result("ternary-1pct", what, samples, 0.5)]


def bench_sampling(name: str, repeats: int) -> list[Result]:
    from benchmarks import sampling

    return sampling.BENCHMARKS[name](repeats)


def bench_ppi(name: str, repeats: int) -> list[Result]:
    from benchmarks import ppi

    return ppi.BENCHMARKS[name](repeats)


# ------------------------------------------------------------------------------------------------ runner


def bench_read_csv(logs: _LogFiles, repeats: int) -> list[Result]:
    """``read_table`` against pyarrow's CSV reader alone on the same file (target: at least half its speed)."""
    import pyarrow.csv

    from evalcore.data.reading import read_table

    path = logs.get("csv")
    arrow = time_calls(partial(pyarrow.csv.read_csv, path), repeats)
    ours = time_calls(partial(read_table, path), repeats)
    ratio = statistics.median(ours) / statistics.median(arrow)
    return [Result("read-csv-pyarrow", "pyarrow.csv.read_csv alone, same 1,000,000-row CSV (reference)", arrow),
            Result("read-csv", "`read_table` (limits, sniffing, parse) of that CSV; target: at most 2x pyarrow",
                   ours, 2 * statistics.median(arrow), note=f"{ratio:.2f}x pyarrow's time")]


def bench_workspace_open(logs: _LogFiles, repeats: int) -> list[Result]:
    from evalcore.data.validation import load_eval_log
    from evalcore.workspace import Workspace

    with tempfile.TemporaryDirectory() as folder:
        ws = Workspace(folder)
        record = ws.add_dataset(load_eval_log(logs.get("parquet")), "bench")
        what = "`Workspace.dataset(id)`: open a saved 1,000,000-row dataset (catalog look-up + Parquet read)"
        return [Result("workspace-open-1m", what, time_calls(partial(ws.dataset, record.id), repeats), 1.0)]


def bench_workspace_page(repeats: int) -> list[Result]:
    import pandas as pd
    from streamlit.testing.v1 import AppTest

    from evalcore.data.validation import validate
    from evalcore.workspace import Workspace

    with tempfile.TemporaryDirectory() as folder:
        ws = Workspace(folder)
        for i in range(1000):
            frame = validate(pd.DataFrame({"model": ["a", "a", "b", "b"], "example_id": [i, i + 1, i, i + 1],
                                           "correct": [1, 0, 1, 1]}))
            record = ws.add_dataset(frame, f"run {i}")
            ws.save_analysis(record.id, "calibration", {"cal_bins": 10}, name=f"analysis {i}")
        previous = os.environ.get("EVALCORE_WORKSPACE")
        os.environ["EVALCORE_WORKSPACE"] = folder
        try:
            at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=120)
            at.run()
            at.switch_page("pages/workspace.py")
            at.run()  # the first run opens the workspace and warms the demo's cache
            assert [t.value for t in at.title] == ["Workspace"] and len(at.dataframe[1].value) == 1000
            what = "one run of the Workspace page (AppTest, no browser) listing 1,000 datasets and 1,000 analyses"
            return [Result("workspace-page-1000", what, time_calls(at.run, repeats), 1.0)]
        finally:
            if previous is None:
                os.environ.pop("EVALCORE_WORKSPACE")
            else:
                os.environ["EVALCORE_WORKSPACE"] = previous


def bench_import_inspect(repeats: int) -> list[Result]:
    from benchmarks.inspect_log import make_eval_log
    from evalcore.data.validation import load_eval_log

    out = []
    for summaries, name in ((True, "import-inspect-100k"), (False, "import-inspect-100k-no-summaries")):
        data = make_eval_log(100_000, seed=0, summaries=summaries)
        what = (f"`load_eval_log` of a generated Inspect AI .eval log, 100,000 samples ({len(data) / 2**20:.0f} MB "
                "zip): detect, read, convert, validate; " + ("read through its summaries.json, as a completed run "
                                                            "writes it" if summaries else
                                                            "without summaries.json (an interrupted run): every "
                                                            "sample file parsed"))
        out.append(Result(name, what, time_calls(partial(load_eval_log, ("bench.eval", data)), repeats), 5.0))
    return out


def bench_report_mmlu(repeats: int) -> list[Result]:
    from benchmarks.subgroups import mmlu_pro_path
    from evalcore.cli import load
    from evalcore.report import build_report

    what = ("`evalcore report mmlu_pro_per_question.csv.gz --out report.html --quiet` in a subprocess (read, "
            "validate, every section with 1,000 bootstrap replicates, write the HTML)")
    path = mmlu_pro_path()
    if path is None:
        return [Result("report-mmlu", what, target=120.0, note="skipped: ../shared/data is absent")]
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "report.html"
        command = [sys.executable, "-m", "evalcore", "report", str(path), "--out", str(out), "--quiet"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        samples = time_calls(lambda: subprocess.run(command, check=True, env=env), min(repeats, 3))
        size = out.stat().st_size / 2**20
    start = time.perf_counter()
    log = load([path], [])
    loading = time.perf_counter() - start
    report = build_report(log)
    sections = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in report.timings.items())
    what += f"; {len(log):,} rows, {log['model'].nunique()} models"
    note = (f"report {size:.1f} MB with {len(report.sections)} sections; in-process: reading and validating "
            f"{loading:.1f} s, then per section {sections}")
    return [Result("report-mmlu", what, samples, 120.0, note=note)]


def bench_compare(name: str, repeats: int) -> list[Result]:
    from benchmarks import compare_speed

    return compare_speed.BENCHMARKS[name](repeats)


def bench_validate_cpu(repeats: int) -> list[Result]:
    from benchmarks import validate_speed

    return validate_speed.measure(repeats)


def bench_label_team(repeats: int) -> list[Result]:
    from benchmarks import label_team

    return label_team.measure(repeats=repeats)


def _benchmarks(logs: _LogFiles) -> dict[str, tuple[Callable[[int], list[Result]], bool]]:
    """name -> (function of the number of repeats, whether it is a server/browser benchmark)."""
    return {
        "read-csv": (partial(bench_read_csv, logs), False),
        "load-csv": (partial(bench_load, logs, "csv", 3.0), False),
        "load-parquet": (partial(bench_load, logs, "parquet", 1.0), False),
        "import-inspect": (bench_import_inspect, False),
        "report-mmlu": (bench_report_mmlu, False),
        "workspace-open": (partial(bench_workspace_open, logs), False),
        "workspace-page": (bench_workspace_page, False),
        "calibration": (bench_calibration, False),
        "ece-interval": (bench_ece_interval, False),
        "area-interval": (bench_area_interval, False),
        "server-start": (bench_server_start, True),
        "page-render": (bench_page_render, True),
        "eb-1000": (bench_eb, False),
        "auto-groups-demo": (bench_auto_groups, False),
        "cva-1000": (bench_cva, False),
        "holdout-mmlu": (bench_holdout_mmlu, False),
        "boot-summary": (bench_boot_summary, False),
        "boot-paired": (bench_boot_paired, False),
        "bhm-5000": (bench_bhm, False),
        "ternary-1pct": (bench_ternary, False),
        "strata-1m": (partial(bench_sampling, "strata-1m"), False),
        "sample-estimate": (partial(bench_sampling, "sample-estimate"), False),
        "efficiency-50": (partial(bench_sampling, "efficiency-50"), False),
        "ppi-mean-10": (partial(bench_ppi, "ppi-mean-10"), False),
        "bt-20": (partial(bench_ppi, "bt-20"), False),
        "ess-curve": (partial(bench_ppi, "ess-curve"), False),
        "bt-ess-curve": (partial(bench_ppi, "bt-ess-curve"), False),
        "compare-10m": (partial(bench_compare, "compare-10m"), False),
        "validate-cpu": (bench_validate_cpu, False),
        "label-team": (bench_label_team, True),
    }


NAMES = list(_benchmarks(_LogFiles()))


def _version(module: str) -> str:
    try:
        return __import__(module).__version__
    except Exception:  # noqa: BLE001 - environment description only
        return "?"


def environment() -> str:
    """One line describing the machine and the software versions."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, timeout=10).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        commit = "?"
    try:
        chromium = subprocess.run(["/usr/bin/chromium", "--version"], capture_output=True, text=True,
                                  timeout=30).stdout.strip().splitlines()[-1]
    except (OSError, subprocess.SubprocessError, IndexError):
        chromium = "no chromium"
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC · commit {commit} (working tree may differ) · "
            f"{os.cpu_count()} CPUs, load average {load} · Python {platform.python_version()}, "
            f"numpy {_version('numpy')}, pandas {_version('pandas')}, pyarrow {_version('pyarrow')}, "
            f"streamlit {_version('streamlit')} · {chromium}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=None,
                        help=f"timed repeats per benchmark (default {DEFAULT_REPEATS}; "
                             f"{DEFAULT_SERVER_REPEATS} for server-start and page-render)")
    parser.add_argument("--only", nargs="+", choices=NAMES, metavar="NAME",
                        help=f"run only these benchmarks: {', '.join(NAMES)}")
    args = parser.parse_args(argv)
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be at least 1")

    env_before = environment()
    print(env_before, flush=True)
    logs = _LogFiles()
    results: list[Result] = []
    started = time.perf_counter()
    try:
        for name, (run, is_server) in _benchmarks(logs).items():
            if args.only and name not in args.only:
                continue
            repeats = args.repeats or (DEFAULT_SERVER_REPEATS if is_server else DEFAULT_REPEATS)
            print(f"- {name} ({repeats} repeats)", flush=True)
            try:
                rows = run(repeats)
            except Exception as exc:  # noqa: BLE001 - one broken benchmark must not hide the others
                traceback.print_exc()
                rows = [Result(name, "see the traceback above", note=f"error: {type(exc).__name__}: {exc}"[:200])]
            for row in rows:
                print(f"  {progress_line(row)}", flush=True)
            results.extend(rows)
    finally:
        logs.cleanup()

    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    text = (f"### Benchmarks (`python -m benchmarks.run`)\n\n{env_before}\n\n{markdown_table(results)}\n\n"
            f"Medians of wall-clock seconds; targets are the issue's, for a 2-core machine. Load average at the end: "
            f"{load}. Total run time {time.perf_counter() - started:.0f} s.\n")
    print()
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "latest.md").write_text(text, encoding="utf-8")
    print(f"written to {(RESULTS / 'latest.md').relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
