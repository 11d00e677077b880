"""Workspace page: the datasets and analyses saved on this instance, to open, rename, share and delete."""

import pandas as pd
import streamlit as st

from evalcore.data.validation import EvalDataError
from evalcore.data.display import cut, literal
from evalcore.data.limits import MAX_NAME_CHARS
from evalcore.stats import headline
from evalcore.workspace.access import may_change
from pages.common import data_source as ds
from pages.common import render, saved_analysis, workspace_store
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

st.title("Workspace")
answer_box = st.container()  # what can be opened, first; filled once the catalogue is read
ws = workspace_store.workspace()
viewer = workspace_store.viewer()
if viewer is None:
    st.caption(f"Saved datasets and analyses of this instance, in {literal(workspace_store.root())}. Sign-in is not "
               "configured: this is a single-user instance, and everyone who opens it sees every saved item.")
else:
    st.caption(f"What you saved, and what your team shared, on this instance. Items you save are private to you "
               f"({literal(viewer)}) until you share them with the team.")
# Why nothing can be changed here now, the help of every disabled control: the instance's rule for anonymous
# visitors (app.py's banner says it on every page), else the disk.
blocked = workspace_store.locked()
if blocked is None and (problem := ws.write_problem()) is not None:
    blocked = f"Read-only: {problem}"
    st.warning(literal(blocked), icon=":material/lock:")
blocked = None if blocked is None else literal(blocked)


def owner_of(owner: str | None) -> str:
    return owner or "(none)"


def label(record) -> str:
    """An item as a choice: name, date and the start of its id (names need not be unique)."""
    return f"{record.name} · {record.created} · {record.id[:6]}"


def act(change) -> bool:
    """Run one change; a refused one (no permission, a full or read-only disk) shows why and changes nothing."""
    try:
        change()
    except (EvalDataError, PermissionError, LookupError) as exc:
        st.error(literal(exc), icon=":material/error:")
        return False
    return True


def manage(kind: str, record, delete, share_refusal: str | None = None) -> None:
    """Rename, share (signed-in owners only; ``share_refusal`` says why sharing is not possible) and delete one
    item; ``delete()`` deletes it."""
    mine = may_change(record.owner, viewer)
    editable = mine and blocked is None
    c1, c2 = st.columns([3, 1], vertical_alignment="bottom")
    new_name = c1.text_input("New name", value=record.name, key=f"ws_{kind}_name_{record.id}",
                             disabled=not editable)
    if c2.button("Rename", icon=":material/edit:", key=f"ws_{kind}_rename", disabled=not editable, help=blocked) \
            and new_name and new_name != record.name and act(lambda: ws.rename(record.id, new_name, viewer=viewer)):
        st.rerun()
    if viewer is not None and mine:
        # The key holds the current state: sharing an analysis also shares its dataset, whose toggle must then
        # start from the new state rather than keep its old widget value.
        shared = st.toggle("Shared with the team", value=record.shared,
                           key=f"ws_{kind}_shared_{record.id}_{int(record.shared)}",
                           disabled=not editable or (share_refusal is not None and not record.shared),
                           help=blocked or share_refusal or "Team members see shared items; a shared analysis "
                                                            "shares its dataset too.")
        if shared != record.shared and act(lambda: ws.share(record.id, shared, viewer=viewer)):
            st.rerun()
    if not mine:
        if record.owner is None:
            st.caption("Saved without an owner (where nobody signs in, or from the command line without --owner): "
                       "signed-in members see it read-only.")
        else:
            st.caption(f"Shared by {literal(record.owner)}: only its owner can rename or delete it.")
        return
    with st.expander(f"Delete this {kind}"):
        delete()


try:
    analyses = ws.analyses(viewer=viewer)
    datasets = ws.datasets(viewer=viewer)
except EvalDataError as exc:
    st.error(literal(exc), icon=":material/error:")
    st.stop()
dataset_names = {r.id: r.name for r in datasets}
others = sum(r.owner is not None and r.owner != viewer for r in [*analyses, *datasets]) if viewer else 0
with answer_box:
    render.answer(f"{'You can open' if viewer else 'This instance keeps'} {headline.count(len(analyses))} saved "
                  f"{'analysis' if len(analyses) == 1 else 'analyses'} and {headline.count(len(datasets))} saved "
                  f"dataset{'' if len(datasets) == 1 else 's'}"
                  + (f", {headline.count(others)} of them shared by your team." if others else "."))

# ------------------------------------------------------------------------------------------------------- analyses
st.subheader("Saved analyses")
if not analyses:
    st.info("No analysis is saved yet. On any view, “Save analysis” in the sidebar keeps its data, selection and "
            "settings, with a link that opens it again.", icon=":material/info:")
else:
    render.table(pd.DataFrame([{
        "name": a.name, "view": a.page, "dataset": dataset_names.get(a.dataset_id, "(not shared with you)"),
        "owner": owner_of(a.owner), "created": a.created, "shared": a.shared,
        "link": saved_analysis.link(a.id)} for a in analyses]), "saved analyses")
    by_label = {label(a): a for a in analyses}
    analysis = by_label[st.selectbox("Analysis", list(by_label), key="ws_analysis")]
    if st.button("Open", icon=":material/open_in_new:", type="primary", key="ws_analysis_open"):
        st.switch_page(saved_analysis.VIEWS[analysis.page][0], query_params={saved_analysis.QUERY: analysis.id})

    def delete_analysis() -> None:
        sure = st.checkbox(f"Delete “{literal(analysis.name)}” for good", key="ws_analysis_sure",
                           disabled=blocked is not None, help=blocked)
        if st.button("Delete", icon=":material/delete:", disabled=not sure or blocked is not None, help=blocked,
                     key="ws_analysis_delete") and act(lambda: ws.delete(analysis.id, viewer=viewer)):
            st.rerun()

    manage("analysis", analysis, delete_analysis,
           None if analysis.dataset_id in dataset_names else
           "Its dataset is another member's and private: its owner must share the dataset first.")

# ------------------------------------------------------------------------------------------------------- series
st.subheader("Series of runs")
series = ws.series(viewer)
if not series:
    st.caption("No series yet: runs of one model saved with `evalcore workspace add LOG --name NAME --series SERIES` "
               "(e.g. from CI) make one, shown over time on the History page.")
else:
    render.table(pd.DataFrame([(cut(name, MAX_NAME_CHARS), runs, latest) for name, runs, latest in series],
                              columns=["series", "runs", "latest run"]), "series of runs")
    for name, runs, _ in series[:20]:  # a name stored before the bound on names: cut, and too long for an address
        st.page_link("pages/history.py", label=f"History of {literal(cut(name, MAX_NAME_CHARS))} "
                                               f"({headline.count(runs)} runs)",
                     icon=":material/timeline:", query_params={"series": name} if len(name) <= MAX_NAME_CHARS else {})

# ------------------------------------------------------------------------------------------------------- datasets
st.subheader("Saved datasets")
if not datasets:
    st.info("Nothing is saved yet. Upload a log on the Data page and choose “Save to workspace”.",
            icon=":material/info:")
    st.stop()

render.table(pd.DataFrame([{"name": r.name, "owner": owner_of(r.owner), "created": r.created, "rows": r.rows,
                            "models": r.models, "shape": r.kind, "shared": r.shared} for r in datasets]),
             "saved datasets")
by_label = {label(r): r for r in datasets}
record = by_label[st.selectbox("Dataset", list(by_label), key="ws_dataset")]
if st.button("Open", icon=":material/folder_open:", type="primary", key="ws_open"):
    ds.use_saved(record.id, record.name)
    st.switch_page("pages/models.py")


def delete_dataset() -> None:
    use = ws.dataset_use(record.id, viewer=viewer)
    if use.refusal():
        st.error(literal(use.refusal()), icon=":material/block:")
        return
    if use.own:
        st.warning(f"{use.own} saved analyses {'of yours ' if viewer else ''}use this dataset: deleting it deletes "
                   "them too.")
    sure = st.checkbox(f"Delete “{literal(record.name)}” for good", key="ws_sure", disabled=blocked is not None,
                       help=blocked)
    if st.button("Delete", icon=":material/delete:", disabled=not sure or blocked is not None, help=blocked,
                 key="ws_delete") \
            and act(lambda: ws.delete(record.id, viewer=viewer, with_analyses=True)):
        if st.session_state.get(ds.SOURCE, {}).get("id") == record.id:
            ds.use_demo(ds.DEFAULT_DEMO)
        st.rerun()


manage("dataset", record, delete_dataset)
