"""lm-evaluation-harness output: per-sample ``samples_<task>_<time>.jsonl`` and the run's ``results_<time>.json``.

Format (EleutherAI/lm-evaluation-harness ``loggers/evaluation_tracker.py``; ``--output_path out --log_samples``
writes ``out/<model name, '/' as '__'>/results_<time>.json`` and one ``samples_<task>_<time>.jsonl`` per task):

- a samples line is ``{doc_id, doc, target, arguments, resps, filtered_resps, filter, metrics: [names], <metric>:
  value, doc_hash, ...}``; a task with several filters (e.g. ``strict-match`` and ``flexible-extract``) has one
  line per (doc_id, filter). It names neither the model nor the task: the task is in the file name, the model in
  the results file of the same run (``model_name``, or ``pretrained=`` in ``config.model_args``), else in the
  folder's name.
- a results file is ``{results: {task: {alias, "<metric>,<filter>": value, "<metric>_stderr,<filter>": se}},
  groups, group_subtasks: {group: [tasks]}, n-samples: {task: {original, effective}}, config, model_name, ...}``.

Mapping to roles: ``model``, ``task`` as above; ``example_id`` = ``doc_id``; ``correct`` (or ``score`` when not 0/1)
= the first metric the line lists, with the other metrics kept as numeric columns; one filter per task (``none``
when present, else the first seen; the others are left out and counted). For multiple-choice tasks (``filtered_resps``
a list of ``[log-likelihood, is_greedy]`` per choice) ``confidence`` is the softmax probability of the most likely
choice — the choice ``acc`` scores. A results file with no samples file of its run becomes a leaderboard summary:
per task ``n`` (``n-samples``, effective) and ``accuracy`` (its first metric when in [0, 1]); groups are the
``category`` of their subtasks, not tasks.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

import numpy as np
import pandas as pd

from evalcore.errors import EvalDataError
from evalcore.importers.base import Imported, LogFile, field_of, json_lines, as_number, left_out_note, optional, parse_json

TOOL = "lm-evaluation-harness"
_SAMPLES_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<time>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl?$")
_RESULTS_NAME = re.compile(r"^results_(?P<time>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.json$")
_RESULTS_HEAD = re.compile(rb'^\{\s*"results"\s*:\s*\{')
_SAMPLE_HEAD = re.compile(rb'^\{"doc_id"\s*:|"doc_id"\s*:.*"filtered_resps"\s*:')
_PREFERRED = ("acc", "exact_match", "acc_norm", "pass@1", "f1", "mc2", "em")


def sniff(file: LogFile) -> bool:
    """A samples file (by name, or a first line with doc_id and filtered_resps) or a results file (by name, or a
    JSON object starting with "results")."""
    try:
        head = file.head(16384)
        if _SAMPLES_NAME.match(file.base) or _RESULTS_NAME.match(file.base):
            return head.startswith(b"{")
        first = head.split(b"\n", 1)[0]
        return bool(_SAMPLE_HEAD.search(first)) or (
            bool(_RESULTS_HEAD.match(head)) and (b'"alias"' in head or b',none"' in head or b'_stderr' in head))
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def convert(files: list[LogFile]) -> list[Imported]:
    """Samples files become per-example logs (their model from the run's results file); results files that no
    samples file uses become leaderboard summaries."""
    samples = [f for f in files if not _is_results(f)]
    results = {f.name: (f, parse_json(f)) for f in files if _is_results(f)}
    for name, (file, doc) in results.items():
        if not isinstance(doc, dict) or "results" not in doc:
            raise EvalDataError(f"{name}: an lm-evaluation-harness results file has a 'results' object; this one "
                                "has not (truncated?).")
    used: set[str] = set()
    out = []
    for file in samples:
        result = _run_results(file, results)
        if result is not None:
            used.add(result[0].name)
        out.append(_samples(file, result))
    unused = [pair for name, pair in results.items() if name not in used]
    if unused:
        out.append(_summary(unused))
    return out


def _is_results(file: LogFile) -> bool:
    return bool(_RESULTS_NAME.match(file.base)) or bool(_RESULTS_HEAD.match(file.head(64)))


def _run_results(file: LogFile, results: dict[str, tuple[LogFile, Any]]) -> tuple[LogFile, Any] | None:
    """The results file of the samples file's run: same folder and time stamp, else the folder's only one."""
    match = _SAMPLES_NAME.match(file.base)
    same_folder = [pair for pair in results.values() if pair[0].folder == file.folder]
    if match:
        stamped = [p for p in same_folder if p[0].base == f"results_{match['time']}.json"]
        if stamped:
            return stamped[0]
    return same_folder[0] if len(same_folder) == 1 else None


def _model(doc: Any) -> str | None:
    name = optional(doc, "model_name")
    if name:
        return str(name)
    args = str(optional(doc, "config.model_args", "") or "")
    found = re.search(r"(?:pretrained|model|engine|path)=([^,]+)", args)
    return found.group(1) if found else None


def _samples(file: LogFile, result: tuple[LogFile, Any] | None) -> Imported:
    notes: list[str] = []
    match = _SAMPLES_NAME.match(file.base)
    task = match["task"] if match else PurePosixPath(file.base).stem
    model = _model(result[1]) if result is not None else None
    if model is None:
        folder = PurePosixPath(file.folder).name if file.folder else ""
        model = folder.replace("__", "/") if folder else "unknown model"
        notes.append(f"{file.name}: no results file of this run was uploaded with it, so the model is named "
                     f"after {'its folder' if folder else 'nothing'}: '{model}'. Upload the run's results_*.json "
                     "too to use the model's name.")
    rows: list[dict] = []
    for number, record in json_lines(file):
        if not isinstance(record, dict):
            raise EvalDataError(f"{file.name}, line {number}: not a JSON object.")
        rows.append(record)
    if not rows:
        raise EvalDataError(f"{file.name}: the samples file has no lines.")
    first = rows[0]
    metrics = [str(m) for m in first.get("metrics") or [k for k in _PREFERRED if k in first]]
    if not metrics:
        raise EvalDataError(f"{file.name}: line 1 lists no metric.")
    filters = list(dict.fromkeys(str(r.get("filter", "none")) for r in rows))
    chosen = "none" if "none" in filters else filters[0]
    kept = [r for r in rows if str(r.get("filter", "none")) == chosen]
    if len(filters) > 1:
        notes.append(left_out_note(len(rows) - len(kept), len(rows), f"lines of {file.name}",
                                   f"they belong to the filters {', '.join(f for f in filters if f != chosen)}; "
                                   f"filter '{chosen}' is used"))
    frame = pd.DataFrame({"model": model, "task": task,
                          "example_id": [str(field_of(r, "doc_id", file, f"doc {i}")) for i, r in enumerate(kept)]})
    main = metrics[0]
    for metric in metrics:
        frame[metric] = [as_number(r.get(metric)) for r in kept]
    binary = frame[main].dropna().isin((0.0, 1.0)).all()
    frame = frame.rename(columns={main: "correct" if binary else "score"})
    notes.append(f"{file.name}: metric '{main}' is the label ('{'correct' if binary else 'score'}').")
    confidence = [_choice_confidence(r.get("filtered_resps")) for r in kept]
    if any(c is not None for c in confidence):
        frame["confidence"] = [np.nan if c is None else c for c in confidence]
        notes.append(f"{file.name}: confidence = the softmax probability of the most likely choice (from the "
                     "per-choice log-likelihoods).")
    label = "correct" if binary else "score"
    missing = frame[label].isna().to_numpy()
    if missing.any():
        notes.append(left_out_note(int(missing.sum()), len(frame), f"docs of {file.name}", f"no value of '{main}'"))
        frame = frame[~missing].reset_index(drop=True)
    return Imported(frame, "log", TOOL, (file.name, *([result[0].name] if result else [])), notes)


def _choice_confidence(resps: Any) -> float | None:
    """softmax(log-likelihoods)[argmax] for ``[[ll, is_greedy], ...]`` (one pair per choice), else None."""
    if not isinstance(resps, list) or len(resps) < 2:
        return None
    lls = []
    for resp in resps:
        pair = resp[0] if isinstance(resp, list) and resp and isinstance(resp[0], list) else resp
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or isinstance(pair[0], bool):
            return None
        lls.append(as_number(pair[0]))  # a number, or its text in some versions ("-3.0")
    ll = np.asarray(lls)
    if not np.isfinite(ll).all():
        return None
    p = np.exp(ll - ll.max())
    return float(p.max() / p.sum())


def _summary(results: list[tuple[LogFile, Any]]) -> Imported:
    rows, notes = [], []
    for file, doc in results:
        model = _model(doc) or PurePosixPath(file.folder).name.replace("__", "/") or "unknown model"
        groups = {g: list(subs) for g, subs in (optional(doc, "group_subtasks", {}) or {}).items() if subs}
        groups.update({g: [] for g in (optional(doc, "groups", {}) or {}) if g not in groups})
        category = {sub: group for group, subs in groups.items() for sub in subs}
        skipped = []
        for task, values in field_of(doc, "results", file).items():
            if task in groups or not isinstance(values, dict):
                continue
            metric, value = _main_metric(values)
            n = optional(doc, f"n-samples.{task}.effective") or optional(doc, f"n-samples.{task}.original")
            if metric is None or n is None or not 0 <= value <= 1:
                skipped.append(task)
                continue
            rows.append({"model": model, "task": task, "category": category.get(task, "all"), "n": int(n),
                         "accuracy": value})
        if skipped:
            notes.append(f"{file.name}: {len(skipped)} task(s) left out ({', '.join(skipped[:5])}): no metric in "
                         "[0, 1] or no sample count.")
    if not rows:
        raise EvalDataError(f"{results[0][0].name}: no task of the results file has an accuracy-like metric in [0, 1] "
                            "with its sample count: upload its samples_*.jsonl files instead.")
    notes.append("A results file without its samples files is a leaderboard summary (accuracy and sample count "
                 "per task); upload the samples_*.jsonl files for per-example analyses.")
    return Imported(pd.DataFrame(rows), "summary", TOOL, tuple(f.name for f, _ in results), notes)


def _main_metric(values: dict) -> tuple[str | None, float]:
    """The task's first accuracy-like metric ("<metric>,<filter>", or "<metric>" in older versions; not a stderr)
    and its value."""
    found = {}
    for key, value in values.items():
        if key == "alias" or "_stderr" in key or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        found.setdefault(key.split(",", 1)[0], (key, float(value)))
    for name in (*_PREFERRED, *found):
        if name in found:
            return found[name]
    return None, float("nan")

