"""Ragas per-sample results: the table ``EvaluationResult.to_pandas()`` gives, saved as CSV (``.to_csv()``) or JSON
(a list of records, ``to_dict(orient="records")`` / ``to_json(orient="records")``; pandas' default ``to_json()``,
one object per column keyed by row number; or JSON Lines).

Format (explodinggradients/ragas: ``src/ragas/dataset_schema.py`` ``EvaluationResult.to_pandas`` concatenates the
evaluation dataset's columns with one column per metric; the sample's fields are those of ``SingleTurnSample``:
``user_input``, ``retrieved_contexts``, ``reference_contexts``, ``response``, ``multi_responses``, ``reference``,
``rubrics``, ...; Ragas 0.1 named them ``question``, ``contexts``, ``answer``, ``ground_truth`` / ``ground_truths``).
A metric's column is named after it (``faithfulness``, ``answer_relevancy``, ``context_precision``,
``context_recall``, ``answer_correctness``, ``factual_correctness(mode=f1)``, an aspect critic's own name ...); its
value is the metric's score of the sample, NaN where the metric failed (e.g. its LLM's answer could not be parsed).

Mapping to roles (one row per sample and metric, as for DeepEval):

- ``model``: Ragas writes no name of the system it scored, so the file holds ONE system, named after the file
  (``ragas_results.csv`` → ``ragas_results``; a note says so; the command line's ``--model NAME`` renames it),
  or after a ``model`` column when the user added one.
- ``task`` = the metric: each metric measures something else, so each is a task of its own (Ragas reports each
  metric's mean). ``example_id`` = the sample's row (0, 1, ...; Ragas writes no id: files of the same test set in
  the same order match).
- ``score`` = the metric's value. A metric column is a column outside the sample's fields whose values are numbers:
  a metric of Ragas by name (any range: rubric scores run 1-5), else any numeric column within [0, 1]; other numeric
  columns (a response time, a token count) are left out and named. NaN scores are left out and counted per metric.
  Most Ragas metrics are judged by an LLM: a note says the scores are an LLM judge's, not human labels.
- text: ``input`` = ``user_input`` / ``question`` (a multi-turn sample's messages as ``role: content`` lines),
  ``output`` = ``response`` / ``answer``, ``target`` = ``reference`` / ``ground_truth``.

A table of aggregates (``metric,score``: one mean per metric, no sample) is not claimed; evalcore refuses it as
aggregates without example counts (:mod:`evalcore.data.validation`).
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from evalcore.data.reading import read_table
from evalcore.errors import EvalDataError, listed
from evalcore.importers.base import (Imported, LogFile, as_number, header_cells, json_lines, left_out_note,
                                     parse_json)
from evalcore.importers.chat_text import text_of
from evalcore.importers.combine import run_name

TOOL = "Ragas"
#: the fields of a Ragas sample (``SingleTurnSample`` / ``MultiTurnSample``; Ragas 0.1's names below them): never
#: a metric
_SAMPLE_FIELDS = frozenset("""user_input retrieved_contexts reference_contexts retrieved_context_ids
    reference_context_ids response multi_responses reference rubrics persona_name query_style query_length
    reference_tool_calls reference_topics synthesizer_name question contexts answer ground_truth ground_truths
    model""".split())
_INPUT, _OUTPUT, _TARGET = ("user_input", "question"), ("response", "answer"), ("reference", "ground_truth",
                                                                            "ground_truths")
#: metrics only Ragas writes under these names (``src/ragas/metrics``: each metric's ``name``); a column of one of
#: them beside a sample's question is what tells a Ragas result from another table
_RAGAS_METRIC = re.compile(
    r"^(?:faithfulness|faithfulness_with_hhem|answer_relevancy|answer_similarity|answer_correctness|answer_accuracy|"
    r"context_precision|context_recall|context_entity_recall|context_relevance|context_utilization|"
    r"(?:non_)?llm_context_precision_with(?:out)?_reference|non_llm_context_recall|id_based_context_(?:precision|"
    r"recall)|context_precision_with(?:out)?_reference|factual_correctness|noise_sensitivity|response_groundedness|"
    r"semantic_similarity|faithful_rate|relevance_rate|topic_adherence|tool_call_accuracy|tool_call_f1|"
    r"agent_goal_accuracy|summary_score|domain_specific_rubrics|instance_rubrics|harmfulness|maliciousness|"
    r"coherence|correctness|conciseness|nv_\w+)(?:\(.*\))?$")
#: the Ragas metrics that are not judged by an LLM (string and embedding comparisons)
_NOT_LLM = re.compile(r"^(?:non_llm_|id_based_|semantic_similarity|answer_similarity|bleu|rouge|chrf|exact_match|"
                      r"string_present|tool_call_)")
_JSON_HEAD = re.compile(rb'^\s*(?:\[\s*\{|\{)')


def _header(file: LogFile) -> list[str]:
    """The column names the file's start shows (a CSV header, or the keys of a JSON table's first record), lower
    case; [] when it shows none."""
    head = file.head(1 << 15)
    if _JSON_HEAD.match(head):
        text = head.decode("utf-8", errors="replace")
        return [key.lower() for key in re.findall(r'"([^"\\]{1,200})"\s*:', text)]
    return [cell.lower() for cell in header_cells(file)]


def sniff(file: LogFile) -> bool:
    """A table (CSV / TSV, a JSON list of records, JSON Lines, or pandas' column-keyed JSON) whose columns hold a
    Ragas sample's question (``user_input`` / ``question``), one of its other fields (response, contexts,
    reference) and at least one metric by a name only Ragas writes (``faithfulness``, ``answer_relevancy``,
    ``context_precision`` ...)."""
    try:
        if not file.base.lower().endswith((".csv", ".tsv", ".txt", ".json", ".jsonl")):
            return False
        names = set(_header(file))
        return (bool(names & set(_INPUT)) and bool(names & (_SAMPLE_FIELDS - set(_INPUT) - {"model"}))
                and any(_RAGAS_METRIC.match(name) for name in names))
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def convert(files: list[LogFile]) -> list[Imported]:
    """Each file as the log of one system (``Imported.model_from_file`` where its name names it)."""
    return [_one(file) for file in files]


def _table(file: LogFile) -> pd.DataFrame:
    """The file's rows: a CSV / TSV through evalcore's table reader; JSON parsed here (its values hold lists: the
    contexts), as records, as JSON Lines, or as pandas' ``{column: {row: value}}``."""
    if not _JSON_HEAD.match(file.head(64)):
        try:
            return read_table(file.data, file.budget.limits, file.budget, file.name)
        except EvalDataError as exc:
            raise EvalDataError(f"{file.name}: {exc}") from exc
    first_line = file.data.lstrip().split(b"\n", 1)[0].strip()
    if first_line.startswith(b"{") and first_line.endswith(b"}") and b"\n" in file.data.strip():
        records = [record for _, record in json_lines(file)]
    else:
        doc = parse_json(file)
        if isinstance(doc, dict) and doc and all(isinstance(v, (dict, list)) for v in doc.values()):
            return pd.DataFrame(doc)  # pandas' to_json(): {column: {row: value}}
        records = doc if isinstance(doc, list) else None
    if not records or not all(isinstance(r, dict) for r in records):
        raise EvalDataError(f"{file.name}: a Ragas result in JSON is a list of records (one object per sample, "
                            "EvaluationResult.to_pandas().to_dict(orient='records')); this file is not.")
    return pd.DataFrame.from_records(records)


def _number(value: Any) -> float:
    """A metric's value as a float (NaN for an empty cell, text that is no number, true/false)."""
    return as_number(value, booleans=False)


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, float) and math.isnan(value):
        return None
    return text_of(value)


def _first(frame: pd.DataFrame, names: tuple[str, ...]) -> str | None:
    """The first of ``names`` that is a column of ``frame`` (matched without case), or None."""
    columns = {str(c).strip().lower(): c for c in frame.columns}
    return next((columns[n] for n in names if n in columns), None)


def _one(file: LogFile) -> Imported:
    raw = _table(file)
    if len(raw) == 0:
        raise EvalDataError(f"{file.name}: the Ragas result has no rows.")
    notes: list[str] = []
    metrics, other, empty = [], [], []
    for column in raw.columns:
        name = str(column).strip()
        if name.lower() in _SAMPLE_FIELDS or name.lower() in ("", "unnamed: 0", "index"):
            continue
        values = raw[column].map(_number)
        filled = raw[column].notna() & raw[column].map(lambda v: not (isinstance(v, str) and v.strip() == ""))
        if not filled.any() and _RAGAS_METRIC.match(name):
            empty.append(name)
            continue
        if not filled.any() or values[filled].isna().mean() > 0.1:
            if filled.any() and _RAGAS_METRIC.match(name):
                raise EvalDataError(f"{file.name}: column '{name}' is a Ragas metric but holds text that is not a "
                                    f"number (e.g. {raw[column][filled & values.isna()].iloc[0]!r}): each sample's "
                                    "score should be a number, or empty where the metric failed.")
            continue
        within = bool(values.dropna().between(0, 1).all())
        (metrics if _RAGAS_METRIC.match(name) or within else other).append((name, values))
    if empty:
        notes.append(f"{file.name}: {listed(empty, 6, repr)}: no sample has a value (the metric failed on every "
                     f"sample, NaN or empty): not read.")
    if other:
        notes.append(f"{file.name}: numeric column{'s' if len(other) > 1 else ''} "
                     f"{listed([n for n, _ in other], 4, repr)} {'are' if len(other) > 1 else 'is'} not read: not a "
                     "Ragas metric by name and not within [0, 1] as Ragas scores are.")
    if not metrics:
        if empty:
            raise EvalDataError(f"{file.name}: every metric of the Ragas result ({listed(empty, 6, repr)}) is empty "
                                "or NaN on every sample (the metrics failed): nothing to read.")
        raise EvalDataError(f"{file.name}: no metric column with numbers (a Ragas result has one column per metric, "
                            f"e.g. faithfulness, beside the sample's fields); its columns are "
                            f"{listed(list(map(str, raw.columns)), 12)}.")
    model_column = _first(raw, ("model",))
    if model_column is not None and raw[model_column].notna().all():
        models = raw[model_column].astype(str)
        notes.append(f"{file.name}: the model is the column '{model_column}' (Ragas writes none).")
        from_file = False
    else:
        name = run_name(file.name)
        models = pd.Series(name, index=raw.index)
        notes.append(f"{file.name}: Ragas writes no name of the system it scored: the file holds one system, named "
                     f"after the file, '{name}' (--model NAME names it otherwise: evalcore validate, report, "
                     "compare).")
        from_file = True
    texts = {role: (raw[column].map(_text) if column is not None else pd.Series(None, index=raw.index, dtype=object))
             for role, column in (("input", _first(raw, _INPUT)), ("output", _first(raw, _OUTPUT)),
                                  ("target", _first(raw, _TARGET)))}
    parts, failed = [], []
    for name, values in metrics:
        keep = values.notna()
        if (~keep).any():
            failed.append(f"{name} ({int((~keep).sum()):,})")
        rows = keep.to_numpy()
        parts.append(pd.DataFrame({"model": models[keep], "task": name, "example_id": raw.index[rows].astype(str),
                                   "score": values[keep], **{role: text[keep] for role, text in texts.items()}}))
    frame = pd.concat(parts, ignore_index=True)
    total = len(raw) * len(metrics)
    if failed:
        notes.append(left_out_note(total - len(frame), total, f"metric values of {file.name}",
                                   f"empty or NaN (the metric failed on the sample, e.g. its LLM's answer could not be "
                                   f"parsed): {listed(failed, 6)}"))
    if frame.empty:
        raise EvalDataError(f"{file.name}: every metric value of the Ragas result is empty or NaN (the metrics "
                            "failed): nothing to read.")
    judged = [name for name, _ in metrics if not _NOT_LLM.match(name)]
    notes.append(f"{file.name}: Ragas scores read, one task per metric ({listed([n for n, _ in metrics], 8, repr)}); "
                 f"example_id is the sample's row (Ragas writes no id).")
    if judged:
        notes.append(f"{file.name}: {listed(judged, 6, repr)} {'are' if len(judged) > 1 else 'is'} judged by an "
                     "LLM in Ragas: the scores carry that judge's errors, they are not human labels.")
    return Imported(frame, "log", TOOL, (file.name,), notes, model_from_file=from_file)
