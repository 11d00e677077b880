"""every_eval_ever (EvalEval Coalition's exchange format): an aggregate JSON per run and, optionally, its per-sample
JSON Lines file.

Format (repository evaleval/every_eval_ever, schema 0.3.0: ``every_eval_ever/schemas/eval.schema.json`` and
``every_eval_ever/schemas/instance_level_eval.schema.json``; layout in its ``README.md``, "Instance-Level Data"):

- aggregate ``<uuid>.json``: ``{schema_version, evaluation_id, retrieved_timestamp, source_metadata, eval_library,
  model_info{name, id, developer, ...}, evaluation_results[], detailed_evaluation_results{file_path, ...}}``; each
  result ``{evaluation_result_id, evaluation_name, source_data{..., samples_number}, metric_config{metric_id,
  metric_name, metric_kind, metric_unit, lower_is_better, score_type (binary | continuous | levels), min_score,
  max_score, llm_scoring{judges[{model_info}], ...}}, score_details{score, uncertainty{standard_error{value},
  num_samples, ...}}}``, ``detailed_evaluation_results{file_path, total_rows}``. Schema 0.2.x has the same keys
  (0.2.0 at commit a30253854 has ``confidence_interval`` directly in ``score_details``). Schemas 0.0.1 (commit
  ed98720dc) and 0.1.0 (commit 7b868b059) have a top-level ``source_data{dataset_name, samples_number (the
  dataset's size), sample_ids (those evaluated)}`` (0.0.1 also ``evaluation_source``), no ``eval_library``, often
  null ``min_score`` / ``max_score`` / ``score_type``, and keep the per-sample rows INLINE, in
  ``detailed_evaluation_results_per_samples`` (a link, or a list of ``{sample_id, input, prompt, ground_truth (a
  string or a list), response, choices (strings or [letter, text] pairs), full_logprobs}``, with no score); they
  never wrote a ``_samples.jsonl`` file. EEE's HELM converter (0.1.0) writes one result per metric x split x
  perturbation, all named alike (split and perturbation in ``score_details.details``), some twice.
- per-sample ``<uuid>_samples.jsonl`` in the same folder: one object per line ``{schema_version, evaluation_id,
  model_id, evaluation_name, evaluation_result_id, sample_id, interaction_type (single_turn | multi_turn |
  agentic), input{raw, formatted, reference[], choices}, output{raw[]} (null for multi-turn and agentic rows, whose
  text is in ``messages[]{role, content}``), answer_attribution[{extraction_method, ...}], evaluation{score,
  is_correct}, error, metadata}``. Early drafts (commit abee35ea0) wrote ``metrics`` for ``evaluation``,
  ``interactions`` for ``messages``, and strings for ``input.reference`` and ``output.raw``; both are read.

Mapping to roles:

- aggregates alone: a **summary**, one row per result that is a proportion: ``model`` = ``model_info.id`` (else
  ``name``), ``task`` = ``evaluation_name`` (where one name holds several results: with the metric's name added,
  then with the texts that tell them apart, e.g. "multiple_choice_joint (exact_match, test, robustness)"; a result
  repeated field for field is read once), ``n`` = the number of samples the result scored, where the file says it:
  ``uncertainty.num_samples``, else the length of ``source_data.sample_ids``, else
  ``detailed_evaluation_results.total_rows`` or the number of inline per-sample rows (when the aggregate holds one
  result), and only else ``source_data.samples_number`` (the dataset's size; a note says so); ``accuracy`` = the
  tool's score scaled to [0, 1] by ``min_score`` / ``max_score`` (or by ``metric_unit`` proportion / percent; with
  neither, a score in [0, 1] of a metric named as an accuracy, e.g. "accuracy", "exact_match", Inspect's
  "choice", is read as a proportion, with a note), ``se`` = ``uncertainty.standard_error.value`` on the same
  scale. A note names the results whose score x n is not a whole number (n looks doubtful). A result is a
  proportion when its bounds are 0 and 1 (or 100), higher is better, its scores are not levels and its metric is
  not a graded one (F1, ROUGE, BLEU, AUROC, Elo, errors ...). Results that are not, or that give no sample count,
  cannot be a summary row: they are left out, named in a note.
- an early aggregate (0.0.1 / 0.1.x) with inline per-sample rows and an accuracy-like result: a **log** of those
  rows: ``example_id`` = ``sample_id``, ``task`` = ``source_data.dataset_name``, ``correct`` = the response equals
  one of the ``ground_truth`` answers (trimmed; what the exact_match / accuracy it reports counts; the rows hold no
  score, a note says so and compares the samples' mean with the results' scores), ``input`` = ``input`` with the
  choices, ``target`` = ``ground_truth``, ``output`` = ``response``.
- per-sample files: a **log**: ``model`` = ``model_id``, ``task`` = ``evaluation_name`` (the
  ``evaluation_result_id`` where one evaluation name holds several results), ``example_id`` = ``sample_id``
  (a sample listed twice for one task is numbered in ``repeat``). The label: ``correct`` = ``is_correct`` when the
  result's ``score_type`` is ``binary`` or when every score of the task is 0 or 1 and agrees with ``is_correct``;
  otherwise ``score`` = ``evaluation.score`` (graded scores: ``is_correct`` is not used, since the format requires
  it for every row and EEE's converters derive it from the score, e.g. ``score > 0``). Text: ``input`` =
  ``input.raw`` (with ``input.choices`` below it, lettered "A) ..." when the references are letters),
  ``target`` = ``input.reference`` (joined by "\\n"), ``output`` = ``output.raw`` (joined by "\\n"; for multi-turn
  and agentic rows the last assistant message), ``explanation`` = a scorer's reasoning where a converter put one in
  ``metadata`` (the schema has no field for it).
- an aggregate and its per-sample file (the same ``evaluation_id``) are paired: the log is returned and the
  aggregate gives each result's metric (``score_type``, and ``llm_scoring``, which makes a note that the label is an
  LLM judge's). A note says where the file holds fewer samples than the aggregate's n (a subset) or where their
  mean is not the aggregate's score. An aggregate given beside per-sample files without its own is left out with a
  note (a summary cannot be combined with logs).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import PurePosixPath
from typing import Any

import pandas as pd

from evalcore.errors import EvalDataError, listed
from evalcore.importers.base import Imported, LogFile, as_number, json_lines, left_out_note, optional, parse_json

TOOL = "every_eval_ever"

_AGGREGATE_MARKERS = (b'"evaluation_results"', b'"model_info"', b'"source_metadata"', b'"evaluation_source"')
_INSTANCE_MARKERS = (b'"interaction_type"', b'"evaluation"', b'"metrics"')
#: metrics bounded in [0, 1] that are not a proportion of correct examples
_GRADED = re.compile(r"f1|rouge|bleu|meteor|chrf|bert_?score|auroc|auc\b|\bauc|rmse|mse|mae|\belo\b|perplexity|loss|"
                     r"correlation|pearson|spearman|kendall|kappa|brier|\bece\b|calibration|similarity|distance|"
                     r"cost|latency|tokens|runtime|\bter\b|bits_per_byte|mcc|mc2", re.IGNORECASE)
#: metric names of a proportion of correct samples (read as one in [0, 1] when metric_config gives no bounds)
_ACCURACY = re.compile(r"acc|exact|\bem\b|correct|choice|match|pass|success|solved|win_?rate|mc1", re.IGNORECASE)
_EXPLANATION_KEYS = ("explanation", "judge_explanation", "reasoning", "judge_reasoning", "rationale", "critique",
                     "grader_explanation", "score_explanation")


def sniff(file: LogFile) -> bool:
    """An aggregate (a JSON object with ``schema_version``, ``evaluation_id`` and EEE's ``evaluation_results`` /
    ``model_info`` / ``source_metadata``) or a per-sample line (``schema_version``, ``evaluation_id``,
    ``sample_id`` and ``interaction_type`` / ``evaluation``)."""
    try:
        head = file.head(1 << 15)
        if not head.startswith(b"{") or b'"schema_version"' not in head or b'"evaluation_id"' not in head:
            return False
        if _is_instance_file(file):
            return any(marker in head.split(b"\n", 1)[0] for marker in _INSTANCE_MARKERS)
        return any(marker in head for marker in _AGGREGATE_MARKERS)
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def _is_instance_file(file: LogFile) -> bool:
    first = file.head(1 << 15).split(b"\n", 1)[0]
    return b'"sample_id"' in first and b'"evaluation_results"' not in first


def convert(files: list[LogFile]) -> list[Imported]:
    """Per-sample files as logs (each paired with its aggregate where given) and early aggregates with inline
    per-sample rows as logs; else each aggregate as a summary."""
    aggregates = [(file, _aggregate(file)) for file in files if not _is_instance_file(file)]
    instances = [file for file in files if _is_instance_file(file)]
    inline: list[Imported] = []
    for file, doc in aggregates:
        log = _inline_log(file, doc)
        if log is not None:
            inline.append(log)
    if not instances and not inline:
        return [_summary(file, doc) for file, doc in aggregates]
    out: list[Imported] = []
    used: set[str] = {name for log in inline for name in log.files}
    for file in instances:
        rows = _instance_rows(file)
        ids = {str(row.get("evaluation_id")) for _, row in rows}
        paired = [(f, doc) for f, doc in aggregates if str(doc.get("evaluation_id")) in ids and f.name not in used]
        notes = _mismatched_pairs(file, ids, aggregates, paired)
        used.update(f.name for f, _ in paired)
        out.append(_log(file, rows, paired, notes))
    out.extend(inline)
    unpaired = [(f, doc) for f, doc in aggregates if f.name not in used]
    if unpaired:
        names = listed([f.name for f, _ in unpaired], 5, repr)
        early = [f for f, doc in unpaired if _is_early(doc)]
        why = ("they hold no per-sample rows of their own (schema 0.0.1 / 0.1.x keeps them inline, in "
               "'detailed_evaluation_results_per_samples')" if len(early) == len(unpaired) else
               "their per-sample file (same evaluation_id) was not given")
        out[0].notes.append(f"{len(unpaired):,} every_eval_ever aggregate file(s) were left out: {names}; {why}, "
                            "and an aggregate summary cannot be combined with per-example logs. Upload an aggregate "
                            "alone (or with other aggregates) to read it as a leaderboard summary.")
    return out


# ----------------------------------------------------------------------------------------------------------------
# aggregates


def _aggregate(file: LogFile) -> dict:
    doc = parse_json(file)
    if not isinstance(doc, dict):
        raise EvalDataError(f"{file.name}: an every_eval_ever aggregate is a JSON object; this file is not.")
    results = doc.get("evaluation_results")
    if not isinstance(results, list):
        raise EvalDataError(f"{file.name}: the field 'evaluation_results' is missing or not a list; an "
                            "every_eval_ever aggregate lists its results there (is the file complete?).")
    return doc


def _is_early(doc: dict) -> bool:
    """Schema 0.0.1 / 0.1.x: per-sample rows inline in ``detailed_evaluation_results_per_samples`` (or a link
    there), never a ``<uuid>_samples.jsonl`` file."""
    match = re.search(r"(\d+)\.(\d+)", str(doc.get("schema_version") or ""))
    if match:
        return (int(match.group(1)), int(match.group(2))) < (0, 2)
    return "detailed_evaluation_results_per_samples" in doc and "detailed_evaluation_results" not in doc


def _inline_samples(doc: dict) -> list:
    """The per-sample rows an early aggregate holds inline ([] when none, or when the field is a link)."""
    rows = doc.get("detailed_evaluation_results_per_samples")
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def _model_of(doc: dict, file: LogFile) -> str:
    info = doc.get("model_info")
    for key in ("id", "name"):
        value = optional(info, key)
        if isinstance(value, str) and value.strip():
            return value
    raise EvalDataError(f"{file.name}: the field 'model_info.id' (and 'model_info.name') is missing; an "
                        "every_eval_ever aggregate names its model there.")


def _list(value: Any) -> list:
    """A list field, or [] where the field is absent or not a list."""
    return value if isinstance(value, list) else []


def _config(result: dict) -> dict:
    return result.get("metric_config") if isinstance(result.get("metric_config"), dict) else {}


def _bound(value: Any) -> float:
    """A min_score / max_score: a number, or NaN (null, absent, "Infinity")."""
    return as_number(value, booleans=False)


def _unbounded(config: dict) -> bool:
    """No min_score / max_score and no metric_unit: EEE 0.0.1 / 0.1.0 files often leave them null."""
    return (math.isnan(_bound(config.get("min_score"))) and math.isnan(_bound(config.get("max_score")))
            and not str(config.get("metric_unit") or "").strip())


def _scale(result: dict) -> tuple[float, float] | None:
    """(low, high) of a result's score when it is a proportion (or a percentage), else None. Without bounds or unit,
    a binary score_type is a proportion, and so is a score in [0, 1] of a metric named as an accuracy (see
    :func:`_assumed_proportion`)."""
    config = _config(result)
    low, high = _bound(config.get("min_score")), _bound(config.get("max_score"))
    unit = str(config.get("metric_unit") or "").strip().lower()
    if math.isnan(low) and math.isnan(high):
        if unit == "proportion" or (not unit and config.get("score_type") == "binary"):
            low, high = 0.0, 1.0
        elif unit in ("percent", "percentage", "%"):
            low, high = 0.0, 100.0
        elif _assumed_proportion(result):
            low, high = 0.0, 1.0
    if low != 0.0 or high not in (1.0, 100.0):
        return None
    return low, high


def _assumed_proportion(result: dict) -> bool:
    """A result without min_score / max_score / metric_unit whose metric is named as an accuracy (accuracy, acc,
    exact_match, Inspect's ``choice`` scorer ...) and whose score lies in [0, 1]."""
    config = _config(result)
    score = as_number(optional(result, "score_details.score"), booleans=False)
    names = f"{_metric_names(config)} {result.get('evaluation_name') or ''}"
    return (_unbounded(config) and config.get("score_type") in (None, "binary", "continuous")
            and bool(_ACCURACY.search(names)) and not _GRADED.search(names) and 0.0 <= score <= 1.0)


def _not_proportion(result: dict) -> str | None:
    """Why a result is not a proportion of correct examples (None when it is)."""
    config = _config(result)
    if config.get("lower_is_better") is True:
        return "lower is better"
    if config.get("score_type") == "levels":
        return "scored in levels"
    if _GRADED.search(_metric_names(config)):
        return "a graded metric"
    if _scale(result) is None:
        if _unbounded(config):
            return ("no min_score / max_score in metric_config, and not an accuracy (by its metric's name) with a "
                    "score between 0 and 1")
        return "not bounded by 0 and 1 (or 100)"
    return None


def _metric_names(config: dict) -> str:
    """The metric's names: metric_kind, metric_id, metric_name, and evaluation_description when it is a name (a few
    words, as EEE's lm-eval and HELM converters write it: "acc_norm", "rouge_l", "f1 (filter: none)")."""
    names = [str(config.get(k) or "") for k in ("metric_kind", "metric_id", "metric_name")]
    description = str(config.get("evaluation_description") or "")
    if len(description.split()) <= 4:
        names.append(description)
    return " ".join(names)


def _metric_label(config: dict) -> str | None:
    """A short name of the metric, to tell apart results of one evaluation name."""
    for key in ("metric_name", "metric_id"):
        if config.get(key):
            return str(config[key])
    description = str(config.get("evaluation_description") or "")
    return description if description and len(description.split()) <= 4 else None


def _n_of(result: dict, doc: dict) -> tuple[float, str, float]:
    """(n, the field that gave it, the dataset's size): the number of samples the result scored. In order:
    ``score_details.uncertainty.num_samples``; the length of ``source_data.sample_ids`` (per result from 0.2, top
    level in 0.0.1 / 0.1.0); ``detailed_evaluation_results.total_rows`` (the per-sample file's rows, when the
    aggregate holds one result); the number of inline ``detailed_evaluation_results_per_samples`` rows (0.0.1 /
    0.1.0, one result); else ``source_data.samples_number``, which is the size of the dataset (schema: "Number of
    samples in the dataset"), not necessarily of what was scored."""
    size = math.nan
    for source in (result.get("source_data"), doc.get("source_data")):
        if isinstance(source, dict) and math.isnan(size):
            size = as_number(source.get("samples_number"), booleans=False)
    n = as_number(optional(result, "score_details.uncertainty.num_samples"), booleans=False)
    if not math.isnan(n):
        return n, "uncertainty.num_samples", size
    for source in (result.get("source_data"), doc.get("source_data")):  # per result (0.2+), top level (0.0.1)
        if isinstance(source, dict) and isinstance(source.get("sample_ids"), list) and source["sample_ids"]:
            return float(len(source["sample_ids"])), "the length of source_data.sample_ids", size
    single = len([r for r in _list(doc.get("evaluation_results")) if isinstance(r, dict)]) == 1
    rows = as_number(optional(doc, "detailed_evaluation_results.total_rows"), booleans=False)
    if single and rows >= 1:
        return rows, "detailed_evaluation_results.total_rows", size
    if single and _inline_samples(doc):
        return float(len(_inline_samples(doc))), "the rows of detailed_evaluation_results_per_samples", size
    if not math.isnan(size):
        return size, "source_data.samples_number", size
    return math.nan, "", size


def _distinctions(result: dict) -> dict[str, str]:
    """Short text values of a result's ``source_data``, ``score_details.details`` (nested objects by their keys,
    e.g. ``perturbation.name``) and ``metric_config`` that may tell it apart from others of its name."""
    out: dict[str, str] = {}

    def walk(prefix: str, value: Any, depth: int) -> None:
        if isinstance(value, dict) and depth < 3:
            for key, inner in value.items():
                walk(f"{prefix}.{key}", inner, depth + 1)
        elif isinstance(value, str) and value.strip() and len(value) <= 40 and "\n" not in value:
            out[prefix] = value.strip()

    for key in ("source_data", "score_details.details", "metric_config"):
        walk(key, optional(result, key), 0)
    return out


def _task_names(results: list[dict]) -> list[str]:
    """evaluation_name; where one name holds several results: with the metric's name added, then with what else
    tells them apart in the file (a split, a perturbation, a subset: texts of source_data / score_details.details
    that differ among them); results that still look alike are numbered in the file's order."""
    names = [str(r.get("evaluation_name") or r.get("evaluation_result_id") or f"result {i}")
             for i, r in enumerate(results, 1)]
    counts = pd.Series(names).value_counts()
    out = []
    for result, name in zip(results, names):
        if counts[name] > 1:
            metric = _metric_label(_config(result)) or result.get("evaluation_result_id")
            name = f"{name} ({metric})" if metric else name
        out.append(name)
    groups: dict[str, list[int]] = {}
    for i, name in enumerate(out):
        groups.setdefault(name, []).append(i)
    for name, members in groups.items():
        if len(members) < 2:
            continue
        found = [_distinctions(results[i]) for i in members]
        keys = list(dict.fromkeys(k for f in found for k in f))
        # keys with two values or more (a split, a perturbation's name); then keys only some results have
        varying = [k for k in keys if len({f[k] for f in found if k in f}) > 1]
        named = [[f[k] for k in varying if k in f] for f in found]
        if len({tuple(n) for n in named}) < len(members):
            varying = [k for k in keys if len({f.get(k) for f in found}) > 1]
            named = [[f[k] for k in varying if k in f] for f in found]
        for i, extra in zip(members, named):
            if extra:
                out[i] = f"{name[:-1]}, {', '.join(extra)})" if name.endswith(")") else f"{name} ({', '.join(extra)})"
    alike = pd.Series(out).value_counts()
    seen: dict[str, int] = {}
    for i, name in enumerate(list(out)):  # still alike (one metric named twice): numbered in the file's order
        seen[name] = seen.get(name, 0) + 1
        if alike[name] > 1:
            out[i] = f"{name} #{seen[name]}"
    return out


def _judges(config: dict) -> str | None:
    """The LLM judges of a result ('gpt-4o, claude-3'), or None when it is not judged by an LLM."""
    scoring = config.get("llm_scoring") if isinstance(config, dict) else None
    if not isinstance(scoring, dict):
        return None
    names = [str(optional(j, "model_info.id") or optional(j, "model_info.name") or "?")
             for j in _list(scoring.get("judges")) if isinstance(j, dict)]
    return ", ".join(names) or "unnamed judge"


def _decimals(value: float) -> int:
    """How many decimals a score was written with (repr of the float: 0.75 -> 2, 0.1111111111111111 -> 16)."""
    text = repr(float(value))
    if "e" in text or "E" in text:
        mantissa, exponent = text.lower().split("e")
        return max(0, len(mantissa.split(".")[1] if "." in mantissa else "") - int(exponent))
    return len(text.split(".")[1]) if "." in text else 0


def _whole_count_doubt(score: float, low: float, high: float, n: float) -> str | None:
    """'0.1111 x 10 = 1.11' when the proportion x n is farther from a whole number than the rounding of the score
    as written (its decimals) explains."""
    share = (score - low) / (high - low)
    product = share * n
    slack = 0.5 * 10.0 ** -_decimals(score) / (high - low) * n + 1e-6
    if abs(product - round(product)) <= slack:
        return None
    return f"{share:.4g} x {n:,.0f} = {product:,.2f}"


def _distinct_results(results: list[dict]) -> tuple[list[dict], int]:
    """The results without exact repeats (one result written twice, every field alike, as EEE's HELM converter
    wrote them), and how many repeats were dropped."""
    kept, seen = [], set()
    for result in results:
        key = json.dumps(result, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            kept.append(result)
    return kept, len(results) - len(kept)


def _summary(file: LogFile, doc: dict) -> Imported:
    model = _model_of(doc, file)
    results = [r for r in doc["evaluation_results"] if isinstance(r, dict)]
    if not results:
        raise EvalDataError(f"{file.name}: 'evaluation_results' holds no result.")
    results, repeats = _distinct_results(results)
    tasks = _task_names(results)
    rows, judged, assumed, doubtful = [], [], [], []
    counted: dict[str, list[str]] = {}
    left_out: dict[str, list[str]] = {}
    for result, task in zip(results, tasks):
        config = _config(result)
        score = as_number(optional(result, "score_details.score"), booleans=False)
        why = _not_proportion(result)
        n, source, size = _n_of(result, doc)
        if why is None and math.isnan(score):
            why = "no score"
        if why is None and not _scale(result)[0] <= score <= _scale(result)[1]:  # type: ignore[index]
            why = "a score outside its bounds"
        if why is None and (math.isnan(n) or n < 1):
            why = ("no sample count (uncertainty.num_samples, source_data.sample_ids or "
                   "source_data.samples_number)")
        if why is not None:
            left_out.setdefault(why, []).append(repr(task))
            continue
        low, high = _scale(result)  # type: ignore[misc] - a proportion has a scale
        se = as_number(optional(result, "score_details.uncertainty.standard_error.value"), booleans=False)
        accuracy = (score - low) / (high - low)
        rows.append({"model": model, "task": task, "n": n, "accuracy": accuracy, "se": se / (high - low)})
        if source != "uncertainty.num_samples":
            shown = f"{task!r} (n = {n:,.0f}" + (f" of the dataset's {size:,.0f}" if size > n else "") + ")"
            counted.setdefault(source, []).append(shown)
        if _unbounded(config) and config.get("score_type") != "binary":
            assumed.append(f"{task!r} ({score:.4g})")
        doubt = _whole_count_doubt(score, low, high, n)
        if doubt:
            doubtful.append(f"{task!r} ({doubt})")
        judge = _judges(config)
        if judge:
            judged.append(f"'{task}' ({judge})")
    notes = [f"{file.name}: every_eval_ever aggregate (schema {doc.get('schema_version', '?')}) of '{model}'."]
    if _inline_samples(doc):
        notes.append(f"{file.name}: its {len(_inline_samples(doc)):,} inline per-sample rows "
                     "(detailed_evaluation_results_per_samples) carry no score and no label could be read from them "
                     "(no response and ground_truth to compare, or no accuracy-like result): the aggregate is read "
                     "as a summary.")
    if repeats:
        were = "s were exact repeats" if repeats > 1 else " was an exact repeat"
        notes.append(f"{file.name}: {repeats:,} result{were} of another (every field alike), read once.")
    if judged:
        notes.append(f"{file.name}: the accuracy of {listed(judged, 5)} is an LLM judge's verdict "
                     "(metric_config.llm_scoring), not a human label.")
    for source, names in counted.items():
        if source == "source_data.samples_number":
            notes.append(f"{file.name}: the sample count n of {listed(names, 5)} is the dataset's size "
                         "(source_data.samples_number), as the result does not say how many samples it scored "
                         "(no uncertainty.num_samples or sample_ids).")
        else:
            notes.append(f"{file.name}: the sample count n of {listed(names, 5)} is the number of samples scored, "
                         f"from {source} (no uncertainty.num_samples).")
    if assumed:
        notes.append(f"{file.name}: metric_config gives no min_score / max_score for {listed(assumed, 5)}; read as "
                     "a proportion between 0 and 1, since the metric is named as an accuracy and its score lies "
                     "there.")
    if doubtful:
        notes.append(f"{file.name}: the score x n of {listed(doubtful, 5)} is not a whole number of correct "
                     "samples: n looks doubtful (the score may be over other samples, e.g. one split, or a mean of "
                     "means); the accuracy given is the tool's score.")
    why_left_out = "; ".join(f"{why}: {listed(names, 6)}" for why, names in left_out.items())
    if left_out:
        notes.append(left_out_note(sum(map(len, left_out.values())), len(results), f"results of {file.name}",
                                   "a leaderboard summary row needs a proportion of correct examples and its "
                                   f"sample count ({why_left_out})"))
    if not rows:
        raise EvalDataError(f"{file.name}: no result of this every_eval_ever aggregate can be a leaderboard summary "
                            f"row ({why_left_out}): evalcore needs each result's proportion of correct "
                            "examples and its sample count. " + _samples_advice(doc))
    frame = pd.DataFrame(rows)
    if frame["se"].isna().all():
        frame = frame.drop(columns="se")
    return Imported(frame, "summary", TOOL, (file.name,), notes)


def _samples_advice(doc: dict) -> str:
    """Where this aggregate's per-sample rows would be, by its schema version."""
    if _is_early(doc):
        where = doc.get("detailed_evaluation_results_per_samples")
        held = ("it links them elsewhere (" + repr(str(where)[:200]) + "), which evalcore does not fetch"
                if isinstance(where, str) and where.strip() else
                "its rows there carry no score, and their response and ground_truth cannot be compared (one is "
                "missing)" if _inline_samples(doc) and any(_not_proportion(r) is None for r in
                                                            _list(doc.get("evaluation_results"))
                                                            if isinstance(r, dict)) else
                "its rows there carry no score, and no result is an accuracy that an exact match of response and "
                "ground_truth would count" if _inline_samples(doc) else
                "this file holds none")
        return (f"Schema {doc.get('schema_version', '?')} keeps the per-sample rows inside the aggregate, in "
                f"'detailed_evaluation_results_per_samples'; {held}.")
    return "Upload the run's per-sample file (<uuid>_samples.jsonl) to read each example."


# ----------------------------------------------------------------------------------------------------------------
# early aggregates (schema 0.0.1 / 0.1.x) with their per-sample rows inline


def _inline_log(file: LogFile, doc: dict) -> Imported | None:
    """An early aggregate's ``detailed_evaluation_results_per_samples`` rows ``{sample_id, input, prompt,
    ground_truth (a string or a list), response, choices (strings, or [letter, text] pairs), full_logprobs}`` as a
    log (schema 0.1.0 ``eval.schema.json`` at commit 7b868b059, 0.0.1 at ed98720dc). The rows carry no score: when
    a result of the aggregate is an accuracy-like proportion (exact_match, accuracy, Inspect's choice),
    ``correct`` = the response equals one of the ground_truth answers (both trimmed), which is what those metrics
    count; the samples' mean is checked against the results' scores in a note. None when the aggregate holds no
    such rows or no such result (it is then read as a summary)."""
    samples = _inline_samples(doc)
    results = [r for r in doc["evaluation_results"] if isinstance(r, dict)]
    proportions = [r for r in results if _not_proportion(r) is None
                   and not _GRADED.search(f"{_metric_names(_config(r))} {r.get('evaluation_name') or ''}")]
    if not samples or not proportions:
        return None
    model = _model_of(doc, file)
    names = list(dict.fromkeys(str(r.get("evaluation_name")) for r in results if r.get("evaluation_name")))
    task = str(optional(doc, "source_data.dataset_name") or (names[0] if len(names) == 1 else "all"))
    records, unlabeled = [], 0
    for number, row in enumerate(samples, 1):
        if row.get("sample_id") is None:
            raise EvalDataError(f"{file.name}: detailed_evaluation_results_per_samples row {number} has no "
                                "'sample_id'; every per-sample row of an every_eval_ever aggregate names its "
                                "example there.")
        truth = row.get("ground_truth")
        truths = [str(t).strip() for t in (truth if isinstance(truth, list) else [truth])
                  if t is not None and not isinstance(t, (dict, list)) and str(t).strip()]
        response = row.get("response")
        if truths and isinstance(response, (str, int, float)) and not isinstance(response, bool):
            correct = float(str(response).strip() in truths)
        else:
            correct = math.nan
            unlabeled += 1
        records.append({"model": model, "task": task, "example_id": str(row["sample_id"]), "correct": correct,
                        "input": _inline_input(row, truths), "target": "\n".join(truths) or None,
                        "output": _text(response), "explanation": None})
    frame = pd.DataFrame.from_records(records)
    version = doc.get("schema_version", "?")
    metric = listed(list(dict.fromkeys(_metric_label(_config(r)) or str(r.get("evaluation_name"))
                                       for r in proportions)), 4, repr)
    notes = [f"{file.name}: every_eval_ever aggregate (schema {version}) of '{model}' with its per-sample rows "
             f"inline (detailed_evaluation_results_per_samples), read as a log of {len(samples):,} samples. Schema "
             f"{version} stores no per-sample score: 'correct' is whether the response equals a ground_truth "
             f"answer (exact match, spaces trimmed), as the aggregate's {metric} counts it.",
             f"{file.name}: its {len(results):,} aggregate result(s) are not rows of the log (a summary cannot be "
             "combined with per-example logs)."]
    if unlabeled:
        notes.append(left_out_note(unlabeled, len(frame), f"inline samples of {file.name}",
                                   "no ground_truth or no response to compare"))
        frame = frame[frame["correct"].notna()].reset_index(drop=True)
    if frame.empty:
        return None
    mean = float(frame["correct"].mean())
    distinct, _ = _distinct_results(results)
    scores: dict[str, list[str]] = {}  # the results' scores (as shown) -> their names
    for result, name in zip(distinct, _task_names(distinct)):
        if any(result is r for r in proportions):
            low, high = _scale(result)  # type: ignore[misc] - a proportion has a scale
            value = (as_number(optional(result, "score_details.score"), booleans=False) - low) / (high - low)
            if abs(value - mean) <= _MEAN_SLACK:
                scores = {}
                break
            scores.setdefault(f"{value:.4g}", []).append(name)
    if scores:
        shown = [f"{value} ({len(names):,} result{'s' if len(names) > 1 else ''}, e.g. '{names[0]}')"
                 for value, names in scores.items()]
        notes.append(f"{file.name}: the {len(frame):,} inline samples' exact-match mean is {mean:.4g}; the "
                     f"aggregate's results say {listed(shown, 4)}: the results may be over other samples (a split, "
                     "a perturbation) or scored otherwise.")
    size = max((as_number(source.get("samples_number"), booleans=False)
                for source in (doc.get("source_data"), *(r.get("source_data") for r in results))
                if isinstance(source, dict)), default=math.nan)
    if size > len(frame):
        notes.append(f"{file.name}: the run scored {len(frame):,} of the dataset's {size:,.0f} samples "
                     "(source_data.samples_number).")
    repeat = frame.groupby(["model", "task", "example_id"], sort=False).cumcount() + 1
    order = ["model", "task", "example_id", "correct", "input", "target", "output", "explanation"]
    if (repeat > 1).any():
        frame["repeat"] = repeat
        order.insert(3, "repeat")
        notes.append(f"{file.name}: {int((repeat > 1).sum()):,} inline samples appear again (same sample_id); "
                     "each appearance is numbered in 'repeat'.")
    return Imported(frame[order], "log", TOOL, (file.name,), notes)


def _inline_input(row: dict, truths: list[str]) -> str | None:
    """The question (``input``, else ``prompt``) with its choices below it: "[letter, text]" pairs as "A) text",
    plain choices lettered when the ground truth is a letter."""
    raw = row.get("input") if row.get("input") not in (None, "") else row.get("prompt")
    choices = row.get("choices")
    if isinstance(choices, list) and choices and all(isinstance(c, list) and len(c) == 2 for c in choices):
        lettered = [f"{_text(a)}) {_text(b)}" for a, b in choices]
        text = _text(raw)
        return "\n\n".join(part for part in (text, "\n".join(lettered)) if part)
    return _input({"input": {"raw": raw, "choices": choices, "reference": truths}})


# ----------------------------------------------------------------------------------------------------------------
# per-sample files


def _instance_rows(file: LogFile) -> list[tuple[int, dict]]:
    rows = []
    for number, row in json_lines(file):
        if not isinstance(row, dict):
            raise EvalDataError(f"{file.name}, line {number}: not a JSON object; every line of an every_eval_ever "
                                "per-sample file is one sample.")
        rows.append((number, row))
    if not rows:
        raise EvalDataError(f"{file.name}: the every_eval_ever per-sample file holds no sample.")
    return rows


def _uuid(file: LogFile) -> str:
    stem = PurePosixPath(file.base).stem
    return stem[: -len("_samples")] if stem.endswith("_samples") else stem


def _mismatched_pairs(file: LogFile, ids: set[str], aggregates: list[tuple[LogFile, dict]],
                      paired: list[tuple[LogFile, dict]]) -> list[str]:
    """A note for an aggregate named like the per-sample file (same folder and uuid) that belongs to another run."""
    notes = []
    for other, doc in aggregates:
        if other.name in {f.name for f, _ in paired} or other.folder != file.folder or _uuid(other) != _uuid(file):
            continue
        notes.append(f"{file.name} was not paired with {other.name}: their evaluation_id differ "
                     f"({listed(sorted(ids), 2, repr)} and '{doc.get('evaluation_id')}'), so they are not one run; "
                     "the aggregate's metric information is not used for it.")
    return notes


def _text(value: Any) -> str | None:
    """A text field as one string: a list joined by new lines; None when absent or empty."""
    if value is None:
        return None
    if isinstance(value, list):
        parts = [_text(v) for v in value]
        parts = [p for p in parts if p is not None]
        return "\n".join(parts) if parts else None
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if isinstance(value.get("content"), str):
            return value["content"]
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _input(row: dict) -> str | None:
    """input.raw, followed by the choices of a multiple-choice question (lettered "A) ..." when the references are
    letters, as in Inspect's multiple_choice) unless the text already holds them."""
    raw = _text(optional(row, "input.raw"))
    choices = optional(row, "input.choices")
    if not isinstance(choices, list) or not choices or len(choices) > 26:
        return raw
    choices = [_text(c) or "" for c in choices]
    if raw and all(c in raw for c in choices):
        return raw
    references = optional(row, "input.reference")
    references = references if isinstance(references, list) else [references]
    letters = [chr(ord("A") + i) for i in range(len(choices))]
    if references and all(isinstance(r, str) and r.strip() in letters for r in references):
        choices = [f"{letter}) {choice}" for letter, choice in zip(letters, choices)]
    return "\n\n".join(part for part in (raw, "\n".join(choices)) if part)


def _output(row: dict) -> str | None:
    output = row.get("output")
    if isinstance(output, dict) and output.get("raw") is not None:
        return _text(output["raw"])
    messages = row.get("messages") if row.get("messages") is not None else row.get("interactions")
    if isinstance(messages, list):
        answers = [m for m in messages if isinstance(m, dict) and str(m.get("role", "")).lower() == "assistant"
                   and m.get("content")]
        if answers:
            return _text(answers[-1]["content"])
    return None


def _explanation(row: dict) -> str | None:
    metadata = row.get("metadata")
    if isinstance(metadata, dict):
        for key in _EXPLANATION_KEYS:
            if metadata.get(key):
                return _text(metadata[key])
    return None


def _result_index(paired: list[tuple[LogFile, dict]]) \
        -> tuple[dict[str, dict], dict[str, dict], list[dict], list[dict]]:
    """The paired aggregates' results by evaluation_result_id, by evaluation_name, all of them, and the aggregate
    holding each."""
    by_id, by_name, everything, owners = {}, {}, [], []
    for _, doc in paired:
        for result in doc["evaluation_results"]:
            if isinstance(result, dict):
                everything.append(result)
                owners.append(doc)
                if result.get("evaluation_result_id") is not None:
                    by_id[str(result["evaluation_result_id"])] = result
                by_name.setdefault(str(result.get("evaluation_name")), result)
    return by_id, by_name, everything, owners


def _named_on(results: list[dict], name: Any) -> dict | None:
    """The one result named "<metric> on <name> ..." (EEE's Inspect converter: "accuracy on arc_easy for scorer
    choice" for the samples' "arc_easy"), else None."""
    found = [r for r in results if f" on {name} " in f"{r.get('evaluation_name')} "]
    return found[0] if len(found) == 1 else None


def _log(file: LogFile, rows: list[tuple[int, dict]], paired: list[tuple[LogFile, dict]],
         notes: list[str]) -> Imported:
    by_id, by_name, everything, owners = _result_index(paired)
    aggregate_model = _model_of(paired[0][1], paired[0][0]) if paired else None
    records = []
    found: dict[tuple[str | None, str], int] = {}  # (evaluation_result_id, evaluation_name) -> its result in everything
    for number, row in rows:
        evaluation = row.get("evaluation") if isinstance(row.get("evaluation"), dict) else row.get("metrics")
        if not isinstance(evaluation, dict):
            raise EvalDataError(f"{file.name}, line {number}: the field 'evaluation' (score, is_correct) is missing; "
                                "every every_eval_ever sample carries its evaluation there.")
        if row.get("sample_id") is None:
            raise EvalDataError(f"{file.name}, line {number}: the field 'sample_id' is missing; every every_eval_ever "
                                "sample names its example there.")
        model = row.get("model_id") or aggregate_model
        if not model:
            raise EvalDataError(f"{file.name}, line {number}: the field 'model_id' is missing; every every_eval_ever "
                                "sample names its model there.")
        result_id = row.get("evaluation_result_id")
        key = (None if result_id is None else str(result_id), str(row.get("evaluation_name")))
        if key not in found:
            result = (by_id.get(str(result_id)) if result_id is not None else None) \
                or by_name.get(str(row.get("evaluation_name"))) or _named_on(everything, row.get("evaluation_name")) \
                or (everything[0] if len(everything) == 1 else None)
            found[key] = everything.index(result) if result is not None else -1
        is_correct = evaluation.get("is_correct")
        records.append({
            "model": str(model),
            "name": str(row.get("evaluation_name", "all")),
            "result_id": None if result_id is None else str(result_id),
            "example_id": str(row["sample_id"]),
            "_score": as_number(evaluation.get("score")),
            "_is_correct": float(is_correct) if isinstance(is_correct, bool) else math.nan,
            "_result": found[key],
            "_judge_extracted": any(isinstance(a, dict) and a.get("extraction_method") == "llm_judge"
                                    for a in _list(row.get("answer_attribution"))),
            "_error": bool(row.get("error")),
            "input": _input(row),
            "target": _text(optional(row, "input.reference")),
            "output": _output(row),
            "explanation": _explanation(row),
        })
    frame = pd.DataFrame.from_records(records)
    notes = [f"{file.name}: every_eval_ever per-sample file"
             + (f", paired with its aggregate {listed([f.name for f, _ in paired], 3, repr)} (same evaluation_id), "
                "which gives each result's metric." if paired else " (no aggregate given: the label is chosen from "
                                                                    "the scores themselves).")] + notes
    if aggregate_model is not None and set(frame["model"]) - {aggregate_model}:
        notes.append(f"{file.name}: its model_id {listed(sorted(set(frame['model']) - {aggregate_model}), 3, repr)} "
                     f"differs from its aggregate's model_info.id '{aggregate_model}'; model_id is used.")
    frame["task"] = _instance_tasks(frame, notes, file)
    frame = _labels(frame, everything, notes, file, owners)
    errors = int(frame.pop("_error").sum())
    if errors:
        notes.append(f"{file.name}: {errors:,} sample{' carries' if errors == 1 else 's carry'} an error message "
                     "(the 'error' field); kept with the score the file gives.")
    repeat = frame.groupby(["model", "task", "example_id"], sort=False).cumcount() + 1
    if (repeat > 1).any():
        frame["repeat"] = repeat
        notes.append(f"{file.name}: {int((repeat > 1).sum()):,} samples appear again for one task (same sample_id); "
                     "each appearance is numbered in 'repeat'.")
    frame = frame.drop(columns=["name", "result_id", "_result", "_judge_extracted", "_score", "_is_correct"])
    order = ["model", "task", "example_id", *[c for c in ("repeat", "correct", "score") if c in frame],
             "input", "target", "output", "explanation"]
    return Imported(frame[order].reset_index(drop=True), "log", TOOL, (file.name, *(f.name for f, _ in paired)),
                    notes)


def _instance_tasks(frame: pd.DataFrame, notes: list[str], file: LogFile) -> pd.Series:
    """evaluation_name, or the evaluation_result_id where one evaluation name holds several results."""
    several = frame.groupby("name")["result_id"].nunique()
    several = set(several[several > 1].index)
    if not several:
        return frame["name"]
    notes.append(f"{file.name}: {listed(sorted(several), 3, repr)} hold several results (metrics) per sample; each "
                 "result is a task of its own, named by its evaluation_result_id.")
    return frame["name"].where(~frame["name"].isin(several), frame["result_id"].fillna(frame["name"]))


#: how far the samples' mean may be from the aggregate's score (which converters round, e.g. to 4 decimals)
_MEAN_SLACK = 5e-4


def _against_aggregate(task: str, rows: pd.DataFrame, labels: pd.Series, result: dict, doc: dict) -> str | None:
    """"1 sample of 't', mean 0.75, where the aggregate says 0.55 over 20 (uncertainty.num_samples): a subset?" when
    the samples file holds fewer (or more) samples than the aggregate's n or their mean is not its score; else
    None. ``detailed_evaluation_results.total_rows`` counts the samples file's own rows: fewer rows than it says
    is a cut file, not a subset."""
    held = int(rows["example_id"].nunique())
    n, source, _ = _n_of(result, doc)
    aggregate = as_number(optional(result, "score_details.score"), booleans=False)
    scale = _scale(result)
    if scale is not None and not math.isnan(aggregate) and labels.dropna().between(0, 1).all():
        aggregate = (aggregate - scale[0]) / (scale[1] - scale[0])
    mean = float(labels.mean()) if labels.notna().any() else math.nan
    differs = not math.isnan(aggregate) and not math.isnan(mean) and abs(mean - aggregate) > _MEAN_SLACK
    fewer, more = not math.isnan(n) and held < n, not math.isnan(n) and held > n
    if source == "detailed_evaluation_results.total_rows":
        more = False
    if not (differs or fewer or more):
        return None
    said = "" if math.isnan(aggregate) else f"the aggregate says {aggregate:.4g}"
    if not math.isnan(n) and (fewer or source != "detailed_evaluation_results.total_rows"):
        said = (said or "the aggregate counts") + f" over {n:,.0f} ({source})"
    if source == "detailed_evaluation_results.total_rows":
        hint = "is the file cut?" if fewer else "a subset, or another run?"
    else:
        hint = ("a subset?" if fewer else "more samples than the aggregate counts" if more else
                "a subset, or another run?" if math.isnan(n) else "other samples, or another run?")
    mean_text = "" if math.isnan(mean) else f", mean {mean:.4g}"
    return f"{held:,} sample{'s' if held != 1 else ''} of '{task}'{mean_text}, where {said}: {hint}"


def _labels(frame: pd.DataFrame, results: list[dict], notes: list[str], file: LogFile,
            owners: list[dict] | None = None) -> pd.DataFrame:
    """``correct`` or ``score`` per task (see the module's docstring); rows without a label left out and counted."""
    correct = pd.Series(math.nan, index=frame.index)
    score = pd.Series(math.nan, index=frame.index)
    as_correct, as_score, judged, partial = [], [], [], []
    for task, rows in frame.groupby("task", sort=False):
        at = rows["_result"].iloc[0]
        result = results[at] if at >= 0 else {}
        config = _config(result)
        values, flags = rows["_score"], rows["_is_correct"]
        binary_scores = values.dropna().isin([0.0, 1.0]).all()
        agree = ((flags.isna()) | (values.isna()) | (flags == values)).all()
        if config.get("score_type") == "binary" or (config.get("score_type") != "levels" and binary_scores and agree):
            correct[rows.index] = flags.fillna(values.where(values.isin([0.0, 1.0])))
            as_correct.append(str(task))
            labels = correct[rows.index]
        else:
            score[rows.index] = values
            as_score.append(str(task))
            labels = values
        if at >= 0 and owners is not None:
            mismatch = _against_aggregate(str(task), rows, labels, result, owners[at])
            if mismatch:
                partial.append(mismatch)
        judge = _judges(config)
        if judge:
            judged.append(f"'{task}' (judge: {judge})")
        elif rows["_judge_extracted"].any():
            judged.append(f"'{task}' (answer extracted by an LLM judge)")
    if as_correct:
        frame["correct"] = correct
        notes.append(f"{file.name}: is_correct gives 'correct' for {listed([repr(t) for t in as_correct], 5)} (a "
                     "binary metric, or scores of 0/1 that agree with is_correct).")
    if as_score:
        frame["score"] = score
        notes.append(f"{file.name}: evaluation.score gives 'score' for {listed([repr(t) for t in as_score], 5)} "
                     "(graded scores; is_correct, which EEE's converters derive from the score, is not used).")
    if partial:
        shown = "; ".join(partial[:5]) + (f"; and {len(partial) - 5:,} more tasks" if len(partial) > 5 else "")
        notes.append(f"{file.name}: the samples file holds {shown} The log has only the samples the file holds; "
                     "the aggregate's numbers are not used.")
    if judged:
        notes.append(f"{file.name}: the label of {listed(judged, 5)} comes from an LLM judge, not a human "
                     "(metric_config.llm_scoring / answer_attribution).")
    labels = [c for c in ("correct", "score") if c in frame]
    missing = frame[labels].isna().all(axis=1).to_numpy()
    if missing.all():
        raise EvalDataError(f"{file.name}: no sample has a usable evaluation.score or is_correct; there is no "
                            "label to read.")
    if missing.any():
        notes.append(left_out_note(int(missing.sum()), len(frame), f"samples of {file.name}",
                                   "no usable evaluation.score / is_correct"))
        frame = frame[~missing].reset_index(drop=True)
    return frame
