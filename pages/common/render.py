"""Rendering helpers shared by the pages: charts with image download, tables with CSV download."""

from __future__ import annotations

import hashlib
import re

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from evalcore.data.display import literal, plain_cells
from evalcore.data.limits import MAX_NOTE_CHARS
from evalcore.data.export import csv_bytes
from evalcore.stats import headline

CHART_FORMAT = "chart_format"  # "png" or "svg": what each chart's camera button downloads
FORMATS = {"png": "PNG", "svg": "SVG"}


def _slug(name: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "-", name).strip("-").lower() or "evalcore"


def _key(prefix: str, name: str) -> str:
    """A widget key unique per exact ``name``: slugs collide for names differing only in case or punctuation
    (models 'Model-A' and 'model_a' would get the same key and crash the page)."""
    return f"{prefix}-{_slug(name)}-{hashlib.sha1(name.encode('utf-8')).hexdigest()[:8]}"


def chart(fig: go.Figure, name: str) -> None:
    """Show ``fig``; the camera button in its toolbar downloads it as PNG or SVG (sidebar setting)."""
    fmt = st.session_state.get(CHART_FORMAT, "png")
    config = {
        "displaylogo": False,
        "toImageButtonOptions": {"format": fmt, "filename": _slug(name), "scale": 2 if fmt == "png" else 1},
    }
    st.plotly_chart(fig, config=config, key=_key("chart", name), theme=None)


def table(frame: pd.DataFrame, name: str, height: int | None = None, **column_config) -> None:
    """Show ``frame`` with a CSV download button underneath (cells neutralized against formula injection).

    ``name`` may hold names from the data: it is shown literally in the button's label. Text cells are shown with
    their bidirectional controls as codes (a right-to-left override reverses nothing) and cut beyond
    :data:`~evalcore.data.limits.MAX_NOTE_CHARS` characters (:func:`evalcore.data.display.plain_cells`: a value kept
    before the bounds existed keeps the page responsive); the CSV holds the values as they are."""
    floats = {c: st.column_config.NumberColumn(format=_number_format(frame[c])) for c in frame.columns
              if pd.api.types.is_float_dtype(frame[c])}
    st.dataframe(plain_cells(frame, MAX_NOTE_CHARS), hide_index=True, height=height or "auto",
                 column_config={**floats, **column_config})
    st.download_button(
        f"Download {literal(name)} (CSV)", csv_bytes(frame), file_name=f"{_slug(name)}.csv",
        mime="text/csv", key=_key("csv", name), icon=":material/download:")


def _number_format(column: pd.Series) -> str:
    """Numbers by kind (:mod:`evalcore.stats.headline`): a column of whole numbers (counts) as integers, any other
    float column to 3 significant digits."""
    values = column.dropna().to_numpy()
    whole = len(values) > 0 and bool(((values == values.round()) & (abs(values) < 2**53)).all())
    return "%d" if whole else "%.3g"  # Streamlit's formatter rejects the '#' flag and then shows raw floats


def answer(sentence: str) -> None:
    """The page's answer, first on the page: one plain sentence with the number and its interval (names in it are
    shown literally)."""
    st.subheader(literal(sentence), anchor=False)


def ci(estimate: float, low: float, high: float) -> str:
    """'0.812 (0.790–0.833)' (:func:`evalcore.stats.headline.interval`)."""
    return headline.interval(estimate, low, high)


def format_picker() -> None:
    """Sidebar control for the image format of chart downloads."""
    st.radio("Chart download format", list(FORMATS), format_func=FORMATS.get, horizontal=True,
             key=CHART_FORMAT, help="The camera icon in each chart's toolbar downloads the chart in this format.")
