"""Which data the session works on: a built-in demo or the session's own upload.

The uploaded bytes live in this session's ``st.session_state``, and for reloads in the bounded upload store
(:mod:`.upload_store`), reachable only through the digest in this session's address (:mod:`.session_link`). They are read and validated in a separate
worker process whose memory and time are bounded (:mod:`evalcore.data.sandbox`), so a hostile file cannot starve other
sessions. Outcomes (the canonical frame, or what is wrong with the file) are cached process-wide keyed by the
sha256 digest of the bytes plus the column mapping (never by file name), so another session can only ever receive
a frame for bytes it uploaded itself. Cached frames are shared objects: read-only.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from evalcore.demo import synthetic as demo
from evalcore.data.validation import EvalDataError, LoadedTable, ValidationReport, read_and_validate, report_of, validate
from evalcore.data.display import literal
from evalcore.data.schema import SUMMARY
from evalcore.engine import LazyLog, from_frame
from evalcore.data.limits import ReadLimits, env_number
from evalcore.data.reading import read_table
from evalcore.data.repeats import has_repeats, per_example
from evalcore.data.sandbox import run_bounded

from .store import cached

SOURCE = "data_source"        # {"type": "demo", "name": ...}, {"type": "upload", "digest": ..., "filename": ...}
                               # or {"type": "saved", "id": ..., "name": ...} (a workspace dataset), or
                               # {"type": "lost", "digest": ..., "reason": ...}: an upload named by the address
                               # that the upload store no longer holds (never replaced by the demo silently)
UPLOAD_BYTES = "upload_bytes"  # the session's uploaded files: a tuple of (file name, bytes)
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
    """The validated data of this session and the key that identifies its content.

    ``frame`` is the per-example frame: with repeated samples, one row per (model, example) holding the mean over its
    samples (:func:`evalcore.data.repeats.per_example`); ``samples`` is the validated log as loaded; ``stored`` a
    workspace dataset too large to load (more than ``EVALCORE_ENGINE_ROWS`` rows), which stays in its Parquet file
    (then ``frame`` has its columns and no row). Every view reads :attr:`log`."""

    key: str
    label: str
    frame: pd.DataFrame
    report: ValidationReport
    samples: pd.DataFrame | None = None
    stored: LazyLog | None = None

    @property
    def log(self) -> LazyLog | pd.DataFrame:
        """What every view analyses: a per-example log or battles as a :class:`LazyLog` (the stored dataset, or
        DuckDB reading :attr:`frame` in place), so every method runs the same reductions wherever the log lives;
        a leaderboard summary (a few rows per model) stays a frame. Kept per data key by :func:`_wrapped` (not a
        ``functools.cached_property``: on Python 3.11 its lock is one per class, so every session would wait on
        every other session's first query)."""
        if self.stored is not None:
            return self.stored
        if self.report.kind == SUMMARY:
            return self.frame
        return _wrapped(self.key, self.label, self.report.kind, self.frame)

    @property
    def loaded(self) -> pd.DataFrame:
        """The validated rows as loaded (every sample): what saving the dataset stores."""
        return self.frame if self.samples is None else self.samples

    def head(self, n: int) -> pd.DataFrame:
        """The first ``n`` rows as loaded (every sample; of a stored dataset, as the engine returns them)."""
        return self.loaded.head(n) if self.stored is None else self.stored.run(self.stored.table.limit(n))


#: the LazyLogs of the latest frames in memory, by data key (a few: each holds its frame)
_LOGS: OrderedDict = OrderedDict()
_LOGS_KEPT = 4
_LOGS_LOCK = threading.Lock()


def _wrapped(key: str, label: str, kind: str, frame: pd.DataFrame) -> LazyLog:
    """:func:`evalcore.engine.from_frame` of a session's frame, made once per data key and kept for the next reruns
    (its counts and the selections' row counts are cached inside it). The lock guards only the dictionary: the log is
    made outside it, so one session opening its data never waits for another's; should two make the same log at
    once, the first one kept is the one every session uses."""
    with _LOGS_LOCK:
        log = _LOGS.get(key)
        if log is not None and log.frame is frame:
            _LOGS.move_to_end(key)
            return log
    made = from_frame(frame, label, kind)
    with _LOGS_LOCK:
        log = _LOGS.get(key)
        if log is None or log.frame is not frame:
            log = _LOGS[key] = made
        _LOGS.move_to_end(key)
        while len(_LOGS) > _LOGS_KEPT:
            _LOGS.popitem(last=False)
        return log


def digest(files: tuple[tuple[str, bytes], ...]) -> str:
    """sha256 of the uploaded files' names and bytes: the only cache key for an upload's content (names matter:
    some tools' logs say their task only in the file name)."""
    h = hashlib.sha256()
    for name, data in files:
        h.update(hashlib.sha256(name.encode("utf-8", "replace")).digest())
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


@cached("Averaging repeated samples per example...")
def _units(key: str, _frame: pd.DataFrame) -> pd.DataFrame | None:
    """One row per (model, example) of a log with repeated samples (the unit of every view); None when no example
    has several samples. Cached: the duplicate check scans the whole log, once per dataset, not on every rerun."""
    return per_example(_frame) if has_repeats(_frame) else None


@cached("Preparing the demo data...")
def demo_frame(name: str) -> pd.DataFrame:
    """The validated canonical frame of a built-in demo."""
    if name == "synthetic":
        return validate(demo.synthetic_benchmark(seed=0).log)
    if name == "sklearn":
        from evalcore.demo import sklearn_models as demo_sklearn

        return validate(demo_sklearn.sklearn_models(seed=0))
    if name == "battles":
        return validate(demo.pairwise_battles(seed=0).battles)
    raise KeyError(name)


@cached("Reading and validating the file in a separate worker...")
def _load(content_digest: str, mapping: tuple[tuple[str, str | None], ...] | None, kind: str | None,
          _files: tuple[tuple[str, bytes], ...]) -> LoadedTable | EvalDataError:
    """The upload read and validated under ``mapping`` (None: suggested from the names) in a bounded worker; a
    file that cannot be read comes back as its error, so that it is not read again on every rerun."""
    try:
        return run_bounded(read_and_validate, list(_files), None if mapping is None else dict(mapping), kind,
                           what="Reading and validating the file")
    except EvalDataError as exc:
        return exc


def upload_table(content_digest: str, files: tuple[tuple[str, bytes], ...],
                 mapping: dict[str, str | None] | None = None, kind: str | None = None) -> LoadedTable:
    """The upload's columns and row count, with its canonical frame or validation problem under ``mapping``;
    raises EvalDataError when the file cannot be read at all."""
    outcome = _load(content_digest, None if mapping is None else tuple(sorted(mapping.items())), kind, files)
    if isinstance(outcome, EvalDataError):
        raise EvalDataError(str(outcome))
    return outcome


def read_upload(data: bytes) -> pd.DataFrame:
    """A small auxiliary upload (e.g. annotators' labels) read as a raw table in a bounded worker."""
    return run_bounded(read_table, data, what="Reading the file")


@cached("Opening the saved dataset...")
def _saved(dataset_id: str, viewer: str | None) -> pd.DataFrame:
    """A workspace dataset's canonical frame (saved datasets never change: the id is the content's key)."""
    from .workspace_store import workspace

    return workspace().dataset(dataset_id, viewer=viewer)


def use_saved(dataset_id: str, name: str) -> None:
    """Make a workspace dataset the session's data."""
    st.session_state[SOURCE] = {"type": "saved", "id": dataset_id, "name": name}


def use_demo(name: str) -> None:
    """Make a demo the session's data."""
    st.session_state[SOURCE] = {"type": "demo", "name": name}


def use_upload(files: tuple[tuple[str, bytes], ...]) -> str:
    """Keep an upload of one or several files (name, bytes) in this session (replacing an earlier one); returns
    its digest."""
    from .upload_store import uploads
    from .workspace_store import viewer

    key = digest(files)
    current = st.session_state.get(SOURCE, {})
    if current.get("type") != "upload" or current.get("digest") != key:
        st.session_state[UPLOAD_BYTES] = files
        st.session_state.pop(MAPPING, None)
        st.session_state.pop(KIND, None)
    st.session_state[SOURCE] = {"type": "upload", "digest": key, "filename": upload_name(files)}
    uploads().put(key, files, viewer())  # kept for a reload of this session's address
    return key


def upload_name(files: tuple[tuple[str, bytes], ...]) -> str:
    """How an upload is named: its file's name, or "3 files"."""
    return files[0][0] if len(files) == 1 else f"{len(files)} files"


LOST = ("The uploaded file is no longer on the server (it was evicted or the server restarted): upload it again "
        "on the Data page, or load a demo.")
FORBIDDEN = ("The upload named in this address belongs to another signed-in user: uploads stay with the user who "
             "made them. Upload the file yourself on the Data page, or ask them to save it to the workspace and "
             "share an analysis.")


def reopen_upload(content_digest: str, mapping: dict[str, str | None] | None = None,
                  kind: str | None = None) -> bool:
    """Make the upload with ``content_digest`` (named by the address of a reloaded page) this session's data again,
    with its column mapping and data shape, from the upload store; when the store no longer holds it (or holds it
    for another signed-in user), the session's data is a "lost" source whose use says so plainly, never the demo.
    Returns whether the upload is back."""
    from .upload_store import FOUND, MISSING, uploads
    from .workspace_store import viewer

    status, files = uploads().get(content_digest, viewer())
    if status != FOUND or digest(files) != content_digest:
        st.session_state[SOURCE] = {"type": "lost", "digest": content_digest,
                                    "reason": LOST if status == MISSING else FORBIDDEN}
        st.session_state.pop(UPLOAD_BYTES, None)
        return False
    st.session_state[UPLOAD_BYTES] = files
    st.session_state[SOURCE] = {"type": "upload", "digest": content_digest, "filename": upload_name(files)}
    if mapping:
        st.session_state[MAPPING] = dict(mapping)
    else:
        st.session_state.pop(MAPPING, None)
    if kind:
        st.session_state[KIND] = kind
    else:
        st.session_state.pop(KIND, None)
    return True


def _mapping_key(chosen: dict | None, kind: str | None) -> str:
    items = tuple(sorted((chosen or {}).items(), key=lambda kv: (kv[0], kv[1] or "")))
    return hashlib.sha256(repr((items, kind)).encode()).hexdigest()[:12]


def current_key() -> str | None:
    """The data key (:attr:`ActiveData.key`) of the session's source without loading it; None for a lost upload."""
    src = source()
    if src["type"] == "demo":
        return f"demo:{src['name']}"
    if src["type"] == "saved":
        return f"saved:{src['id']}"
    if src["type"] == "upload":
        chosen = st.session_state.get(MAPPING) or None
        return f"upload:{src['digest']}:{_mapping_key(chosen, st.session_state.get(KIND))}"
    return None


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
        return _with_units(f"demo:{src['name']}", f"demo · {DEMOS[src['name']]}", frame)
    if src["type"] == "saved":
        from .workspace_store import viewer, workspace

        try:
            record = workspace().dataset_record(src["id"], viewer())
            if record.rows > engine_rows():
                return _in_engine(src["id"], src["name"], record)
            frame = _saved(src["id"], viewer())
        except (LookupError, PermissionError) as exc:
            raise EvalDataError(f"The saved dataset '{src['name']}' cannot be opened: {exc}") from exc
        return _with_units(f"saved:{src['id']}", f"workspace · {src['name']}", frame)
    if src["type"] == "lost":
        raise EvalDataError(src["reason"])
    files = st.session_state[UPLOAD_BYTES]
    kind = st.session_state.get(KIND)
    chosen = st.session_state.get(MAPPING) or None  # None: the mapping suggested from the names, in the worker
    table = upload_table(src["digest"], files, chosen, kind)
    if table.frame is None:
        raise EvalDataError(table.problem)
    key = f"upload:{src['digest']}:{_mapping_key(chosen, kind)}"
    return _with_units(key, f"upload · {src['filename']}", table.frame)


@cached("Counting models, tasks and examples...")
def _counts(key: str, _log) -> dict[str, int]:
    """Distinct tasks and examples ((task, example) pairs) of a log, or battles' rows; cached per data key."""
    if isinstance(_log, pd.DataFrame):  # a leaderboard summary: a few rows per model
        return {"tasks": int(_log["task"].nunique())}
    if _log.kind == "battles":
        return {"battles": int(_log.n_rows)}
    t = _log.table
    examples = int(_log.run(t.select("task", "example_id").distinct().count().name("n").as_table())["n"].iloc[0])
    return {"tasks": len(_log.distinct("task")), "examples": examples}


def data_name(files: tuple[tuple[str, bytes], ...] | None = None) -> str:
    """What the session's data is called: the uploaded file's name (up to three names), the demo's or the saved
    dataset's name."""
    src = source()
    if src["type"] == "upload":
        files = st.session_state.get(UPLOAD_BYTES, ()) if files is None else files
        return " + ".join(name for name, _ in files) if 1 < len(files) <= 3 else src["filename"]
    if src["type"] == "demo":
        return f"demo · {src['name']}"
    return f"workspace · {src.get('name', '')}"


def loaded_sentence(data: ActiveData) -> str:
    """One plain sentence about what was loaded, e.g. "mmlu_pro_per_question.csv.gz: 29 models, 14 categories,
    12,032 examples; 2 notes" (counts as integers, :func:`evalcore.stats.headline.count`); a log whose tasks are its
    categories (a category column and no task column: :attr:`ValidationReport.tasks_are_categories`) counts
    categories."""
    from evalcore.stats.headline import count

    def n(k: int, noun: str, nouns: str | None = None) -> str:
        return f"{count(k)} {noun if k == 1 else nouns or noun + 's'}"

    report = data.report
    counts = _counts(data.key, data.log)
    parts = [n(report.n_models, "model")]
    if "tasks" in counts:
        parts.append(n(counts["tasks"], "category", "categories") if report.tasks_are_categories
                     else n(counts["tasks"], "task"))
    if "examples" in counts:
        parts.append(n(counts["examples"], "example"))
    if "battles" in counts:
        parts.append(n(counts["battles"], "battle"))
    said = [n(len(report.warnings), "warning")] if report.warnings else []
    said += [n(len(report.notes), "note")] if report.notes else []
    return f"{data_name()}: {', '.join(parts)}" + (f"; {', '.join(said)}" if said else "") + "."


def engine_rows() -> int:
    """Saved datasets with more rows than this (``EVALCORE_ENGINE_ROWS``, default the in-memory row limit
    ``EVALCORE_MAX_ROWS``, 10,000,000) are analysed in the engine instead of loaded."""
    return env_number("EVALCORE_ENGINE_ROWS", ReadLimits.from_env().max_rows)


@functools.lru_cache(maxsize=8)
def _stored(root: str, dataset_id: str) -> LazyLog:
    """The engine's view of a stored dataset (a few small objects; the data stays in its Parquet file)."""
    from .workspace_store import workspace

    return workspace().lazy_dataset(dataset_id)


def _in_engine(dataset_id: str, name: str, record) -> ActiveData:
    from .workspace_store import root

    log = _stored(str(root()), dataset_id)
    report = ValidationReport(kind=log.kind, n_rows=record.rows, n_models=record.models,
                              mapping={role: role for role in log.mapping},
                              notes=(f"{record.rows:,} rows: more than this dashboard loads into memory "
                                     f"(EVALCORE_ENGINE_ROWS = {engine_rows():,}), so the dataset is analysed in the "
                                     "engine (DuckDB) where it is stored.", *log.notes))
    return ActiveData(f"saved:{dataset_id}", f"workspace · {name}", log.run(log.table.limit(0)), report,
                      stored=log)


def _with_units(key: str, label: str, frame: pd.DataFrame) -> ActiveData:
    """The session's data; a log with repeated samples is analysed per example."""
    units = _units(key, frame) if "repeat" in frame.columns else None
    if units is not None:
        return ActiveData(key, label, units, report_of(frame), samples=frame)
    return ActiveData(key, label, frame, report_of(frame))


def try_active_data(link: bool = True) -> ActiveData | None:
    """The session's data, or None after showing why it cannot be used (with a link to the Data page)."""
    try:
        return active_data()
    except EvalDataError as exc:
        if source()["type"] == "lost":  # said as it is: the address names an upload this server no longer holds
            st.error(literal(exc), icon=":material/cloud_off:")
        else:
            st.error(f"The uploaded data cannot be used yet: {literal(exc)}")
        if link:
            st.page_link("pages/data.py", label="Fix it on the Data page", icon=":material/upload_file:")
        return None
