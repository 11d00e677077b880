"""The text of an example (roles ``input``, ``target``, ``output``, ``explanation``, ``options``, ``image``): kept so
that people can read which question a model got wrong, bounded so that no log can fill the memory with it.

Each value becomes text (``str(value)``; missing stays missing) and is cut at ``limits.max_text_value_bytes`` bytes
of UTF-8 (at a character boundary; default 4 KB); all text of a log together is bounded by ``limits.max_text_bytes``
(default 100 MB): the rows past it, in file order, keep no text. Both are counted in the notes. Text is data: it is
stored as written and shown literally; no method reads it.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from evalcore.data.limits import ReadLimits, size_text
from evalcore.data.schema import EXAMPLE_TEXT_ROLES


def cut(text: str, max_bytes: int) -> str:
    """``text`` shortened to at most ``max_bytes`` bytes of UTF-8, without splitting a character."""
    data = text.encode("utf-8")
    return text if len(data) <= max_bytes else data[:max_bytes].decode("utf-8", errors="ignore")


def _as_text(value) -> str:
    """A value as text: a list (a Parquet or JSON list column, e.g. the options) as a JSON array, so that it reads
    back as a list (:func:`evalcore.data.options.parse_options`); anything else as ``str`` writes it."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, np.ndarray)):
        return json.dumps([v if isinstance(v, str) else str(v) for v in list(value)], ensure_ascii=False)
    return str(value)


def example_text(raw: pd.DataFrame, roles: dict[str, str], limits: ReadLimits,
                 notes: list[str]) -> dict[str, pd.Series]:
    """The text roles mapped in ``roles`` ({role: column of ``raw``}) as text columns (missing values missing), each
    value cut at ``limits.max_text_value_bytes`` and the rows past ``limits.max_text_bytes`` (all roles together,
    in row order) left without text; cuts and left-out rows are counted in ``notes``."""
    out: dict[str, pd.Series] = {}
    sizes = np.zeros(len(raw), dtype="int64")  # numpy: a masked update of a Series costs more than the reading
    for role in EXAMPLE_TEXT_ROLES:
        if role not in roles:
            continue
        column = raw[roles[role]]
        present = column.notna().to_numpy()
        if not present.any():  # a tool's role it left empty: no column
            continue
        values = column[present]
        if not isinstance(column.dtype, pd.StringDtype):  # a text column's values are text already
            values = values.map(_as_text)
        n_bytes = values.str.len()  # characters: a lower bound of the bytes, exact for ASCII
        long = n_bytes > limits.max_text_value_bytes // 4
        if long.any():
            encoded = values[long].map(lambda v: len(v.encode("utf-8")))
            n_bytes[long] = encoded
            over = encoded > limits.max_text_value_bytes
            if over.any():
                values[over[over].index] = values[over[over].index].map(
                    lambda v: cut(v, limits.max_text_value_bytes))
                n_bytes[over[over].index] = limits.max_text_value_bytes
                notes.append(f"{int(over.sum()):,} {role} text{'s' if over.sum() > 1 else ''} longer than "
                             f"{size_text(limits.max_text_value_bytes)} cut to that length. "
                             f"{limits.raise_hint('text value')}")
        text = np.full(len(raw), None, dtype=object)
        text[present] = values.to_numpy()
        sizes[present] += n_bytes.to_numpy()
        out[role] = pd.Series(text, index=raw.index).astype("str")
    if out:
        beyond = np.cumsum(sizes) > limits.max_text_bytes
        if beyond.any():
            for role in out:
                out[role] = out[role].mask(beyond)
            notes.append(f"The text of {int(beyond.sum()):,} of {len(raw):,} rows is left out (their numbers are "
                         f"kept): a log keeps at most {size_text(limits.max_text_bytes)} of text, which the rows "
                         f"before them fill. {limits.raise_hint('text')}")
        kept = ", ".join(role for role in out)
        notes.append(f"Example text kept ({kept}): shown as written, never used by a method.")
    return out
