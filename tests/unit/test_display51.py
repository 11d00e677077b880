"""Bidirectional controls in names are shown as their codes, on pages and in the terminal (issue 51, item 8)."""

from __future__ import annotations

from evalcore.cli import _one_line
from evalcore.data.display import bidi_visible, literal, mathtext_literal, plotly_literal

CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


def test_bidi_controls_are_shown_as_their_codes_never_acting():
    name = "invoice\u202egpj.exe"
    assert bidi_visible(name) == "invoice\\u202egpj.exe"
    assert literal(name) == "invoice\\\\u202egpj\\.exe"  # the backslash escaped for Markdown: shown as \u202e
    assert plotly_literal(name) == mathtext_literal(name) == "invoice\\u202egpj.exe"
    for shown in (bidi_visible(CONTROLS), literal(CONTROLS), plotly_literal(CONTROLS), mathtext_literal(CONTROLS)):
        assert not set(shown) & set(CONTROLS)
    assert bidi_visible("שלום abc") == "שלום abc"  # right-to-left letters themselves are text, kept


def test_the_terminal_gets_control_and_bidi_characters_escaped():
    assert _one_line("a\x1b[31mb\x07\u202ec\u2067d") == "a\\x1b[31mb\\x07\\u202ec\\u2067d"
    assert not set(_one_line(CONTROLS + "\x1b\x07\x9b")) & set(CONTROLS + "\x1b\x07\x9b")
    assert _one_line("two\n lines\t") == "two lines"


def test_plain_text_for_dropdowns_and_table_cells_has_no_markdown_escapes_and_no_acting_controls():
    import pandas as pd

    from evalcore.data.display import plain, plain_cells

    assert plain("bot / nightly_v2 (a*b)") == "bot / nightly_v2 (a*b)"  # literal() would show backslashes here
    assert plain("ev\u202eil\nname") == "ev\\u202eil name" and plain("x" * 300, 200) == "x" * 200 + "…(cut)"
    frame = pd.DataFrame({"run": ["ev\u202eil", "ok", "L" * 50], "n": [1, 2, 3]})
    shown = plain_cells(frame, 20)
    assert list(shown["run"]) == ["ev\\u202eil", "ok", "L" * 20 + "…(cut)"] and list(shown["n"]) == [1, 2, 3]
    assert frame["run"].iloc[0] == "ev\u202eil"  # the frame itself (its CSV) keeps the value
    unchanged = frame.iloc[1:2]
    assert plain_cells(unchanged, 20) is unchanged  # nothing to show otherwise: no copy
