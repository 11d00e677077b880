"""lm-evaluation-harness output: per-sample ``samples_<task>_<time>.jsonl`` and the run's ``results_<time>.json``.

Format (EleutherAI/lm-evaluation-harness ``lm_eval/loggers/evaluation_tracker.py``, ``save_results_aggregated`` and
``save_results_samples``; ``--output_path out --log_samples`` writes ``out/<model_name_sanitized>/results_<time>.json``
and one ``samples_<task>_<time>.jsonl`` per task with the SAME ``<time>`` (``datetime.now().isoformat()`` with ':' as
'-'); ``model_name_sanitized`` is the model name with each run of ``"<>:/|\\?*[]`` written ``__``
(``lm_eval/utils.py`` ``sanitize_model_name``), so ``org/name`` is the folder ``org__name``; an ``--output_path``
ending in ``.json`` writes ``<stem>_<time>.json`` and the samples beside it, without a model folder):

- a samples line is ``{doc_id, doc, target, arguments, resps, filtered_resps, filter, metrics: [names], <metric>:
  value, doc_hash, ...}`` (``lm_eval/evaluator.py``); ``arguments`` holds each request's arguments — newer versions
  ``{"gen_args_<i>": {"arg_0": context, "arg_1": continuation or generation kwargs}}``, older ones a list of
  ``[context, continuation]``; ``resps`` one list of responses per request; ``target`` the reference (as text in
  newer versions; the gold choice's index for multiple-choice tasks). A task with several filters (e.g.
  ``strict-match`` and ``flexible-extract``) has one line per (doc_id, filter). A line names neither the model nor
  the task: the task is in the file name, the model in the results file of the same run (``model_name``, or
  ``pretrained=`` in ``config.model_args``), else in the folder's name.
- a results file is ``{results: {task: {alias, "<metric>,<filter>": value, "<metric>_stderr,<filter>": se}},
  groups, group_subtasks: {group: [tasks]}, n-samples: {task: {original, effective}}, config, model_name,
  model_name_sanitized, ...}``.

Pairing: a samples file takes its model from the results file of ITS run only — the one with the same time stamp
in its name (in the same folder if several), or, when one of the two names has no time stamp, the only results file
of its folder. A samples file whose run has no results file is named after its folder (un-sanitized, ``__`` as
``/``) when the folder names a model, else "unknown model", with a note; given with another run's results file
(timestamps differ) it never takes that run's model: a note names both files, and when nothing else names the
model the files are refused with a message naming both.

Mapping to roles: ``model``, ``task`` as above; ``example_id`` = ``doc_id``; ``correct`` (or ``score`` when not 0/1)
= the first metric the line lists, with the other metrics kept as numeric columns; one filter per task (``none``
when present, else the first seen; the others are left out and counted). For multiple-choice tasks (``filtered_resps``
a list of ``[log-likelihood, is_greedy]`` per choice) ``confidence`` is the softmax probability of the most likely
choice — the choice ``acc`` scores. Text: ``input`` = the first request's context (``arguments``), else the doc's
question field; ``target`` = ``target`` (for a multiple-choice index: that choice's continuation); ``output`` = the
first response (``resps``, else ``filtered_resps``; for multiple choice the most likely choice's continuation).
Results files that no samples file uses become a leaderboard summary when no samples file was given: per task ``n``
(``n-samples``, effective) and ``accuracy`` (its first metric when in [0, 1]); groups are the ``category`` of their
subtasks, not tasks. Beside per-example logs they are left out with a note (a summary and a log cannot be combined).
The results table lm-eval prints (markdown ``|Tasks|Version|Filter|n-shot|Metric|...``) is claimed and refused,
naming the files to upload. Older results files without ``n-samples`` (``{results: {task: {acc, acc_stderr, ...}}, versions}``, e.g.
``tests/testdata/arc_easy-v0-res.json``) cannot be a summary: refused, saying so. A samples file holding fewer docs
than its run's ``n-samples`` (cut), and tasks of a paired results file that no samples file gives, are named in the
notes.
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
#: the results table lm-eval prints (``lm_eval/utils.py`` ``make_table``, markdown), e.g. lm-evaluation-harness
#: ``tests/testdata/mmlu_stem_10_hf_pretrained-EleutherAI-pythia-14m-deduped-dtype-float32-device-cpu.txt``
_PRINTED_TABLE = re.compile(rb"^\s*\|\s*(?:Tasks|Groups)\s*\|\s*Version\s*\|\s*Filter\s*\|\s*n-shot\s*\|\s*Metric\s*\|")
_PREFERRED = ("acc", "exact_match", "acc_norm", "pass@1", "f1", "mc2", "em")


def sniff(file: LogFile) -> bool:
    """A samples file (by name, or a first line with doc_id and filtered_resps) or a results file (by name, or a
    JSON object starting with "results")."""
    try:
        head = file.head(16384)
        if b'"config_general"' in head:  # lighteval's results_<time>.json (evalcore.importers.lighteval)
            return False
        if _SAMPLES_NAME.match(file.base) or _RESULTS_NAME.match(file.base):
            return head.startswith(b"{")
        if _PRINTED_TABLE.match(head):
            return True
        first = head.split(b"\n", 1)[0]
        return bool(_SAMPLE_HEAD.search(first)) or (
            bool(_RESULTS_HEAD.match(head)) and (b'"alias"' in head or b',none"' in head or b'_stderr' in head))
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


_STAMP = re.compile(r"_(?P<time>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl?$")
#: words of folder names that name a place, not a model ("lm_eval/", "outputs/", "results/" ...)
_GENERIC_WORDS = frozenset("""output outputs out result results eval evals evaluation evaluations sample samples
    log logs run runs data tmp temp lm harness ecosystem download downloads upload uploads experiment experiments
    save saved files file test tests testdata fixture fixtures example examples artifact artifacts report reports
    benchmark benchmarks score scores home user users desktop documents work workspace tmpdir""".split())
#: fields of a ``doc`` that hold its question, when a samples line has no ``arguments`` (older versions)
_DOC_QUESTION = ("question", "query", "problem", "prompt", "input", "text", "sentence", "ctx", "context")


def convert(files: list[LogFile]) -> list[Imported]:
    """Samples files become per-example logs (their model from the results file of their own run); results files
    that no samples file uses become leaderboard summaries when no samples file was given, else are set aside."""
    for file in files:
        if _PRINTED_TABLE.match(file.head(4096)):
            raise EvalDataError(f"{file.name}: this is the results table lm-evaluation-harness prints (Tasks, Version, "
                                "Filter, n-shot, Metric, Value, Stderr): it has no sample counts and no per-example "
                                "results. Upload the run's results_<time>.json, and its samples_<task>_<time>.jsonl "
                                "files (written with --output_path ... --log_samples), instead.")
    samples = [f for f in files if not _is_results(f)]
    results = {f.name: (f, parse_json(f)) for f in files if _is_results(f)}
    for name, (file, doc) in results.items():
        if not isinstance(doc, dict) or "results" not in doc:
            raise EvalDataError(f"{name}: an lm-evaluation-harness results file has a 'results' object; this one "
                                "has not (truncated?).")
    used: set[str] = set()
    read_tasks: dict[str, set[str]] = {}
    out = []
    for file in samples:
        result, pairing, mismatched = _run_results(file, list(results.values()))
        if result is not None:
            used.add(result[0].name)
        imported = _samples(file, result, pairing, mismatched)
        out.append(imported)
        if result is not None:
            read_tasks.setdefault(result[0].name, set()).update(imported.frame["task"].unique())
    for name, tasks in read_tasks.items():
        missing = _unread_tasks(results[name][1], tasks)
        if missing:
            listed = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            out[0].notes.append(f"{name}: {len(missing)} task(s) of the run have no samples file among the files "
                                f"given and are not read ({listed}); upload their samples_<task>_*.jsonl files "
                                "too.")
    unused = [pair for name, pair in results.items() if name not in used]
    if unused and out:
        names = ", ".join(file.name for file, _ in unused)
        out[0].notes.append(f"{names}: not used — no samples file of {'its' if len(unused) == 1 else 'their'} run "
                            "was given with it (a results file is a summary, which cannot be combined with "
                            "per-example logs); upload the samples_*.jsonl files of the same run (same time stamp) "
                            "to use it.")
        out[0].files = (*out[0].files, *(file.name for file, _ in unused))
    elif unused:
        out.append(_summary(unused))
    return out


def _unread_tasks(doc: Any, read: set[str]) -> list[str]:
    """The tasks of a results file (not its groups) that no samples file gave."""
    groups = {group for group, subs in (optional(doc, "group_subtasks", {}) or {}).items() if subs}
    groups |= set(optional(doc, "groups", {}) or {})
    tasks = optional(doc, "results", {}) or {}
    return [task for task in tasks if task not in groups and task not in read and isinstance(tasks[task], dict)]


def _is_results(file: LogFile) -> bool:
    return bool(_RESULTS_NAME.match(file.base)) or bool(_RESULTS_HEAD.match(file.head(64)))


def _stamp(file: LogFile) -> str | None:
    """The run's time stamp in the file's name ("2025-03-01T10-00-00.123456"), or None."""
    found = _STAMP.search(file.base)
    return found["time"] if found else None


def _run_results(file: LogFile, results: list[tuple[LogFile, Any]]
                 ) -> tuple[tuple[LogFile, Any] | None, list[str], list[LogFile]]:
    """The results file of the samples file's run, notes on how it was paired, and the results files of OTHER runs
    that it could be mistaken for (same folder, or the upload's only one).

    Same time stamp (in the same folder when several have it); when the samples file's or the results file's name
    has no time stamp, the only results file of the folder. Results files whose time stamp differs are another
    run's: never paired."""
    stamp = _stamp(file)
    same_folder = [pair for pair in results if pair[0].folder == file.folder]
    if stamp is not None:
        stamped = [pair for pair in results if _stamp(pair[0]) == stamp]
        if len(stamped) > 1:
            stamped = [pair for pair in stamped if pair[0].folder == file.folder] or stamped[:0]
        if len(stamped) == 1:
            return stamped[0], [], []
    unstamped = [pair for pair in same_folder if stamp is None or _stamp(pair[0]) is None]
    if len(unstamped) == 1 and len(same_folder) == 1:
        pair = unstamped[0]
        return pair, [f"{file.name} is paired with {pair[0].name} because they are in the same folder (one of the "
                      "names has no time stamp to match)."], []
    others = [pair for pair in same_folder if pair not in unstamped] or (results if len(results) == 1 else [])
    return None, [], [pair[0] for pair in others if stamp is not None and _stamp(pair[0]) not in (None, stamp)]


def _folder_model(file: LogFile) -> str | None:
    """The model that the file's folder is named after (lm-eval's ``model_name_sanitized``: ``org__name``), or
    None when the folder is absent or names a place ("lm_eval", "outputs", "results", a date ...)."""
    return model_folder(PurePosixPath(file.folder).name if file.folder else "")


def model_folder(folder: str) -> str | None:
    """The model a folder's name gives (``org__name`` as ``org/name``), or None when it names a place."""
    if not folder or folder in (".", ".."):
        return None
    if "__" in folder.strip("_"):
        return folder.strip("_").replace("__", "/")
    words = {w for w in re.split(r"[-_.\s]+", folder.lower()) if w}
    if not words or words <= _GENERIC_WORDS | {"lm", "eval"} or words & _GENERIC_WORDS and not re.search(r"\d", folder):
        return None
    if all(w.isdigit() for w in words - _GENERIC_WORDS):  # "results_2024", "run-3": a place and a number
        return None
    if re.fullmatch(r"[\d\-_.T:]+", folder):
        return None
    return folder


def _model(doc: Any) -> str | None:
    name = optional(doc, "model_name")
    if name:
        return str(name)
    args = str(optional(doc, "config.model_args", "") or "")
    found = re.search(r"(?:peft|delta|pretrained|model|path|engine)=([^,]+)", args)
    return found.group(1) if found else None


def _samples_model(file: LogFile, result: tuple[LogFile, Any] | None, notes: list[str],
                   mismatched: list[LogFile]) -> tuple[str, list[str]]:
    """The model of a samples file, and notes saying where it came from (after ``notes`` on its pairing)."""
    notes = list(notes)
    model = _model(result[1]) if result is not None else None
    if model is not None:
        return model, notes
    folder_model = _folder_model(file)
    folder = PurePosixPath(file.folder).name
    if result is not None:  # its run's results file names no model
        where = f"its folder '{folder}'" if folder_model else "nothing"
        notes.append(f"{file.name}: the results file of its run ({result[0].name}) names no model (no model_name, no "
                     f"pretrained= in config.model_args), so the model is named after {where}: "
                     f"'{folder_model or 'unknown model'}'.")
        return folder_model or "unknown model", notes
    if mismatched:
        others = ", ".join(other.name for other in mismatched)
        if folder_model is None:
            raise EvalDataError(
                f"{file.name} is not from the run of {others} (timestamps differ), and nothing else names its model "
                f"(no folder named after the model). Upload the results file of its own run (results_{_stamp(file)}"
                ".json, same time stamp), or put the samples file in a folder named after its model (lm-eval's "
                "'<org>__<name>'), or leave the other run's results file out.")
        return folder_model, notes + [f"{file.name} is not from the run of {others} (timestamps differ): its model "
                                      f"is taken from its folder '{folder}': '{folder_model}'."]
    if folder_model is not None:
        notes.append(f"{file.name}: no results file of this run was uploaded with it, so the model is named after its "
                     f"folder '{folder}': '{folder_model}'. Upload the run's results_*.json too to use the "
                     "model's name.")
        return folder_model, notes
    notes.append(f"{file.name}: no results file of this run was uploaded with it and no folder names its model, so "
                 "the model is 'unknown model'. Upload the run's results_*.json (same time stamp) too, or its folder "
                 "(lm-eval names it after the model), to use the model's name.")
    return "unknown model", notes


def _samples(file: LogFile, result: tuple[LogFile, Any] | None, pairing: list[str],
             mismatched: list[LogFile]) -> Imported:
    match = _SAMPLES_NAME.match(file.base)
    task = match["task"] if match else PurePosixPath(file.base).stem
    model, notes = _samples_model(file, result, pairing, mismatched)
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
    texts = [_texts(r) for r in kept]
    for position, role in enumerate(("input", "target", "output")):
        values = [t[position] for t in texts]
        if any(v is not None for v in values):
            frame[role] = pd.Series(values, dtype="object")
    label = "correct" if binary else "score"
    counted = as_number(optional(result[1], f"n-samples.{task}.effective"), booleans=False) if result else None
    if counted is not None and np.isfinite(counted) and len(kept) < counted:
        notes.append(f"{file.name}: holds {len(kept):,} docs, but the results file of its run counts "
                     f"{int(counted):,} (n-samples, effective): the samples file was cut (e.g. copied in part), so "
                     "the rows here cover only the docs it holds, and their figures differ from the run's results.")
    missing = frame[label].isna().to_numpy()
    if missing.any():
        notes.append(left_out_note(int(missing.sum()), len(frame), f"docs of {file.name}", f"no value of '{main}'"))
        frame = frame[~missing].reset_index(drop=True)
    return Imported(frame, "log", TOOL, (file.name, *([result[0].name] if result else [])), notes)


def _requests(arguments: Any) -> list[list[Any]]:
    """Each request's arguments as a list ([context, continuation or generation kwargs]): newer versions write
    ``{"gen_args_0": {"arg_0": ..., "arg_1": ...}, ...}``, older ones a list of lists."""
    if isinstance(arguments, dict):
        keys = sorted((k for k in arguments if re.fullmatch(r"gen_args_\d+", str(k))), key=lambda k: int(k[9:]))
        out = []
        for key in keys:
            args = arguments[key]
            if isinstance(args, dict):
                out.append([args[a] for a in sorted((a for a in args if re.fullmatch(r"arg_\d+", str(a))),
                                                    key=lambda a: int(a[4:]))])
            else:
                out.append(list(args) if isinstance(args, (list, tuple)) else [args])
        return out
    if isinstance(arguments, list):
        return [list(a) if isinstance(a, (list, tuple)) else [a] for a in arguments]
    return []


def _first_text(value: Any) -> str | None:
    """The first string in (nested lists of) responses."""
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def _texts(record: dict) -> tuple[str | None, str | None, str | None]:
    """(input, target, output) of a samples line."""
    requests = _requests(record.get("arguments"))
    context = requests[0][0] if requests and requests[0] and isinstance(requests[0][0], str) else None
    if context is None:
        doc = record.get("doc")
        context = next((doc[k] for k in _DOC_QUESTION if isinstance(doc, dict) and isinstance(doc.get(k), str)),
                       None)
    # multiple choice: one log-likelihood request per choice, each [context, continuation]
    choices = [r[1] for r in requests if len(r) >= 2 and isinstance(r[1], str)]
    is_choice = len(choices) == len(requests) >= 2
    target = record.get("target")
    if is_choice and (isinstance(target, int) and not isinstance(target, bool)
                      or isinstance(target, str) and target.strip().isdigit()):
        index = int(target)
        target = choices[index] if 0 <= index < len(choices) else str(target)
    elif isinstance(target, list):
        target = "\n".join(str(t) for t in target)
    elif target is not None:
        target = str(target)
    if is_choice:
        lls = [as_number(_first_pair(r)[0]) if _first_pair(r) else np.nan for r in record.get("filtered_resps") or []]
        best = int(np.nanargmax(lls)) if len(lls) == len(choices) and not np.isnan(lls).all() else None
        output = choices[best] if best is not None else None
    else:
        output = _first_text(record.get("resps"))
        if output is None:
            output = _first_text(record.get("filtered_resps"))
    return context, target, output


def _first_pair(resp: Any) -> list | None:
    """``[log-likelihood, is_greedy]`` of one choice's response (also when wrapped in a list)."""
    pair = resp[0] if isinstance(resp, list) and resp and isinstance(resp[0], list) else resp
    return pair if isinstance(pair, (list, tuple)) and len(pair) == 2 else None


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
    rows, notes, uncounted = [], [], []
    for file, doc in results:
        model = _model(doc) or _folder_model(file) or "unknown model"
        groups = {g: list(subs) for g, subs in (optional(doc, "group_subtasks", {}) or {}).items() if subs}
        groups.update({g: [] for g in (optional(doc, "groups", {}) or {}) if g not in groups})
        category = {sub: group for group, subs in groups.items() for sub in subs}
        skipped = []
        for task, values in field_of(doc, "results", file).items():
            if task in groups or not isinstance(values, dict):
                continue
            metric, value = _main_metric(values)
            n = optional(doc, f"n-samples.{task}.effective") or optional(doc, f"n-samples.{task}.original")
            if metric is not None and n is None and 0 <= value <= 1:
                uncounted.append(task)
            if metric is None or n is None or not 0 <= value <= 1:
                skipped.append(task)
                continue
            rows.append({"model": model, "task": task, "category": category.get(task, "all"), "n": int(n),
                         "accuracy": value})
        if skipped:
            notes.append(f"{file.name}: {len(skipped)} task(s) left out ({', '.join(skipped[:5])}): no metric in "
                         "[0, 1] or no sample count.")
    if not rows and uncounted:
        raise EvalDataError(f"{results[0][0].name}: the results file gives no sample count ('n-samples', written "
                            "by newer versions of lm-evaluation-harness; this file, e.g. from an older version, has "
                            f"none), so its accuracies ({', '.join(uncounted[:5])}) cannot be a leaderboard summary: "
                            "upload the run's samples_*.jsonl files instead, or re-run with a current version and "
                            "--log_samples.")
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

