"""Hugging Face lighteval (and Open LLM Leaderboard v1) output: per-task details Parquet and the run's results JSON.

Format (huggingface/lighteval ``src/lighteval/logging/evaluation_tracker.py`` ``save`` / ``save_results`` /
``save_details``, ``src/lighteval/logging/info_loggers.py``, docs ``docs/source/saving-and-reading-results.mdx``;
read at v0.8.0-v0.10.0 and at 3fd1526, 2026-05):

- results: ``{output_dir}/results/{model_name}/results_{date_id}.json`` = ``{config_general: {model_name,
  lighteval_sha, ...}, results: {"<suite>|<task>|<fewshot>" (v0.11+: "<task>|<fewshot>"): {metric: value,
  "<metric>_stderr": se}, "all": {...}}, versions, config_tasks: {"<suite>|<task>": {metric: [...],
  effective_num_docs, original_num_docs, ...}}, summary_tasks, summary_general}``; ``date_id`` is the run's time,
  e.g. ``2025-11-05T14-43-47.148527``.
- details (``--save-details``): ``{output_dir}/details/{model_name}/{date_id}/details_{task}_{date_id}.parquet``, one
  Parquet file per task (``task`` as in ``results``, with its ``|`` and ``:``), one row per document, in one of two
  schemas. Up to v0.10 (and the Open LLM Leaderboard v1 ``details_<org>__<model>`` datasets) flat columns sorted by
  name: ``example`` (the query), ``full_prompt`` (with the few-shot examples), ``predictions`` (generations, or per
  choice a log-likelihood / ``(log-likelihood, is_greedy)`` pair), ``gold`` (reference strings), ``choices``,
  ``gold_index``, ``metrics`` ({metric: value}; a JSON or Python-repr string in v0.3, which wrote every column as
  ``str`` when pyarrow failed), ``specifics``, ... From v0.11 (commit 9288bd84) three struct columns ``doc``
  (``query``, ``choices``, ``gold_index``, ``id``, ``task_name``, ...), ``model_response`` (``input``, ``text``,
  ``logprobs``, ...) and ``metric`` ({metric: value}); lighteval's docs call them ``__doc__``,
  ``__model_response__``, ``__metric__``, accepted too.

Mapping to roles: a details file is a log: ``model`` = ``config_general.model_name`` of the results file of the same
run (same ``date_id``, else the only results file in the same folder), else named after the folder
(``details/<org>/<model>/<date_id>/`` or the Hub's ``details_<org>__<model>``); ``task`` = the task in the file name,
written as lighteval does (``suite|task|fewshot``); ``example_id`` = ``doc.id`` when every row has a distinct one,
else the row's position in the file; the label is the task's first metric in the results file (its main metric)
that the rows hold, else the rows' first numeric metric: ``correct`` when every value is 0 or 1 (acc, em, ...),
``score`` otherwise. Text: ``input`` = the query (``doc.query`` / ``example``; ``full_prompt`` /
``model_response.input``, with the few-shot examples, when there is no query), ``target`` = the gold choice(s)
(``doc.choices[gold_index]`` / ``gold``), ``output`` = the generation (``model_response.text`` / ``predictions``;
for a log-likelihood task the choice with the highest log-likelihood), ``explanation`` = an LLM judge's
``judgement*`` text found among the metrics.
A results file with no details file uploaded becomes a leaderboard summary: per task ``n`` =
``config_tasks.<task>.effective_num_docs``, ``accuracy`` = its first metric (when in [0, 1]) and ``se`` = that metric's
``_stderr``; tasks without a document count or such a metric are left out and counted.

Details Parquet holds nested columns, which :func:`evalcore.data.parquet_bounds.read_parquet` refuses for plain
tables, so it is read here with the same bounds: the footer's row counts and stated sizes and every page header's
uncompressed size (:mod:`evalcore.data.parquet_bounds`' checks), the number of values the page headers of the
columns read state, and the decoded size of their text, summed through dictionaries before it is decoded.
"""

from __future__ import annotations

import ast
import io
import json
import math
import re
from pathlib import PurePosixPath
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from evalcore.data import bounded_json
from evalcore.data import parquet_bounds as bounds
from evalcore.data.limits import size_text
from evalcore.data.schema import LOG_ROLES
from evalcore.errors import EvalDataError, listed
from evalcore.importers.base import Imported, LogFile, as_number, left_out_note, optional, parse_json
from evalcore.importers.chat_text import with_text_columns
from evalcore.importers.lm_eval import model_folder

TOOL = "lighteval"
_STAMP = r"\d{4}-\d{2}-\d{2}T[\d\-.:]+"
_DETAILS_NAME = re.compile(rf"^details_(?P<task>.+)_(?P<time>{_STAMP})\.parquet$")
_RESULTS_NAME = re.compile(rf"^results_(?P<time>{_STAMP})\.json$")
_STAMP_ONLY = re.compile(rf"^{_STAMP}$")
_RESULTS_HEAD = re.compile(rb'^\{\s*"config_general"\s*:')
_OLD = ("example", "full_prompt", "predictions", "gold", "metrics")
_NEW = (("doc", "model_response", "metric"), ("__doc__", "__model_response__", "__metric__"))
#: the columns (or struct fields) read from a details file
_WANTED_OLD = ("example", "full_prompt", "predictions", "gold", "choices", "gold_index", "metrics")
_WANTED_NEW = ("query", "choices", "gold_index", "id", "task_name"), ("input", "text", "logprobs")
#: bytes a value read from a page may take once decoded, at most (value or dictionary index, offsets, levels)
_VALUE_BYTES = 16
_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 5, 7, 8
_MAX_LITERAL = 1_000_000


# ------------------------------------------------------------------------------------------------ detection


def sniff(file: LogFile) -> bool:
    """A details Parquet file (its schema, read from the footer alone, has example/full_prompt/predictions/gold/
    metrics or doc/model_response/metric) or a results JSON (``config_general`` first, or with ``lighteval_sha``)."""
    try:
        if file.data[:4] == b"PAR1":
            return _details_schema(pq.read_schema(io.BytesIO(file.data)).names) is not None
        head = file.head(16384)
        return head.startswith(b"{") and (bool(_RESULTS_HEAD.match(head)) or (
            b'"config_general"' in head and b'"lighteval_sha"' in head))
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def _details_schema(names: list[str]) -> tuple[str, ...] | None:
    """The names of (doc, model_response, metric) for the v0.11+ schema, ("old",) for the flat one, or None."""
    for new in _NEW:
        if set(new) <= set(names):
            return new
    return ("old",) if set(_OLD) <= set(names) else None


# ------------------------------------------------------------------------------------------------ conversion


def convert(files: list[LogFile]) -> list[Imported]:
    """Details files become per-example logs (their model from the run's results file); without any details file,
    the results files become a leaderboard summary."""
    details = [f for f in files if f.data[:4] == b"PAR1"]
    results = {f.name: (f, _results_doc(f)) for f in files if f.data[:4] != b"PAR1"}
    if not details:
        return [_summary(list(results.values()))]
    used: set[str] = set()
    out = []
    for file in details:
        result = _run_results(file, results)
        if result is not None:
            used.add(result[0].name)
        out.append(_details(file, result))
    unused = [name for name in results if name not in used]
    if unused:
        out[0].notes.append(f"{len(unused)} lighteval results file(s) were not used ({', '.join(unused[:3])}): no "
                            "details file of their run was uploaded with them (same time stamp or folder).")
    return out


def _results_doc(file: LogFile) -> dict:
    doc = parse_json(file)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        raise EvalDataError(f"{file.name}: a lighteval results file has a 'results' object (per task, its metrics); "
                            "this one has not (truncated?).")
    return doc


def _run_results(file: LogFile, results: dict[str, tuple[LogFile, dict]]) -> tuple[LogFile, dict] | None:
    """The results file of the details file's run: the one with the same time stamp (the details sit in
    ``details/<model>/<time>/``, the results in ``results/<model>/``), else the only one in the same folder."""
    match = _DETAILS_NAME.match(file.base)
    if match:
        stamped = [pair for pair in results.values() if pair[0].base == f"results_{match['time']}.json"]
        if len(stamped) > 1:
            stamped = [pair for pair in stamped if _model_of(pair[1]) == _model_from_folder(file.folder)] or stamped
        if stamped:
            return stamped[0]
    same_folder = [pair for pair in results.values() if pair[0].folder == file.folder]
    return same_folder[0] if len(same_folder) == 1 else None


def _model_of(doc: dict) -> str | None:
    name = optional(doc, "config_general.model_name")
    return str(name) if name not in (None, "") else None


def _model_from_folder(folder: str) -> str | None:
    """``org/model`` from ``.../details/org/model/<time>`` or ``details_org__model/...`` (the Hub's dataset name)."""
    parts = [p for p in PurePosixPath(folder).parts if p not in ("", ".", "/")]
    if parts and _STAMP_ONLY.match(parts[-1]):
        parts = parts[:-1]
    if "details" in parts:
        parts = parts[len(parts) - parts[::-1].index("details"):]
    elif parts:  # not lighteval's details/<org>/<model>/ layout: a folder named after the model, not a place
        last = parts[-1]
        return last.removeprefix("details_").replace("__", "/") if last.startswith("details_") else model_folder(last)
    name = "/".join(parts).removeprefix("details_").replace("__", "/")
    return name or None


def _details(file: LogFile, result: tuple[LogFile, dict] | None) -> Imported:
    notes: list[str] = []
    rows, schema = _read_details(file)
    if not rows:
        raise EvalDataError(f"{file.name}: the lighteval details file has no rows.")
    match = _DETAILS_NAME.match(file.base)
    first_doc = _field(rows[0], schema[0]) if schema != ("old",) else {}
    task = match["task"] if match else str(optional(first_doc, "task_name") or PurePosixPath(file.base).stem)
    model = _model_of(result[1]) if result is not None else None
    if model is None:
        model = _model_from_folder(file.folder) or "unknown model"
        notes.append(f"{file.name}: no results file of this run was uploaded with it, so the model is named after "
                     f"{'its folder' if file.folder else 'nothing'}: '{model}'. Upload the run's results_*.json too "
                     "to use the model's name.")
    records = [_old_row(r, file, i) if schema == ("old",) else _new_row(r, schema) for i, r in enumerate(rows)]
    main, why = _main_metric(task, records, result, file)
    values = [as_number(rec["metrics"].get(main), booleans=True) for rec in records]
    binary = all(v in (0.0, 1.0) for v in values if not math.isnan(v))
    label = "correct" if binary else "score"
    notes.append(f"{file.name}: metric '{main}' is the label ('{label}'): {why}.")
    ids = [rec["id"] for rec in records]
    if all(ids) and len(set(ids)) == len(ids):
        example_ids = ids
    else:
        example_ids = [str(i) for i in range(len(records))]
        notes.append(f"{file.name}: example_id = the row's position in the file (0, 1, ...): "
                     + ("the rows have no document id." if not any(ids) else "the document ids are missing in some "
                        "rows or repeated."))
    frame = pd.DataFrame({"model": model, "task": task, "example_id": example_ids, label: values})
    others = _other_metrics(records, main, set(frame.columns) | set(LOG_ROLES))  # the roles hold the texts'
    for metric, column in others.items():
        frame[metric] = column
    if others:
        notes.append(f"{file.name}: the other metrics with a number in every row are kept as numeric columns: "
                     f"{listed(list(others), 8, repr)}.")
    for role in ("input", "target", "output", "explanation"):
        texts = [rec[role] for rec in records]
        if any(t is not None for t in texts):
            frame[role] = pd.Series(texts, dtype=object)
    missing = frame[label].isna().to_numpy()
    if missing.any():
        notes.append(left_out_note(int(missing.sum()), len(frame), f"rows of {file.name}",
                                   f"no numeric value of '{main}'"))
        frame = frame[~missing].reset_index(drop=True)
    if frame.empty:
        raise EvalDataError(f"{file.name}: no row has a numeric value of the metric '{main}'.")
    return Imported(with_text_columns(frame), "log", TOOL, (file.name, *([result[0].name] if result else [])), notes)


def _other_metrics(records: list[dict], main: str, taken: set[str]) -> dict[str, list[float]]:
    """The metrics besides ``main`` whose value is a finite number (not a boolean) in every row, by name (names
    that are a role or another column are passed over)."""
    names = dict.fromkeys(m for rec in records for m in rec["metrics"])
    out = {}
    for metric in names:
        if metric == main or metric in taken:
            continue
        values = [rec["metrics"].get(metric) for rec in records]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
            out[str(metric)] = [float(v) for v in values]
    return out


def _main_metric(task: str, records: list[dict], result: tuple[LogFile, dict] | None,
                 file: LogFile) -> tuple[str, str]:
    """The label's metric and why: the task's first metric in the results file that the rows hold, else the rows'
    first numeric metric."""
    held: dict[str, None] = {}
    for rec in records:
        for name, value in rec["metrics"].items():
            if not isinstance(value, (dict, list, str)) and not math.isnan(as_number(value)):
                held.setdefault(str(name), None)
    if not held:
        raise EvalDataError(f"{file.name}: no row of the details file holds a numeric metric (column 'metric' or "
                            "'metrics'); this file cannot be scored.")
    if result is not None:
        values = _task_results(result[1], task)
        listed_metrics = [m for m in (values or {}) if not m.endswith("_stderr")]
        for metric in listed_metrics:
            if metric in held:
                first = "the task's first metric" if metric == listed_metrics[0] else \
                    f"the first of the task's metrics in the results file that the rows hold ({listed_metrics[0]} " \
                    "is not per row)"
                return metric, f"{first} in {result[0].name}"
    return next(iter(held)), "the first numeric metric of the rows" + (
        "" if result is None else f" (the task is not in {result[0].name})")


def _task_results(doc: dict, task: str) -> dict | None:
    """The results entry of ``task``: by its exact name, else by the name without the suite (v0.11+ wrote
    "task|fewshot" where older versions wrote "suite|task|fewshot")."""
    results = doc.get("results") or {}
    if isinstance(results.get(task), dict):
        return results[task]
    short = task.split("|", 1)[1] if task.count("|") >= 2 else None
    for key, values in results.items():
        if isinstance(values, dict) and (key == short or (key.count("|") >= 2 and key.split("|", 1)[1] == task)):
            return values
    return None


# ------------------------------------------------------------------------------------------------ rows


def _field(row: dict, name: str) -> dict:
    return _as_dict(row.get(name)) or {}


def _as_dict(value: Any) -> dict | None:
    """A struct's value as it is; a Parquet map's (read as a list of (key, value) pairs) as a dict; else None."""
    if isinstance(value, dict):
        return value
    if isinstance(value, list) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        return dict(value)
    return None


def _new_row(row: dict, schema: tuple[str, ...]) -> dict:
    doc, response, metric = (_field(row, name) for name in schema)
    choices = _strings(doc.get("choices"))
    target = _gold(choices, doc.get("gold_index"))
    output = _text(response.get("text")) or _argmax_choice(response.get("logprobs"), choices)
    ident = doc.get("id")
    return {"id": None if ident in (None, "") else str(ident), "metrics": metric,
            "input": _text(doc.get("query")) or _text(response.get("input")), "target": target, "output": output,
            "explanation": _judgement(metric)}


def _old_row(row: dict, file: LogFile, number: int) -> dict:
    metrics = _as_dict(_literal(row.get("metrics"), file))
    if metrics is None:
        raise EvalDataError(f"{file.name}, row {number + 1}: the column 'metrics' holds no {{metric: value}} object "
                            f"({str(row.get('metrics'))[:80]!r}); this file does not look like lighteval details.")
    choices = _strings(_literal(row.get("choices"), file))
    gold = _strings(_literal(row.get("gold"), file))
    target = "\n".join(gold) if gold else _gold(choices, _literal(row.get("gold_index"), file))
    predictions = _literal(row.get("predictions"), file)
    output = _text(predictions) or _argmax_choice(predictions, choices)
    return {"id": None, "metrics": metrics, "input": _text(row.get("example")) or _text(row.get("full_prompt")),
            "target": target, "output": output, "explanation": _judgement(metrics)}


def _literal(value: Any, file: LogFile) -> Any:
    """A value v0.3 wrote as text (``str(v)`` of a list or dict: JSON or Python repr) as the value; else as it is.
    Its values are counted against the load's budget first (:mod:`evalcore.data.bounded_json`): they are kept."""
    if not isinstance(value, str) or len(value) > _MAX_LITERAL or not value.lstrip().startswith(("[", "{", "(")):
        return value
    bounded_json.spend(value, file.name, file.budget)
    for parse in (json.loads, ast.literal_eval):
        try:
            return parse(value)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            continue
    return value


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def _text(value: Any) -> str | None:
    """Text as it is, a list of texts joined by newlines; None for anything else or nothing."""
    if isinstance(value, str):
        return value if value != "" else None
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        joined = "\n".join(value)
        return joined if joined.strip() else None
    return None


def _gold(choices: list[str], index: Any) -> str | None:
    indices = index if isinstance(index, (list, tuple)) else [index]
    picked = [choices[i] for i in indices if isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(choices)]
    return "\n".join(picked) if picked else None


def _argmax_choice(values: Any, choices: list[str]) -> str | None:
    """The choice with the highest log-likelihood, for ``[ll, ...]`` or ``[(ll, is_greedy), ...]`` (one per choice)."""
    if not isinstance(values, (list, tuple)) or not choices or len(values) != len(choices):
        return None
    lls = [as_number(v[0] if isinstance(v, (list, tuple)) and v else v, booleans=False) for v in values]
    if any(math.isnan(ll) for ll in lls):
        return None
    return choices[max(range(len(lls)), key=lls.__getitem__)]


def _judgement(metrics: dict) -> str | None:
    """An LLM judge's reasoning among the metrics (``judgement`` / ``judgement_<judge>``, MT-Bench and SimpleQA)."""
    texts = [_text(v) for k, v in metrics.items() if str(k).startswith("judgement")]
    texts = [t for t in texts if t]
    return "\n".join(texts) if texts else None


# ------------------------------------------------------------------------------------------------ summary


def _summary(results: list[tuple[LogFile, dict]]) -> Imported:
    rows, notes = [], []
    for file, doc in results:
        model = _model_of(doc) or _model_from_folder(file.folder) or "unknown model"
        skipped, used = [], {}
        for task, values in doc["results"].items():
            if task == "all" or not isinstance(values, dict):
                continue
            metric = next((m for m, v in values.items() if not m.endswith("_stderr")
                           and not isinstance(v, bool) and isinstance(v, (int, float))), None)
            n = _document_count(doc, task)
            value = float(values[metric]) if metric is not None else math.nan
            if metric is None or n is None or not 0 <= value <= 1:
                skipped.append(task)
                continue
            se = as_number(values.get(f"{metric}_stderr"), booleans=False)
            rows.append({"model": model, "task": task, "n": n, "accuracy": value, "se": se})
            used[task] = metric
        if used:
            names = ", ".join(f"'{m}'" for m in dict.fromkeys(used.values()))
            notes.append(f"{file.name}: {len(used)} task(s): accuracy = each task's first metric ({names}), se = "
                         "that metric's '_stderr', n = the task's effective_num_docs in config_tasks.")
        if skipped:
            notes.append(left_out_note(len(skipped), len(skipped) + len(used), f"tasks of {file.name}",
                                       "no metric in [0, 1] or no document count (config_tasks.<task>."
                                       f"effective_num_docs): {', '.join(skipped[:5])}"))
    if not rows:
        unrecorded = any(isinstance(c, dict) and c.get("effective_num_docs") == -1
                         for _, doc in results for c in (doc.get("config_tasks") or {}).values())
        raise EvalDataError(f"{results[0][0].name}: a lighteval results file alone gives per task a metric but here "
                            "no task has both a metric in [0, 1] and its number of documents "
                            "(config_tasks.<task>.effective_num_docs"
                            + (", which is -1: this lighteval version does not record it" if unrecorded else "")
                            + "). Upload the run's details_*.parquet files (lighteval --save-details) for a "
                            "per-example analysis.")
    notes.append("A lighteval results file without its details files is a leaderboard summary (per task the first "
                 "metric, its standard error and the number of documents); upload the details_*.parquet files for "
                 "per-example analyses.")
    return Imported(pd.DataFrame(rows), "summary", TOOL, tuple(f.name for f, _ in results), notes)


def _document_count(doc: dict, task: str) -> int | None:
    """``config_tasks[<task without its few-shot count>].effective_num_docs`` (a whole number >= 1), else None."""
    configs = doc.get("config_tasks") or {}
    base = task.rsplit("|", 1)[0] if re.search(r"\|\d+$", task) else task
    for key in (task, base):
        n = optional(configs.get(key), "effective_num_docs") if isinstance(configs.get(key), dict) else None
        if isinstance(n, (int, float)) and not isinstance(n, bool) and n >= 1 and n == int(n):
            return int(n)
    return None


# ------------------------------------------------------------------------------------------------ bounded reading


def _read_details(file: LogFile) -> tuple[list[dict], tuple[str, ...]]:
    """The rows of a details file (the columns lighteval's importer uses) and its schema (see
    :func:`_details_schema`), within the file's read limits (module docstring)."""
    limits, data = file.budget.limits, file.data
    try:
        meta = pq.ParquetFile(io.BytesIO(data)).metadata
        schema = meta.schema.to_arrow_schema()
        paths = [meta.schema.column(i).path for i in range(meta.num_columns)]
        kinds = [meta.schema.column(i).physical_type for i in range(meta.num_columns)]
    except Exception as exc:  # noqa: BLE001 - damaged bytes fail anywhere in pyarrow
        raise _named(file, bounds.damaged()) from exc
    layout = _details_schema(schema.names)
    if layout is None:
        raise EvalDataError(f"{file.name}: a lighteval details file has the columns {', '.join(_OLD)} (up to v0.10) "
                            f"or doc, model_response, metric (v0.11+); this one has {', '.join(schema.names[:12])}.")
    if meta.num_columns > limits.max_columns:
        raise EvalDataError(f"{file.name}: the Parquet file has {meta.num_columns:,} columns; evalcore reads at most "
                            f"{limits.max_columns:,}. {limits.raise_hint('columns')}")
    if layout == ("old",):
        wanted = [c for c in _WANTED_OLD if c in schema.names]
    else:
        wanted = [f"{layout[0]}.{f}" for f in _WANTED_NEW[0]] + [f"{layout[1]}.{f}" for f in _WANTED_NEW[1]]
        wanted = [w for w in wanted if any(p == w or p.startswith(w + ".") for p in paths)] + [layout[2]]
    chosen = [i for i, p in enumerate(paths) if any(p == w or p.startswith(w + ".") for w in wanted)]
    try:
        bounds._check_rows(meta, limits)
        bounds._check_stated_sizes(meta, limits)
        bounds._check_pages(data, meta, limits)
        _check_values(data, meta, chosen, limits)
    except bounds._Damaged as exc:
        raise _named(file, bounds.damaged()) from exc
    except EvalDataError as exc:
        raise _named(file, exc) from exc
    text = [paths[i] for i in chosen if kinds[i] == "BYTE_ARRAY"]
    try:
        table = pq.ParquetFile(io.BytesIO(data), metadata=meta, read_dictionary=text).read(columns=wanted)
        decoded = sum(_text_bytes(column) for column in table.columns)
        if decoded > limits.max_bytes:
            raise _named(file, EvalDataError(
                f"The Parquet file's text takes {size_text(decoded)} once decoded (repeated values are stored once "
                f"in the file), more than the {size_text(limits.max_bytes)} evalcore reads into memory. Upload the "
                f"details of fewer examples (lighteval --max-samples). {limits.raise_hint('bytes')}"))
        table = table.cast(pa.schema([pa.field(f.name, _undictionary(f.type)) for f in table.schema]))
        table.validate(full=True)
        rows = table.to_pylist()
    except EvalDataError:
        raise
    except Exception as exc:  # noqa: BLE001 - damaged bytes fail anywhere in pyarrow
        raise _named(file, bounds.damaged()) from exc
    return rows, layout


def _named(file: LogFile, exc: EvalDataError) -> EvalDataError:
    return EvalDataError(f"{file.name}: {exc}")


def _check_values(data: bytes, meta: pq.FileMetaData, chosen: list[int], limits) -> None:
    """Bound the values the page headers of the ``chosen`` columns state (a list column holds any number of values
    per row; pyarrow sizes its buffers by these counts): at most ``_VALUE_BYTES`` each, all within ``max_bytes``."""
    total = 0
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for j in chosen if group.num_rows else ():
            chunk = group.column(j)
            start = chunk.data_page_offset
            if chunk.has_dictionary_page and 0 < chunk.dictionary_page_offset < start:
                start = chunk.dictionary_page_offset
            end = start + chunk.total_compressed_size
            while start < end:
                values, compressed, start = _page_values(data, start)
                if values < 0 or compressed < 0:
                    raise bounds._Damaged("a negative page size or value count")
                total += values * _VALUE_BYTES
                start += compressed
    if total > limits.max_bytes:
        raise EvalDataError(
            f"The Parquet file's pages hold values that take up to {size_text(total)} once read, more than the "
            f"{size_text(limits.max_bytes)} evalcore reads into memory. Upload the details of fewer examples "
            f"(lighteval --max-samples). {limits.raise_hint('bytes')}")


def _page_values(data: bytes, at: int) -> tuple[int, int, int]:
    """(values stated by the page's header, compressed size, where the header ends) of the page header at ``at``:
    a Thrift compact PageHeader whose data_page_header (5), dictionary_page_header (7) or data_page_header_v2 (8)
    states ``num_values`` as its field 1."""
    values, compressed, last = 0, None, 0
    while True:
        head = bounds._byte(data, at)
        at += 1
        if head == 0:
            if compressed is None:
                raise bounds._Damaged("a page header without its size")
            return values, compressed, at
        kind, delta = head & 0x0F, head >> 4
        if delta:
            last += delta
        else:
            raw, at = bounds._varint(data, at)
            last = bounds._zigzag(raw)
        if kind == bounds._STRUCT and last in (_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2):
            fields, at = bounds._struct(data, at, 1)
            if fields.get(1, 0) < 0:
                raise bounds._Damaged("a negative value count")
            values += fields.get(1, 0)
        elif kind in (bounds._I16, bounds._I32, bounds._I64):
            raw, at = bounds._varint(data, at)
            if last == bounds._COMPRESSED:
                compressed = bounds._zigzag(raw)
        else:
            at = bounds._skip(data, at, kind, 0)


def _text_bytes(array: pa.Array | pa.ChunkedArray) -> int:
    """The bytes of every text value in ``array`` (nested in lists and structs too) once decoded, summed through the
    dictionaries (not decoded)."""
    if isinstance(array, pa.ChunkedArray):
        return sum(_text_bytes(chunk) for chunk in array.chunks)
    kind = array.type
    if pa.types.is_dictionary(kind):
        if not bounds._is_text(kind.value_type):
            return 0
        lengths = pc.binary_length(array.dictionary)
        return pc.sum(pc.take(lengths, array.indices)).as_py() or 0
    if bounds._is_text(kind):
        return pc.sum(pc.binary_length(array)).as_py() or 0
    if pa.types.is_struct(kind):
        return sum(_text_bytes(child) for child in array.flatten())
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _text_bytes(array.flatten())
    if pa.types.is_map(kind):
        return _text_bytes(array.keys) + _text_bytes(array.items)
    return 0


def _undictionary(kind: pa.DataType) -> pa.DataType:
    """``kind`` with every dictionary type (text read as dictionaries) replaced by its value type."""
    if pa.types.is_dictionary(kind):
        return kind.value_type
    if pa.types.is_struct(kind):
        return pa.struct([pa.field(f.name, _undictionary(f.type), f.nullable) for f in kind])
    if pa.types.is_list(kind):
        return pa.list_(pa.field(kind.value_field.name, _undictionary(kind.value_type)))
    if pa.types.is_large_list(kind):
        return pa.large_list(pa.field(kind.value_field.name, _undictionary(kind.value_type)))
    if pa.types.is_map(kind):
        return pa.map_(_undictionary(kind.key_type), _undictionary(kind.item_type))
    return kind
