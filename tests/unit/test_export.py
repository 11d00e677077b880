"""CSV exports neutralized against formula injection (OWASP), with numbers left numeric (known answers)."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

from evalcore.data.export import csv_bytes, neutralize, safe_frame


@pytest.mark.parametrize("cell, expected", [
    ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
    ("+1+1", "'+1+1"),
    ("-2+3", "'-2+3"),
    ("@SUM(1)", "'@SUM(1)"),
    ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"),
    ("=cat", "'=cat"),
    ("plain", "plain"),
    ("a=1", "a=1"),
    ("", ""),
    ("-1.5", "-1.5"),      # a plain number written as text cannot carry a formula
    ("+3", "+3"),
    ("-1e-3", "-1e-3"),
    ("-1.5 (-2, 0)", "'-1.5 (-2, 0)"),
    (-1.5, -1.5),
    (None, None),
])
def test_neutralize(cell, expected):
    assert neutralize(cell) == expected


def read_back(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def test_csv_bytes_cells_and_headers():
    frame = pd.DataFrame({
        "model": ['=HYPERLINK("http://x")', "+1+1", "@SUM(1)", "ok"],
        "=cat": [-1.5, 2.0, np.nan, 0.25],
        "n": [-3, 1, 2, 4],
        "label": pd.Categorical(["-2+3", "\t=1", "\r=1", "fine"]),
    })
    rows = read_back(csv_bytes(frame))
    assert rows[0] == ["model", "'=cat", "n", "label"]
    assert [r[0] for r in rows[1:]] == ['\'=HYPERLINK("http://x")', "'+1+1", "'@SUM(1)", "ok"]
    assert [r[1] for r in rows[1:]] == ["-1.5", "2.0", "", "0.25"]   # floats stay numbers
    assert [r[2] for r in rows[1:]] == ["-3", "1", "2", "4"]         # so do integers
    assert [r[3] for r in rows[1:]] == ["'-2+3", "'\t=1", "'\r=1", "fine"]


def test_safe_frame_leaves_the_input_and_numeric_dtypes_alone():
    frame = pd.DataFrame({"a": ["=1"], "b": [-1.5], "c": pd.array([-2], dtype="Int64"), "d": [True]})
    out = safe_frame(frame)
    assert frame.loc[0, "a"] == "=1"
    assert out.loc[0, "a"] == "'=1"
    assert (out["b"].dtype, out["c"].dtype, out["d"].dtype) == (np.dtype(float), pd.Int64Dtype(), np.dtype(bool))
    assert out.loc[0, "b"] == -1.5 and out.loc[0, "c"] == -2 and bool(out.loc[0, "d"])


def test_duplicate_and_multiindex_headers():
    frame = pd.DataFrame([["=x", 1.0]], columns=pd.MultiIndex.from_tuples([("=top", "a"), ("ok", "-b")]))
    rows = read_back(csv_bytes(frame))
    assert rows[0] == ["'=top", "ok"]
    assert rows[1] == ["a", "'-b"]
    assert rows[2] == ["'=x", "1.0"]
    twice = pd.DataFrame([["=x", "=y"]], columns=["=c", "=c"])
    assert read_back(csv_bytes(twice)) == [["'=c", "'=c"], ["'=x", "'=y"]]


def test_line_breaks_inside_cells_round_trip():
    frame = pd.DataFrame({"name": ["a\rb", "c\nd", "e\r\nf"], "x": [1.0, 2.0, 3.0]})
    back = pd.read_csv(io.BytesIO(csv_bytes(frame)))
    assert back["name"].tolist() == ["a\rb", "c\nd", "e\r\nf"]
    assert back["x"].tolist() == [1.0, 2.0, 3.0]
