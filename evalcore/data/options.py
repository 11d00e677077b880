"""The options of a multiple-choice example (role ``options``), read so that people see the question as the model
did: each option with its letter, the model's choice and the reference marked.

A log keeps them in one column (a list in Parquet or JSON, a JSON array, a Python list as a CSV written from a list
column holds it: ``['2 m/s', '4 m/s']``, or one option a line), or in one column per option: ``A``, ``B``, ``C``
... (three or more: two single letters are a battle's models) or ``option_a``, ``choice_b`` ... (two or more).
:func:`gather_option_columns` turns such columns into the one ``options`` column when the log is validated (as a JSON
array per row). Options are text: shown literally, never used by a method.
"""

from __future__ import annotations

import ast
import json
import re

import pandas as pd

from evalcore.data.mapping import option_columns

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: a leading letter the text of an option may already carry ("A. 2 m/s", "(B) 4 m/s")
_LEADING_LETTER = re.compile(r"\A\s*\(?([A-Z])\s*[).:]\s+")
#: an answer that is a letter: "C", "(C)", "C.", "C) 4 m/s", or "... the answer is (C)"
_ANSWER_LETTER = (re.compile(r"\A\s*\(?([A-Z])\s*(?:[).:]|\s*\Z)"),
                  re.compile(r"(?i:answer is):?\s*(?:\(([A-Z])\)|([A-Z])(?:[.,;]|\s*\Z))"))


def gather_option_columns(raw: pd.DataFrame, mapping: dict[str, str]) -> tuple[pd.DataFrame, dict[str, str],
                                                                                 str] | None:
    """Where ``mapping`` has no ``options`` and ``raw``'s unmapped columns are option columns
    (:func:`evalcore.data.mapping.option_columns`): ``raw`` with them replaced by one ``options`` column (a JSON
    array per row, missing options left out at the end, a missing one inside kept as ""), the mapping with it,
    and a note saying so. None otherwise."""
    if "options" in mapping.values():
        return None
    columns = option_columns([c for c in raw.columns if c not in mapping])
    if not columns:
        return None
    cells = raw[columns].astype(object).where(raw[columns].notna(), None)

    def one(values: tuple) -> str | None:
        last = max((i for i, v in enumerate(values) if v is not None), default=-1)
        return None if last < 0 else json.dumps(["" if v is None else str(v) for v in values[:last + 1]],
                                                ensure_ascii=False)

    name = "options"
    while name in raw.columns:
        name = f"_{name}"
    gathered = pd.Series([one(v) for v in cells.itertuples(index=False, name=None)], index=raw.index, dtype=object)
    out = raw.drop(columns=columns).assign(**{name: gathered})
    note = (f"Columns {', '.join(repr(c) for c in columns)} kept as each example's options (lettered "
            f"{LETTERS[0]}–{LETTERS[len(columns) - 1]}), shown with its question on the Label page.")
    return out, {**mapping, name: "options"}, note


def parse_options(text: object) -> list[str] | None:
    """The options one ``options`` value holds: a JSON array or Python list literal (items as text), else one option
    a line (two lines or more); None for a missing or empty value, or one that holds a single line. A value cut at the
    text limit (:mod:`evalcore.data.text`) that no longer reads as a list is read line by line, or not at all."""
    if not isinstance(text, str) or not text.strip():
        return None
    body = text.strip()
    if body.startswith("["):
        for read in (json.loads, ast.literal_eval):
            try:
                items = read(body)
            except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
                continue
            if isinstance(items, (list, tuple)) and items:
                return [_strip_letter(str(item), i) for i, item in enumerate(items[:len(LETTERS)])]
    lines = [line for line in body.splitlines() if line.strip()]
    if 2 <= len(lines) <= len(LETTERS):
        return [_strip_letter(line, i) for i, line in enumerate(lines)]
    return None


def _strip_letter(option: str, index: int) -> str:
    """``option`` without the letter it already carries, when that is its own letter ("B. 4 m/s" -> "4 m/s")."""
    found = _LEADING_LETTER.match(option)
    return option[found.end():] if found and found.group(1) == LETTERS[index] else option.strip()


def chosen_letter(answer: object, options: list[str]) -> str | None:
    """The letter of the option ``answer`` names: a letter ("C", "(C)", "C) ...", "the answer is (C)") within the
    options, or an option's exact text (ignoring case and surrounding blanks); None otherwise."""
    if not isinstance(answer, str) or not answer.strip():
        return None
    for pattern in _ANSWER_LETTER:
        found = pattern.search(answer)
        letter = next((g for g in found.groups() if g), None) if found else None
        if letter is not None and LETTERS.index(letter) < len(options):
            return letter
    wanted = answer.strip().casefold()
    return next((LETTERS[i] for i, option in enumerate(options) if option.strip().casefold() == wanted), None)


def option_lines(options: list[str], model: str | None, reference: str | None) -> str:
    """The options as lines of text to show literally: "A. text", the model's choice (letter ``model``) marked
    "◀ the model's answer" and the reference (letter ``reference``) "✓ reference"."""
    lines = []
    for letter, option in zip(LETTERS, options):
        marks = [m for m, on in (("◀ the model's answer", letter == model), ("✓ reference", letter == reference))
                 if on]
        lines.append(f"{letter}. {option}" + (f"    {'  '.join(marks)}" if marks else ""))
    return "\n".join(lines)
