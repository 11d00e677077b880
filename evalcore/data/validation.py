"""Evaluation data: load, map and validate the three shapes evalcore understands.

Public API
----------
``load_eval_log(source, mapping=None, kind=None, min_models=None)`` read + validate, returns the canonical frame.
``validate(raw, mapping=None, kind=None, min_models=None)`` canonical frame or :class:`EvalDataError`.
``report_of(frame)`` the :class:`ValidationReport` of a validated frame (what was filled in, ignored, unlabeled).
``labeled(frame, metric)`` the rows of a log that carry the metric (unlabeled rows are kept in the log).

Canonical shapes (see :mod:`evalcore.data.schema`):

* log: model, example_id, task, category, group (str), then the present value roles among correct, score,
  confidence, proxy, weight (float64; a missing metric marks an unlabeled row; none in a log of the models' outputs
  alone, the start of a comparison campaign, :mod:`evalcore.labeling.comparison`), then extra numeric feature columns;
* summary: model, task, category (str), n, n_correct (int64), accuracy (float64, fraction), se (float64, the
  tool's own standard error of the accuracy, when given);
* battles: model_a, model_b (str), outcome (float64 0/1, missing = no human vote), judge (float64 in [0, 1]);
* logs and battles may carry an example's text (``input``, ``target``, ``output``, ``explanation``; logs also
  ``options``, gathered from option columns A, B, C ... by :mod:`evalcore.data.options`, and ``image``, a path; object
  columns of str), bounded by :mod:`evalcore.data.text`.

Nothing is dropped silently: rows that views exclude are counted in the report, and every refusal names the
column, the first offending rows (row 1 = the first data row after the header) and what was expected.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Iterable

import numpy as np
import pandas as pd

from evalcore.data.features import screen_features
from evalcore.data.mapping import GROUP_VALUES, check_mapping, detect_kind, suggest_group, suggest_mapping
from evalcore.data.options import gather_option_columns
from evalcore.importers import RawLog, read_logs
from evalcore.importers.combine import UNRELATED
from evalcore.importers.detect import NamedSource
from evalcore.data.reading import EvalDataError, ReadLimits, Source, listed, read_table
from evalcore.data.text import example_text
from evalcore.data.schema import BATTLES, KINDS, LOG, LOG_DEFAULT_LABELS, LOG_ROLES, LOG_VALUE_ROLES, ROLES, SUMMARY

__all__ = [
    "EvalDataError",
    "LoadedTable",
    "ValidationReport",
    "load_eval_log",
    "load_eval_logs",
    "read_and_validate",
    "validate",
    "report_of",
    "labeled",
    "suggest_mapping",
    "read_table",
]

_MAX_COUNT = 2**53  # counts above this are not exact in float64 and overflow int64 soon after
#: values this close outside [0, 1] are floating-point rounding (e.g. a float32 softmax giving 1.0000001): clipped
_UNIT_TOLERANCE = 1e-6
#: characters that show as nothing: zero-width spaces and joiners, word joiner, byte-order mark, soft hyphen,
#: Mongolian vowel separator, and the bidirectional controls
_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u00ad\u180e\u202a-\u202e\u2066-\u2069]")
_TRUE = {"true", "t", "yes", "y"}
_FALSE = {"false", "f", "no", "n"}


@dataclass(frozen=True)
class ValidationReport:
    """What validation did to the user's table, for the validation report in the UI."""

    kind: str
    n_rows: int
    n_models: int
    mapping: dict[str, str]
    features: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    warnings: tuple[str, ...] = field(default_factory=tuple)
    files: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()  # the tool that wrote each of ``files`` ("table" for a plain table)
    #: how the labels were made when they come from a labeling campaign's design (one sentence the report and every
    #: page say: :meth:`evalcore.labeling.campaign.Campaign.summary`); empty otherwise
    design: str = ""
    #: that design's own interval of the summary's one row: (level, low, high); the pages use it at that level
    design_interval: tuple = ()
    #: files of one model uploaded together that became runs named after them (:mod:`evalcore.importers.combine`):
    #: their model names, the base (the oldest, else the first file) first; empty otherwise
    runs: tuple[str, ...] = ()
    #: when the log's run ran, as its tool recorded it (Inspect's ``eval.created``, lm-evaluation-harness's file-name
    #: stamp; the latest of several files'); empty when it records none
    when: str = ""

    @property
    def tasks_are_categories(self) -> bool:
        """Whether the log's tasks are its categories: it has a category column and no task column, so that each
        category is treated as one task (:func:`_validate_log`); counts of its tasks then say "categories"."""
        return "task" not in self.mapping and "category" in self.mapping

    @property
    def outputs_only(self) -> bool:
        """Whether the log holds the models' outputs and no value to estimate (no label, score, confidence or
        proxy): the usual start of a comparison campaign (:func:`_validate_log` notes it)."""
        return self.kind == LOG and "output" in self.mapping and not set(LOG_VALUE_ROLES) & set(self.mapping)


def report_of(frame: pd.DataFrame) -> ValidationReport:
    """The report :func:`validate` attached to ``frame``."""
    report = frame.attrs.get("report")
    if not isinstance(report, dict):
        raise ValueError("This frame was not produced by evalcore.data.validation.validate.")
    return ValidationReport(**{**report, "features": tuple(report["features"]), "notes": tuple(report["notes"]),
                               "warnings": tuple(report.get("warnings", ())),
                               "files": tuple(report.get("files", ())),
                               "tools": tuple(report.get("tools", ())),
                               "runs": tuple(report.get("runs", ())),
                               "design_interval": tuple(report.get("design_interval", ()))})


def load_eval_log(
    source: Source, mapping: dict[str, str] | None = None, kind: str | None = None, min_models: int | None = None,
    limits: ReadLimits | None = None,
) -> pd.DataFrame:
    """Read one evaluation log within ``limits`` and validate it (see :func:`validate`).

    ``source`` is a path (a file, or a run folder), bytes, a binary file object or a ``(file name, bytes)`` pair.
    A plain table (CSV / TSV / JSON Lines / Parquet, compressed or not; :func:`evalcore.data.reading.read_table`) is
    mapped onto roles by ``mapping``; a log written by an evaluation tool (Inspect AI, lm-evaluation-harness, HELM,
    promptfoo, OpenAI evals, AlpacaEval, MT-Bench; :mod:`evalcore.importers`) is recognised from its content and
    arrives with its columns named after the roles.
    """
    return load_eval_logs([source], mapping=mapping, kind=kind, min_models=min_models, limits=limits)


def load_eval_logs(
    sources: Iterable[Source | NamedSource], mapping: dict[str, str] | None = None, kind: str | None = None,
    min_models: int | None = None, limits: ReadLimits | None = None, strict: bool = False,
) -> pd.DataFrame:
    """Several files (runs of several models or tasks, a run folder, a zip of one) combined into one validated log.

    Rows that two files both hold are counted once when identical and refused, with their ids, when they conflict
    (:mod:`evalcore.importers.combine`); files of different shapes are refused together. A file that cannot be
    used among others is left out with a warning naming it and why (``strict``: refused instead).
    """
    return validate_raw_log(read_logs(sources, mapping, limits, strict), mapping, kind, min_models, limits)


def validate_raw_log(raw: RawLog, mapping: dict[str, str | None] | None = None, kind: str | None = None,
                     min_models: int | None = None, limits: ReadLimits | None = None) -> pd.DataFrame:
    """``raw`` validated; a tool's log or combined files keep their role-named columns unless ``mapping`` says
    otherwise, and what the import did heads the report's notes (and its warnings, e.g. files that share no example
    and no task)."""
    if raw.mapped:  # role-named columns: the mapping's entries for them (a remap), else each to its namesake role
        roles = ROLES[kind or raw.kind or LOG]
        given = {column: role for column, role in (mapping or {}).items() if column in raw.frame.columns}
        mapping, automatic = given or {column: column for column in raw.frame.columns if column in roles}, not given
    else:  # the suggestion from the names (what evalcore's commands pass without --mapping) is the automatic one
        automatic = mapping is None or mapping == suggest_mapping(raw.frame.columns, kind)
    frame = validate(raw.frame, mapping=mapping, kind=kind or raw.kind, min_models=min_models, limits=limits,
                     group_from_values=automatic)
    report = frame.attrs["report"]
    report["notes"] = (*raw.notes, *report["notes"])
    # files that are different benchmarks: the warning naming them says why their models' tasks differ
    unrelated = any(UNRELATED in warning for warning in raw.warnings)
    report["warnings"] = (*raw.warnings, *(w for w in report["warnings"]
                                           if not (unrelated and w.startswith(COVERAGE_WARNING))))
    report["files"] = tuple(raw.files)
    report["tools"] = tuple(raw.tools)
    report["runs"] = tuple(raw.runs)
    if raw.when:  # when the run ran, as its tool recorded it: a series' run time (evalcore.workspace)
        report["when"] = raw.when
    return frame


@dataclass(frozen=True)
class LoadedTable:
    """A file read and validated: its columns and row count, and the canonical frame or what is wrong with it."""

    columns: tuple[str, ...]
    n_rows: int
    frame: pd.DataFrame | None
    problem: str | None = None
    #: the mapping ``{column: role}`` the frame was validated under (with the group suggested from the values,
    #: :func:`evalcore.data.mapping.suggest_group`): what the Data page's column mapping shows; None without a frame
    mapping: dict[str, str] | None = None


def read_and_validate(sources: Source | NamedSource | list, mapping: dict[str, str | None] | None = None,
                      kind: str | None = None, limits: ReadLimits | None = None) -> LoadedTable:
    """Read ``sources`` (one source or a list: several files are combined) and validate them; data that reads but
    does not validate comes back with its columns (for the column mapping) and the problem. Raises
    :class:`EvalDataError` when a file cannot be read at all."""
    raw = read_logs(sources if isinstance(sources, list) else [sources], mapping, limits)
    columns = tuple(str(c) for c in raw.frame.columns)
    try:
        frame = validate_raw_log(raw, mapping, kind, None, limits)
    except EvalDataError as exc:
        return LoadedTable(columns, len(raw.frame), None, str(exc))
    used = {column: role for role, column in frame.attrs["report"]["mapping"].items() if column in columns}
    return LoadedTable(columns, len(raw.frame), frame, mapping=used)


def validate(
    raw: pd.DataFrame,
    mapping: dict[str, str] | None = None,
    kind: str | None = None,
    min_models: int | None = None,
    limits: ReadLimits | None = None,
    group_from_values: bool | None = None,
) -> pd.DataFrame:
    """Map ``raw``'s columns onto roles and check every value; return the canonical frame.

    ``mapping`` is ``{user column: role}``; ``None`` uses :func:`suggest_mapping`. Columns already named after
    a role that the mapping leaves out map to themselves. ``group_from_values`` (default: when ``mapping`` is None,
    the automatic mapping) gives a per-example log without a group column the text column
    :func:`evalcore.data.mapping.suggest_group` finds, with a note saying so. ``kind`` (log / summary / battles) is detected from the
    mapped roles when ``None``. ``min_models`` defaults to 1: one model's log, summary or battles load, and the
    views that compare models say that they need two. ``limits`` (None: :meth:`ReadLimits.from_env`) bounds the
    distinct models, tasks and groups. Raises :class:`EvalDataError` with an actionable message.
    """
    if not isinstance(raw, pd.DataFrame):
        raise EvalDataError(f"Expected a table (pandas DataFrame), got {type(raw).__name__}.")
    if raw.shape[1] == 0:
        raise EvalDataError("The table has no columns: expected a header row naming the columns.")
    if len(raw) == 0:
        raise EvalDataError("The table has a header but no data rows.")
    if kind is not None and kind not in KINDS:
        raise EvalDataError(f"Unknown data shape '{kind}': choose one of {', '.join(KINDS)}.")
    raw = raw.reset_index(drop=True)
    raw.columns = [str(c) for c in raw.columns]
    _refuse_duplicate_columns(raw.columns)
    mapping_given = mapping
    mapping = dict(suggest_mapping(raw.columns, kind) if mapping is None else mapping)
    raw, left_out = _leave_out(raw, mapping)
    kind = kind or detect_kind(mapping.values())
    _add_identity_roles(mapping, raw.columns, kind)
    options = gather_option_columns(raw, mapping) if kind == LOG else None
    if options is not None:  # columns A, B, C ... become the one options column
        raw, mapping, options_note = options
    group = suggest_group(raw, mapping) if kind == LOG and (
        mapping_given is None if group_from_values is None else group_from_values) else None
    if group is not None:
        mapping[group[0]] = "group"
    check_mapping(mapping, raw.columns, kind)
    builder = {LOG: _validate_log, SUMMARY: _validate_summary, BATTLES: _validate_battles}[kind]
    frame, features, notes = builder(raw, mapping, limits or ReadLimits.from_env())
    if options is not None:
        notes.append(options_note)
    if group is not None:
        notes.insert(0, f"No group column: '{group[0]}' ({group[1]} values) is the group, the subgroups of the "
                        "Subgroups page and of Compare's slices. It is the text column with the most values, "
                        f"{GROUP_VALUES[0]} to {GROUP_VALUES[1]}, that holds one value per example, is no id and "
                        "plays no other role; choose another group, or none, in the column mapping (evalcore: "
                        f"--mapping COLUMN=group, or --mapping '{group[0]}=' for none).")
    if left_out:
        notes.append(f"Columns left out by the column mapping: {listed(left_out, 10, repr)}.")
    warnings = _lookalike_warnings(frame, mapping, kind) + _coverage_warnings(frame, kind)
    models = _models(frame, kind)
    needed = min_models if min_models is not None else 1
    if len(models) < needed:
        found = ", ".join(f"'{m}'" for m in models[:3])
        raise EvalDataError(
            f"Only {len(models)} model found ({found}) in column '{_source(mapping, _model_role(kind))}': "
            f"this needs at least {needed} models to compare. Check that the model column is the right one."
        )
    # a plain dict, so that pandas and Streamlit can serialise the frame's attrs
    frame.attrs["report"] = asdict(ValidationReport(
        kind=kind,
        n_rows=len(frame),
        n_models=len(models),
        mapping={role: col for col, role in mapping.items()},
        features=tuple(features),
        notes=tuple(notes),
        warnings=tuple(warnings),
    ))
    return frame


def labeled(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rows of a canonical log whose ``metric`` column carries a human label."""
    if metric not in frame.columns:
        raise EvalDataError(f"The data has no '{metric}' column: map a column to the role '{metric}'.")
    return frame[frame[metric].notna()]


# ----------------------------------------------------------------------------------------------------------------
# shared checks


class _Problems:
    """Collects independent problems of one table so that the user sees them all at once.

    ``with problems:`` runs one check and keeps its :class:`EvalDataError`; :meth:`raise_all` raises one error
    listing every problem (or the single message as it is).
    """

    def __init__(self) -> None:
        self.messages: list[str] = []

    def __enter__(self) -> "_Problems":
        return self

    def __exit__(self, kind, error, traceback) -> bool:
        if isinstance(error, EvalDataError):
            self.messages.append(str(error))
            return True
        return False

    def raise_all(self) -> None:
        if len(self.messages) == 1:
            raise EvalDataError(self.messages[0])
        if self.messages:
            listing = "\n".join(f"{i}. {m}" for i, m in enumerate(self.messages, 1))
            raise EvalDataError(f"{len(self.messages)} problems with this table (each can be fixed on its own):\n"
                                f"{listing}")


def _leave_out(raw: pd.DataFrame, mapping: dict[str, str | None]) -> tuple[pd.DataFrame, list[str]]:
    """Drop the columns the mapping sends to no role (``{column: None}``), even a column named after a role."""
    left_out = [column for column, role in mapping.items() if role is None]
    unknown = [column for column in left_out if column not in raw.columns]
    if unknown:
        raise EvalDataError(f"The mapping leaves out a column {unknown[0]!r} that is not in the file; the file's "
                            f"columns are: {', '.join(map(str, raw.columns))}.")
    for column in left_out:
        del mapping[column]
    return (raw.drop(columns=left_out) if left_out else raw), left_out


def _lookalike_warnings(frame: pd.DataFrame, mapping: dict[str, str], kind: str) -> list[str]:
    """Names that differ only by surrounding whitespace or invisible characters ('gpt-4' and 'gpt-4 '), and names
    that are blank: each is treated as a name of its own, which is rarely what the user meant."""
    roles = {BATTLES: ("model_a", "model_b"), SUMMARY: ("model", "task", "category")}.get(
        kind, ("model", "example_id", "task", "category", "group"))
    out = []
    for role in roles:
        if role not in frame or role not in mapping.values():
            continue
        names = pd.Series(pd.unique(frame[role]), dtype=object).astype(str)
        visible = names.str.replace(_INVISIBLE, "", regex=True).str.strip()
        blank = names[visible == ""]
        clash = names[visible.duplicated(keep=False) & (visible != "")]
        where = _where(_source(mapping, role), role)
        if len(blank):
            out.append(f"{where} has blank names (only spaces or invisible characters): "
                       f"{listed(list(blank), fmt=repr)}. Give them a visible name.")
        if len(clash):
            pairs = clash.groupby(visible[clash.index].to_numpy()).agg(list)
            shown = "; ".join(" and ".join(map(repr, group)) for group in pairs.iloc[:3])
            out.append(f"{where} has names that differ only by surrounding whitespace or invisible characters "
                       f"({shown}{'; ...' if len(pairs) > 3 else ''}): they are treated as different {role} "
                       "values. Make them identical in the file if they are the same.")
    return out


COVERAGE_WARNING = "Not every model was evaluated on every task"
#: how far an accuracy may lie from round(accuracy x n) / n and still be that count (an accuracy written to 3 decimals)
_COUNT_TOLERANCE = 0.0005 + 1e-9


def _coverage_warnings(frame: pd.DataFrame, kind: str) -> list[str]:
    """A warning when the models of a log or summary were not all evaluated on the same tasks: the leaderboard's
    aggregate (a mean over the same tasks) then needs the missing results or fewer tasks, and other views compare
    models on different examples."""
    if kind == BATTLES or "task" not in frame or frame["model"].nunique() < 2 or frame["task"].nunique() < 2:
        return []
    pairs = frame[["model", "task"]].drop_duplicates().astype(str)
    tasks = sorted(pd.unique(pairs["task"]))
    per_model = pairs.groupby("model")["task"].agg(set)
    partial = per_model[per_model.map(len) < len(tasks)]
    if partial.empty:
        return []
    shown = [f"{model} on {len(have):,} of {len(tasks):,} ({listed(sorted(have), 3, repr)})"
             for model, have in partial.iloc[:5].items()]
    more = f"; and {len(partial) - 5:,} more" if len(partial) > 5 else ""
    return [f"{COVERAGE_WARNING}: {'; '.join(shown)}{more}. The leaderboard's aggregate "
            "needs every model on every task (add the missing results, or choose the tasks they share); the other "
            "views compare models on different examples."]


def _refuse_duplicate_columns(columns: pd.Index) -> None:
    dup = columns[columns.duplicated()].unique()
    if len(dup):
        raise EvalDataError(f"Column names must be unique; repeated: {', '.join(map(str, dup))}. Rename them.")


def _add_identity_roles(mapping: dict[str, str], columns: pd.Index, kind: str) -> None:
    used_roles = set(mapping.values())
    for column in columns:
        if column in ROLES[kind] and column not in mapping and column not in used_roles:
            mapping[column] = column
            used_roles.add(column)


#: the limit on the distinct values of each role (the name ReadLimits.raise_hint knows it by)
_NAME_LIMITS = {"model": "models", "task": "tasks", "group": "groups"}


def _refuse_many_names(columns: dict[str, pd.Series], role: str, limits: ReadLimits) -> None:
    """Refuse more distinct values of ``role`` (model, task or group) in ``columns`` ({column: its values})
    together than ``limits`` allows: every view's cost grows with them (a model id per row made a report run for
    hours)."""
    what = _NAME_LIMITS[role]
    limit = getattr(limits, f"max_{what}")
    values = list(columns.values())
    count = (pd.concat(values, ignore_index=True) if len(values) > 1 else values[0]).nunique()
    if count > limit:
        names, several = " and ".join(f"'{c}'" for c in columns), len(columns) > 1
        raise EvalDataError(
            f"Column{'s' if several else ''} {names} hold{'' if several else 's'} {count:,} distinct {what}; "
            f"evalcore handles at most {limit:,} (limit max_{what}): the cost of every view grows with them. Check "
            f"that {'they name' if several else 'it names'} the {what} (not the examples), or upload a subset. "
            f"{limits.raise_hint(what)}")


def _source(mapping: dict[str, str], role: str) -> str:
    return next((c for c, r in mapping.items() if r == role), role)


def _model_role(kind: str) -> str:
    return "model_a" if kind == BATTLES else "model"


def _models(frame: pd.DataFrame, kind: str) -> list[str]:
    if kind == BATTLES:
        return sorted(set(frame["model_a"]) | set(frame["model_b"]))
    return sorted(frame["model"].unique())


def _row_list(mask: np.ndarray | pd.Series) -> str:
    """'rows 3, 8, 12 and 40 more' for a boolean mask (1-based data rows)."""
    rows = np.flatnonzero(np.asarray(mask)) + 1
    return f"row{'s' if len(rows) > 1 else ''} {listed(rows)}"


def _holds(mask: np.ndarray | pd.Series) -> str:
    return "holds" if int(np.asarray(mask).sum()) == 1 else "hold"


def _text(series: pd.Series) -> pd.Series:
    """``series`` as str; bytes are decoded as UTF-8 (undecodable bytes replaced rather than raising)."""
    try:
        return series.astype(str)
    except UnicodeDecodeError:
        decoded = series.map(lambda v: bytes(v).decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else v)
        return decoded.astype(str)


def _values_at(series: pd.Series, mask: np.ndarray | pd.Series) -> str:
    vals = pd.unique(_text(series[np.asarray(mask)]))[:3]
    return ", ".join(repr(v) for v in vals)


def _where(column: str, role: str) -> str:
    return f"Column '{column}'" + (f" (role '{role}')" if column != role else "")


def _require(mapping: dict[str, str], roles: tuple[str, ...], kind: str, columns: pd.Index) -> None:
    present = set(mapping.values())
    missing = [r for r in roles if r not in present]
    if missing:
        raise EvalDataError(
            f"A {kind} table needs the role{'s' if len(missing) > 1 else ''} {', '.join(missing)}; no column "
            f"is mapped to {'them' if len(missing) > 1 else 'it'}. The file's columns are: "
            f"{', '.join(map(str, columns))}. Rename a column or choose it in the column mapping."
        )


#: column names that say a metric (Ragas' faithfulness, answer_relevancy ..., accuracy, f1, BLEU ...), not a model
_METRIC_NAME = re.compile(
    r"acc|score|f1|bleu|rouge|meteor|chrf|exact|match|precision|recall|faithful|relevan|correct|similar|toxic|bias|"
    r"halluc|coheren|fluen|rate|pass|loss|perplex|ppl|mean|avg|average|auc|mrr|ndcg|recall|context|grounded|helpful|"
    r"harm|quality|judge|grade|rating|metric|percent|%", re.IGNORECASE)
#: roles that hold an example's identity or text: a table with one of them has one row per example
_EXAMPLE_ROLES = ("example_id", "input", "target", "output")


def _numeric_columns(raw: pd.DataFrame, mapping: dict[str, str]) -> list[str]:
    """The columns mapped to no role whose values are numbers (at least 90% of the filled cells)."""
    taken = {column for column, role in mapping.items() if role is not None}
    out = []
    for column in raw.columns:
        filled = raw[column].dropna()
        if column not in taken and not filled.empty and pd.to_numeric(filled, errors="coerce").notna().mean() >= 0.9:
            out.append(column)
    return out


def _refuse_without_model(raw: pd.DataFrame, mapping: dict[str, str]) -> None:
    """A log without a model column, refused with the advice its columns call for: models as columns (a wide
    table) are melted; metrics as columns are one system's scores per example (``--model NAME``) or, without an
    example's column, one aggregate per row."""
    numeric = _numeric_columns(raw, mapping)
    metrics = [c for c in numeric if _METRIC_NAME.search(c)]
    said = (f"A log table needs the role model; no column is mapped to it. The file's columns are: "
            f"{', '.join(map(str, raw.columns))}.")
    if len(numeric) >= 2 and not metrics:
        raise EvalDataError(
            f"{said} Its numeric columns ({listed(numeric, 5, repr)}) look like models. If each model has a column "
            "of its own (a wide table: one row per example), reshape it to one row per model and example with a "
            "model column (pandas: df.melt(id_vars=[the example's columns], var_name='model', "
            "value_name='correct')).")
    if metrics and any(role in _EXAMPLE_ROLES for role in mapping.values()):
        raise EvalDataError(
            f"{said} Its numeric columns {listed(metrics, 5, repr)} are metrics, not models: one row per example "
            "holds one system's scores (as Ragas, DeepEval or a judge's export write them). Name the system "
            "(evalcore: --model NAME; or add a column 'model') and map the metric to read to the role 'score' "
            f"(--mapping {metrics[0]}=score); the other metrics are kept as features.")
    # numbers without an example: metrics by name, or a column mapped to a label (Ragas' "metric,score" means)
    values = metrics + [c for c, r in mapping.items() if r in LOG_VALUE_ROLES and c not in metrics]
    if values:
        _refuse_aggregates(raw, {"model": next((c for c in raw.columns if c not in numeric and c not in values),
                                               raw.columns[0])}, values)
    raise EvalDataError(f"{said} Rename a column or choose it in the column mapping; a log of one system without "
                        "a model column takes its name from --model NAME (evalcore).")


def _refuse_aggregates(raw: pd.DataFrame, roles: dict[str, str], values: list[str] | None = None) -> None:
    """A table with one row per model (or configuration), and per task where it has one, without an example's
    column, whose numbers are not all 0 or 1: they are aggregates (a paper's table of accuracies), never examples;
    refused saying how to read it as a leaderboard summary."""
    key = [roles[r] for r in ("model", "task") if r in roles]
    if len(raw) < 2 or not key or any(role in roles for role in _EXAMPLE_ROLES) or raw.duplicated(key).any():
        return
    values = values or [roles[r] for r in LOG_VALUE_ROLES if r in roles] or _numeric_columns(
        raw, {c: r for r, c in roles.items()})
    numbers = [pd.to_numeric(raw[c], errors="coerce").dropna() for c in values]
    if all(column.isin((0, 1)).all() for column in numbers):  # right or wrong per model: a log of one example each
        return
    if "correct" in roles and pd.to_numeric(raw[roles["correct"]], errors="coerce").dropna().isin((0, 1)).all():
        return  # a 0/1 'correct' is a per-example verdict, whatever the confidence beside it

    rows = raw[key[0]].astype(str).tolist()
    raise EvalDataError(
        f"The table has {len(raw):,} rows, one per {' and '.join(repr(k) for k in key)} ({listed(rows, 4, repr)}), "
        f"and no example's column: its numbers ({listed(values, 4, repr)}) are aggregates without example counts "
        "(e.g. a paper's table of accuracies), not per-example results, and would be read as one example each. "
        "Upload the per-example results of each model; or, to compare these accuracies, add the number of "
        "examples behind each one as a column 'n' and a 'task' column: it then reads as a leaderboard summary "
        "(model, task, accuracy, n).")


def _labels(raw: pd.DataFrame, column: str, role: str, missing: str | None) -> pd.Series:
    """String labels; missing entries are refused (``missing`` None) or filled with ``missing``."""
    series = raw[column]
    na = series.isna().to_numpy()
    if na.any():
        if missing is None:
            raise EvalDataError(f"{_where(column, role)} is empty in {_row_list(na)}: every row needs a {role}.")
        series = series.astype(object).where(~na, missing)  # object: a categorical refuses a new value
    text = _text(series)
    nul = text.str.contains("\x00", regex=False).to_numpy()
    if nul.any():
        raise EvalDataError(f"{_where(column, role)} contains a NUL byte (\\x00) in {_row_list(nul)}: remove it; it "
                            "never belongs in a name.")
    return text


def _numeric(raw: pd.DataFrame, column: str, role: str, expected: str) -> pd.Series:
    """Float column; text that is not a number and infinite values are refused with the rows."""
    series = raw[column]
    if series.dtype == bool:
        return series.astype("float64")
    if series.dtype.kind in "cmM":  # complex, timedelta, datetime: numbers of another kind
        raise EvalDataError(f"{_where(column, role)} must hold numbers ({expected}); it holds {series.dtype} values.")
    try:
        values = pd.to_numeric(series, errors="coerce")
    except (OverflowError, TypeError, ValueError):  # e.g. integers beyond float range in a text column
        values = pd.Series([_as_float(v) for v in series], index=series.index, dtype="float64")
    if values.dtype.kind == "c":
        raise EvalDataError(f"{_where(column, role)} must hold real numbers ({expected}); it holds complex numbers.")
    bad = (values.isna() & series.notna()).to_numpy()
    if bad.any():
        raise EvalDataError(
            f"{_where(column, role)} must hold numbers ({expected}); {_row_list(bad)} "
            f"{_holds(bad)} {_values_at(series, bad)}."
        )
    values = values.astype("float64")
    inf = np.isinf(values.to_numpy())
    if inf.any():
        raise EvalDataError(f"{_where(column, role)} has infinite values in {_row_list(inf)}; expected {expected}.")
    return values


def _as_float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except OverflowError:  # an integer too large for a float
        return math.inf if value > 0 else -math.inf  # type: ignore[operator]
    except (TypeError, ValueError):
        return math.nan


def _binary(raw: pd.DataFrame, column: str, role: str) -> pd.Series:
    """0/1 column (booleans and true/false/yes/no text accepted); missing stays missing."""
    series = raw[column]
    if series.dtype == object or pd.api.types.is_string_dtype(series.dtype):
        lowered = _text(series).str.strip().str.lower()
        series = series.mask(lowered.isin(_TRUE), 1).mask(lowered.isin(_FALSE), 0)
    values = _numeric(pd.DataFrame({column: series}), column, role, "0 or 1")
    bad = (values.notna() & ~values.isin((0.0, 1.0))).to_numpy()
    if bad.any():
        hint = ""
        vals = values[bad]
        if ((vals > 0) & (vals < 1)).all():
            hint = " These look like probabilities: map this column to 'confidence' or 'score' instead."
        raise EvalDataError(
            f"{_where(column, role)} must be 0 or 1 (or true/false); {_row_list(bad)} {_holds(bad)} "
            f"{_values_at(raw[column], bad)}.{hint}"
        )
    return values


def _fraction(raw: pd.DataFrame, column: str, role: str, notes: list[str]) -> pd.Series:
    """A value in [0, 1] (true/false text accepted as 1/0), e.g. a battle's outcome where 0.5 is a tie."""
    series = raw[column]
    if series.dtype == object or pd.api.types.is_string_dtype(series.dtype):
        lowered = _text(series).str.strip().str.lower()
        series = series.mask(lowered.isin(_TRUE), 1).mask(lowered.isin(_FALSE), 0)
    values = _numeric(pd.DataFrame({column: series}), column, role, "1, 0, or 0.5 for a tie")
    if values.max() == 2 and values.dropna().isin((0.0, 1.0, 1.5, 2.0)).all():
        bad = (values == 2).to_numpy()
        raise EvalDataError(f"{_where(column, role)} must lie in [0, 1] (1 if model_b wins, 0 if model_a wins, 0.5 a "
                            f"tie); {_row_list(bad)} {_holds(bad)} 2. If 1 and 2 mean 'the first' and 'the second "
                            "wins' (AlpacaEval's preference), subtract 1 from the column.")
    values = _in_unit_interval(values, column, role, notes)
    soft = (values.notna() & ~values.isin((0.0, 0.5, 1.0))).to_numpy()
    if soft.any():
        notes.append(f"{int(soft.sum()):,} values of '{column}' are neither 0, 1 nor 0.5 (e.g. {_row_list(soft)}): they "
                     "are taken as soft verdicts, a fraction of a win for model_b. If they are an AI judge's "
                     "probabilities, map the column to 'judge' instead.")
    return values


def _in_unit_interval(values: pd.Series, column: str, role: str, notes: list[str]) -> pd.Series:
    """``values`` (missing allowed) checked to lie in [0, 1]; excursions within 1e-6 (floating-point rounding of a
    probability) are clipped, with a note."""
    outside = ((values < 0) | (values > 1)).to_numpy()
    if not outside.any():
        return values
    bad = ((values < -_UNIT_TOLERANCE) | (values > 1 + _UNIT_TOLERANCE)).to_numpy()
    if bad.any():
        hint = ""
        if values.max() >= 2 and values.max() <= 100 and values.min() >= 0:
            hint = " They look like percentages: divide the column by 100."
        raise EvalDataError(
            f"{_where(column, role)} must lie in [0, 1]; {_row_list(bad)} {_holds(bad)} "
            f"{', '.join(f'{v:.10g}' for v in values[bad][:3])}.{hint}"
        )
    excess = float(np.max(np.abs(values[outside].to_numpy() - values[outside].clip(0, 1).to_numpy())))
    notes.append(f"{int(outside.sum()):,} values of '{column}' lay outside [0, 1] by at most {excess:.1g} "
                 "(floating-point rounding) and were clipped to [0, 1].")
    return values.clip(0, 1)


def _refuse_duplicates(frame: pd.DataFrame, keys: list[str], mapping: dict[str, str], what: str,
                       hint: str = "") -> None:
    dup = frame.duplicated(keys, keep=False).to_numpy()
    if dup.any():
        first = frame.loc[dup, keys].iloc[0]
        pair = ", ".join(f"{k}={first[k]!r}" for k in keys)
        cols = ", ".join(f"'{_source(mapping, k)}'" for k in keys)
        raise EvalDataError(
            f"{what} must appear once, but {_row_list(dup)} repeat ({cols}) pairs, e.g. {pair}. "
            f"Remove the duplicates or check the column mapping.{hint}"
        )


def _note_repeats(labels: pd.DataFrame, column: str, notes: list[str]) -> None:
    """Say how many examples have several samples and how every method treats them."""
    sizes = labels.groupby(["model", "example_id"], sort=False).size()
    several = sizes[sizes > 1]
    if len(several):
        notes.append(
            f"{len(several):,} of {len(sizes):,} (model, example) pairs have several samples (column '{column}', "
            f"up to {int(sizes.max())} each). The example is the unit: every view averages an example's samples "
            "first, so means get cluster-robust intervals, bootstraps resample examples with all their samples, "
            "and methods that need one value per example use the per-example mean.")


# ----------------------------------------------------------------------------------------------------------------
# per-example log


def _validate_log(raw: pd.DataFrame, mapping: dict[str, str],
                  limits: ReadLimits) -> tuple[pd.DataFrame, list[str], list[str]]:
    roles = {role: col for col, role in mapping.items()}
    if "model" not in roles:
        _refuse_without_model(raw, mapping)
    outputs_only = not set(LOG_VALUE_ROLES) & set(roles)
    if "example_id" not in roles:
        _refuse_aggregates(raw, roles)
    if outputs_only and "output" not in roles:
        raise EvalDataError(
            "A per-example log needs at least one value column: 'correct' (0/1), 'score', 'confidence' or "
            "'proxy', or the models' outputs ('output') to label in a comparison campaign. The file's columns "
            f"are: {', '.join(raw.columns)}. Map one of them in the column mapping."
        )
    notes: list[str] = []
    if outputs_only:
        notes.append(f"The log holds the models' outputs only ('{roles['output']}'): no label, score, confidence "
                     "or proxy, so no view has a value to estimate yet. Label it with a comparison campaign of "
                     "its models on the Label page.")
    problems = _Problems()
    out: dict[str, pd.Series] = {}
    with problems:
        out["model"] = _labels(raw, roles["model"], "model", None)
    if "example_id" in roles:
        with problems:
            out["example_id"] = _labels(raw, roles["example_id"], "example_id", None)
    elif "model" in out:
        out["example_id"] = out["model"].groupby(out["model"], sort=False).cumcount().astype(str)
        notes.append(
            "No example_id column: examples are numbered by their order within each model, which assumes every "
            "model lists the same examples in the same order."
        )
    if "task" not in roles and "category" in roles:
        roles["task"] = roles["category"]
        notes.append(f"No task column: each category ('{roles['category']}') is treated as one task.")
    for role in ("task", "category", "group"):
        if role in roles:
            n_missing = int(raw[roles[role]].isna().sum())
            with problems:
                out[role] = _labels(raw, roles[role], role, "(missing)")
            if n_missing:
                notes.append(f"{n_missing:,} rows have no {role} ('{roles[role]}'): shown as '(missing)'.")
        else:
            out[role] = pd.Series(LOG_DEFAULT_LABELS[role], index=raw.index, dtype=str)
            if role != "category" or "task" not in roles:
                notes.append(f"No {role} column: all rows belong to one {role}, '{LOG_DEFAULT_LABELS[role]}'.")
    if "repeat" in roles:
        with problems:
            out["repeat"] = _labels(raw, roles["repeat"], "repeat", None)
    for role in ("model", "task", "group"):
        if role in out and role in roles:
            _refuse_many_names({roles[role]: out[role]}, role, limits)
    labels = pd.DataFrame(out)
    if {"model", "example_id"} <= set(out):
        with problems:
            if "repeat" in out:
                _refuse_duplicates(labels, ["model", "example_id", "repeat"], mapping,
                                   "Each (model, example_id, repeat)")
                _note_repeats(labels, roles["repeat"], notes)
            else:
                _refuse_duplicates(labels, ["model", "example_id"], mapping, "Each (model, example_id) pair",
                                   hint=" If they are repeated samples of one example (epochs, attempts, re-judged "
                                        "answers), map the column that numbers them to the role 'repeat'.")
    if {"task", "category"} <= set(out):
        with problems:
            _refuse_split_tasks(labels, roles)
    values = _log_values(raw, roles, notes, problems)
    problems.raise_all()
    label_roles = ["model", "example_id", "task", "category", "group", *(["repeat"] if "repeat" in labels else [])]
    text = example_text(raw, roles, limits, notes)
    frame = pd.concat([labels[label_roles], pd.DataFrame(values), pd.DataFrame(text, index=raw.index)], axis=1)
    features = _features(raw, mapping, frame, notes)
    return frame, features, notes


def _refuse_split_tasks(frame: pd.DataFrame, roles: dict[str, str]) -> None:
    if "category" not in roles or roles["category"] == roles.get("task"):
        return
    per_task = frame.groupby("task", sort=True)["category"].nunique()
    split = per_task[per_task > 1]
    if len(split):
        task = split.index[0]
        cats = sorted(frame.loc[frame["task"] == task, "category"].unique())[:3]
        rows = (frame["task"] == task) & (frame["category"] != cats[0])
        raise EvalDataError(
            f"Task '{task}' appears with several categories ({', '.join(cats)}; e.g. {_row_list(rows)}): "
            f"each task must belong to one category. Fix column '{roles['category']}'."
        )


def _log_values(raw: pd.DataFrame, roles: dict[str, str], notes: list[str],
                problems: _Problems) -> dict[str, pd.Series]:
    """The value columns of a log, each checked on its own (problems collected)."""
    values: dict[str, pd.Series] = {}
    if "correct" in roles:
        with problems:
            values["correct"] = _binary(raw, roles["correct"], "correct")
    if "score" in roles:
        with problems:
            values["score"] = _numeric(raw, roles["score"], "score", "any real number")
    for role in ("confidence", "proxy"):
        if role in roles:
            with problems:
                series = _numeric(raw, roles[role], role, "probabilities in [0, 1]")
                if role == "confidence" or "correct" in roles:
                    series = _in_unit_interval(series, roles[role], role, notes)
                values[role] = series
    if "weight" in roles:
        with problems:
            weight = _numeric(raw, roles["weight"], "weight", "positive numbers")
            bad = (weight <= 0).to_numpy()
            if bad.any():
                raise EvalDataError(f"{_where(roles['weight'], 'weight')} must be positive; see {_row_list(bad)}.")
            values["weight"] = weight
    for metric in ("correct", "score"):
        if metric in values:
            n_unlabeled = int(values[metric].isna().sum())
            if n_unlabeled == len(raw):
                notes.append(f"No row has a '{metric}' label: only views that work without labels can use it.")
            elif n_unlabeled:
                other = "score" if metric == "correct" else "correct"
                n_other = int((values[metric].isna() & values[other].notna()).sum()) if other in values else 0
                if n_other == n_unlabeled:  # e.g. HELM runs of several scenarios: each task its own main metric
                    notes.append(f"{n_unlabeled:,} of {len(raw):,} rows have no '{metric}' label: they carry "
                                 f"'{other}' instead (their task's metric); views of '{metric}' leave them out.")
                else:
                    carry = f" ({n_other:,} of them carry '{other}' instead)" if n_other else ""
                    notes.append(
                        f"{n_unlabeled:,} of {len(raw):,} rows have no '{metric}' label (unlabeled){carry}: they are "
                        f"kept for label-free uses (sampling design, prediction-powered inference) and left out of "
                        f"views that need the label, which say so."
                    )
    for role in ("confidence", "proxy", "weight"):
        if role in values:
            n_missing = int(values[role].isna().sum())
            if n_missing:
                notes.append(f"{n_missing:,} rows have no {role}: views that need it leave them out and say so.")
    return values


def _features(raw: pd.DataFrame, mapping: dict[str, str], frame: pd.DataFrame, notes: list[str]) -> list[str]:
    features, ignored = [], []
    for column in raw.columns:
        if column in mapping:
            continue
        series = raw[column]
        if (pd.api.types.is_numeric_dtype(series) and series.dtype.kind != "c") or series.dtype == bool:
            name = column
            while name in frame.columns or name in LOG_ROLES:
                name = f"x_{name}"
            frame[name] = series.astype("float64")
            features.append(name)
        else:
            ignored.append(column)
    if features:
        notes.append(f"Extra numeric columns kept as features: {', '.join(features)}.")
        if "model" in frame:  # a log: say which of them the feature views leave out unless chosen
            set_aside = screen_features(frame).note()
            if set_aside:
                notes.append(set_aside)
    if ignored:
        notes.append(f"Text columns not mapped to a role are ignored: {', '.join(ignored)}.")
    return features


# ----------------------------------------------------------------------------------------------------------------
# leaderboard summary


def _validate_summary(raw: pd.DataFrame, mapping: dict[str, str],
                      limits: ReadLimits) -> tuple[pd.DataFrame, list[str], list[str]]:
    _require(mapping, ("model", "task", "n"), SUMMARY, raw.columns)
    roles = {role: col for col, role in mapping.items()}
    if "n_correct" not in roles and "accuracy" not in roles:
        raise EvalDataError(
            "A leaderboard summary needs 'n_correct' (number of correct examples) or 'accuracy' next to 'n'. "
            f"The file's columns are: {', '.join(raw.columns)}."
        )
    notes: list[str] = []
    frame = pd.DataFrame({"model": _labels(raw, roles["model"], "model", None),
                          "task": _labels(raw, roles["task"], "task", None)})
    for role in ("model", "task"):
        _refuse_many_names({roles[role]: frame[role]}, role, limits)
    if "category" in roles:
        frame["category"] = _labels(raw, roles["category"], "category", None)
    else:
        frame["category"] = "all"
        notes.append("No category column: all tasks belong to one category, 'all'.")
    problems = _Problems()
    n = _numeric(raw, roles["n"], "n", "positive whole numbers")
    bad = (n.isna() | (n < 1) | (n != n.round()) | (n > _MAX_COUNT)).to_numpy()
    if bad.any():
        problems.messages.append(f"{_where(roles['n'], 'n')} must be a positive whole number in every row; see "
                                 f"{_row_list(bad)} ({_values_at(raw[roles['n']], bad)}).")
    if "n_correct" in roles:
        with problems:
            k = _numeric(raw, roles["n_correct"], "n_correct", "whole numbers between 0 and n")
            bad = (k.isna() | (k < 0) | (k > n) | (k != k.round())).to_numpy()
            if bad.any():
                raise EvalDataError(f"{_where(roles['n_correct'], 'n_correct')} must be a whole number between 0 "
                                    f"and n; see {_row_list(bad)} ({_values_at(raw[roles['n_correct']], bad)}).")
        problems.raise_all()
    else:
        problems.raise_all()
        acc = _numeric(raw, roles["accuracy"], "accuracy", "fractions in [0, 1] or percentages")
        if acc.isna().any():
            raise EvalDataError(f"{_where(roles['accuracy'], 'accuracy')} is empty in {_row_list(acc.isna())}.")
        if acc.max() > 1 + _UNIT_TOLERANCE and acc.max() <= 100 and acc.min() >= 0:
            acc = acc / 100
            notes.append(f"'{roles['accuracy']}' holds percentages (max above 1): divided by 100.")
        acc = _in_unit_interval(acc, roles["accuracy"], "accuracy", notes)
        k = (acc * n).round()
        notes.append(f"Correct counts were derived as round(accuracy x n) from '{roles['accuracy']}'.")
        if "se" not in roles:
            _note_inexact_counts(acc, n, k, roles, notes)
    frame["n"] = n.astype("int64")
    frame["n_correct"] = k.astype("int64")
    frame["accuracy"] = frame["n_correct"] / frame["n"]
    if "se" in roles:
        frame["se"] = _standard_errors(raw, roles["se"], roles, notes)
        if "n_correct" not in roles:  # the tool's own accuracy (a win rate need not be a count over n)
            frame["accuracy"] = frame["accuracy"].where(frame["se"].isna(), acc.to_numpy())
    _refuse_duplicates(frame, ["model", "task"], mapping, "Each (model, task) pair")
    _refuse_split_tasks(frame, roles)
    per_model = frame.groupby("model")["task"].nunique()
    n_tasks = frame["task"].nunique()
    partial = per_model[per_model < n_tasks]
    if len(partial):
        notes.append(f"{len(partial)} model(s) lack some tasks (e.g. '{partial.index[0]}' has "
                     f"{partial.iloc[0]} of {n_tasks}).")
    if "n_correct" in roles and "accuracy" in roles:
        notes.append(f"'{roles['accuracy']}' is not used: accuracy is computed as n_correct / n "
                     f"('{roles['n_correct']}' / '{roles['n']}').")
    unused = [c for c in raw.columns if c not in mapping]
    if unused:
        notes.append(f"Columns not mapped to a role are ignored: {', '.join(unused)}.")
    return frame, [], notes


def _note_inexact_counts(acc: pd.Series, n: pd.Series, k: pd.Series, roles: dict[str, str], notes: list[str]) -> None:
    """A note when an accuracy is not a count over its n (beyond the rounding of an accuracy written to three
    decimals: ``|round(acc x n) / n - acc| > 0.0005``): the summary then shows ``n_correct / n``, not the file's
    value, and n may not be the number of examples that were scored (e.g. the dataset's size)."""
    off = ((k / n - acc).abs() > _COUNT_TOLERANCE).to_numpy()
    if not off.any():
        return
    i = int(np.flatnonzero(off)[0])
    notes.append(f"'{roles['accuracy']}' is not a whole count over '{roles['n']}' in {_row_list(off)} (e.g. "
                 f"{acc.iloc[i]:.4g} x {int(n.iloc[i]):,} = {acc.iloc[i] * n.iloc[i]:.3g}): evalcore uses the rounded "
                 f"count, so it shows {int(k.iloc[i]):,} / {int(n.iloc[i]):,} = {k.iloc[i] / n.iloc[i]:.4g} there. "
                 "Check that n is the number of examples scored (not the dataset's size), or give the tool's "
                 "standard error ('se') to keep its accuracy.")


def _standard_errors(raw: pd.DataFrame, column: str, roles: dict[str, str], notes: list[str]) -> pd.Series:
    """A summary's own standard errors of the accuracy (same units: divided by 100 when the accuracy column held
    percentages); a missing one leaves that row to the binomial interval from n."""
    se = _numeric(raw, column, "se", "non-negative numbers in the units of the accuracy")
    bad = (se < 0).to_numpy()
    if bad.any():
        raise EvalDataError(f"{_where(column, 'se')} must not be negative; see {_row_list(bad)}.")
    if "accuracy" in roles and "n_correct" not in roles:
        accuracy = _numeric(raw, roles["accuracy"], "accuracy", "fractions in [0, 1] or percentages")
        if accuracy.max() > 1 + _UNIT_TOLERANCE:
            se = se / 100
            notes.append(f"'{column}' is in percentage points like the accuracy: divided by 100.")
    n_missing = int(se.isna().sum())
    notes.append(f"Standard errors from '{column}' are the tool's own: intervals use them"
                 + (f" ({n_missing:,} rows without one use the binomial interval from n)." if n_missing else "."))
    return se.astype("float64")


# ----------------------------------------------------------------------------------------------------------------
# pairwise battles


def _validate_battles(raw: pd.DataFrame, mapping: dict[str, str],
                      limits: ReadLimits) -> tuple[pd.DataFrame, list[str], list[str]]:
    _require(mapping, ("model_a", "model_b"), BATTLES, raw.columns)
    roles = {role: col for col, role in mapping.items()}
    if "outcome" not in roles and "judge" not in roles:
        raise EvalDataError(
            "Pairwise battles need 'outcome' (1 if model_b wins, 0 if model_a wins, 0.5 a tie, empty without a vote) and/or 'judge' (an AI "
            f"judge's probability that model_b wins). The file's columns are: {', '.join(raw.columns)}."
        )
    notes: list[str] = []
    problems = _Problems()
    frame = pd.DataFrame(index=raw.index)
    for role in ("model_a", "model_b"):
        with problems:
            frame[role] = _labels(raw, roles[role], role, None)
    if {"model_a", "model_b"} <= set(frame.columns):
        _refuse_many_names({roles[r]: frame[r] for r in ("model_a", "model_b")}, "model", limits)
        same = (frame["model_a"] == frame["model_b"]).to_numpy()
        if same.any():
            problems.messages.append(
                f"A model cannot battle itself: model_a equals model_b in {_row_list(same)}.")
    if "outcome" in roles:
        with problems:
            frame["outcome"] = _fraction(raw, roles["outcome"], "outcome", notes)
            n_votes = int(frame["outcome"].notna().sum())
            notes.append(f"{n_votes:,} of {len(frame):,} battles have a human vote.")
            n_ties = int(((frame["outcome"] > 0) & (frame["outcome"] < 1)).sum())
            if n_ties:
                notes.append(f"{n_ties:,} battles are ties or split verdicts (outcome between 0 and 1, 0.5 a tie): "
                             "each counts as that fraction of a win for model_b in the Bradley-Terry fit.")
    if "judge" in roles:
        with problems:
            judge = _numeric(raw, roles["judge"], "judge", "probabilities in [0, 1]")
            frame["judge"] = _in_unit_interval(judge, roles["judge"], "judge", notes)
            n_missing = int(frame["judge"].isna().sum())
            if n_missing:
                notes.append(f"{n_missing:,} battles have no judge probability.")
    problems.raise_all()
    for role, text in example_text(raw, roles, limits, notes).items():
        frame[role] = text
    features = _features(raw, mapping, frame, notes)
    return frame, features, notes
