"""Workspace page: the datasets saved on this instance, to open, rename and delete."""

import pandas as pd
import streamlit as st

from evalcore.data import EvalDataError
from evalcore.display import literal
from pages.common import data_source as ds
from pages.common import render, workspace_store
from pages.common.navigation import ensure_app_navigation

ensure_app_navigation()

st.title("Workspace")
ws = workspace_store.workspace()
viewer = workspace_store.viewer()
st.caption(f"Saved datasets of this instance, in {literal(workspace_store.root())}. Sign-in is not configured: this "
           "is a single-user instance, and everyone who opens it sees every saved dataset.")

records = ws.datasets(viewer=viewer)
if not records:
    st.info("Nothing is saved yet. Upload a log on the Data page and choose “Save to workspace”.",
            icon=":material/info:")
    st.stop()

table = pd.DataFrame([{"name": r.name, "owner": r.owner or "(none)", "created": r.created, "rows": r.rows,
                       "models": r.models, "shape": r.kind} for r in records])
render.table(table, "saved datasets")

by_id = {r.id: r for r in records}
chosen = st.selectbox("Dataset", list(by_id), format_func=lambda i: f"{by_id[i].name} · {by_id[i].created}",
                      key="ws_dataset")
record = by_id[chosen]
c1, c2, c3 = st.columns(3, vertical_alignment="bottom")
if c1.button("Open", icon=":material/folder_open:", type="primary", key="ws_open"):
    ds.use_saved(record.id, record.name)
    st.switch_page("pages/models.py")
new_name = c2.text_input("New name", value=record.name, key=f"ws_name_{record.id}")
if c3.button("Rename", icon=":material/edit:", key="ws_rename") and new_name and new_name != record.name:
    ws.rename(record.id, new_name, viewer=viewer)
    st.rerun()

with st.expander("Delete this dataset"):
    used = ws.analyses_of(record.id)
    if used:
        st.warning(f"{used} saved analyses use this dataset; deleting it deletes them too.")
    sure = st.checkbox(f"Delete “{literal(record.name)}” for good", key="ws_sure")
    if st.button("Delete", icon=":material/delete:", disabled=not sure, key="ws_delete"):
        try:
            ws.delete_dataset(record.id, viewer=viewer, with_analyses=True)
        except (EvalDataError, PermissionError) as exc:
            st.error(literal(exc))
        else:
            if st.session_state.get(ds.SOURCE, {}).get("id") == record.id:
                ds.use_demo(ds.DEFAULT_DEMO)
            st.rerun()
