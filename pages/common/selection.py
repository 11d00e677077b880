"""The analysis selection (models, tasks, groups, metric, confidence level), kept across pages.

Widget values are copied into one plain session key, ``selection``, because Streamlit forgets the state of
widgets that are not on the current page. The selection belongs to one dataset: it resets when the data changes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd
import streamlit as st

from evalcore.engine import is_lazy
from evalcore.stats.figures import percent
from evalcore.data.schema import BATTLES, LOG, SUMMARY

from .data_source import ActiveData

SELECTION = "selection"
LEVELS = (0.80, 0.834, 0.90, 0.95, 0.99)
DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class Selection:
    """What the views analyse; empty ``tasks``/``groups`` mean all of them."""

    data_key: str
    models: tuple[str, ...]
    tasks: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    metric: str | None = None
    level: float = DEFAULT_LEVEL

    @property
    def alpha(self) -> float:
        return 1.0 - self.level


@dataclass(frozen=True)
class Options:
    """What can be selected in the session's data."""

    models: tuple[str, ...]
    tasks: tuple[str, ...]
    groups: tuple[str, ...]
    metrics: tuple[str, ...]


def options(data: ActiveData) -> Options:
    if data.lazy is not None:  # a log in the engine: distinct values from the engine
        log = data.lazy
        if log.kind == BATTLES:
            return Options(tuple(log.models()), (), (), tuple(m for m in ("outcome", "judge") if m in log))
        metrics = tuple(m for m in ("correct", "score") if m in log and log.count(m))
        return Options(tuple(log.distinct("model")), tuple(log.distinct("task")), tuple(log.distinct("group")),
                       metrics)
    frame, kind = data.frame, data.report.kind
    if kind == BATTLES:
        models = tuple(sorted(set(frame["model_a"]) | set(frame["model_b"])))
        return Options(models, (), (), tuple(m for m in ("outcome", "judge") if m in frame))
    models = tuple(sorted(frame["model"].unique()))
    tasks = tuple(sorted(frame["task"].unique()))
    if kind == SUMMARY:
        return Options(models, tasks, (), ("accuracy",))
    groups = tuple(sorted(frame["group"].unique()))
    metrics = tuple(m for m in ("correct", "score") if m in frame and frame[m].notna().any())
    return Options(models, tasks, groups, metrics)


def current(data: ActiveData) -> Selection:
    """The session's selection for ``data`` (all models, all tasks and groups by default)."""
    sel = st.session_state.get(SELECTION)
    if not isinstance(sel, Selection) or sel.data_key != data.key:
        opts = options(data)
        sel = Selection(data.key, opts.models, metric=opts.metrics[0] if opts.metrics else None)
        st.session_state[SELECTION] = sel
    return sel


def update(data: ActiveData, **changes) -> Selection:
    """Store a changed selection; values are normalised to sorted tuples."""
    clean = {k: tuple(v) if isinstance(v, (list, tuple)) else v for k, v in changes.items()}
    sel = replace(current(data), **clean)
    st.session_state[SELECTION] = sel
    return sel


def apply(frame: pd.DataFrame, sel: Selection, kind: str = LOG) -> pd.DataFrame:
    """Rows of ``frame`` (or of a log in the engine) inside the selection."""
    if is_lazy(frame):
        t = frame.table
        if frame.kind == BATTLES:
            return frame.where(t.model_a.isin(list(sel.models)) & t.model_b.isin(list(sel.models)))
        keep = t.model.isin(list(sel.models))
        if sel.tasks:
            keep &= t.task.isin(list(sel.tasks))
        if sel.groups:
            keep &= t.group.isin(list(sel.groups))
        return frame.where(keep)
    if kind == BATTLES:
        keep = frame["model_a"].isin(sel.models) & frame["model_b"].isin(sel.models)
        return frame[keep]
    keep = frame["model"].isin(sel.models)
    if sel.tasks:
        keep &= frame["task"].isin(sel.tasks)
    if sel.groups and "group" in frame:
        keep &= frame["group"].isin(sel.groups)
    return frame[keep]


def require(sel: Selection, rows: pd.DataFrame, min_models: int = 1, link: bool = True) -> None:
    """Stop the page with a warning saying what to choose on the Models page when the selection holds fewer than
    ``min_models`` (1 or 2) models or no row at all (e.g. chosen tasks and groups without an example in common);
    ``link`` adds a link to the Models page (off on the Models page itself)."""
    if len(sel.models) < min_models:
        st.warning("Choose at least one model on the Models page." if min_models == 1 else
                   "Choose at least two models on the Models page: this view compares models.")
    elif (rows.n_rows == 0 if is_lazy(rows) else rows.empty):
        st.warning("No row of the data lies in the selection: the chosen models, tasks and groups have no example "
                   "in common. Widen the selection on the Models page.")
    else:
        return
    if link:
        st.page_link("pages/models.py", label="Go to the Models page", icon=":material/tune:")
    st.stop()


def describe(sel: Selection) -> str:
    """One line for the sidebar."""
    tasks = "all tasks" if not sel.tasks else f"{len(sel.tasks)} task(s)"
    groups = "all groups" if not sel.groups else f"{len(sel.groups)} group(s)"
    return f"{len(sel.models)} model(s) · {tasks} · {groups} · level {percent(sel.level)}"
