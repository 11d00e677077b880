"""Property-based tests of the data layer: whatever the input, the only outcomes are a canonical DataFrame that
satisfies the invariants of its shape, or an EvalDataError. Any other exception is a bug in evalcore."""

from __future__ import annotations

import gzip
import io
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from evalcore.data.validation import EvalDataError, labeled, load_eval_log, read_table, report_of, validate
from evalcore.data.mapping import SYNONYMS
from evalcore.data.schema import BATTLE_ROLES, BATTLES, KINDS, LOG, LOG_ROLES, SUMMARY, SUMMARY_ROLES

# Budgets keep the whole file well under 30 s; raise max_examples locally to hunt for bugs.
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ROUND_TRIP_SETTINGS = settings(SETTINGS, max_examples=50)
BYTES_SETTINGS = settings(SETTINGS, max_examples=300)

ALL_ROLES = sorted(set(LOG_ROLES) | set(SUMMARY_ROLES) | set(BATTLE_ROLES))
SYNONYM_NAMES = sorted({s for names in SYNONYMS.values() for s in names})

# ---------------------------------------------------------------------------------------------------------------
# strategies: tables


column_names = st.one_of(
    st.sampled_from(ALL_ROLES),
    st.sampled_from(SYNONYM_NAMES),
    st.sampled_from(["Model", " model ", "x_model", "extra", "notes", "accuracy_percent", "n_correct_inferred"]),
    st.text(min_size=0, max_size=8),
    st.integers(-3, 3),
)

TEXT_VALUES = ["a", "b", "A", "", " ", "high", "yes", "no", "true", "False", "nan", "inf", "-inf", "1", "0",
               "0.5", "1e3", "85%", "caf\xe9", "x,y", '"q"']
FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)
SMALL_NUMBERS = st.sampled_from([0, 1, 0.0, 1.0, 0.5, 0.99, -1, 2, 100, 1e300, np.nan, np.inf])
SCALARS = st.one_of(
    FLOATS, SMALL_NUMBERS, st.integers(-(2**70), 2**70), st.booleans(), st.none(), st.sampled_from(TEXT_VALUES),
    st.text(max_size=5), st.binary(max_size=3),
)


@st.composite
def columns(draw: st.DrawFn, n_rows: int) -> pd.Series:
    """One column of ``n_rows`` values of a random dtype (small pools make duplicates likely)."""
    kind = draw(st.sampled_from(
        ["float", "small", "int", "bool", "text", "object", "category", "Int64", "boolean", "string"]
    ))
    if kind == "float":
        return pd.Series(draw(st.lists(FLOATS, min_size=n_rows, max_size=n_rows)), dtype="float64")
    if kind == "small":
        return pd.Series(draw(st.lists(SMALL_NUMBERS, min_size=n_rows, max_size=n_rows)), dtype="float64")
    if kind == "int":
        return pd.Series(draw(st.lists(st.integers(-5, 10**6), min_size=n_rows, max_size=n_rows)), dtype="int64")
    if kind == "bool":
        return pd.Series(draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows)), dtype=bool)
    if kind == "text":
        return pd.Series(draw(st.lists(st.sampled_from(TEXT_VALUES), min_size=n_rows, max_size=n_rows)))
    if kind == "object":
        return pd.Series(draw(st.lists(SCALARS, min_size=n_rows, max_size=n_rows)), dtype=object)
    if kind == "category":
        values = draw(st.lists(st.sampled_from(["a", "b", None]), min_size=n_rows, max_size=n_rows))
        return pd.Series(pd.Categorical(values))
    if kind == "Int64":
        values = draw(st.lists(st.one_of(st.none(), st.integers(-2, 3)), min_size=n_rows, max_size=n_rows))
        return pd.Series(values, dtype="Int64")
    if kind == "boolean":
        values = draw(st.lists(st.one_of(st.none(), st.booleans()), min_size=n_rows, max_size=n_rows))
        return pd.Series(values, dtype="boolean")
    values = draw(st.lists(st.one_of(st.none(), st.sampled_from(TEXT_VALUES)), min_size=n_rows, max_size=n_rows))
    return pd.Series(values, dtype="string")


@st.composite
def random_tables(draw: st.DrawFn) -> pd.DataFrame:
    n_rows = draw(st.integers(0, 8))
    names = draw(st.lists(column_names, min_size=0, max_size=7, unique_by=str))
    return pd.DataFrame({name: draw(columns(n_rows)) for name in names}, index=range(n_rows))


@st.composite
def values(draw: st.DrawFn, n: int, valid: list | st.SearchStrategy, invalid: list) -> list:
    """``n`` values, all valid in most draws, otherwise mixed with invalid ones."""
    good = valid if isinstance(valid, st.SearchStrategy) else st.sampled_from(valid)
    pool = good if draw(st.integers(0, 3)) else st.one_of(good, st.sampled_from(invalid))
    return draw(st.lists(pool, min_size=n, max_size=n))


@st.composite
def near_valid_logs(draw: st.DrawFn) -> pd.DataFrame:
    """Logs that are often valid, so that the invariants of accepted frames get exercised."""
    n = draw(st.integers(1, 12))
    models = draw(values(n, ["m1", "m2", "m3"], [None]))
    frame = pd.DataFrame({"model": models})
    if draw(st.integers(0, 3)):
        key = pd.Series(models, dtype=object).fillna("")
        frame["example_id"] = key.groupby(key).cumcount()  # unique within each model
    else:
        frame["example_id"] = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    optional = {
        "task": (["t1", "t2"], [None]),
        "category": (["c1", "c2"], [None]),
        "correct": ([0, 1, np.nan, True, "yes", "false"], [0.5, 2, "high"]),
        "confidence": (st.floats(0, 1), [np.nan, 1.5, -0.1, 85.0, np.inf]),
        "score": (st.floats(-10, 10), [np.nan, np.inf, "x"]),
        "proxy": (st.floats(0, 1), [np.nan, 3.0]),
        "weight": (st.floats(0.1, 5), [np.nan, 0.0, -1.0]),
        "feature": (st.floats(-1, 1), [np.nan]),
        "comment": (["ok", "x"], [None]),
    }
    for name in draw(st.lists(st.sampled_from(sorted(optional)), unique=True, max_size=len(optional))):
        frame[name] = draw(values(n, *optional[name]))
    return frame


@st.composite
def near_valid_summaries(draw: st.DrawFn) -> pd.DataFrame:
    pairs = draw(st.lists(st.tuples(st.sampled_from(["m1", "m2", "m3"]), st.sampled_from(["t1", "t2", "t3"])),
                          min_size=1, max_size=9, unique=draw(st.integers(0, 3)) > 0))
    n = len(pairs)
    frame = pd.DataFrame(pairs, columns=["model", "task"])
    frame["n"] = draw(values(n, [10, 100], [0, -1, 2.5, np.nan, 1e300]))
    if draw(st.booleans()):
        frame["n_correct"] = draw(values(n, [0, 5, 10], [11, -1, 3.5, np.nan]))
    else:
        frame["accuracy"] = draw(values(n, [0.0, 0.5, 1.0], [50.0, 100.0, 150.0, -1.0, np.nan]))
    if draw(st.booleans()):
        frame["category"] = frame["task"].map({"t1": "c1", "t2": "c1", "t3": "c2"})
    return frame


@st.composite
def near_valid_battles(draw: st.DrawFn) -> pd.DataFrame:
    pairs = draw(st.lists(st.sampled_from([("m1", "m2"), ("m2", "m3"), ("m3", "m1"), ("m1", "m1")]), min_size=1,
                          max_size=8))
    n = len(pairs)
    frame = pd.DataFrame(pairs, columns=["model_a", "model_b"])
    if draw(st.booleans()):
        frame["outcome"] = draw(values(n, [0, 1, np.nan], [0.5, 2, "yes"]))
    if draw(st.booleans()):
        frame["judge"] = draw(values(n, [0.0, 0.3, 1.0, np.nan], [1.2]))
    return frame


mappings = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(ALL_ROLES + ["extra", "Model"]), st.sampled_from(ALL_ROLES + ["bogus"]),
                    max_size=4),
)


# ---------------------------------------------------------------------------------------------------------------
# invariants


def check_outcome(call, n_rows: int, min_models: int | None = None) -> pd.DataFrame | None:
    """Run ``call``; it must return a frame that satisfies its invariants or raise EvalDataError."""
    try:
        frame = call()
    except EvalDataError as exc:
        assert str(exc), "an EvalDataError must say what is wrong"
        return None
    assert isinstance(frame, pd.DataFrame)
    report = report_of(frame)
    assert len(frame) == n_rows == report.n_rows, "no row may be dropped"
    if report.kind == LOG:
        check_log(frame)
        models = frame["model"].nunique()
    elif report.kind == SUMMARY:
        check_summary(frame)
        models = frame["model"].nunique()
    else:
        assert report.kind == BATTLES
        check_battles(frame)
        models = len(set(frame["model_a"]) | set(frame["model_b"]))
    assert models == report.n_models
    assert models >= (min_models if min_models is not None else 1)
    return frame


def in_unit_interval_or_nan(series: pd.Series) -> bool:
    values = series.to_numpy(dtype=float)
    return bool(np.all(np.isnan(values) | ((values >= 0) & (values <= 1))))


def check_log(frame: pd.DataFrame) -> None:
    assert list(frame.columns[:5]) == ["model", "example_id", "task", "category", "group"]
    for col in ("model", "example_id", "task", "category", "group"):
        assert frame[col].map(type).eq(str).all(), col
    assert not frame.duplicated(["model", "example_id"]).any()
    assert frame.groupby("task")["category"].nunique().max() == 1
    if "correct" in frame:
        assert frame["correct"].dtype == "float64"
        assert frame["correct"].dropna().isin([0.0, 1.0]).all()
        assert len(labeled(frame, "correct")) == int(frame["correct"].notna().sum())
    if "confidence" in frame:
        assert in_unit_interval_or_nan(frame["confidence"])
    if "proxy" in frame and "correct" in frame:
        assert in_unit_interval_or_nan(frame["proxy"])
    if "weight" in frame:
        weights = frame["weight"].dropna()
        assert (weights > 0).all() and np.isfinite(weights).all()
    for col in ("correct", "score", "confidence", "proxy"):
        if col in frame:
            assert not np.isinf(frame[col].to_numpy(dtype=float)).any(), col
    for feature in report_of(frame).features:
        assert frame[feature].dtype == "float64"


def check_summary(frame: pd.DataFrame) -> None:
    assert list(frame.columns) == ["model", "task", "category", "n", "n_correct", "accuracy"]
    assert (frame["n"] >= 1).all()
    assert ((frame["n_correct"] >= 0) & (frame["n_correct"] <= frame["n"])).all()
    assert np.allclose(frame["accuracy"], frame["n_correct"] / frame["n"])
    assert not frame.duplicated(["model", "task"]).any()


def check_battles(frame: pd.DataFrame) -> None:
    assert (frame["model_a"] != frame["model_b"]).all()
    assert "outcome" in frame or "judge" in frame
    if "outcome" in frame:
        assert frame["outcome"].dropna().between(0.0, 1.0).all()  # 0.5: a tie; other fractions: soft verdicts
    if "judge" in frame:
        assert in_unit_interval_or_nan(frame["judge"])


# ---------------------------------------------------------------------------------------------------------------
# validate


@SETTINGS
@given(raw=random_tables(), mapping=mappings, kind=st.one_of(st.none(), st.sampled_from(KINDS)),
       min_models=st.one_of(st.none(), st.integers(1, 3)))
def test_validate_random_tables_returns_frame_or_eval_data_error(raw, mapping, kind, min_models):
    before = raw.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning (e.g. a lossy cast) would be a silent change of the data
        check_outcome(lambda: validate(raw, mapping=mapping, kind=kind, min_models=min_models), len(raw), min_models)
    pd.testing.assert_frame_equal(raw, before)  # the caller's table is never modified


@SETTINGS
@given(raw=st.one_of(near_valid_logs(), near_valid_summaries(), near_valid_battles()),
       min_models=st.one_of(st.none(), st.integers(1, 3)))
def test_validate_near_valid_tables_keep_invariants(raw, min_models):
    check_outcome(lambda: validate(raw, min_models=min_models), len(raw), min_models)


def test_near_valid_strategies_are_often_accepted():
    """Guard for the property above: its tables must not all be refused, or the invariants go untested."""
    accepted = {LOG: 0, SUMMARY: 0, BATTLES: 0}
    strategies = {LOG: near_valid_logs(), SUMMARY: near_valid_summaries(), BATTLES: near_valid_battles()}
    for kind, strategy in strategies.items():
        # derandomized: a fixed set of examples, so this guard is a check, not a coin flip
        @settings(max_examples=100, deadline=None, database=None, derandomize=True)
        @given(raw=strategy)
        def count(raw):
            try:
                validate(raw)
            except EvalDataError:
                return
            accepted[kind] += 1  # noqa: B023

        count()
    assert all(n > 0 for n in accepted.values()), accepted


# ---------------------------------------------------------------------------------------------------------------
# reading bytes


SAMPLE = pd.DataFrame({
    "model": ["m1", "m1", "m2", "m2"], "example_id": [1, 2, 1, 2], "correct": [1, 0, 1, np.nan],
    "confidence": [0.9, 0.2, 0.7, 0.6], "task": ["t", "t", "t", "t"],
})
SAMPLE_CSV = SAMPLE.to_csv(index=False).encode()


def _parquet_bytes() -> bytes:
    buffer = io.BytesIO()
    SAMPLE.to_parquet(buffer)
    return buffer.getvalue()


SAMPLE_PARQUET = _parquet_bytes()
SAMPLE_GZIP = gzip.compress(SAMPLE_CSV)

TEXT_ALPHABET = st.sampled_from(list("ab1.-, \t;|\"'\n\r{[<") + ["model", "correct", "confidence", "\xe9", "\x00"])


@st.composite
def random_texts(draw: st.DrawFn) -> bytes:
    text = "".join(draw(st.lists(TEXT_ALPHABET, max_size=60)))
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1"]))
    return text.encode(encoding, errors="replace")


CELLS = st.sampled_from(["model", "correct", "confidence", "example_id", "m1", "m2", "1", "0", "0.5", "", " ",
                         '"a,b"', '"x\ny"', '"', "high", "nan", "1e999", "-3", "\xe9"])


@st.composite
def random_grids(draw: st.DrawFn) -> bytes:
    """Table-like text: rows of cells joined by one delimiter, rows of varying length, odd line breaks."""
    delim = draw(st.sampled_from([",", "\t", ";", "|", " "]))
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    width = draw(st.integers(1, 5))
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        cells = draw(st.lists(CELLS, min_size=max(width - 1, 0), max_size=width + 1))
        lines.append(delim.join(cells))
    return (eol.join(lines) + draw(st.sampled_from(["", eol]))).encode("utf-8")


@st.composite
def damaged(draw: st.DrawFn, payload: bytes) -> bytes:
    """``payload`` truncated, or with a few bytes overwritten."""
    if draw(st.booleans()):
        return payload[: draw(st.integers(0, len(payload) - 1))]
    data = bytearray(payload)
    for _ in range(draw(st.integers(1, 4))):
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    return bytes(data)


MAGIC_NUMBERS = [b"PAR1", b"\x1f\x8b", b"PK\x03\x04", b"\xef\xbb\xbf", b"\xff\xfe", b"\x89PNG\r\n\x1a\n"]

random_sources = st.one_of(
    st.binary(max_size=200),
    random_texts(),
    random_grids(),
    random_grids().map(gzip.compress),
    damaged(SAMPLE_GZIP),
    damaged(SAMPLE_PARQUET),
    damaged(SAMPLE_CSV),
    st.builds(lambda magic, tail: magic + tail, st.sampled_from(MAGIC_NUMBERS), st.binary(max_size=60)),
)


@BYTES_SETTINGS
@given(data=random_sources, as_file=st.booleans())
def test_read_table_returns_frame_or_eval_data_error(data, as_file):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # e.g. pandas' ParserWarning about lost fields: data changed silently
            frame = read_table(io.BytesIO(data) if as_file else data)
    except EvalDataError as exc:
        assert str(exc)
        return
    assert isinstance(frame, pd.DataFrame)
    assert frame.shape[0] >= 1 and frame.shape[1] >= 1
    assert all(isinstance(c, str) and c == c.strip() for c in frame.columns)


@BYTES_SETTINGS
@given(data=random_sources)
def test_load_eval_log_returns_frame_or_eval_data_error(data):
    try:
        n_rows = len(read_table(data))
    except EvalDataError:
        with pytest.raises(EvalDataError):
            load_eval_log(data)
        return
    check_outcome(lambda: load_eval_log(data), n_rows)


@ROUND_TRIP_SETTINGS
@given(raw=near_valid_logs(), delimiter=st.sampled_from([",", "\t", ";"]), gz=st.booleans())
def test_written_then_read_log_matches_validated_frame(raw, delimiter, gz):
    """A table written as text and read back validates exactly like the table itself (or fails alike)."""
    assume(not raw.isna().all(axis=1).any())  # a row of empty fields is a blank line in a text file
    text = raw.to_csv(index=False, sep=delimiter).encode()
    data = gzip.compress(text) if gz else text
    try:
        expected = validate(pd.read_csv(io.BytesIO(text), sep=delimiter))
    except EvalDataError:
        with pytest.raises(EvalDataError):
            load_eval_log(data)
        return
    pd.testing.assert_frame_equal(load_eval_log(data), expected)
