"""Inspect AI evaluation logs: ``.eval`` (a zip) and ``.json`` (one document).

Format (inspect_ai ``log/_log.py`` and ``log/_recorders/eval.py``; log format version 2):

- ``.eval``: a zip holding ``header.json`` (``{version, status, eval, plan, results, stats}``), one
  ``samples/<id>_epoch_<n>.json`` per sample and epoch, ``reductions.json`` and ``summaries.json``. A run that was
  interrupted has no ``header.json``; its ``_journal/start.json`` holds ``eval`` and ``plan``.
- ``.json``: one document ``{version, status, eval, plan, results, stats, samples: [...], reductions}``.

A sample is ``{id, epoch, input, target, messages, output, scores: {<scorer>: {value, answer, explanation,
metadata}}, metadata, error, ...}``; version 1 logs have a single ``score`` instead of ``scores``.

Mapping to roles: ``model`` = ``eval.model``; ``task`` = ``eval.task``; ``example_id`` = the sample's ``id``;
``repeat`` = its ``epoch``. Score values are turned into numbers as Inspect's ``value_to_float`` does: ``"C"``
(correct) 1, ``"I"`` (incorrect) 0, ``"P"`` (partial) 0.5, ``"N"`` (no answer) 0, ``yes``/``true`` 1,
``no``/``false`` 0, booleans and numbers as they are; a scorer that returns a dict gives one value per key
(``<scorer>/<key>``). The main scorer is the first one the log lists (``eval.scorers``, else ``results.scores``, else
the samples' order), preferring one that is not model-graded: a model-graded (judge) scorer — named
``model_graded_*``, or with ``judge`` / ``grader`` in its name — next to a deterministic one becomes ``proxy``, the
judge's estimate of the metric. The main scorer's value is ``correct`` when every value is 0 or 1, else ``score``;
other scorers are kept as numeric columns ``score_<name>``. Samples without a value of the main scorer (an error,
or not scored) are left out and counted; a log written without samples (``--no-log-samples``) is refused.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from evalcore.errors import EvalDataError
from evalcore.importers.archive import files_of, has_member, is_zip, members, open_zip
from evalcore.importers.base import Imported, LogFile, as_number, field_of, left_out_note, optional, parse_json

TOOL = "Inspect AI"
_VALUES = {"c": 1.0, "i": 0.0, "p": 0.5, "n": 0.0, "correct": 1.0, "incorrect": 0.0, "partial": 0.5,
           "yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}
_JUDGE = re.compile(r"model_graded|judge|grader", re.IGNORECASE)
_JSON_HEAD = re.compile(rb'"eval"\s*:\s*\{')
_HEADER = "header.json"
_START = "_journal/start.json"


def is_eval_zip(data: bytes) -> bool:
    """Whether the zip ``data`` is an Inspect ``.eval`` log (a header, a journal or samples at its root)."""
    return is_zip(data) and has_member(data, (_HEADER, _START), ("samples/", "_journal/"))


def sniff(file: LogFile) -> bool:
    """An ``.eval`` zip, or a JSON document with Inspect's ``version`` / ``status`` / ``eval`` keys."""
    try:
        if is_zip(file.data):
            return is_eval_zip(file.data)
        head = file.head(8192)
        return head.startswith(b"{") and b'"status"' in head and b'"version"' in head and bool(_JSON_HEAD.search(head))
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def convert(files: list[LogFile]) -> list[Imported]:
    """One log per file (a run of one model on one task)."""
    return [_convert_one(file) for file in files]


def _convert_one(file: LogFile) -> Imported:
    if is_zip(file.data):
        spec, results, samples = _read_eval_zip(file)
    else:
        doc = parse_json(file)
        if not isinstance(doc, dict):
            raise EvalDataError(f"{file.name}: an Inspect AI log is a JSON object; this file is not.")
        spec, results = field_of(doc, "eval", file), doc.get("results")
        samples = doc.get("samples")
        if not samples:
            raise EvalDataError(f"{file.name}: this Inspect AI log has no per-sample results (it was written "
                                "without samples, e.g. with --no-log-samples, or the run stopped before any "
                                "sample finished). Re-run with samples logged, or upload the .eval file.")
    model = str(field_of(spec, "model", file, "eval"))
    task = str(field_of(spec, "task", file, "eval"))
    return _samples_frame(file, model, task, _scorer_order(spec, results), samples)


def _read_eval_zip(file: LogFile) -> tuple[dict, Any, list]:
    """The eval spec, results and samples of an ``.eval`` zip. Inspect also writes every sample's id, epoch and
    scores into ``summaries.json`` (or ``_journal/summaries/<n>.json`` while running): when those cover every
    sample file they are read instead of the (much larger) samples."""
    budget = file.budget
    limits = budget.limits
    archive = open_zip(file.data, file.name, max_members=limits.max_rows + 1000)
    infos = {info.filename: info for info in files_of(archive)}
    samples = [i for n, i in infos.items() if n.startswith("samples/") and n.endswith(".json")]
    if len(samples) > limits.max_rows:
        raise EvalDataError(f"{file.name}: the log holds {len(samples):,} samples; evalcore reads at most "
                            f"{limits.max_rows:,} rows. {limits.raise_hint('rows')}")
    head = infos.get(_HEADER) or infos.get(_START)
    if head is None:
        raise EvalDataError(f"{file.name}: the .eval log has neither header.json nor _journal/start.json: it is "
                            "truncated or not an Inspect AI log.")
    [head_file] = members(archive, file.name, budget, [head], prefix=f"{file.name}/")
    header = parse_json(head_file)
    spec = field_of(header, "eval", head_file)
    if not samples:
        raise EvalDataError(f"{file.name}: this Inspect AI log has no per-sample results (written without samples, "
                            "e.g. --no-log-samples, or stopped before any sample finished). Re-run with samples "
                            "logged.")
    summaries = _summaries(archive, file, infos)
    if summaries is not None and len(summaries) == len(samples):
        return spec, header.get("results"), summaries
    return spec, header.get("results"), [parse_json(m) for m in members(archive, file.name, budget, samples,
                                                                        prefix=f"{file.name}/")]


def _summaries(archive, file: LogFile, infos: dict) -> list | None:
    """The sample summaries of the zip, or None when it has none that can be read."""
    parts = [infos["summaries.json"]] if "summaries.json" in infos else sorted(
        (i for n, i in infos.items() if n.startswith("_journal/summaries/") and n.endswith(".json")),
        key=lambda i: int(re.sub(r"\D", "", i.filename.rsplit("/", 1)[-1]) or 0))
    out: list = []
    for part in members(archive, file.name, file.budget, parts, prefix=f"{file.name}/"):
        value = parse_json(part)
        if not isinstance(value, list) or not all(isinstance(v, dict) and "scores" in v for v in value):
            return None
        out.extend(value)
    return out or None


def _scorer_order(spec: dict, results: Any) -> list[str]:
    """The scorers in the order the log lists them."""
    names = [optional(s, "name") for s in optional(spec, "scorers", []) or [] if isinstance(s, dict)]
    if not any(names) and isinstance(results, dict):
        names = [s.get("scorer") or s.get("name") for s in results.get("scores", []) or [] if isinstance(s, dict)]
    return [str(n) for n in names if n]


def _samples_frame(file: LogFile, model: str, task: str, order: list[str], samples: list) -> Imported:
    ids, epochs, values = [], [], []
    for number, sample in enumerate(samples, 1):
        if not isinstance(sample, dict):
            raise EvalDataError(f"{file.name}: sample {number} is not a JSON object.")
        ids.append(str(field_of(sample, "id", file, f"sample {number}")))
        epochs.append(sample.get("epoch", 1))
        scores = sample.get("scores")
        if scores is None and "score" in sample:  # version 1 logs: one score
            scores = {order[0] if order else "score": sample["score"]}
        values.append(_sample_values(scores or {}))
    columns = pd.DataFrame(values, index=pd.RangeIndex(len(samples)))
    notes: list[str] = []
    if columns.shape[1] == 0:
        raise EvalDataError(f"{file.name}: no sample has a score: the log holds no results to evaluate (did every "
                            "sample fail?).")
    scorers = [c for c in order if c in columns] + [c for c in columns if c not in order]
    deterministic = [c for c in scorers if not _JUDGE.search(c)]
    main = deterministic[0] if deterministic else scorers[0]
    judge = next((c for c in scorers if _JUDGE.search(c) and c != main), None) if deterministic else None
    frame = pd.DataFrame({"model": model, "task": task, "example_id": ids,
                          "repeat": pd.to_numeric(pd.Series(epochs), errors="coerce").fillna(1).astype("int64")})
    main_values = columns[main]
    binary = main_values.dropna().isin((0.0, 1.0)).all()
    frame["correct" if binary else "score"] = main_values.to_numpy(dtype=float)
    notes.append(f"{file.name}: scorer '{main}' is the metric ('{'correct' if binary else 'score'}').")
    if judge is not None:
        frame["proxy"] = columns[judge].to_numpy(dtype=float)
        notes.append(f"{file.name}: the model-graded scorer '{judge}' is the annotator ('proxy').")
    for other in scorers:
        if other not in (main, judge):
            frame[f"score_{other}"] = columns[other].to_numpy(dtype=float)
    missing = main_values.isna().to_numpy()
    if missing.any():
        notes.append(left_out_note(int(missing.sum()), len(frame), f"samples of {file.name}",
                                   f"no value of scorer '{main}' (an error, or not scored)"))
        frame = frame[~missing].reset_index(drop=True)
    return Imported(frame, "log", TOOL, (file.name,), notes)


def _sample_values(scores: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for scorer, score in scores.items():
        value = score.get("value") if isinstance(score, dict) else score
        if isinstance(value, dict):
            for key, inner in value.items():
                out[f"{scorer}/{key}"] = as_number(inner, _VALUES)
        else:
            out[str(scorer)] = as_number(value, _VALUES)
    return out
