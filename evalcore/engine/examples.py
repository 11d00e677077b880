"""Per-example columns of a log, within a memory bound: the one way a view that needs every example gets them.

Most statistics are reductions (:mod:`.reductions`). Some computations need the per-example arrays: selective
prediction and the calibration breakdown, the holdout study and automatic subgroups, effective-sample-size curves
and stratified PPI, the sample to label and the Monte Carlo check. :func:`fetch` brings the columns they need of a
(restricted) log into a pandas frame when they fit in ``EVALCORE_FETCH_MB`` megabytes (default 1,024), and
otherwise raises :class:`ExamplesTooLarge` saying how much the view needs and what to do.

The size is estimated before anything is read: 8 bytes per row for a number, and for a text column its total
length plus 57 bytes per row (a Python ``str`` object's header and the pointer to it); one aggregate query gives
the lengths. A log that wraps a frame in memory (:func:`evalcore.engine.frames.from_frame`) hands back the
restricted frame itself, which is already in memory.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalcore.data.limits import MB, env_number
from evalcore.errors import EvalDataError
from evalcore.engine.scan import LazyLog

#: bytes a text value costs in pandas beyond its characters (CPython str header 49 + pointer 8)
TEXT_OVERHEAD = 57
NUMBER_BYTES = 8


class ExamplesTooLarge(EvalDataError):
    """The columns a per-example view needs do not fit within ``EVALCORE_FETCH_MB``."""


def fetch_bound_mb() -> int:
    """``EVALCORE_FETCH_MB`` (default 1,024): the most memory one fetch of per-example columns may take."""
    return env_number("EVALCORE_FETCH_MB", 1024)


def fetch(log: LazyLog, view: str, columns: list[str] | tuple[str, ...] | None = None) -> pd.DataFrame:
    """The rows of ``log`` (within its restriction) with ``columns`` (default all its columns) as a pandas
    frame, for the per-example computation named ``view`` (it names the view in the message); or
    :class:`ExamplesTooLarge` when they would take more than :func:`fetch_bound_mb` megabytes."""
    if log.frame is not None:
        return _restricted(log, columns)
    wanted = [c for c in (columns or log.table.columns) if c in log.table.columns]
    need = estimated_bytes(log, wanted)
    bound = fetch_bound_mb()
    if need > bound * MB:
        raise ExamplesTooLarge(
            f"{log.source}: {view} needs {', '.join(map(repr, wanted))} of every selected example in memory: "
            f"{log.n_rows:,} rows, about {need / MB:,.0f} MB, above the bound of {bound:,} MB (EVALCORE_FETCH_MB). "
            "Choose fewer models, tasks or groups on the Models page, or raise EVALCORE_FETCH_MB where the machine "
            "has the memory.")
    out = log.run(log.table.select(*wanted))
    out.attrs["source"] = log.source
    return out


def estimated_bytes(log: LazyLog, columns: list[str]) -> int:
    """Bytes ``columns`` of ``log``'s rows would take in pandas (module docstring)."""
    t = log.table
    text = [c for c in columns if t[c].type().is_string()]
    total = NUMBER_BYTES * log.n_rows * (len(columns) - len(text)) + TEXT_OVERHEAD * log.n_rows * len(text)
    if text and log.n_rows:
        lengths = log.run(t.aggregate(**{f"len_{i}": t[c].length().sum() for i, c in enumerate(text)}))
        total += int(np.nansum(lengths.iloc[0].to_numpy(dtype=float)))
    return total


def _restricted(log: LazyLog, columns) -> pd.DataFrame:
    frame = log.frame
    keep = np.ones(len(frame), dtype=bool)
    for role, values in log.selected:
        keep &= frame[role].astype(str).isin(values).to_numpy() if role in frame else True
    out = frame if keep.all() else frame[keep]
    return out if columns is None else out[[c for c in columns if c in out.columns]]
