"""User strings (names of models, tasks, groups, categories, columns and files) made safe to show literally.

Names come from uploaded files: they are data, never markup. Each renderer interprets its own markup, so each gets
its own escape:

* :func:`literal` for Streamlit's Markdown (captions, alerts, headings, tab and widget labels);
* :func:`plotly_literal` for any text of a plotly figure (titles, legend names, tick labels, hover text);
* :func:`chart_labels` for the categories of a chart axis or legend: shortened, unique and escaped;
* :func:`mathtext_literal` for matplotlib text (its mathtext reads ``$...$``);
* :func:`plain` for text shown as it is, never as Markdown (a dropdown's options, a table's cells, ``st.text``),
  where a Markdown escape would show as a backslash.

Each of them also shows the bidirectional controls of a name as their codes (:func:`bidi_visible`): a right-to-left
override in a name (U+202E) would otherwise reverse the rest of the line on every page.
"""

from __future__ import annotations

import re
import string
from typing import Iterable

#: U+2060 WORD JOINER: invisible and zero-width. Streamlit rewrites some patterns of the text that Markdown escapes
#: cannot reach (emoji shortcodes ``:smile:``, ``:streamlit:``, ``:material_x:`` icons, arrows such as ``->``,
#: links ``www.x.org`` and ``a@b.org``); a joiner inside each pattern breaks it.
WORD_JOINER = "\u2060"
#: Default width of chart labels (characters, ellipsis included).
LABEL_WIDTH = 40
ELLIPSIS = "…"
#: the end of a text cut to its bound (:func:`cut`)
CUT = "…(cut)"

_PUNCTUATION = frozenset(string.punctuation)  # every ASCII punctuation character may be backslash-escaped
_ARROW_START, _ARROW_END = frozenset("<->~"), frozenset("->=")  # '->', '<-', '--', '>=', '<=', '~=', '<->'
_LINE_BREAK = re.compile(r"\r\n|\r|\n|\u2028|\u2029")
#: the bidirectional controls: embeddings and overrides (U+202A-U+202E), isolates (U+2066-U+2069) and the
#: invisible marks (U+200E, U+200F, U+061C); in a name they reorder the text around it ("exe.txt" shown "txt.exe")
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: plotly's markup characters and their entities ('&' first: the others bring their own '&')
_PLOTLY_ENTITIES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("$", "&#36;"), ("%{", "&#37;{"))


def bidi_visible(value: object) -> str:
    """The text of ``value`` with each bidirectional control shown as its code (``\\u202e``, as Python writes it)
    instead of acting on the text around it: the name is shown as it is, in its own order."""
    return _BIDI.sub(lambda found: ascii(found.group())[1:-1], str(value))


def literal(value: object) -> str:
    """Markdown that Streamlit renders as exactly the text of ``value`` (apart from line breaks, see below).

    Every ASCII punctuation character is backslash-escaped (CommonMark renders ``\\x`` as ``x``), so emphasis,
    code, links, images, HTML, headings, lists, tables, maths (``$``) and Streamlit's directives (``:red[...]``)
    cannot start. A word joiner follows each ``:`` and ``@``, precedes the dot of ``www.`` and splits arrows:
    Streamlit replaces emoji and icon shortcodes and arrows, and GFM links ``http://``, ``www.`` and e-mail
    addresses, in the parsed text, where the escapes are gone. Line breaks become spaces (a name must not
    start a new block) and a leading space or tab becomes a character reference (four would start a code block).
    Bidirectional controls are shown as their codes (:func:`bidi_visible`).
    """
    text = _LINE_BREAK.sub(" ", bidi_visible(value))
    out = []
    for i, char in enumerate(text):
        if char == "." and text[max(0, i - 3):i].lower() == "www":  # 'www.' starts a link (GFM autolink literal)
            out.append(WORD_JOINER)
        out.append("\\" + char if char in _PUNCTUATION else char)
        if char in ":@" or (char in _ARROW_START and text[i + 1:i + 2] in _ARROW_END):
            out.append(WORD_JOINER)
    if text[:1] in (" ", "\t"):
        out[0] = f"&#{ord(text[0])};"
    return "".join(out)


def plotly_literal(value: object) -> str:
    """Text that plotly.js draws as exactly the text of ``value``.

    plotly reads a subset of HTML in every text (``<b>``, ``<i>``, ``<br>``, ``<a href>``, ``<span style>``, ...),
    decodes entities (``&lt;`` -> ``<``), substitutes ``%{...}`` in hover templates and typesets ``$...$`` as LaTeX
    when MathJax is present. ``& < > $ %{`` become entities, which plotly decodes back to the characters after
    parsing tags and templates (``%{`` is the only template syntax; a lone ``%`` stays). Line breaks become
    spaces (plotly breaks lines only at ``<br>``); bidirectional controls are shown as their codes.
    """
    text = _LINE_BREAK.sub(" ", bidi_visible(value))
    for char, entity in _PLOTLY_ENTITIES:
        text = text.replace(char, entity)
    return text


def shorten(value: object, width: int = LABEL_WIDTH) -> str:
    """``value`` as text of at most ``width`` characters: longer text keeps its start and ends with an ellipsis."""
    text = _LINE_BREAK.sub(" ", str(value))
    return text if len(text) <= width else text[:width - 1] + ELLIPSIS


def plain(value: object, limit: int | None = None) -> str:
    """``value`` as plain text on one line, for a dropdown's option or a table's cell: no Markdown escapes (they would
    show), line breaks as spaces, bidirectional controls as their codes (:func:`bidi_visible`); ``limit``: a longer
    text cut (:func:`cut`), as one stored before its bound existed."""
    text = str(value)
    if limit is not None:
        text = str(cut(text, limit))
    return _LINE_BREAK.sub(" ", bidi_visible(text))


def plain_cells(frame, limit: int):
    """``frame`` as a table shows it: each text cell that holds a bidirectional control or is longer than ``limit``
    through :func:`plain` (the others, and other columns, as they are); ``frame`` itself when none does."""
    shown = None
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object and str(values.dtype) not in ("string", "str"):
            continue
        text = values.map(lambda v: isinstance(v, str) and (len(v) > limit or _BIDI.search(v) is not None))
        if text.any():
            shown = frame.copy() if shown is None else shown
            shown.loc[text.to_numpy(bool), column] = [plain(v, limit) for v in values[text.to_numpy(bool)]]
    return frame if shown is None else shown


def cut(value: object, limit: int) -> object:
    """A text kept before its bound existed (a note, a name), cut to ``limit`` characters and ending "…(cut)", so
    that a page shows it at once; shorter texts and other values as they are."""
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + CUT
    return value


def chart_labels(names: Iterable[object], width: int = LABEL_WIDTH) -> dict[str, str]:
    """Short, unique, plotly-escaped labels for the distinct ``names`` (keyed by ``str(name)``), in first-seen order.

    Each name is cut to ``width`` characters (:func:`shorten`). A label already given to an earlier name gets a
    counter, ``"... (2)"``, ``"... (3)"``, until it is unique: the chart never merges two names into one category.
    Put the full name (:func:`plotly_literal`) in the hover text.
    """
    labels: dict[str, str] = {}
    used: set[str] = set()
    for key in dict.fromkeys(str(n) for n in names):
        label, counter = shorten(key, width), 1
        while label in used:
            counter += 1
            suffix = f" ({counter})"
            label = shorten(key, max(1, width - len(suffix))) + suffix
        used.add(label)
        labels[key] = plotly_literal(label)
    return labels


def mathtext_literal(value: object) -> str:
    """Text that matplotlib draws as exactly the text of ``value``: every ``$`` escaped as ``\\$``, so mathtext
    never starts (matplotlib turns ``\\$`` back into ``$`` in plain text)."""
    return bidi_visible(value).replace("$", r"\$")
