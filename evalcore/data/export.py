"""CSV exports that spreadsheets open as data, never as formulas (OWASP, "CSV Injection").

A cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read as a formula by Excel,
LibreOffice and Google Sheets, so a model or category name such as ``=HYPERLINK("http://...")`` in an exported
table could run in the reader's spreadsheet. :func:`csv_bytes` prefixes such text cells (and headers) with an
apostrophe, which spreadsheets show as text. Numbers stay numbers: a float ``-1.5`` is written ``-1.5``, and so is
a text cell that is exactly a plain number (it cannot hold a formula).
"""

from __future__ import annotations

import re

import pandas as pd

#: Leading characters that make a spreadsheet read a cell as a formula.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def neutralize(value: object) -> object:
    """``value`` with an apostrophe in front when it is text starting like a formula; anything else unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def _labels(index: pd.Index) -> pd.Index:
    """Column labels (every level of a MultiIndex) with formula-like text neutralized."""
    if isinstance(index, pd.MultiIndex):
        return pd.MultiIndex.from_tuples([tuple(neutralize(v) for v in t) for t in index],
                                         names=[neutralize(n) for n in index.names])
    return pd.Index([neutralize(v) for v in index], name=neutralize(index.name))


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells and column labels cannot be read as formulas; numeric columns untouched."""
    out = frame.copy()
    for i, column in enumerate(frame.columns):
        values = frame.iloc[:, i]
        if pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values) \
                or isinstance(values.dtype, pd.CategoricalDtype):
            out.isetitem(i, values.astype(object).map(neutralize))
    out.columns = _labels(frame.columns)
    return out


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """``frame`` as UTF-8 CSV without its index, every cell and header neutralized (:func:`safe_frame`).

    Lines end with CRLF (RFC 4180), so that the writer quotes every cell holding a carriage return or a line feed.
    """
    return safe_frame(frame).to_csv(index=False, lineterminator="\r\n").encode("utf-8")
