"""The session's data and settings in its address, so that a reload (F5) reopens the same view on the same data.

A reload starts a new Streamlit session with an empty ``st.session_state``. The address keeps what matters, in
query parameters that :func:`publish` updates on every run (the page itself is the address's path):

- the data: ``upload=<sha256 digest>`` (with ``kind`` and ``mapping``, a JSON object, when chosen on the Data
  page), ``demo=<name>`` (a demo other than the default) or ``dataset=<id>`` (a workspace dataset);
- the selection: ``model``, ``task``, ``group`` (repeated; absent: all), ``metric`` and ``level`` (absent: the
  defaults).

On a session's first run, :func:`restore_data` (before saved analyses' links are followed) and
:func:`restore_settings` (after) read them back: an upload comes from the bounded upload store
(:mod:`.upload_store`), where it is found only by its digest and, with sign-in on, only by a user who uploaded it.
An upload the store no longer holds is said plainly on every page (never replaced by the demo).

A saved analysis's permalink (``?analysis=<id>``, :mod:`.saved_analysis`) takes precedence over the data named
here; the settings in the address still apply on top of the analysis's own, as they are the latest ones.
"""

from __future__ import annotations

import json
import math

import streamlit as st

from evalcore.data.schema import KINDS
from evalcore.errors import EvalDataError

from . import data_source as ds
from . import selection

UPLOAD, MAPPING, KIND, DEMO, DATASET = "upload", "mapping", "kind", "demo", "dataset"
MODEL, TASK, GROUP, METRIC, LEVEL = "model", "task", "group", "metric", "level"
#: every query parameter this module writes (others, e.g. ``analysis``, are left alone)
KEYS = (UPLOAD, MAPPING, KIND, DEMO, DATASET, MODEL, TASK, GROUP, METRIC, LEVEL)
LISTS = (MODEL, TASK, GROUP)
RESTORED_DATA = "session_link_data_restored"
RESTORED_SETTINGS = "session_link_settings_restored"
ANALYSIS = "analysis"  # saved_analysis.QUERY (not imported: saved_analysis imports data_source and selection too)
#: addresses longer than this leave out the lists of models, tasks and groups (browsers and proxies cut long ones)
MAX_QUERY_CHARS = 6000


def _params() -> dict[str, list[str]]:
    return {key: list(st.query_params.get_all(key)) for key in KEYS if key in st.query_params}


def _first(params: dict[str, list[str]], key: str) -> str | None:
    values = params.get(key) or []
    return values[0] if values else None


def restore_data() -> None:
    """On a session's first run, make the data named in the address the session's data: the upload (from the
    upload store, or a plain "no longer on the server" state), the demo or the workspace dataset. Skipped when a
    saved analysis's link names the data."""
    if st.session_state.get(RESTORED_DATA):
        return
    st.session_state[RESTORED_DATA] = True
    if ds.SOURCE in st.session_state or ANALYSIS in st.query_params:
        return
    params = _params()
    if (digest := _first(params, UPLOAD)) is not None:
        kind = _first(params, KIND)
        ds.reopen_upload(digest, _mapping(_first(params, MAPPING)), kind if kind in KINDS else None)
    elif (name := _first(params, DEMO)) in ds.DEMOS:
        ds.use_demo(name)
    elif (dataset_id := _first(params, DATASET)) is not None:
        _reopen_dataset(dataset_id)


def _mapping(text: str | None) -> dict[str, str | None] | None:
    """The column mapping of the address (a JSON object {column: role or null}); None when absent or malformed."""
    if not text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) and (v is None or isinstance(v, str))
                                              for k, v in value.items()):
        return None
    return value


def _reopen_dataset(dataset_id: str) -> None:
    from .workspace_store import viewer, workspace

    try:
        record = workspace().dataset_record(dataset_id, viewer())
    except (LookupError, PermissionError):
        st.session_state[ds.SOURCE] = {
            "type": "lost", "digest": None,
            "reason": "The workspace dataset named in this address cannot be opened: it was deleted, or it is "
                      "private to another user. Choose data on the Data page or in the Workspace."}
        return
    ds.use_saved(record.id, record.name)


def restore_settings() -> None:
    """On a session's first run, the selection in the address (models, tasks, groups, metric, level) becomes the
    session's selection, keeping only the names its data holds."""
    if st.session_state.get(RESTORED_SETTINGS):
        return
    st.session_state[RESTORED_SETTINGS] = True
    params = _params()
    if not any(key in params for key in (MODEL, TASK, GROUP, METRIC, LEVEL)):
        return
    try:
        data = ds.active_data()
    except EvalDataError:
        return  # the data says what is wrong on every page; the settings have nothing to apply to
    opts = selection.options(data)
    changes: dict = {}
    if MODEL in params:
        changes["models"] = tuple(m for m in opts.models if m in set(params[MODEL]))
    if TASK in params:
        changes["tasks"] = tuple(t for t in opts.tasks if t in set(params[TASK]))
    if GROUP in params:
        changes["groups"] = tuple(g for g in opts.groups if g in set(params[GROUP]))
    if _first(params, METRIC) in opts.metrics:
        changes["metric"] = _first(params, METRIC)
    if (level := _level(_first(params, LEVEL))) is not None:
        changes["level"] = level
    if changes.get("models") == ():
        del changes["models"]  # none of the address's models is in the data: all of them, as by default
    selection.update(data, **changes)
    for key in [k for k in st.session_state if isinstance(k, str) and k.startswith("w_")]:
        del st.session_state[key]  # the Models page's widgets and the level control start from this selection


def _level(text: str | None) -> float | None:
    """One of the sidebar's levels (:data:`selection.LEVELS`) written in the address; None otherwise."""
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:
        return None
    return next((level for level in selection.LEVELS if abs(level - value) < 1e-9), None)


def wanted() -> dict[str, list[str]]:
    """The query parameters that describe the session's data and selection now (defaults left out)."""
    src = ds.source()
    out: dict[str, list[str]] = {}
    if src["type"] in ("upload", "lost") and src.get("digest"):
        out[UPLOAD] = [src["digest"]]
        if src["type"] == "upload":
            if st.session_state.get(ds.KIND):
                out[KIND] = [st.session_state[ds.KIND]]
            if st.session_state.get(ds.MAPPING):
                out[MAPPING] = [json.dumps(st.session_state[ds.MAPPING], sort_keys=True, separators=(",", ":"))]
    elif src["type"] == "demo" and src["name"] != ds.DEFAULT_DEMO:
        out[DEMO] = [src["name"]]
    elif src["type"] == "saved":
        out[DATASET] = [src["id"]]
    sel = st.session_state.get(selection.SELECTION)
    if not isinstance(sel, selection.Selection) or sel.data_key != ds.current_key():
        return out  # the selection of earlier data: the next run makes the new data's
    try:
        opts = selection.options(ds.active_data())
    except EvalDataError:
        return out
    if abs(sel.level - selection.DEFAULT_LEVEL) > 1e-9:
        out[LEVEL] = [f"{sel.level:g}"]
    lists = {TASK: list(sel.tasks), GROUP: list(sel.groups)}
    if sel.models and tuple(sel.models) != tuple(opts.models):
        lists[MODEL] = list(sel.models)
    lists = {key: values for key, values in lists.items() if values}
    if sum(len(v) + 7 for values in lists.values() for v in values) <= MAX_QUERY_CHARS:
        out.update(lists)
    if sel.metric is not None and opts.metrics and sel.metric != opts.metrics[0]:
        out[METRIC] = [sel.metric]
    return out


def publish() -> None:
    """Write :func:`wanted` into the address (only the parameters that changed; others are left alone)."""
    want = wanted()
    for key in KEYS:
        have = list(st.query_params.get_all(key)) if key in st.query_params else []
        if want.get(key, []) == have:
            continue
        if key in want:
            st.query_params[key] = want[key] if len(want[key]) > 1 else want[key][0]
        else:
            del st.query_params[key]
