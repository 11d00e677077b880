"""History page (issue 40): a model's runs over time from a workspace series. The answer first (the latest run's
number with its interval, what changed last and since when), then the number per run with its interval, the runs
with a flagged change marked; then every run's change against its baseline, overall and per slice, with the false
discovery rate controlled over all runs and slices together (:mod:`evalcore.history`), and one run's full
comparison against its baseline (the Compare view: a click on a point opens it). A series is opened from the
address (``?series=NAME``); series are made with ``evalcore workspace add LOG --name NAME --series SERIES``."""

from __future__ import annotations

import streamlit as st

from evalcore.compare import figures as compare_figures
from evalcore.data.display import literal, plotly_literal
from evalcore.errors import EvalDataError
from evalcore.history import history_sentence
from evalcore.history.figures import history_figure
from evalcore.stats import headline
from evalcore.stats.figures import percent
from evalcore.stats.level import DEFAULT_LEVEL
from pages.common import history_cache as hc
from pages.common import render, workspace_store
from pages.common.navigation import ensure_app_navigation
from pages.common.selection import LEVEL_KEY

ensure_app_navigation()

QUERY = "series"
PREVIOUS = "the previous run"
FDRS = (0.01, 0.05, 0.10, 0.20)

st.title("History")
answer_box, chart_box = st.container(), st.container()  # the answer and its chart first, filled below
st.caption("A model evaluated again and again (a new prompt, checkpoint or dependency): its number per run with its "
           "interval, each run compared with its baseline example by example, and the changes that count flagged "
           "with the false discovery rate controlled over all runs and slices together.")

workspace, viewer = workspace_store.workspace(), workspace_store.viewer()
listed = workspace.series(viewer)
if not listed:
    with answer_box:
        st.info("No series yet. Save runs of a model into one from the command line (e.g. in CI): "
                "`evalcore workspace add LOG --name NAME --series 'support-bot / nightly' --meta commit=3f2a1c0`; "
                "each becomes a point of its history here.", icon=":material/timeline:")
    st.stop()
names = [name for name, _, _ in listed]
wanted = st.query_params.get(QUERY)
if wanted is not None and wanted not in names:
    st.warning(f"No series named “{literal(wanted)}” that you can see: showing the most recent one.")
name = st.selectbox("Series", names, index=names.index(wanted) if wanted in names else 0, key="hi_series",
                    format_func=literal)
if st.query_params.get(QUERY) != name:
    st.query_params[QUERY] = name
level = float(st.session_state.get(LEVEL_KEY, DEFAULT_LEVEL))
entries = workspace.series_runs(name, viewer)
runs_key = tuple(e.dataset_id for e in entries)
try:
    series = hc.series(name, runs_key, viewer, workspace)
except EvalDataError as exc:
    st.error(literal(exc))
    st.stop()
run_names = [r.name for r in series.runs]
metric = entries[-1].summary.get("metric", "correct")
what = "accuracy" if metric == "correct" else f"mean {metric}"

with st.expander("Settings", icon=":material/settings:"):
    s1, s2, s3 = st.columns(3)
    choices = [PREVIOUS, *run_names]
    baseline_choice = s1.selectbox("Compare each run with", choices, format_func=literal, key="hi_baseline",
                                   index=choices.index(series.baseline) if series.baseline in choices else 0,
                                   help="The previous run, or one run pinned as the baseline of every other.")
    fdr = s2.selectbox("False discovery rate", FDRS, index=FDRS.index(0.10), format_func=percent, key="hi_fdr",
                       help="Expected share of false alarms among all the changes flagged, over every run and slice.")
    by_slice = s3.toggle("Per slice too (task, category, group)", True, key="hi_slices")
    if not workspace_store.locked():
        pin = baseline_choice if baseline_choice != PREVIOUS else None
        pinned_id = next((e.dataset_id for e, r in zip(series.entries, run_names) if r == pin), None)
        if pinned_id != workspace.series_baseline(name) and st.button(
                "Pin this baseline for the series" if pin else "Unpin the baseline (compare with the previous run)",
                key="hi_pin", help="What evalcore compare --series compares a new run with: the pinned run, else "
                                   "the latest."):
            workspace.pin_baseline(name, pinned_id, viewer)
            st.rerun()
baseline = None if baseline_choice == PREVIOUS else baseline_choice

trend = hc.series_trend(name, runs_key, level, None, series)
changes = hc.changes(name, runs_key, metric, baseline, level, fdr, by_slice, series)
with answer_box:
    render.answer(history_sentence(series.model, trend, changes, level, fdr, what))
tasks = sorted({c["task"] for e in series.entries for c in e.summary.get("cells", []) if c["model"] == series.model})
OVERALL = "overall (the mean over tasks)"
shown_task = st.selectbox("Trend of", [OVERALL, *tasks], key="hi_trend_task", format_func=literal,
                          help="The number per run overall, or on one task (its Wilson interval).") \
    if len(tasks) > 1 else OVERALL
drawn = trend if shown_task == OVERALL else hc.series_trend(name, runs_key, level, shown_task, series)
drawn_changes = changes if shown_task == OVERALL else changes[changes["slice"] == f"task={shown_task}"]
with chart_box:
    fmt = st.session_state.get(render.CHART_FORMAT, "png")
    picked = st.plotly_chart(
        history_figure(drawn, drawn_changes, f"{percent(level)} intervals · {plotly_literal(series.model)} · click a "
                                             "run to compare it with its baseline",
                       what if shown_task == OVERALL else f"{what} on {plotly_literal(shown_task)}"),
        key="hi_chart", on_select="rerun", selection_mode="points", theme=None,
        config={"displaylogo": False, "toImageButtonOptions": {"format": fmt, "filename": "history"}})
st.caption(f"Each point: the run's {what} (the mean over tasks, as on every page) with its {percent(level)} "
           "interval. Red or green diamonds: a change of that run flagged (worse or better), overall or in a slice. "
           f"Comparisons: paired on the examples both runs scored (exact McNemar for 0/1, paired t for scores), "
           "unpaired where they share none (said so); flagged by Benjamini–Hochberg over every run and slice at "
           f"{percent(fdr)}.")
render.table(drawn, "trend per run")

st.subheader("Changes against the baseline", anchor=False)
flagged = changes[changes["flagged"].astype(bool)] if len(changes) else changes
if flagged.empty:
    st.caption(f"No change is flagged over {headline.count(len(changes))} run-and-slice tests.")
else:
    shown = flagged.iloc[flagged["difference"].abs().to_numpy().argsort(kind="stable")[::-1]]
    render.table(shown, "flagged changes")
with st.expander("Every run and slice compared (table)", icon=":material/table:"):
    render.table(changes, "changes per run and slice")

st.subheader("One run against its baseline", anchor=False)
compared = [r for r in run_names if (changes["run"] == r).any()] if len(changes) else []
if not compared:
    st.caption("The series has one run: nothing to compare yet.")
    st.stop()
clicked = [p.get("customdata") for p in (picked.selection.points if picked else [])]
default = next((r for r in clicked if r in compared), None)
if default is None:
    default = flagged["run"].iloc[-1] if not flagged.empty and flagged["run"].iloc[-1] in compared else compared[-1]
if default != st.session_state.get("hi_run_clicked"):  # a click (or the first visit) moves the picker
    st.session_state["hi_run_clicked"] = default
    st.session_state["hi_run"] = default
run = st.selectbox("Run", compared, key="hi_run", format_func=literal)
against = changes.loc[changes["run"] == run, "baseline"].iloc[0]
try:
    comparison = hc.run_comparison(name, runs_key, run, against, level, fdr, series)
except EvalDataError as exc:
    st.info(f"{literal(run)} and {literal(against)} share no example, so there is no paired comparison: the "
            f"unpaired one is in the table above. ({literal(exc)})")
    st.stop()
st.markdown(literal(comparison.sentence))
st.caption(literal(comparison.detectable_sentence()))
if len(comparison.slices):
    scale, unit = (100.0, " (points)") if comparison.metric == "correct" else (1.0, "")
    render.chart(compare_figures.slice_forest(comparison.slices, level, fdr, scale=scale, unit=unit,
                                              title=plotly_literal(f"{run} − {against} by slice"),
                                              overall=float(comparison.overall["difference"].iloc[0])),
                 f"history slices {run}")
render.table(comparison.overall, "overall difference of the run")
