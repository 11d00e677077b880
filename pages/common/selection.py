"""The analysis selection (models, tasks, groups, metric, confidence level), kept across pages.

Widget values are copied into one plain session key, ``selection``, because Streamlit forgets the state of
widgets that are not on the current page. The selection belongs to one dataset: it resets when the data changes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd
import streamlit as st

from evalcore.data.display import literal
from evalcore.engine import ExamplesTooLarge, LazyLog, fetch
from evalcore.stats import glossary, intervals
from evalcore.stats.figures import percent
from evalcore.data.schema import BATTLES, LOG, SUMMARY

from .data_source import ActiveData
from .store import cached

SELECTION = "selection"
LEVELS = (0.80, 0.834, 0.90, 0.95, 0.99)
DEFAULT_LEVEL = intervals.DEFAULT_LEVEL
#: the session-state key of the sidebar's level control
LEVEL_KEY = "w_level"


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
    log = data.log
    if data.report.kind == SUMMARY:
        return Options(tuple(sorted(log["model"].unique())), tuple(sorted(log["task"].unique())), (), ("accuracy",))
    if log.kind == BATTLES:
        return Options(tuple(log.models()), (), (), tuple(m for m in ("outcome", "judge") if m in log))
    metrics = tuple(m for m in ("correct", "score") if m in log and log.count(m))
    return Options(tuple(log.distinct("model")), tuple(log.distinct("task")), tuple(log.distinct("group")), metrics)


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


def apply(log: LazyLog | pd.DataFrame, sel: Selection, kind: str = LOG) -> LazyLog | pd.DataFrame:
    """The rows of the session's log (:attr:`ActiveData.log`) inside the selection; a summary's rows of the
    chosen models and tasks."""
    if isinstance(log, pd.DataFrame):
        keep = log["model"].isin(sel.models) & (log["task"].isin(sel.tasks) if sel.tasks else True)
        return log[keep]
    if log.kind == BATTLES:
        return log.restrict(model_a=sel.models, model_b=sel.models)
    return log.restrict(model=sel.models, task=sel.tasks, group=sel.groups)


def examples(rows: LazyLog | pd.DataFrame, view: str, key: tuple,
             columns: tuple[str, ...] | None = None) -> pd.DataFrame | None:
    """The selected rows' per-example ``columns`` (all by default) for ``view``, e.g. "Selective prediction"
    (:func:`evalcore.engine.fetch`, cached under ``key``); None after saying what to do when they do not fit in
    memory (``EVALCORE_FETCH_MB``). A summary's rows are already a frame."""
    if isinstance(rows, pd.DataFrame):
        return rows
    try:
        return _fetched(key, view, columns, rows)
    except ExamplesTooLarge as exc:
        st.info(literal(exc), icon=":material/memory:")
        return None


@cached("Reading the selected examples...")
def _fetched(key: tuple, view: str, columns: tuple[str, ...] | None, _rows: LazyLog) -> pd.DataFrame:
    return fetch(_rows, view, columns)


def require(sel: Selection, rows: LazyLog | pd.DataFrame, min_models: int = 1, link: bool = True) -> None:
    """Stop the page with a warning saying what to choose on the Models page when the selection holds fewer than
    ``min_models`` (1 or 2) models or no row at all (e.g. chosen tasks and groups without an example in common);
    ``link`` adds a link to the Models page (off on the Models page itself)."""
    if len(sel.models) < min_models:
        st.warning("Choose at least one model on the Models page." if min_models == 1 else
                   "Choose at least two models on the Models page: this view compares models.")
    elif n_rows(rows) == 0:
        st.warning("No row of the data lies in the selection: the chosen models, tasks and groups have no example "
                   "in common. Widen the selection on the Models page.")
    else:
        return
    if link:
        st.page_link("pages/models.py", label="Go to the Models page", icon=":material/tune:")
    st.stop()


def n_rows(rows: LazyLog | pd.DataFrame) -> int:
    """Rows of a selection."""
    return len(rows) if isinstance(rows, pd.DataFrame) else rows.n_rows


def tasks(rows: LazyLog | pd.DataFrame) -> list[str]:
    """The tasks of a selection in the leaderboard's order: a summary's in order of appearance, a log's sorted."""
    if isinstance(rows, pd.DataFrame):
        return [str(t) for t in pd.unique(rows["task"].astype(str))]
    return rows.distinct("task")


def level_picker(data: ActiveData) -> None:
    """The one control of the confidence level (in the sidebar): the level of every interval on every page, in
    the report and in saved analyses. The widget follows the selection (e.g. one opened from a saved link) and a
    change is stored in the selection before the page runs."""
    level = current(data).level
    if st.session_state.get(LEVEL_KEY) != level:
        st.session_state[LEVEL_KEY] = level
    # The default is the selection's level too: a browser that resets its widgets (as Streamlit's does when a page
    # switch meets a rerun still running) falls back to the default, which would otherwise be the first option (80%).
    st.select_slider("Confidence level of every interval", LEVELS, value=level, key=LEVEL_KEY, format_func=percent,
                     on_change=lambda: update(data, level=st.session_state[LEVEL_KEY]),
                     help=f"{glossary.explain('interval')} Used by every page, the report and saved analyses; "
                          f"{percent(DEFAULT_LEVEL)} by default.")


def describe(sel: Selection) -> str:
    """One line for the sidebar."""
    tasks = "all tasks" if not sel.tasks else f"{len(sel.tasks)} task(s)"
    groups = "all groups" if not sel.groups else f"{len(sel.groups)} group(s)"
    return f"{len(sel.models)} model(s) · {tasks} · {groups} · level {percent(sel.level)}"
