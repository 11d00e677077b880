"""Compare page (issues 28 and 37): is the new model (or run) worse than the base, overall or on some slice? Two
models of the log are paired example by example (:func:`evalcore.compare.compare_runs`): the verdict sentence first,
right under the title (the settings below it), then the forest plot of the slices' differences (worst first, flagged
slices marked), the 2x2 table of paired outcomes and a browser of the examples where the two models differ (flagged
slices largest change first), with their text shown literally. A log of one model, or two models without shared
examples, gets a plain explanation in the verdict's place.

A saved dataset with a comparison campaign over the two models (issue 48; over any of its models where the log holds
outputs only, with nothing to pair) shows "From the labeling campaign <name>": the campaign's design-based answer
(:func:`evalcore.labeling.comparison.comparison_sentence`, the Label page's words), every pair's difference with its
interval, and a link to the campaign on the Label page.

The default pair: files of one model uploaded together are runs named after their files (the Data page's upload,
:mod:`evalcore.importers.combine`; the validation report's ``runs``), and the first run (the oldest where the log
says when it ran, else the first file) is the base, the next the new — as ``evalcore compare BASE NEW`` does, so
page and CLI give the same verdict on the same pair. Otherwise the two best models of the log by their mean, the
better the base."""

from __future__ import annotations

import json
import math

import pandas as pd
import streamlit as st

from evalcore.compare import CELLS, figures as compare_figures
from evalcore.compare.power import planning_sentence
from evalcore.data.display import literal
from evalcore.data.repeats import N_REPEATS
from evalcore.data.schema import LOG, LOG_ROLES
from evalcore.data.validation import EvalDataError
from evalcore.labeling import Campaign
from evalcore.stats import glossary, headline
from evalcore.stats.figures import percent
from pages.common import compare_cache as cc
from pages.common import data_source as ds
from pages.common import render, selection
from pages.common.navigation import ensure_app_navigation
from pages.common.workspace_store import viewer, workspace

ensure_app_navigation()

FDRS = (0.01, 0.05, 0.10, 0.20)
PAGE_SIZE = 20
ALL_SLICES = "all examples"
#: the example's text columns of :meth:`evalcore.compare.Comparison.examples`, with what each holds
TEXT = {"input": "input", "target": "target", "base_output": "base's output", "new_output": "new's output",
        "base_explanation": "base's explanation (scorer or judge)",
        "new_explanation": "new's explanation (scorer or judge)"}
TERMS = glossary.TERMS
FDR_HELP = f"{TERMS['false discovery rate']}\n\n{TERMS['Benjamini-Hochberg']} ({glossary.PAPERS['benjamini-hochberg']})"

st.title("Compare")
answer_box = st.container()  # the verdict sentence first, under the title; filled once the settings below are read
st.caption("Is the new model (or run) worse than the base, overall or on some slice of the examples? The two are "
           "paired on the examples both scored: each example's difference, new − base, with an interval for the "
           "overall difference and for every slice (task, category, group and the columns you choose), slices "
           "flagged at a false discovery rate.", help=FDR_HELP)


def _drop_stale(key: str, options: list) -> None:
    """Forget a widget's stored value that is no longer an option (other data, a restored analysis)."""
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]


def _explain(text: str) -> None:
    """Why there is no verdict, said in its place (under the title), and the page stops."""
    with answer_box:
        st.info(text, icon=":material/info:")
    st.stop()


def _source(data: ds.ActiveData, sel: selection.Selection, rows):
    """What the comparison reads: the validated rows as loaded (every sample, with the examples' text, which the
    per-example frame and its engine view leave out) in the selection's tasks and groups; a stored dataset's
    engine rows where it is not in memory."""
    if data.stored is not None:
        return rows
    frame = data.loaded
    keep = pd.Series(True, index=frame.index)
    if sel.tasks:
        keep &= frame["task"].astype(str).isin(sel.tasks)
    if sel.groups:
        keep &= frame["group"].astype(str).isin(sel.groups)
    return frame if keep.all() else frame[keep]


def _campaigns(pair: tuple[str, str] | None) -> list:
    """The comparison campaigns of this data's saved dataset that the viewer may see and that compare both models
    of ``pair`` (every one where ``pair`` is None), newest first."""
    member = viewer()
    try:
        records = [r for r in Campaign.list(workspace(), member) if r.kind == "comparison"
                   and (pair is None or set(pair) <= set(r.models))]
    except EvalDataError as exc:  # an unreadable catalog: the comparison stands without its campaigns, said
        st.caption(f"The labeling campaigns of the workspace are not shown: {literal(exc)}")
        return []
    if not records:
        return []
    source = ds.source()
    dataset_id = source["id"] if source["type"] == "saved" else (
        cc.saved_dataset(data.key, member, data.loaded) if data.stored is None else None)
    return [r for r in records if r.dataset_id == dataset_id]


def _show_campaigns(records: list) -> None:
    """For each campaign: its answer, every pair's difference with its interval, and a link to it."""
    for record in records:
        campaign = Campaign.open(workspace(), record.id, viewer=viewer())
        said, meaning, pairs = cc.campaign_answer(record.id, campaign.version(), viewer())
        st.subheader(f"From the labeling campaign {literal(record.name)}", anchor=False)
        st.markdown(literal(said))
        st.caption(f"People judged the models' outputs on the examples its design drew "
                   f"({literal(record.description)}); each label is weighted by its inclusion probability, so the "
                   f"difference is the design's estimate over every shared example. {literal(meaning)}")
        render.table(pairs, f"campaign {record.id} pairs")
        st.page_link("pages/label.py", label=f"Open the campaign {literal(record.name)} on the Label page",
                     icon=":material/rule:", query_params={"campaign": record.id})


data = ds.try_active_data()
if data is None:
    st.stop()
if data.report.kind != LOG:
    _explain("Compare needs a per-example log: one row per (model, example) with `correct` (0/1) or `score`. "
             "This data is a leaderboard summary or battles. Load the synthetic demo or upload such a log on the "
             "Data page.")
sel = selection.current(data)
models = list(selection.options(data).models)
if len(models) < 2:
    _explain(f"This log holds one model, {literal(models[0]) if models else 'none'}, so there is nothing to "
             "compare. Compare pairs two models (or two runs of one model) on the examples both scored: on the Data "
             "page, upload the second log together with this one (choose both files at once); two files of one "
             "model become two runs named after their files.")
metric = sel.metric if sel.metric in ("correct", "score") else None
if metric is None:
    labeled = _campaigns(None)
    _show_campaigns(labeled)
    _explain("Compare needs per-example `correct` (0/1) or `score` values: this log has neither."
             + (" What its labeling campaigns found is below." if labeled else
                " Where it holds the models' outputs, a comparison campaign on the Label page finds which model "
                "is better from the fewest labels."))
rows = data.log.restrict(task=sel.tasks, group=sel.groups)  # both models, whatever the Models page chose
if rows.n_rows == 0:
    selection.require(sel, rows)
data_key = (data.key, sel.tasks, sel.groups)
runs = [run for run in data.report.runs if run in models]
if len(runs) >= 2:  # files of one model: the first run (the oldest where the log says when it ran) is the base
    default, default_help = runs[:2], "By default the first two runs, in the order of their files (the older first " \
                                      "where the log says when each ran), as evalcore compare BASE NEW."
else:  # models of one log: the two best by their mean
    means = cc.model_means(data_key, metric, rows)
    default = ([m for m in means["model"] if m in models] + [m for m in models if m not in set(means["model"])])[:2]
    default_help = f"By default the two best models of the log, by their mean {metric}: the better is the base."

points = metric == "correct"  # a 0/1 metric's differences are shown in points (percentage points)
scale, unit = (100.0, "points") if points else (1.0, "")
c1, c2, c3 = st.columns([2, 2, 3])
_drop_stale("cp_base", models)
_drop_stale("cp_new", models)
base = c1.selectbox("Base (the reference)", models, index=models.index(default[0]), key="cp_base",
                    help="The model or run the new one is checked against: differences are new − base. "
                         + default_help)
new = c2.selectbox("New (the candidate)", models, index=models.index(default[1]), key="cp_new", help=default_help)
extra = [c for c in data.frame.columns if c not in LOG_ROLES and c != N_REPEATS]
st.session_state["cp_by"] = [c for c in st.session_state.get("cp_by", []) if c in extra]
by = c3.multiselect("Also slice by (columns of the log)", extra, key="cp_by",
                    help="Besides each task, category and group: each value of these columns (numeric ones in four "
                         "quantile bins).", disabled=not extra,
                    placeholder="Choose columns" if extra else "The log has no further columns")
d1, d2, d3, d4 = st.columns(4)
margin_in = d1.number_input("Margin" + (" (points)" if points else f" ({metric})"), 0.0,
                            100.0 if points else 1e9, 0.0, 0.5 if points else 0.01, key="cp_margin",
                            help="The difference that matters: new is a regression when it is surely worse by "
                                 "more than this, and no different when its whole interval lies within ± it.")
_drop_stale("cp_fdr", list(FDRS))
fdr = d2.selectbox("False discovery rate", FDRS, index=FDRS.index(0.10), format_func=percent, key="cp_fdr",
                   help=FDR_HELP)
min_slice = int(d3.number_input("Smallest slice (shared examples)", 2, 100_000, 20, key="cp_min_slice",
                                help="Slices with fewer shared examples are not searched (their intervals are too "
                                     "wide to flag anything)."))
pairs_of_slices = d4.toggle("Pairs of slices", False, key="cp_pairs",
                            help="Also search every pair of two columns' values, e.g. category=law & group=y.")
d1.caption(f"Metric: {metric} (the Models page's) · confidence level: {percent(sel.level)} (the sidebar's).")
if base == new:
    _explain("Choose two different models: base and new are the same.")
margin = margin_in / scale

key = (data_key, base, new, tuple(by), sel.level, margin, fdr, metric, min_slice, pairs_of_slices, 0)
try:
    comparison = cc.comparison(*key, _source(data, sel, rows))
except EvalDataError as exc:  # e.g. no example both models scored: said plainly
    _explain(literal(exc))
overall = comparison.overall.iloc[0]
if not overall["n"]:
    _explain(f"{literal(base)} and {literal(new)} share no scored example (same task and example id), so they "
             "cannot be paired: compare two models that answered the same examples.")
with answer_box:
    render.answer(comparison.sentence)
    st.caption(literal(comparison.detectable_sentence()), help=glossary.TERMS["minimum detectable difference"])
_show_campaigns(_campaigns((base, new)))

slices = comparison.slices
pct = percent(sel.level)
method = str(overall["method"])
if len(slices):
    render.chart(compare_figures.slice_forest(
        slices, sel.level, fdr, margin, scale, unit, overall=float(overall["difference"]),
        title=f"{new} − {base} per slice, worst first"), "compare slices")
elif comparison.n_skipped_small:
    st.caption(f"No slice has {min_slice:,} shared examples or more ({comparison.n_skipped_small:,} smaller ones "
               "were not searched): the comparison is overall only. Lower the smallest slice to search them.")
else:
    st.caption("There is no slice to search: the shared examples hold one task, one category and one group. "
               "Choose further columns under 'Also slice by' where the log has them.")
if comparison.n_searched:
    st.caption(f"Flagged: a slice whose q-value is at most {percent(fdr)} (Benjamini-Hochberg over all "
               f"{comparison.n_searched:,} slices searched; {comparison.n_skipped_small:,} with fewer than "
               f"{min_slice:,} shared examples were not searched): among flagged slices, about {percent(fdr)} or "
               "fewer are expected to be false alarms.", help=FDR_HELP)
st.caption(f"Each interval is a {pct} interval of the paired difference new − base on the examples both scored "
           f"({literal(method)}): {pct} of such intervals hold the true difference; one that excludes 0 says the "
           "models differ there.",
           help=f"{TERMS['paired difference']}\n\n{TERMS['interval']}"
                + (f"\n\n{TERMS['McNemar test']} ({glossary.PAPERS['newcombe']})" if "McNemar" in method else ""))
for note in comparison.notes:
    st.caption(literal(note))
with st.expander("The overall difference and every slice (tables)", icon=":material/table:"):
    render.table(comparison.overall, "overall difference")
    render.table(slices, "slices")
if "McNemar" in method and int(overall["n"]):  # planning the next comparison from this one's disagreement
    with st.expander("Planning a comparison: the examples needed to see a difference", icon=":material/calculate:"):
        discordance = max(float(overall["n"] - comparison.pairs.set_index("cell").loc[
            ["both right", "both wrong"], "n"].sum()) / float(overall["n"]), 0.5 / (float(overall["n"]) + 1))
        wanted = st.number_input("Difference to detect (points)", 0.1, 50.0, 2.0, 0.1, key="cp_plan_points")
        st.caption(literal(planning_sentence(wanted / 100, discordance, sel.level)),
                   help=TERMS["minimum detectable difference"])

st.subheader("Paired outcomes", anchor=False)
pairs = comparison.pairs
if list(pairs["cell"]) == list(CELLS):
    n = dict(zip(pairs["cell"], pairs["n"].astype(int)))
    st.caption("Each shared example counted once, by which of the two models got it right."
               + (f" The difference is (only new right − only base right) / shared examples = "
                  f"({n['only new right']:,} − {n['only base right']:,}) / {int(overall['n']):,}; its interval "
                  "Newcombe's (1998) for paired proportions, its p-value McNemar's exact test."
                  if "McNemar" in method else ""))
    grid = pd.DataFrame({"base": ["base right", "base wrong"],
                         "new right": [n["both right"], n["only new right"]],
                         "new wrong": [n["only base right"], n["both wrong"]]})
    render.table(grid, "paired outcomes 2x2")
else:
    st.caption("Each shared example counted once by which model scored higher.")
    render.table(pairs, "paired outcomes")

st.subheader("Examples", anchor=False)
cells = [c for c in pairs["cell"]]
counts = dict(zip(pairs["cell"], pairs["n"].astype(int)))
differ = [c for c in cells if c in ("only base right", "only new right", "base higher", "new higher") and counts[c]]
_drop_stale("cp_cell", cells)
e1, e2, e3 = st.columns([2, 2, 3])
nonempty = [c for c in cells if counts[c]]
cell = e1.selectbox("Cell", cells, index=cells.index((differ or nonempty or cells)[0]), key="cp_cell",
                    format_func=lambda c: f"{c} ({counts[c]:,})")
flagged = list(comparison.flagged()["slice"].astype(str)) if len(slices) else []  # largest change first
slice_options = [ALL_SLICES, *flagged]
_drop_stale("cp_slice", slice_options)
chosen_slice = e2.selectbox("Slice", slice_options, key="cp_slice",
                            help="All examples, or one of the flagged slices.")
search = e3.text_input("Search (text and example ids)", key="cp_search",
                       help="Keeps the examples whose id or any text column contains this, ignoring case.")
try:
    shown = cc.examples((key, cell, chosen_slice), cell, None if chosen_slice == ALL_SLICES else chosen_slice,
                        comparison)
except EvalDataError as exc:  # too many to read (the engine's fetch bound): said, with what to do
    st.info(literal(exc), icon=":material/memory:")
    st.stop()
if search:
    searched = [c for c in ("example_id", *TEXT) if c in shown.columns]
    hit = pd.Series(False, index=shown.index)
    for column in searched:
        hit |= shown[column].astype("string").str.contains(search, case=False, regex=False, na=False)
    shown = shown[hit]
if shown.empty:
    st.info("No example in this cell and slice" + (" matches the search." if search else "."),
            icon=":material/search_off:")
    st.stop()
pages = max(1, math.ceil(len(shown) / PAGE_SIZE))
_drop_stale("cp_page", list(range(1, pages + 1)))
number = int(st.number_input(f"Page (of {pages:,}; {PAGE_SIZE} examples each)", 1, pages, 1, key="cp_page"))
page_rows = shown.iloc[(number - 1) * PAGE_SIZE:number * PAGE_SIZE]
st.caption(f"{len(shown):,} examples in {literal(cell)}"
           + (f", slice {literal(chosen_slice)}" if chosen_slice != ALL_SLICES else "")
           + (f", matching {literal(search)}" if search else "")
           + f"; examples {(number - 1) * PAGE_SIZE + 1:,}–{(number - 1) * PAGE_SIZE + len(page_rows):,}. "
           "base_value and new_value: each model's " + metric + " on the example (the mean over its repeats).")
render.table(page_rows, "examples shown")

labels = [f"{t} · {e}" for t, e in zip(page_rows["task"].astype(str), page_rows["example_id"].astype(str))]
_drop_stale("cp_example", list(range(len(labels))))
which = st.selectbox("Read one example", range(len(labels)), format_func=labels.__getitem__, key="cp_example")
example = page_rows.iloc[which]
st.caption(f"{literal(base)} (base): {headline.number(example['base_value'])} · {literal(new)} (new): "
           f"{headline.number(example['new_value'])}")
texts = [(c, name) for c, name in TEXT.items() if c in page_rows.columns and not pd.isna(example[c])]
for side in ("base", "new"):  # an explanation that repeats the output (e.g. Inspect's match scorers) is shown once
    output, explanation = f"{side}_output", f"{side}_explanation"
    if (output, TEXT[output]) in texts and (explanation, TEXT[explanation]) in texts \
            and str(example[output]) == str(example[explanation]):
        texts = [(c, f"{name} (also the scorer's explanation)" if c == output else name)
                 for c, name in texts if c != explanation]
if not texts:
    st.caption("The log holds no text for its examples (input, target, outputs): only their ids and values.")
for column, name in texts:
    st.caption(name)
    st.text(str(example[column]))

st.download_button("Download the comparison (JSON)", json.dumps(comparison.to_dict(), default=str, indent=1),
                   file_name="comparison.json", mime="application/json", key="cp_json", icon=":material/download:")
