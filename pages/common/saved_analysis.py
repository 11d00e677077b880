"""Saved analyses in the dashboard: what "Save analysis" keeps, and how a permalink ``/?analysis=<id>`` restores it.

An analysis is a workspace dataset (an upload or a demo is saved with its first analysis), the selection (models,
tasks, groups, metric, level) and the view's own settings: the value of every widget of the view whose key starts
with the view's prefix, seeds included. Opening the link, in any browser and after a server restart, makes the
dataset the session's data, restores the selection, and hands the settings to the view's next run, before its
widgets are drawn, so the view computes the same numbers from the same inputs (every computation is seeded).

While the session stays on the analysis's dataset the link stays in the address bar, page switches included
(Streamlit clears query parameters when the page changes; :func:`follow_link` puts it back).
"""

from __future__ import annotations

from dataclasses import asdict

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.state import get_session_state

from evalcore.data.display import literal
from evalcore.errors import EvalDataError
from evalcore.workspace import AnalysisRecord

from . import data_source as ds
from . import selection, workspace_store

#: url path of each view that saves analyses -> (its script, the key prefix of its settings; None: the selection)
VIEWS = {
    "models": ("pages/models.py", None),
    "calibration": ("pages/calibration.py", "cal_"),
    "subgroups": ("pages/subgroups.py", "sg_"),
    "leaderboard": ("pages/leaderboard.py", "lb_"),
    "compare": ("pages/compare.py", "cp_"),
    "sampling": ("pages/sampling.py", "sp_"),
    "autoeval": ("pages/autoeval.py", "ae_"),
    "report": ("pages/report.py", "rp_"),
}
QUERY = "analysis"
OPENED = "opened_analysis"      # {"id": ..., "dataset": ...}: the analysis this session opened from its link
PENDING = "pending_settings"    # {"view": ..., "settings": {...}}: applied when that view next runs
SAVED_DATA = "saved_datasets"   # {data key: (dataset id, name)}: datasets this session saved with an analysis
LAST_SAVED = "last_saved_analysis"
SCALARS = (bool, int, float, str)
#: the value kinds of setting widgets (not buttons, uploads or table edits, which Streamlit refuses to set)
SETTING_KINDS = {"bool_value", "int_value", "double_value", "string_value", "int_array_value", "double_array_value",
                 "string_array_value"}


def _plain(value) -> bool:
    """Whether a widget value can be saved and set back: scalars and lists of scalars (not uploads, not edits)."""
    if value is None or isinstance(value, SCALARS):
        return True
    return isinstance(value, (list, tuple)) and all(isinstance(v, SCALARS) for v in value)


def _setting_keys() -> set[str]:
    """Keys of the session's setting widgets: registered widgets whose value kind is a setting's (a button, an
    uploader or a table editor is not). Streamlit's public API does not say a widget's kind, so this reads its
    widget registry (key -> widget id -> value type)."""
    state = get_session_state()._state
    metadata = state._new_widget_state.widget_metadata
    return {key for widget, key in state._key_id_mapper.id_key_mapping.items()
            if widget in metadata and metadata[widget].value_type in SETTING_KINDS}


def settings_of(prefix: str | None) -> dict:
    """The current values of the setting widgets whose key starts with ``prefix``."""
    if prefix is None:
        return {}
    keys = _setting_keys()
    return {key: (list(value) if isinstance(value, tuple) else value)
            for key, value in st.session_state.items()
            if isinstance(key, str) and key.startswith(prefix) and key in keys and _plain(value)}


def dataset_for(data: ds.ActiveData) -> tuple[str, str]:
    """(id, name) of the workspace dataset holding ``data``; an upload or a demo is saved on first use."""
    src = ds.source()
    if src["type"] == "saved":
        return src["id"], src["name"]
    saved = st.session_state.setdefault(SAVED_DATA, {})
    if data.key not in saved:
        name = src["filename"] if src["type"] == "upload" else f"demo · {src['name']}"
        record = workspace_store.workspace().add_dataset(data.loaded, name, mapping=data.report.mapping,
                                                         owner=workspace_store.viewer())
        saved[data.key] = (record.id, record.name)
    return saved[data.key]


def save(data: ds.ActiveData, view: str, name: str, shared: bool = False) -> AnalysisRecord:
    """Save the current view on ``data`` with its selection and settings."""
    dataset_id, _ = dataset_for(data)
    chosen = asdict(selection.current(data))
    chosen.pop("data_key")
    return workspace_store.workspace().save_analysis(
        dataset_id, view, settings_of(VIEWS[view][1]), selection=chosen, name=name,
        owner=workspace_store.viewer(), shared=shared)


def link(analysis_id: str) -> str:
    """The permalink of an analysis on this instance."""
    base = (st.context.url or "").split("?", 1)[0]
    for view in VIEWS:
        if base.rstrip("/").endswith("/" + view):
            base = base.rstrip("/")[: -len(view)]
    return f"{base.rstrip('/')}/?{QUERY}={analysis_id}"


def offer(view: str) -> None:
    """The sidebar's "Save analysis" form for ``view`` (on the session's data): disabled, its help saying why, where
    this session may not change saved items (:func:`.workspace_store.locked`); a save the workspace refuses (its
    disk full or read-only) shows what happened, and nothing is saved."""
    data = ds.active_data()
    locked = workspace_store.locked()
    with st.popover("Save analysis", icon=":material/bookmark_add:", width="stretch"):
        with st.form("save_analysis", border=False):
            name = st.text_input("Name", value=f"{view} · {ds.source().get('name') or ds.source().get('filename')}",
                                 key="analysis_name")
            shared = st.checkbox("Share with the team", key="analysis_shared") if workspace_store.viewer() else False
            if st.form_submit_button("Save", icon=":material/save:", type="primary", disabled=locked is not None,
                                     help=locked and literal(locked)):
                try:
                    record = save(data, view, name or view, shared)
                except (EvalDataError, PermissionError) as exc:
                    st.session_state.pop(LAST_SAVED, None)
                    st.error(f"Not saved: {literal(exc)}", icon=":material/error:")
                else:
                    st.session_state[LAST_SAVED] = record.id
        if LAST_SAVED in st.session_state:
            st.caption("Saved. Its link opens this view with these settings, for anyone who may see it:")
            st.code(link(st.session_state[LAST_SAVED]), language=None)


def _refuse(message: str) -> None:
    st.title("Saved analysis")
    st.error(message)
    if st.button("Continue without it", icon=":material/arrow_forward:", key="drop_analysis_link"):
        st.query_params.clear()
        st.rerun()
    st.stop()


def _open(analysis_id: str) -> AnalysisRecord:
    """Make a saved analysis the session's: its dataset, selection and (pending) settings."""
    ws, viewer = workspace_store.workspace(), workspace_store.viewer()
    try:
        record = ws.analysis(analysis_id, viewer=viewer)
        dataset = ws.dataset_record(record.dataset_id, viewer=viewer)
    except LookupError:
        _refuse("This link names no saved analysis on this instance: it was deleted, or the link is incomplete. "
                "No data is shown.")
    except PermissionError:
        _refuse("This saved analysis is private to the user who saved it: ask them to share it with the team. "
                "No data is shown.")
    if record.page not in VIEWS:
        _refuse(f"This saved analysis is of a view this version does not have ({literal(record.page)}).")
    ds.use_saved(dataset.id, dataset.name)
    data = ds.active_data()
    opts = selection.options(data)
    chosen = record.selection
    st.session_state[selection.SELECTION] = selection.Selection(
        data.key,
        models=tuple(m for m in chosen.get("models", opts.models) if m in opts.models),
        tasks=tuple(t for t in chosen.get("tasks", ()) if t in opts.tasks),
        groups=tuple(g for g in chosen.get("groups", ()) if g in opts.groups),
        metric=chosen.get("metric") if chosen.get("metric") in opts.metrics else selection.current(data).metric,
        level=float(chosen.get("level", selection.DEFAULT_LEVEL)))
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith("w_")]:
        del st.session_state[key]  # the Models page's widgets start again from the restored selection
    st.session_state[PENDING] = {"view": record.page, "settings": record.settings}
    st.session_state[OPENED] = {"id": record.id, "dataset": dataset.id}
    return record


def _apply_pending(view: str) -> None:
    pending = st.session_state.get(PENDING)
    if not pending or pending["view"] != view:
        return
    del st.session_state[PENDING]
    for key, value in pending["settings"].items():
        try:
            st.session_state[key] = value
        except StreamlitAPIException:  # a button's or an upload's key: not settable, and never saved as a setting
            pass


def follow_link(view: str) -> None:
    """Open the analysis named by the ``analysis`` query parameter (once per session and id), apply its settings
    when its view runs, and keep the parameter in the address bar while the session stays on its dataset."""
    wanted = st.query_params.get(QUERY)
    opened = st.session_state.get(OPENED)
    if opened and ds.source().get("id") != opened["dataset"]:
        st.session_state.pop(OPENED)
        st.session_state.pop(PENDING, None)
        if wanted == opened["id"]:
            del st.query_params[QUERY]
            wanted = None
        opened = None
    if wanted and (opened is None or wanted != opened["id"]):
        record = _open(wanted)
        if record.page != view:
            st.switch_page(VIEWS[record.page][0], query_params={QUERY: record.id})
    _apply_pending(view)
    opened = st.session_state.get(OPENED)
    if opened and st.query_params.get(QUERY) != opened["id"]:
        st.query_params[QUERY] = opened["id"]
