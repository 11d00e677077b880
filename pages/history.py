"""History page (issue 40): a model's runs over time from a workspace series. The answer first (the latest run's
number with its interval, what changed last and since when), then the number per run with its interval, the runs
with a flagged change marked; then every run's change against its baseline, overall and per slice, with the false
discovery rate controlled over all runs and slices together (:mod:`evalcore.history`), and one run's full
comparison against its baseline (the Compare view: a click on a point opens it). The gate's side
(:mod:`evalcore.history.gate`): the runs it rejected are crossed and the reference ringed on the chart, the drift of
the latest run from the reference is one arrow with its interval and one sentence, and each run's decision (passed,
failed, accepted: by whom, when, against which baseline and reference) is a table, where a member accepts a rejected
run. A series is opened from the address (``?series=NAME``); series are made with ``evalcore workspace add LOG
--name NAME --series SERIES``.

The page never raises on a mixed series: runs that cannot be compared with the others (no result of the model
followed, another metric) are left out of the trend and the comparisons with a sentence each
(:meth:`evalcore.history.load.Series.comparable`), runs that share no example are compared unpaired (said so), and
a run stamped more than a day ahead is flagged (never a baseline). Names are shown as they are in the dropdowns
(:func:`evalcore.data.display.plain`) and cut where they were stored before the bounds on names existed."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from evalcore.compare import figures as compare_figures
from evalcore.data.display import cut, literal, plain, plotly_literal
from evalcore.data.limits import MAX_NAME_CHARS
from evalcore.errors import EvalDataError
from evalcore.history import drift, history_sentence
from evalcore.history.figures import history_figure
from evalcore.history.gate import baseline_and_reference
from evalcore.stats import headline
from evalcore.stats.figures import percent
from evalcore.stats.level import DEFAULT_LEVEL
from pages.common import history_cache as hc
from pages.common import render, workspace_store
from pages.common.navigation import ensure_app_navigation
from pages.common.selection import LEVEL_KEY

ensure_app_navigation()

QUERY = "series"
#: the default of "Compare each run with": the gate's baseline of each run (Series.gate_baselines)
LATEST = "its baseline (the latest accepted run before it)"
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
    st.warning(f"No series named “{literal(cut(wanted, MAX_NAME_CHARS))}” that you can see: showing the most recent "
               "one.")


def shown_name(text: str) -> str:
    """A name as a dropdown shows it: as it is, cut where it was stored before the bound on names."""
    return plain(text, MAX_NAME_CHARS)


name = st.selectbox("Series", names, index=names.index(wanted) if wanted in names else 0, key="hi_series",
                    format_func=shown_name)
if st.query_params.get(QUERY) != name:
    if len(name) <= MAX_NAME_CHARS:
        st.query_params[QUERY] = name
    elif QUERY in st.query_params:  # a name stored before the bound: too long for an address
        del st.query_params[QUERY]
level = float(st.session_state.get(LEVEL_KEY, DEFAULT_LEVEL))
fresh = workspace.series_runs(name, viewer)
try:
    full = hc.series(name, tuple(e.dataset_id for e in fresh), viewer, workspace)
except EvalDataError as exc:
    st.error(literal(exc))
    st.stop()
pinned = workspace.series_baseline(name)  # the decisions and the pin as they are now (the cache keeps the rows)
full = replace(full, entries=fresh, baseline=next((r.name for r, e in zip(full.runs, fresh) if e.dataset_id == pinned),
                                                  None))
series = full.comparable()  # the runs compared: those with the model followed and the metric followed
entries, run_names, all_names = series.entries, [r.name for r in series.runs], [r.name for r in full.runs]
runs_key = tuple(e.dataset_id for e in entries)
metric = series.metric
what = "accuracy" if metric == "correct" else f"mean {metric}"
with answer_box:
    if series.left_out:
        more = f"; and {headline.count(len(series.left_out) - 10)} more" if len(series.left_out) > 10 else ""
        st.warning(f"Not compared with the other runs ({literal(series.model)}'s "
                   f"{'0/1 correctness' if metric == 'correct' else 'score'}, as its latest run records it): "
                   + "; ".join(literal(cut(why, 4 * MAX_NAME_CHARS)) for why in series.left_out[:10])
                   + f"{more}. They are left out of the trend and the changes; the gate's decisions list them.",
                   icon=":material/rule:")
    ahead = [(r, e.run_time) for r, e in zip(all_names, full.entries) if e.stamped_ahead]
    if ahead:
        st.warning("Stamped more than a day in the future (saved before such times were refused): "
                   + ", ".join(f"{literal(cut(r, MAX_NAME_CHARS))} ({literal(t)})" for r, t in ahead[:10])
                   + ". Never the baseline or the reference of the gate unless pinned; save the run again with "
                     "--time to place it.", icon=":material/schedule:")
if not run_names:
    with answer_box:
        st.info(f"No run of the series holds a labeled {what} of {literal(series.model)}: nothing to draw.")
    st.stop()

with st.expander("Settings", icon=":material/settings:"):
    s1, s2, s3 = st.columns(3)
    choices = [LATEST, *run_names]
    baseline_choice = s1.selectbox("Compare each run with", choices, format_func=shown_name, key="hi_baseline",
                                   index=choices.index(series.baseline) if series.baseline in choices else 0,
                                   help="Each run's baseline as the gate chose it (the latest accepted run before "
                                        "it: a run the gate failed is not the next one's baseline until a member "
                                        "accepts it), or one run pinned as the baseline of every other.")
    fdr = s2.selectbox("False discovery rate", FDRS, index=FDRS.index(0.10), format_func=percent, key="hi_fdr",
                       help="Expected share of false alarms among all the changes flagged, over every run and slice.")
    by_slice = s3.toggle("Per slice too (task, category, group)", True, key="hi_slices")
    if not workspace_store.locked():
        pin = baseline_choice if baseline_choice != LATEST else None
        pinned_id = next((e.dataset_id for e, r in zip(series.entries, run_names) if r == pin), None)
        if pinned_id != pinned and st.button(
                "Pin this baseline for the series" if pin else "Unpin the baseline (compare with the latest accepted)",
                key="hi_pin", help="What evalcore compare --series compares a new run with: the pinned run, else "
                                   "the latest."):
            try:
                workspace.pin_baseline(name, pinned_id, viewer)
            except (PermissionError, LookupError, EvalDataError) as exc:
                st.error(literal(exc))
            else:
                st.rerun()
baseline = series.gate_baselines() if baseline_choice == LATEST else baseline_choice

trend = hc.series_trend(name, runs_key, level, None, series)
changes = hc.changes(name, runs_key, metric, baseline, level, fdr, by_slice, series)
rejected = tuple(r for r, e in zip(all_names, full.entries) if not e.accepted)
by_id = {e.dataset_id: r for r, e in zip(all_names, full.entries)}
try:  # what the next run will be compared with (the gate's choice, among every run of the series)
    next_baseline, reference = (by_id[e.dataset_id] for e in baseline_and_reference(
        full.entries, pinned, digest=""))
except EvalDataError:
    next_baseline = reference = None
drift_label = None
with answer_box:
    render.answer(history_sentence(series.model, trend, changes, level, fdr, what))
    if reference is not None and reference != run_names[-1] and reference not in run_names:
        st.caption(f"The reference {literal(reference)} is not compared with the other runs (above): no drift is "
                   "measured.")
    elif reference is not None and reference != run_names[-1]:
        try:
            drifted = hc.run_comparison(name, runs_key, run_names[-1], reference, level, fdr, series)
        except EvalDataError as exc:
            st.caption(f"The latest run and the reference {literal(reference)} share no example: no drift is "
                       f"measured ({literal(exc)})")
        else:
            drift_sentence, drift_label = drift(drifted, entries[run_names.index(reference)].run_time)
            st.markdown(literal(drift_sentence))
    if next_baseline is not None:
        st.caption(f"The gate (`evalcore compare --series`) compares the next run with its baseline "
                   f"{literal(next_baseline)} (the {'pinned' if series.baseline else 'latest accepted'} run) and its "
                   f"reference {literal(reference)}.")
tasks = sorted({c["task"] for e in series.entries for c in e.summary.get("cells", []) if c["model"] == series.model})
OVERALL = "overall (the mean over tasks)"
shown_task = st.selectbox("Trend of", [OVERALL, *tasks], key="hi_trend_task", format_func=shown_name,
                          help="The number per run overall, or on one task (its Wilson interval).") \
    if len(tasks) > 1 else OVERALL
drawn = trend if shown_task == OVERALL else hc.series_trend(name, runs_key, level, shown_task, series)
drawn_changes = changes if shown_task == OVERALL else changes[changes["slice"] == f"task={shown_task}"]
with chart_box:
    fmt = st.session_state.get(render.CHART_FORMAT, "png")
    picked = st.plotly_chart(
        history_figure(drawn, drawn_changes, f"{percent(level)} intervals · {plotly_literal(series.model)} · click a "
                                             "run to compare it with its baseline",
                       what if shown_task == OVERALL else f"{what} on {plotly_literal(shown_task)}", rejected=rejected,
                       reference=reference if reference in run_names else None,
                       drift=drift_label if shown_task == OVERALL else None),
        key="hi_chart", on_select="rerun", selection_mode="points", theme=None,
        config={"displaylogo": False, "toImageButtonOptions": {"format": fmt, "filename": "history"}})
st.caption(f"Each point: the run's {what} (the mean over tasks, as on every page) with its {percent(level)} "
           "interval. Red or green diamonds: a change of that run flagged (worse or better), overall or in a slice. Crossed: "
           "a run the gate rejected (none accepted it since); ringed: the series' reference; the arrow: the drift "
           "of the latest run from the reference (paired difference and interval). "
           f"Comparisons: paired on the examples both runs scored (exact McNemar for 0/1, paired t for scores), "
           "unpaired where they share none (said so); flagged by Benjamini–Hochberg over every run and slice at "
           f"{percent(fdr)}.")
render.table(drawn, "trend per run")

st.subheader("The gate's decisions", anchor=False)
STATUS = {"passed": "passed the gate", "failed": "failed the gate (rejected)", "accepted": "accepted by a member",
          "": "never gated (accepted as saved)"}
decisions = workspace.series_decisions(name)
latest = {}
for decision in decisions:  # the gate's last comparison of each run, by its content
    if decision["status"] != "accepted":
        latest[decision["digest"]] = decision
render.table(pd.DataFrame({
    "run": all_names, "decision": [STATUS[e.status] for e in full.entries],
    "by": [e.decided_by or ("" if e.status != "accepted" else "nobody signed in") for e in full.entries],
    "when": [e.decided_at or "" for e in full.entries],
    "baseline": [by_id.get(latest.get(e.digest, {}).get("baseline"), "") for e in full.entries],
    "reference": [by_id.get(latest.get(e.digest, {}).get("reference"), "") for e in full.entries]}), "gate decisions")
if rejected and not workspace_store.locked():
    a1, a2 = st.columns([3, 2])
    chosen = a1.selectbox("Rejected run", rejected, key="hi_accept_run", format_func=shown_name,
                          help="A run the gate failed is never the baseline of the next comparison until a member "
                               "accepts it; accepting it also makes it the series' reference (the drift up to it "
                               "is acknowledged). Who and when are kept.")
    if a2.button("Accept it as a baseline", key="hi_accept"):
        try:
            workspace.accept_run(name, full.entries[all_names.index(chosen)].dataset_id, viewer)
        except (PermissionError, LookupError, EvalDataError) as exc:
            st.error(literal(exc))
        else:
            st.rerun()

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
    st.caption("The series has one run: nothing to compare yet." if not series.left_out else
               "Only one run of the series can be compared (see above): nothing to compare yet.")
    st.stop()
clicked = [p.get("customdata") for p in (picked.selection.points if picked else [])]
default = next((r for r in clicked if r in compared), None)
if default is None:
    default = flagged["run"].iloc[-1] if not flagged.empty and flagged["run"].iloc[-1] in compared else compared[-1]
if default != st.session_state.get("hi_run_clicked"):  # a click (or the first visit) moves the picker
    st.session_state["hi_run_clicked"] = default
    st.session_state["hi_run"] = default
run = st.selectbox("Run", compared, key="hi_run", format_func=shown_name)
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
