"""Data page: pick a demo or upload an evaluation log, map its columns to roles, read the validation report."""

import pandas as pd
import streamlit as st

from evalcore.data.validation import EvalDataError
from evalcore.data.display import literal
from evalcore.data.mapping import detect_kind, suggest_mapping
from evalcore.data.schema import KINDS, ROLES
from evalcore.importers.detect import TABLE
from evalcore.stats.level import percent
from evalcore.stats.readout import ALL_TASKS, readout
from pages.common import data_source as ds
from pages.common import render, selection, workspace_store
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

NONE = "(not in the file)"
UPLOADED_ID = "uploader_file_id"
EXAMPLE = pd.DataFrame({
    "model": ["model-a", "model-a", "model-b", "model-b"],
    "example_id": ["q1", "q2", "q1", "q2"],
    "task": ["flowers", "flowers", "flowers", "flowers"],
    "category": ["natural"] * 4,
    "group": ["roses", "tulips", "roses", "tulips"],
    "correct": [1, 0, 1, None],
    "confidence": [0.91, 0.62, 0.84, 0.55],
})

st.title("Data")
answer_box = st.container()  # one sentence about what is loaded, filled once the data is read
st.caption("Start from a built-in demo or upload your own evaluation log. An upload stays in your session and is kept "
           "for reloads: the page's address names it (by a digest of its content), so reloading the page (F5) "
           "reopens it with your settings while the server keeps it (a bounded store, least recently used first "
           "out). Only someone with this address can reopen it; save it to the workspace to keep it.")

left, right = st.columns([1, 1], gap="large")
with left:
    st.subheader("Built-in demos")
    current = ds.source()
    demo_names = list(ds.DEMOS)
    # One form: the choice and the click reach the server together (a choice alone would start a rerun, and a click
    # arriving while it runs could be lost).
    with st.form("demo_form", border=False):
        choice = st.selectbox("Demo", demo_names, format_func=ds.DEMOS.get, key="demo_choice",
                              index=demo_names.index(current["name"]) if current["type"] == "demo" else 0)
        if st.form_submit_button("Load demo", icon=":material/play_arrow:", type="primary"):
            ds.use_demo(choice)
            st.rerun()
with right:
    st.subheader("Upload")
    uploaded = st.file_uploader(
        "Evaluation logs: a table (CSV, TSV, JSON Lines, Parquet, compressed or not), or the logs of an evaluation "
        "tool (Inspect AI, lm-evaluation-harness, HELM, lighteval, promptfoo, OpenAI evals, DeepEval, Ragas, "
        "every_eval_ever, AlpacaEval, MT-Bench, Chatbot Arena, OpenCompass predictions); several files at once, or a "
        "zip of a run folder",
        key="uploader", accept_multiple_files=True,
        type=["csv", "tsv", "txt", "jsonl", "json", "gz", "bz2", "xz", "parquet", "pq", "eval", "zip"],
        help="One row per (model, example), a leaderboard summary (model, task, n, n_correct) or pairwise "
             "battles (model_a, model_b, outcome, judge); or the files an evaluation tool wrote, recognised from "
             "their content. Several files (runs of several models or tasks) are combined into one log.")
    uploaded = [] if uploaded is None else uploaded if isinstance(uploaded, list) else [uploaded]
    file_ids = tuple(f.file_id for f in uploaded)
    if uploaded and st.session_state.get(UPLOADED_ID) != file_ids:
        st.session_state[UPLOADED_ID] = file_ids
        ds.use_upload(tuple((f.name, f.getvalue()) for f in uploaded))
        for stale in [k for k in st.session_state if str(k).startswith("role_")] + ["kind_choice"]:
            st.session_state.pop(stale, None)
        st.rerun()  # app.py drew the sidebar before this page ran: redraw it for the new data
    if not uploaded and current["type"] == "upload":  # e.g. reopened after a reload: the uploader itself is empty
        st.caption(f"Open: {literal(ds.data_name())}, kept on this server for reloads of this page's address. "
                   "Upload files to replace it.")

with st.expander("Accepted formats and an example"):
    st.markdown(
        "- **Per-example log**: one row per (model, example). Roles: `model` (required), `example_id`, `task`, "
        "`category`, `group`, `correct` (0/1) or `score`, `confidence` (in [0, 1]), `proxy`, `weight`. An empty "
        "`correct` marks an unlabeled row. Extra numeric columns are kept as features.\n"
        "- **The example's text** (optional, shown as written, never used by a method): `input` (the prompt or "
        "question), `target` (the reference answer), `output` (the model's answer), `explanation` (a scorer's or "
        "judge's reasoning); columns named `prompt`, `question`, `answer`, `reference`, `response`, `completion` ... "
        "map onto them. Each value is cut at 4 KB.\n"
        "- **Leaderboard summary**: `model, task, category, n, n_correct` (or `accuracy` and `n`; `se`, the "
        "tool's own standard error of the accuracy, gives the interval when present).\n"
        "- **Pairwise battles**: `model_a, model_b, outcome` (1 if model_b wins, 0 if model_a wins, 0.5 a tie, "
        "empty without a human vote), `judge` (an AI judge's probability that model_b wins).\n"
        "- **Repeated samples** of one example (epochs, attempts): a `repeat` column numbering them. The example is "
        "the unit: every view averages an example's samples first (cluster-robust intervals for means, bootstraps "
        "that resample examples with all their samples).\n"
        "- **Logs of evaluation tools**, recognised from their content: Inspect AI (`.eval`, `.json`), "
        "lm-evaluation-harness (`samples_<task>_<time>.jsonl` with its `results_<time>.json`; a results file "
        "alone is a leaderboard summary), HELM run folders (zip them, or upload `per_instance_stats.json`, "
        "`scenario_state.json` and `run_spec.json` together), lighteval details (`details_*.parquet` with the run's "
        "`results_*.json`), promptfoo (`eval -o results.json`), OpenAI evals event logs and Evals API output items, "
        "DeepEval test runs, Ragas per-sample results (CSV or JSON; one system, named after the file), "
        "every_eval_ever aggregates and `_samples.jsonl`, AlpacaEval annotations (the AI "
        "judge's verdicts) and leaderboard CSVs, MT-Bench judgments, Chatbot Arena `clean_battle` files and "
        "OpenCompass predictions (`predictions/<model>/<dataset>.json`: the outputs, to judge on the Label page). "
        "A file that cannot be used among good ones is left out with a warning naming it.")
    render.table(EXAMPLE, "example log")


def mapping_editor(columns: list[str], suggested: dict[str, str] | None) -> None:
    """Selectboxes mapping the upload's columns onto roles, starting from ``suggested`` (the mapping the upload was
    validated under, with a group suggested from the values; by names alone where it does not validate); the result
    goes to session state.

    A column named after a role that is not chosen for it is left out explicitly (``{column: None}``): otherwise
    validation would map it to its namesake role anyway. So is the group shown when no group is chosen (otherwise
    validation would suggest it again), and a column left out stays out until it is chosen for a role."""
    kinds = ["auto", *KINDS]
    kind_choice = st.selectbox("Data shape", kinds, key="kind_choice",
                               index=kinds.index(st.session_state.get(ds.KIND) or "auto"),
                               format_func=lambda k: "detect automatically" if k == "auto" else k)
    kind = None if kind_choice == "auto" else kind_choice
    if kind != st.session_state.get(ds.KIND):
        st.session_state[ds.KIND] = kind
        st.session_state.pop(ds.MAPPING, None)
        st.rerun()  # the sidebar, drawn before this page, describes the data under the old shape
    mapping = st.session_state.get(ds.MAPPING) or suggested or suggest_mapping(columns, kind)
    roles = ROLES[kind or detect_kind(mapping.values())]
    by_role = {role: col for col, role in mapping.items()}
    picks: dict[str, str] = {}
    cells = st.columns(4)
    for i, role in enumerate(roles):
        options = [NONE, *columns]
        current_col = by_role.get(role, NONE)
        picked = cells[i % 4].selectbox(role, options, index=options.index(current_col), key=f"role_{role}")
        if picked != NONE:
            picks[role] = picked
    twice = {c for c in picks.values() if list(picks.values()).count(c) > 1}
    if twice:
        column = sorted(twice)[0]
        roles_of = [r for r, c in picks.items() if c == column]
        st.error(f"Column '{literal(column)}' is chosen for the roles {' and '.join(roles_of)}: a column can play one "
                 "role only. Choose another column for one of them.")
        st.stop()
    chosen = {c: r for r, c in picks.items()}
    chosen.update({c: None for c in columns if c in roles and c not in chosen and c not in picks})
    if "group" not in picks and by_role.get("group") not in (None, *chosen):
        chosen[by_role["group"]] = None
    chosen.update({c: None for c, r in mapping.items() if r is None and c not in chosen})  # left out: stays out
    if chosen != mapping:
        st.session_state[ds.MAPPING] = chosen
        st.rerun()


src = ds.source()
if src["type"] == "upload":
    st.subheader(f"Columns of {literal(src['filename'])}")
    files = st.session_state[ds.UPLOAD_BYTES]
    if len(files) > 1:
        st.caption("Files: " + literal(", ".join(name for name, _ in files)))
    try:
        table = ds.upload_table(src["digest"], files, None,
                                st.session_state.get(ds.KIND))
    except EvalDataError as exc:
        st.error(f"**{literal(src['filename'])}** cannot be read: {literal(exc)}")
        st.stop()
    st.caption(f"{table.n_rows:,} rows, {len(table.columns)} columns. Choose which column plays which role; "
               "suggestions come from the column names.")
    mapping_editor(list(table.columns), table.mapping)

data = ds.try_active_data(link=False)
if data is None:
    st.stop()

report = data.report
with answer_box:
    render.answer(ds.loaded_sentence(data))
    for warning in report.warnings:  # e.g. files that share no example and no task: seen before anything else
        st.warning(literal(warning), icon=":material/warning:")
if src["type"] == "upload":
    locked = workspace_store.locked()
    with st.form("save_dataset", border=False):
        c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
        name = c1.text_input("Name in the workspace", value=src["filename"], key="save_name")
        if c2.form_submit_button("Save to workspace", icon=":material/save:", disabled=locked is not None,
                                 help=locked and literal(locked)):
            try:
                record = workspace_store.workspace().add_dataset(data.loaded, name or src["filename"],
                                                                 mapping=report.mapping,
                                                                 owner=workspace_store.viewer())
            except EvalDataError as exc:
                st.error(literal(exc))
            else:
                ds.use_saved(record.id, record.name)
                st.rerun()
    st.caption("Until you save it, the upload stays in this session only (and, for reloads of this page's address, "
               "on this server while its upload store keeps it).")
st.subheader("Validation report")
st.success(f"{literal(data.label)}: a **{report.kind}** table with {report.n_rows:,} rows and "
           f"{report.n_models} models.")
for note in report.notes:
    st.info(literal(note), icon=":material/info:")
if report.files and len(report.tools) == len(report.files):  # the tool that wrote each file (older saves: none)
    files_read = pd.DataFrame({"file": list(report.files),
                               "read as": ["a plain table" if tool == TABLE else tool for tool in report.tools]})
    render.table(files_read, "files read")
mapping_rows = pd.DataFrame({"role": list(report.mapping), "column in the file": list(report.mapping.values())})
render.table(mapping_rows, "column mapping")
if data.stored is None:  # a log in memory (a saved dataset in the engine has its numbers on the Models page)
    level = selection.current(data).level
    read = readout(data.loaded, report, level)
    if len(read):
        first = read.iloc[0]
        st.caption(f"What was read: per model{' and task' if (read['task'] != ALL_TASKS).any() else ''} the "
                   f"examples, the rows and the most samples of one example, and the mean of the label "
                   f"'{literal(first['label'])}' (scale {literal(first['scale'])}) with its {percent(level)} interval: "
                   "the numbers of the Models page (a model's row: the mean over tasks), as `evalcore validate` "
                   "prints them.")
        render.table(read, "what was read")

st.subheader("Preview")
if data.samples is None:
    st.caption("The first 200 rows of the validated data, as every view sees it.")
else:
    st.caption("The first 200 rows of the validated data, every sample. The views see one row per (model, example): "
               "the mean over its samples.")
render.table(data.head(200), "data preview (first 200 rows)")
