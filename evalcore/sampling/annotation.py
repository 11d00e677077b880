"""Labels that come back from annotators for the examples a sampling design selected.

The Labeling-budget page hands out a list of example ids; the annotators return a table with one row per example
(``example_id`` and its 0/1 ``correct`` label). :func:`read_labels` checks that table against the selection:
every id must be one of the selected examples (anything else is refused with the list, because labels for
unselected examples would break the design's inclusion probabilities), ids must not repeat, labels must be 0 or 1.

Public API
----------
``read_labels(table, selected_ids) -> pandas.Series`` the labels indexed by example id (str), as floats 0.0/1.0.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from evalcore.data.reading import EvalDataError, listed

__all__ = ["read_labels"]

_SHOWN = 10
_ID_NAMES = ("example_id", "id", "example", "item_id", "file_name")
_LABEL_NAMES = ("correct", "label", "is_correct", "correctness")


def _column(frame: pd.DataFrame, names: tuple[str, ...], what: str) -> str:
    lower = {str(c).strip().lower(): c for c in frame.columns}
    for name in names:
        if name in lower:
            return lower[name]
    raise EvalDataError(
        f"The labels file has no {what} column: expected one of {', '.join(names)}; it has "
        f"{', '.join(repr(str(c)) for c in frame.columns)}."
    )


def read_labels(table: pd.DataFrame, selected_ids: Iterable[object]) -> pd.Series:
    """The annotators' labels for selected examples, indexed by example id (as text), values 0.0 or 1.0.

    ``table`` has an id column (``example_id``, ``id``, ``example``, ``item_id`` or ``file_name``) and a label
    column (``correct``, ``label``, ``is_correct`` or ``correctness``) with 0/1 (also true/false, yes/no); empty
    labels are allowed (not labeled yet) and dropped. Raises :class:`~evalcore.data.reading.EvalDataError` for ids
    that were not selected (listing them), repeated ids, or labels other than 0/1.
    """
    id_col = _column(table, _ID_NAMES, "example id")
    label_col = _column(table, _LABEL_NAMES, "label")
    ids = table[id_col].astype(str).str.strip()
    selected = {str(i) for i in selected_ids}
    unknown = sorted(set(ids) - selected)
    if unknown:
        shown = listed(unknown, _SHOWN, fmt=repr)
        raise EvalDataError(
            f"{len(unknown)} id(s) in the labels file were not selected for labeling: {shown}. Upload labels only "
            "for the examples in the downloaded list (labels for other examples would bias the estimate)."
        )
    repeated = sorted(ids[ids.duplicated()].unique())
    if repeated:
        shown = listed(repeated, _SHOWN, fmt=repr)
        raise EvalDataError(f"Example id(s) {shown} appear more than once in the labels file: keep one row each.")
    raw = table[label_col]
    text = raw.astype(str).str.strip().str.lower()
    mapped = text.map({"1": 1.0, "0": 0.0, "1.0": 1.0, "0.0": 0.0, "true": 1.0, "false": 0.0, "yes": 1.0,
                       "no": 0.0})
    empty = raw.isna() | text.isin(["", "nan", "none", "<na>"])
    bad = mapped.isna() & ~empty
    if bad.any():
        rows = (np.flatnonzero(bad.to_numpy()) + 2)[:_SHOWN].tolist()  # +2: header line and 1-based rows
        raise EvalDataError(
            f"Column '{label_col}' must hold 0 or 1 (correct or not); line(s) {rows} of the file hold "
            f"{', '.join(repr(v) for v in raw[bad].astype(str).unique()[:5])}."
        )
    keep = ~empty
    return pd.Series(mapped[keep].to_numpy(dtype=float), index=pd.Index(ids[keep], name="example_id"),
                     name="correct")
