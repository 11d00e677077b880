"""User strings shown literally: Markdown, plotly and matplotlib escapes, chart labels (known answers)."""

from __future__ import annotations

import pytest

from evalcore.data.display import ELLIPSIS, WORD_JOINER, chart_labels, literal, mathtext_literal, plotly_literal, shorten

WJ = WORD_JOINER


@pytest.mark.parametrize("name, expected", [
    ("plain name 42", "plain name 42"),
    ("**x**", r"\*\*x\*\*"),
    ("_x_", r"\_x\_"),
    ("$x$", r"\$x\$"),
    (":red[x]", rf"\:{WJ}red\[x\]"),
    (":smile:", rf"\:{WJ}smile\:{WJ}"),
    (":material/home:", rf"\:{WJ}material\/home\:{WJ}"),
    ("![x](http://127.0.0.1:9/x.png)", rf"\!\[x\]\(http\:{WJ}\/\/127\.0\.0\.1\:{WJ}9\/x\.png\)"),
    ("<b>x</b>", r"\<b\>x\<\/b\>"),
    ('<a href="http://x">x</a>', rf'\<a href\=\"http\:{WJ}\/\/x\"\>x\<\/a\>'),
    ("<br>", r"\<br\>"),
    ("a\nb", "a b"),
    ("a\r\n\r\n# b", r"a  \# b"),
    ("back\\slash", r"back\\slash"),
    ("a\\", "a\\\\"),
    ("`code`", r"\`code\`"),
    ("- item", r"\- item"),
    ("a -> b <-> c", rf"a \-{WJ}\> b \<{WJ}\-{WJ}\> c"),
    ("a--b", rf"a\-{WJ}\-b"),
    ("x >= 1", rf"x \>{WJ}\= 1"),
    ("www.example.org", rf"www{WJ}\.example\.org"),
    ("WWW.example.org", rf"WWW{WJ}\.example\.org"),
    ("a@b.co", rf"a\@{WJ}b\.co"),
    ("&amp;", r"\&amp\;"),
    ("    code", r"&#32;   code"),
    ("\tx", "&#9;x"),
    ("model-a", r"model\-a"),
    ("été 🎉", "été 🎉"),
])
def test_literal_known_answers(name, expected):
    assert literal(name) == expected


def test_literal_escapes_every_ascii_punctuation_and_nothing_else():
    import string

    text = string.punctuation
    escaped = literal(text).replace(WJ, "")
    assert escaped == "".join("\\" + c for c in text)
    assert literal(string.ascii_letters + string.digits + " ") == string.ascii_letters + string.digits + " "


def test_literal_of_non_strings():
    assert literal(3) == "3"
    assert literal(-1.5) == r"\-1\.5"


@pytest.mark.parametrize("name, expected", [
    ("<b>x</b>", "&lt;b&gt;x&lt;/b&gt;"),
    ('<a href="http://x">x</a>', '&lt;a href="http://x"&gt;x&lt;/a&gt;'),
    ("<br>", "&lt;br&gt;"),
    ("&lt;", "&amp;lt;"),                # an entity in a name stays literal (plotly decodes entities)
    ("%{x} %{customdata[0]} 5%", "&#37;{x} &#37;{customdata[0]} 5%"),  # no hover-template substitution
    ("$x$", "&#36;x&#36;"),              # no LaTeX
    ("a\nb", "a b"),
    ("**x** :red[x]", "**x** :red[x]"),  # Markdown means nothing to plotly
    (7, "7"),
])
def test_plotly_literal_known_answers(name, expected):
    assert plotly_literal(name) == expected


def test_shorten():
    assert shorten("abc", 5) == "abc"
    assert shorten("abcde", 5) == "abcde"
    assert shorten("abcdef", 5) == "abcd" + ELLIPSIS
    assert len(shorten("x" * 100)) == 40


def test_chart_labels_short_names_escaped_and_in_order():
    labels = chart_labels(["b<i>", "a", "b<i>", 3])
    assert list(labels) == ["b<i>", "a", "3"]
    assert labels == {"b<i>": "b&lt;i&gt;", "a": "a", "3": "3"}


def test_chart_labels_long_names_shortened_and_unique():
    prefix = "p" * 45
    names = [prefix + "-one", prefix + "-two", prefix + "-three", "short"]
    labels = chart_labels(names, width=40)
    assert labels[names[0]] == "p" * 39 + ELLIPSIS
    assert labels[names[1]] == "p" * 35 + ELLIPSIS + " (2)"
    assert labels[names[2]] == "p" * 35 + ELLIPSIS + " (3)"
    assert labels["short"] == "short"
    assert all(len(v) <= 40 for v in labels.values())
    assert len(set(labels.values())) == len(labels)


def test_chart_labels_names_equal_after_line_breaks_stay_apart():
    labels = chart_labels(["a\nb", "a b"])
    assert labels == {"a\nb": "a b", "a b": "a b (2)"}


def test_chart_labels_shorten_before_escaping():
    """The cut never splits an entity: the name is cut first, then escaped."""
    name = "<" * 50
    assert chart_labels([name], width=10)[name] == "&lt;" * 9 + ELLIPSIS


@pytest.mark.parametrize("name, expected", [
    ("$x$", r"\$x\$"),
    ("cost $5", r"cost \$5"),
    ("plain", "plain"),
])
def test_mathtext_literal(name, expected):
    assert mathtext_literal(name) == expected


def test_mathtext_literal_draws_the_name_in_matplotlib():
    """matplotlib's own parser: the escaped text is not maths and is drawn as the original characters."""
    from matplotlib.figure import Figure

    fig = Figure()
    for name in ("$x$", "a\\$b$", "$$"):
        text = fig.text(0, 0, mathtext_literal(name))
        assert text._preprocess_math(text.get_text()) == (name, False)
