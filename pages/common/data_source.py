"""Which data the session works on: a built-in demo or the session's own upload.

The uploaded bytes live in this session's ``st.session_state`` only. Parsed and validated frames are cached
process-wide keyed by the sha256 digest of the bytes plus the column mapping (never by file name), so another
session can only ever receive a frame for bytes it uploaded itself. Cached frames are shared objects: read-only.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from evalcore import demo
from evalcore.data import EvalDataError, ValidationReport, report_of, suggest_mapping, validate
from evalcore.display import literal
from evalcore.reading import read_table

SOURCE = "data_source"        # {"type": "demo", "name": ...} or {"type": "upload", "digest": ..., "filename": ...}
UPLOAD_BYTES = "upload_bytes"  # the session's uploaded bytes
MAPPING = "upload_mapping"     # {user column: role} chosen on the data page
KIND = "upload_kind"           # None (detect) or log / summary / battles

DEMOS = {
    "synthetic": "Synthetic benchmark with known ground truth (5 models, 9 tasks, 3 categories; seed 0)",
    "sklearn": "Real models: scikit-learn classifiers on bundled datasets (5-fold out-of-fold; seed 0)",
    "battles": "Pairwise battles: AI-judge probabilities and human votes on a subset (seed 0)",
}
DEFAULT_DEMO = "synthetic"


@dataclass(frozen=True)
class ActiveData:
    """The validated data of this session and the key that identifies its content."""

    key: str
    label: str
    frame: pd.DataFrame
    report: ValidationReport


def digest(data: bytes) -> str:
    """sha256 of the uploaded bytes: the only cache key for an upload's content."""
    return hashlib.sha256(data).hexdigest()


@st.cache_resource(max_entries=8, show_spinner="Preparing the demo data...")
def demo_frame(name: str) -> pd.DataFrame:
    """The validated canonical frame of a built-in demo."""
    if name == "synthetic":
        return validate(demo.synthetic_benchmark(seed=0).log)
    if name == "sklearn":
        from evalcore import demo_sklearn  # scikit-learn is imported only when this demo is chosen

        return validate(demo_sklearn.sklearn_models(seed=0))
    if name == "battles":
        return validate(demo.pairwise_battles(seed=0).battles)
    raise KeyError(name)


@st.cache_resource(max_entries=8, show_spinner="Reading the file...")
def raw_upload(content_digest: str, _data: bytes) -> pd.DataFrame:
    """The uploaded table as read (raises EvalDataError; errors are not cached)."""
    return read_table(_data)


@st.cache_resource(max_entries=16, show_spinner="Validating...")
def validated_upload(content_digest: str, mapping: tuple[tuple[str, str], ...], kind: str | None,
                     _raw: pd.DataFrame) -> pd.DataFrame:
    """The canonical frame for an upload under a column mapping."""
    return validate(_raw, mapping=dict(mapping), kind=kind)


def use_demo(name: str) -> None:
    """Make a demo the session's data."""
    st.session_state[SOURCE] = {"type": "demo", "name": name}


def use_upload(data: bytes, filename: str) -> str:
    """Keep an upload in this session (replacing an earlier one); returns its digest."""
    key = digest(data)
    current = st.session_state.get(SOURCE, {})
    if current.get("digest") != key:
        st.session_state[UPLOAD_BYTES] = data
        st.session_state.pop(MAPPING, None)
        st.session_state.pop(KIND, None)
    st.session_state[SOURCE] = {"type": "upload", "digest": key, "filename": filename}
    return key


def source() -> dict:
    """The session's data source; the default demo on first open."""
    if SOURCE not in st.session_state:
        use_demo(DEFAULT_DEMO)
    return st.session_state[SOURCE]


def active_data() -> ActiveData:
    """The session's validated data; raises EvalDataError when the upload does not validate."""
    src = source()
    if src["type"] == "demo":
        frame = demo_frame(src["name"])
        return ActiveData(f"demo:{src['name']}", f"demo · {DEMOS[src['name']]}", frame, report_of(frame))
    data = st.session_state[UPLOAD_BYTES]
    raw = raw_upload(src["digest"], data)
    kind = st.session_state.get(KIND)
    mapping = st.session_state.get(MAPPING) or suggest_mapping(raw.columns, kind)
    items = tuple(sorted(mapping.items()))
    frame = validated_upload(src["digest"], items, kind, raw)
    mapping_key = hashlib.sha256(repr((items, kind)).encode()).hexdigest()[:12]
    return ActiveData(f"upload:{src['digest']}:{mapping_key}", f"upload · {src['filename']}", frame,
                      report_of(frame))


def try_active_data(link: bool = True) -> ActiveData | None:
    """The session's data, or None after showing why it cannot be used (with a link to the Data page)."""
    try:
        return active_data()
    except EvalDataError as exc:
        st.error(f"The uploaded data cannot be used yet: {literal(exc)}")
        if link:
            st.page_link("pages/data.py", label="Fix it on the Data page", icon=":material/upload_file:")
        return None
