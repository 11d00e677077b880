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
(timestamps differ) it never takes that run's model: when samples files of that run are read beside it, it is a
stray of another run and is left out with a warning naming it and why (``--strict``: refused); else a note names
both files, and when nothing else names the model the files are refused with a message naming both.

Older runs (lm-eval before May 2024, ``--output_path DIR --log_samples``) wrote ``DIR/results.json`` and one
``<model_args>_<task>.jsonl`` per task, the model's arguments in the name with ``/`` written ``__`` (and, from July
2023 to April 2024, ``=`` written ``__`` too): ``pretrained=EleutherAI__pythia-2.8b_winogrande.jsonl``,
``pretrained__EleutherAI__pythia-70m,dtype__float16_arc_easy.jsonl``. Such a file's model and task come from its
name (:func:`_older_name`; the task names of its run's results file, when given, settle where the arguments end),
with a note; a results file that names the model (``config.model_args``) still comes first.

Mapping to roles: ``model``, ``task`` as above; ``example_id`` = ``doc_id``; the samples files of one run (paired
with one results file, or of one folder and time stamp) are one log, its results file listed once; a task of one of
the run's groups (``group_subtasks``; the innermost group) has that group as its ``category`` (the run's other
tasks 'all'). One filter per task (``none`` when present, else the first seen; the others are left out and
counted). The label is the first metric the line lists whose values are numbers and for which higher is better:

- metrics scored over the whole task hold no number per doc (``f1``, ``mcc``, ``bleu``, ``chrf``, ``ter`` of
  ``lm_eval/api/metrics.py`` are passthroughs: each doc keeps ``[gold, prediction]``; so do custom
  ``process_results`` metrics such as ``micro_f1``): passed over, with a note; they are not kept as columns;
- lower-is-better metrics (``higher_is_better: false`` for the task in the results file, else the registry's
  ``perplexity``, ``word_perplexity``, ``byte_perplexity``, ``bits_per_byte``, ``brier_score`` and errors such as
  ``mae``): passed over, since evalcore's ``correct`` and ``score`` are higher-is-better (as every_eval_ever's
  ``lower_is_better`` results are left out of its summaries); a task with no other metric is refused, naming why;
- ``correct`` when the metric's NAME is right/wrong by lm-eval's definition (``acc``, ``acc_norm``,
  ``acc_mutual_info``, ``acc_bytes``, ``exact_match`` in ``lm_eval/api/metrics.py``; ``em``, ``exact``,
  ``contains``, ``mc1``, ``pass@1``, ``bleu_acc``, ``prompt_level_strict_acc``, ``math_verify`` ... in task yamls)
  and every value is 0 or 1; ``score`` otherwise — a graded metric (``eqbench``, ``bleu_max``) stays a score even
  when every value is 0 or 1, and ``acc`` with other values (``truthfulqa_mc2``) is a score, each with a note.
  Docs whose label is infinite (``Infinity``: a mean with them is infinite), NaN, or missing are left out, each
  counted in a note of its own. The other metrics with numbers are kept as numeric columns.

For multiple-choice tasks (``filtered_resps``
a list of ``[log-likelihood, is_greedy]`` per choice) ``confidence`` is the softmax probability of the most likely
choice — the choice ``acc`` scores. Text: ``input`` = the first request's context (``arguments``), else the doc's
question field; ``target`` = ``target`` (for a multiple-choice index: that choice's continuation); ``output`` = the
first response (``resps``, else ``filtered_resps``; for multiple choice the most likely choice's continuation).
Results files that no samples file uses become a leaderboard summary when no samples file was given: per task ``n``
(``n-samples``, effective), ``accuracy`` (its first accuracy-type metric by name, higher is better, in [0, 1]; filter
``none`` when present, else the first, the other filters named in a note) and ``se`` (the tool's
``<metric>_stderr,<filter>`` when a number, not "N/A"); a note names the metric and filter, and another the tasks the
run read in part (``n-samples`` effective < original: "n = 512 of the task's 2,305 examples (the run used
--limit)"); tasks without such a metric are left out, named with their metrics. Groups are the ``category`` of
their subtasks, not tasks. Beside per-example logs results files are left out with a note (a summary and a log
cannot be combined).
The results table lm-eval prints (markdown ``|Tasks|Version|Filter|n-shot|Metric|...``) is claimed and refused,
naming the files to upload. Older results files without ``n-samples`` (``{results: {task: {acc, acc_stderr, ...}},
versions}``, e.g. ``tests/testdata/arc_easy-v0-res.json``, ``wikitext-v1-res.json`` with perplexities only) are
recognised and refused, saying why (no sample counts; no accuracy-like metric) and what to do (re-run with lm-eval
>= 0.4 and ``--log_samples``). A samples file holding fewer docs than its run's ``n-samples`` (cut), and tasks of a
paired results file that no samples file gives, are named in the notes.
"""

from __future__ import annotations

import math
import re
from pathlib import PurePosixPath
from typing import Any

import numpy as np
import pandas as pd

from evalcore.data import bounded_json
from evalcore.errors import EvalDataError
from evalcore.data.limits import ReadLimits
from evalcore.importers.chat_text import messages_text
from evalcore.importers.base import (Imported, LogFile, as_number, field_of, json_lines, left_out_note, left_out_warning,
                                     optional, parse_json)

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
        if _RESULTS_NAME.match(file.base) and head.startswith(b'"'):
            return True  # a results file whose first line is missing: read (and left out) as lm-eval's
        if _SAMPLES_NAME.match(file.base) or _RESULTS_NAME.match(file.base):
            return head.startswith(b"{")
        if _PRINTED_TABLE.match(head):
            return True
        first = head.split(b"\n", 1)[0]
        if _SAMPLE_HEAD.search(first):
            return True
        if not _RESULTS_HEAD.match(head):
            return False
        return b'"alias"' in head or b',none"' in head or b'_stderr' in head or _old_results(file)
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def _old_results(file: LogFile) -> bool:
    """An older results file (``tests/testdata/wikitext-v1-res.json``: ``{"results": {task: {metric: number}},
    "versions": {task: version}}``, no standard errors): small, each task of ``versions`` has numbers in
    ``results``."""
    if len(file.data) > 1 << 20 or b'"versions"' not in file.data:
        return False
    doc = bounded_json.loads_alone(file.data, file.name, file.budget.limits)
    results, versions = doc.get("results"), doc.get("versions")
    return (isinstance(results, dict) and isinstance(versions, dict) and bool(results)
            and set(versions) <= set(results)
            and all(isinstance(v, dict) and v and all(isinstance(x, (int, float)) for x in v.values())
                    for v in results.values()))


_STAMP = re.compile(r"_(?P<time>\d{4}-\d{2}-\d{2}T[\d\-.:]+)\.jsonl?$")
#: words of folder names that name a place, not a model ("lm_eval/", "outputs/", "results/" ...)
_GENERIC_WORDS = frozenset("""output outputs out result results eval evals evaluation evaluations sample samples
    log logs run runs data tmp temp lm harness ecosystem download downloads upload uploads experiment experiments
    save saved files file test tests testdata fixture fixtures example examples artifact artifacts report reports
    benchmark benchmarks score scores home user users desktop documents work workspace tmpdir""".split())
#: fields of a ``doc`` that hold its question, when a samples line has no ``arguments`` (older versions)
_DOC_QUESTION = ("question", "query", "problem", "prompt", "input", "text", "sentence", "ctx", "context")


def convert(files: list[LogFile]) -> list[Imported]:
    """Samples files become per-example logs, one per run (the samples files paired with one results file, or of
    one folder and time stamp), their model from the results file of their own run; results files that no samples
    file uses become leaderboard summaries when no samples file was given, else are set aside."""
    for file in files:
        if _PRINTED_TABLE.match(file.head(4096)):
            raise EvalDataError(f"{file.name}: this is the results table lm-evaluation-harness prints (Tasks, Version, "
                                "Filter, n-shot, Metric, Value, Stderr): it has no sample counts and no per-example "
                                "results. Upload the run's results_<time>.json, and its samples_<task>_<time>.jsonl "
                                "files (written with --output_path ... --log_samples), instead.")
    samples = [f for f in files if not _is_results(f)]
    results: dict[str, tuple[LogFile, Any]] = {}
    damaged: list[tuple[LogFile, str | None]] = []  # results files that cannot be read, with the model they name
    left_out: list[str] = []
    for f in files:
        if not _is_results(f):
            continue
        try:
            results[f.name] = (f, parse_json(f))
        except EvalDataError as exc:
            if not samples:
                raise
            damaged.append((f, _named_model(f)))
            reason = str(exc).split(": ", 1)[1] if ": " in str(exc) else str(exc)
            left_out.append(left_out_warning(f.shown, reason))
    for name, (file, doc) in results.items():
        if not isinstance(doc, dict) or "results" not in doc:
            raise EvalDataError(f"{name}: an lm-evaluation-harness results file has a 'results' object; this one "
                                "has not (truncated?).")
    used: set[str] = set()
    read_tasks: dict[str, set[str]] = {}
    runs: dict[tuple[str, ...], list[tuple[pd.DataFrame, list[str], LogFile]]] = {}
    paired: dict[tuple[str, ...], tuple[LogFile, Any] | None] = {}
    pairings = [(file, *_run_results(file, list(results.values()))) for file in samples]
    run_folders = {file.folder for file, result, _, _ in pairings if result is not None}
    for file, result, pairing, mismatched in pairings:
        unread = _unread_results(file, damaged) if result is None else None
        if result is None and unread is None and mismatched and file.folder in run_folders:
            left_out.append(left_out_warning(file.shown, _stray(file, mismatched)))
            continue
        frame, notes = _samples(file, result, pairing, mismatched, unread)
        if result is not None:
            used.add(result[0].name)
            read_tasks.setdefault(result[0].name, set()).add(_task_of(file, result[1]))
            key: tuple[str, ...] = ("results", result[0].name)
        else:
            stamp = _stamp(file)
            key = ("folder", file.folder, stamp) if stamp is not None else ("file", file.name)
        while any(_task_of(other) == _task_of(file) for _, _, other in runs.get(key, [])):
            key = (*key, "again")  # a second file of the same task (a copy): a log of its own, as combine expects
        runs.setdefault(key, []).append((frame, notes, file))
        paired[key] = result
    out = [_run(parts, paired[key]) for key, parts in runs.items()]
    for name, tasks in read_tasks.items():
        missing = _unread_tasks(results[name][1], tasks)
        if missing:
            target = next(item for item in out if name in item.files)
            target.notes.append(f"{name}: {len(missing)} task(s) of the run have no samples file among the files "
                                f"given and are not read ({_some(missing)}); upload their samples_<task>_*.jsonl "
                                "files too.")
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
    if out and left_out:
        out[0].left_out.extend(left_out)
    return out


def _stray(file: LogFile, others: list[LogFile]) -> str:
    """Why a samples file of another run, left in the folder of a run that was read, is left out."""
    names = ", ".join(other.shown for other in others)
    return (f"it is from another run (time stamp {_stamp(file)}) than the run read beside it ({names}), and the "
            "results file of its own run was not given, so its model cannot be told (its rows would become a model "
            f"of their own). Upload it with its own run's results_{_stamp(file)}.json, or on its own.")


#: the keys of ``--model_args`` that name the model, in the order they are looked for (a results file's
#: ``config.model_args``, one that cannot be parsed, an older samples file's name)
_MODEL_KEYS = ("peft", "delta", "pretrained", "model", "path", "engine")
#: ``key=value`` of a model-naming argument in ``model_args`` text (the value up to the next ``,``)
_MODEL_ARG = "(?:" + "|".join(_MODEL_KEYS) + ")=([^,\"]+)"


def _named_model(file: LogFile) -> str | None:
    """The model a results file that cannot be parsed still names in its text (``"model_name": "..."``, else
    ``pretrained=`` / ``model=`` in ``model_args``), or None."""
    text = file.data.decode("utf-8", "replace")
    found = re.search(r'"model_name"\s*:\s*"([^"\\]+)"', text)
    if found:
        return found.group(1)
    found = re.search(r'"model_args"\s*:\s*"[^"]*?' + _MODEL_ARG, text)
    return found.group(1) if found else None


def _unread_results(file: LogFile, damaged: list[tuple[LogFile, str | None]]) -> tuple[LogFile, str | None] | None:
    """The results file of ``file``'s run among those that cannot be read (same time stamp, in the same folder
    when several have it; else the only one of its folder)."""
    stamp = _stamp(file)
    same = [pair for pair in damaged if _stamp(pair[0]) == stamp and stamp is not None]
    if len(same) > 1:
        same = [pair for pair in same if pair[0].folder == file.folder]
    if not same:
        same = [pair for pair in damaged if pair[0].folder == file.folder]
    return same[0] if len(same) == 1 else None


def _some(names: list[str], k: int = 5) -> str:
    """'a, b, c' — at most ``k`` names, then 'and n more'."""
    return ", ".join(names[:k]) + (f" and {len(names) - k} more" if len(names) > k else "")


def _task_of(file: LogFile, doc: Any = None) -> str:
    """The task a samples file holds: from ``samples_<task>_<time>.jsonl``, else from the older
    ``<model_args>_<task>.jsonl`` (:func:`_older_name`; ``doc``: its run's results file, whose task names settle
    where the model's arguments end), else the file's stem."""
    match = _SAMPLES_NAME.match(file.base)
    if match:
        return match["task"]
    older = _older_name(file, doc)
    return older[1] if older else PurePosixPath(file.base).stem


#: a model argument of ``--model_args`` in an older samples file's name: its key, then ``=`` (or ``__``, when the
#: name was written with ``=`` replaced), then its value (``/`` written ``__``)
_ARG = re.compile(r"^(?P<key>[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*)(?:=|__)(?P<value>.*)$", re.DOTALL)


def _older_name(file: LogFile, doc: Any = None) -> tuple[str, str] | None:
    """(model, task) from the name lm-eval gave samples files before May 2024: ``<model_args>_<task>.jsonl``, the
    model's arguments with ``/`` written ``__`` (June 2023: ``pretrained=EleutherAI__pythia-2.8b_winogrande.jsonl``,
    EleutherAI/lm-evaluation-harness ``main.py`` at ee098a47d), with ``=`` written ``__`` too (July 2023 - April
    2024, ``lm_eval/__main__.py`` at 3b5e554ff: ``pretrained__EleutherAI__pythia-70m,dtype__float16_arc_easy.jsonl``),
    or with only ``"<>:/|\\?*[]`` written ``__`` (April - May 2024, at e9a405431). None for other names.

    The task follows the last argument's value after one ``_``; where a task name of the run's results file
    (``doc``) ends the name, that task is taken whole (task names hold ``_`` and ``.``:
    ``trivia_qa_unfiltered.nocontext``), else the value ends at its first single ``_``."""
    stem = re.sub(r"\.jsonl?$", "", file.base)
    naming = re.compile(rf"^(?:{'|'.join(_MODEL_KEYS)})(?:=|__)")
    if stem == file.base or not any(naming.match(arg) for arg in stem.split(",")):
        return None
    tasks = sorted(set(optional(doc, "results", {}) or {}) | set(optional(doc, "configs", {}) or {}), key=len,
                   reverse=True) if isinstance(doc, dict) else []
    task = next((t for t in tasks if stem.endswith("_" + t) and len(stem) > len(t) + 1), None)
    if task is not None:
        args = stem[: -len(task) - 1]
    else:
        found = _ARG.match(stem.rpartition(",")[2])
        tail = found["value"].rpartition("__")[2] if found else ""  # the last value's part after its last '/'
        cut = re.search(r"(?<!_)_(?!_)", tail)
        if cut is None:
            return None
        args, task = stem[: len(stem) - len(tail) + cut.start()], tail[cut.end():]
    for arg in args.split(","):
        found = _ARG.match(arg)
        if found and found["key"] in _MODEL_KEYS and found["value"]:
            return found["value"].replace("__", "/"), task
    return None


def _run(parts: list[tuple[pd.DataFrame, list[str], LogFile]], result: tuple[LogFile, Any] | None) -> Imported:
    """The samples files of one run as one log (its results file listed once); a task of one of the run's groups
    (``group_subtasks``) has that group as its ``category``."""
    frames = [frame for frame, _, _ in parts]
    frame = pd.concat(frames, ignore_index=True, sort=False) if len(frames) > 1 else frames[0]
    notes = [note for _, file_notes, _ in parts for note in file_notes]
    if result is not None:
        category = _categories(result[1])
        if any(task in category for task in frame["task"].unique()):
            frame["category"] = frame["task"].map(lambda task: category.get(task, "all"))
            groups = sorted({category[t] for t in frame["task"].unique() if t in category})
            several = len(groups) > 1
            rest = "; the run's other tasks are in category 'all'." if frame["category"].eq("all").any() else "."
            notes.append(f"{result[0].name}: the run's group{'s' if several else ''} {_quoted(groups)} "
                         f"(group_subtasks) {'are' if several else 'is'} the category of "
                         f"{'their' if several else 'its'} tasks{rest}")
    files = (*(file.name for _, _, file in parts), *([result[0].name] if result is not None else []))
    return Imported(frame, "log", TOOL, files, notes, when=_stamp(parts[0][2]) or "")  # when the run ran


def _categories(doc: Any) -> dict[str, str]:
    """Each task of a group (``group_subtasks``; a subgroup's tasks belong to the subgroup) → its group."""
    groups = {g: list(subs) for g, subs in (optional(doc, "group_subtasks", {}) or {}).items()
              if isinstance(subs, list) and subs}
    return {str(sub): str(group) for group, subs in groups.items() for sub in subs if sub not in groups}


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
    found = re.search(_MODEL_ARG, args)
    return found.group(1) if found else None


def _samples_model(file: LogFile, result: tuple[LogFile, Any] | None, notes: list[str],
                   mismatched: list[LogFile], unread: LogFile | None = None) -> tuple[str, list[str]]:
    """The model of a samples file, and notes saying where it came from (after ``notes`` on its pairing;
    ``unread``: its run's results file, which cannot be read)."""
    notes = list(notes)
    missing = (f"the results file of this run ({unread.shown}) cannot be read (left out, see the warnings)"
               if unread is not None else "no results file of this run was uploaded with it")
    model = _model(result[1]) if result is not None else None
    if model is not None:
        return model, notes
    older = _older_name(file, result[1] if result is not None else None)
    if older is not None:  # lm-eval before May 2024: the model's arguments begin the samples file's name
        notes.append(f"{file.name}: model '{older[0]}' and task '{older[1]}' are read from the file's name (lm-eval "
                     "before May 2024 named a samples file <model_args>_<task>.jsonl, a '/' of the model's name "
                     "written '__')" + (f"; its run's results file ({result[0].name}) names no model." if result
                                        is not None else "."))
        return older[0], notes
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
        notes.append(f"{file.name}: {missing}, so the model is named after its "
                     f"folder '{folder}': '{folder_model}'. Upload the run's results_*.json too to use the "
                     "model's name.")
        return folder_model, notes
    notes.append(f"{file.name}: {missing} and no folder names its model, so "
                 "the model is 'unknown model'. Upload the run's results_*.json (same time stamp) too, or its folder "
                 "(lm-eval names it after the model), to use the model's name.")
    return "unknown model", notes


#: metrics whose per-sample value is right (1) or wrong (0) by lm-eval's definition (lm_eval/api/metrics.py:
#: acc, acc_norm, acc_mutual_info, acc_bytes, exact_match; task yamls: em, exact, contains, mc1, pass@1,
#: bleu_acc / rouge1_acc (truthfulqa_gen), prompt_level_strict_acc (ifeval), math_verify, numerical_match ...).
#: Any other metric is graded ('score') even where every value is 0 or 1.
_CORRECT_NAME = re.compile(r"^(?:acc|accuracy|exact|em|contains|mc1|correct|is_correct|match|math_verify|"
                           r"pass@\d+|pass_at_\d+)$|^(?:acc|accuracy|exact_match)(?:_|$)|_(?:acc|accuracy|match|em|"
                           r"correct)$", re.IGNORECASE)
_NOT_CORRECT_NAME = re.compile(r"macro|micro|f1|mcc|mc2|perplexity|_max$|_diff$", re.IGNORECASE)
#: metrics that lm-eval's registry declares higher_is_better=False (lm_eval/api/metrics.py: perplexity,
#: word_perplexity, byte_perplexity, bits_per_byte, brier_score) and common errors, for results files that give
#: no ``higher_is_better``
_LOWER_NAME = re.compile(r"perplexity|^ppl$|bits_per_byte|brier|^(?:mae|mse|rmse|loss|error|wer|cer)$",
                         re.IGNORECASE)


def _is_correct_name(metric: str) -> bool:
    """Whether lm-eval scores each sample of ``metric`` right (1) or wrong (0) — decided by the metric's name."""
    return bool(_CORRECT_NAME.search(metric)) and not _NOT_CORRECT_NAME.search(metric)


def _lower_is_better(metric: str, task: str, doc: Any) -> str | None:
    """Where it is said that a lower value of ``metric`` is better (None when it is not): the results file's
    ``higher_is_better`` for the task, else lm-eval's metric registry (by the metric's name)."""
    declared = optional(doc, "higher_is_better", {}) if doc is not None else {}
    declared = declared.get(task) if isinstance(declared, dict) else None
    if isinstance(declared, dict) and isinstance(declared.get(metric), bool):
        return "higher_is_better: false in the results file" if declared[metric] is False else None
    return "lower is better in lm-eval's metric registry" if _LOWER_NAME.search(metric) else None


def _kind(value: Any) -> str:
    """'number', 'infinite', 'nan', 'missing', or 'other' (a list, an object, text that is not a number)."""
    if value is None:
        return "missing"
    if isinstance(value, bool):
        return "number"
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return "other"
    if isinstance(value, (int, float)):
        if math.isnan(value):
            return "nan"
        return "number" if math.isfinite(value) else "infinite"
    return "other"


def _choose_label(file: LogFile, task: str, kept: list[dict], metrics: list[str], doc: Any,
                  results_name: str | None) -> tuple[str, list[str]]:
    """The metric that becomes the label — the first the line lists whose values are numbers and for which higher
    is better — and notes on the metrics passed over."""
    passthrough, lower, empty = [], [], []
    for metric in metrics:
        kinds = [_kind(r.get(metric)) for r in kept]
        if "other" in kinds:  # a corpus-level metric: each sample holds e.g. [gold, prediction]
            passthrough.append(metric)
            continue
        if "number" not in kinds:
            empty.append(metric)
            continue
        why = _lower_is_better(metric, task, doc)
        if why is not None:
            infinite = kinds.count("infinite")
            lower.append((metric, why + (f"; {infinite:,} of its {len(kinds):,} values are infinite" if infinite
                                         else "")))
            continue
        notes = []
        if passthrough:
            notes.append(f"{file.name}: {_quoted(passthrough)} {'is' if len(passthrough) == 1 else 'are'} scored over "
                         "the whole task (each doc holds a value that is not a number, e.g. [gold, prediction], "
                         f"which lm-eval aggregates at the end): not the label; '{metric}' is.")
        if lower:
            notes.append(f"{file.name}: {', '.join(f'{m!r} ({why})' for m, why in lower)}: lower is better, but "
                         f"evalcore's correct and score are higher-is-better: not the label; '{metric}' is.")
        return metric, notes
    reasons = []
    if lower:
        reasons.append(f"{', '.join(f'{m!r} ({why})' for m, why in lower)}: lower is better, but evalcore's "
                       "labels (correct, score) are higher-is-better")
    if passthrough:
        reasons.append(f"{_quoted(passthrough)}: scored over the whole task, no number per doc")
    if empty:
        reasons.append(f"{_quoted(empty)}: no doc has a finite value")
    raise EvalDataError(f"{file.name}: no metric of task '{task}' can be the label of its docs "
                        f"({'; '.join(reasons) or 'no metric'}). evalcore needs a per-doc metric for which higher is "
                        "better (e.g. acc, exact_match); this task's results can be read in lm-eval's own "
                        f"{'results file' if results_name is None else results_name}.")


def _quoted(names: list[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)


def _samples(file: LogFile, result: tuple[LogFile, Any] | None, pairing: list[str],
             mismatched: list[LogFile], unread: tuple[LogFile, str | None] | None = None
             ) -> tuple[pd.DataFrame, list[str]]:
    """One samples file's rows and notes (``unread``: its run's results file, which cannot be read, and the model
    it names)."""
    task = _task_of(file, result[1] if result is not None else None)
    if unread is not None and unread[1]:
        model, notes = unread[1], [*pairing, f"{file.name}: the results file of its run ({unread[0].shown}) cannot "
                                              f"be read (left out, see the warnings); the model is the one it names: "
                                              f"'{unread[1]}'."]
    else:
        model, notes = _samples_model(file, result, pairing, mismatched, unread[0] if unread else None)
    doc = result[1] if result is not None else None
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
    main, label_notes = _choose_label(file, task, kept, metrics, doc, result[0].name if result else None)
    notes.extend(label_notes)
    frame = pd.DataFrame({"model": model, "task": task,
                          "example_id": [str(field_of(r, "doc_id", file, f"doc {i}")) for i, r in enumerate(kept)]})
    kinds = {m: [_kind(r.get(m)) for r in kept] for m in metrics}
    for metric in metrics:  # the label and the other metrics with numbers (kept as numeric columns)
        if "other" in kinds[metric] or "number" not in kinds[metric] and metric != main:
            continue
        frame[metric] = [as_number(r.get(metric)) for r in kept]
        infinite = kinds[metric].count("infinite")
        if infinite and metric != main:
            notes.append(f"{file.name}: {infinite:,} of {len(kept):,} values of '{metric}' are infinite (Infinity): "
                         "left empty in that column.")
    later = [m for m in metrics[metrics.index(main) + 1:] if "other" in kinds[m]]
    if later:
        notes.append(f"{file.name}: {_quoted(later)} {'is' if len(later) == 1 else 'are'} scored over the whole task "
                     "(each doc holds a value that is not a number, e.g. a list, which lm-eval aggregates at the end): "
                     "not kept as a column.")
    values = frame[main].dropna()
    named = _is_correct_name(main)
    binary = bool(values.isin((0.0, 1.0)).all())
    label = "correct" if named and binary else "score"
    frame = frame.rename(columns={main: label})
    if named and not binary:
        odd = values[~values.isin((0.0, 1.0))].iloc[0]
        notes.append(f"{file.name}: metric '{main}' is the label ('score'): its values are not all 0 or 1 (e.g. "
                     f"{odd:g}), so it is read as a graded score.")
    elif not named and binary and len(values):
        notes.append(f"{file.name}: metric '{main}' is the label ('score'): it is a graded metric (not right/wrong by "
                     "lm-eval's definition), although every value here is 0 or 1.")
    else:
        notes.append(f"{file.name}: metric '{main}' is the label ('{label}').")
    confidence = [_choice_confidence(r.get("filtered_resps")) for r in kept]
    if any(c is not None for c in confidence):
        frame["confidence"] = [np.nan if c is None else c for c in confidence]
        notes.append(f"{file.name}: confidence = the softmax probability of the most likely choice (from the "
                     "per-choice log-likelihoods).")
    chat: dict[str, int] = {"chat": 0, "no text": 0}
    roles: set[str] = set()
    texts = [_texts(r, chat, roles, file.budget.limits) for r in kept]
    if chat["chat"]:
        notes.append(f"{file.name}: the prompts are chat messages (a chat API's requests, arguments.gen_args_0.arg_0): "
                     "the input is the messages as 'role: content' lines.")
    if chat["no text"]:
        notes.append(f"{file.name}: {chat['no text']:,} of {len(kept):,} prompts' chat messages hold no text in any "
                     f"role ({', '.join(sorted(roles)) or 'no role'}: images or other parts only): no input text for "
                     "them.")
    for position, role in enumerate(("input", "target", "output")):
        values_of = [t[position] for t in texts]
        if any(v is not None for v in values_of):
            frame[role] = pd.Series(values_of, dtype="object")
    counted = as_number(optional(doc, f"n-samples.{task}.effective"), booleans=False) if doc is not None else None
    original = as_number(optional(doc, f"n-samples.{task}.original"), booleans=False) if doc is not None else None
    if counted is not None and np.isfinite(counted) and len(kept) < counted:
        notes.append(f"{file.name}: holds {len(kept):,} docs, but the results file of its run counts "
                     f"{int(counted):,} (n-samples, effective): the samples file was cut (e.g. copied in part), so "
                     "the rows here cover only the docs it holds, and their figures differ from the run's results.")
    limited = _limit_note(doc, task, counted, original)
    if limited:
        notes.append(f"{file.name}: {limited}.")
    kind = np.asarray(kinds[main])
    for what, why in (("infinite", f"their '{main}' is infinite (Infinity), and a mean with them would be infinite"),
                      ("nan", f"their '{main}' is NaN (not a number: the tool could not compute it)"),
                      ("missing", f"no value of '{main}'"),
                      ("other", f"'{main}' is not a number")):
        count = int((kind == what).sum())
        if count:
            notes.append(left_out_note(count, len(frame), f"docs of {file.name}", why))
    frame = frame[kind == "number"].reset_index(drop=True)
    return frame, notes


def _limit_note(doc: Any, task: str, effective: float | None, original: float | None) -> str | None:
    """"n = 512 of the task's 2,305 examples (the run used --limit)" when the run read part of the task."""
    if doc is None or effective is None or original is None or not (np.isfinite(effective)
                                                                     and np.isfinite(original)):
        return None
    if effective >= original:
        return None
    how = "the run used --limit" if optional(doc, "config.limit") is not None else \
        "the run read part of the task, e.g. with --limit or --samples"
    return f"'{task}': n = {int(effective):,} of the task's {int(original):,} examples ({how})"


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


def _chat_messages(value: Any, limits: Any) -> list | None:
    """The chat messages of a chat API's request context: lm-eval writes ``JsonChatStr`` (the messages as a JSON
    string) serialised as a list holding that string, or the string alone; None for a plain prompt."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
        value = value[0]
    if isinstance(value, list) and value and all(isinstance(m, dict) for m in value):
        messages = value
    elif isinstance(value, str) and value.lstrip().startswith("[{"):
        try:
            messages = bounded_json.loads_alone(value, "a chat prompt", limits or ReadLimits.from_env())
        except (ValueError, RecursionError, EvalDataError):
            return None
    else:
        return None
    if isinstance(messages, list) and messages and all(isinstance(m, dict) and "role" in m for m in messages):
        return messages
    return None


def _has_text(content: Any) -> bool:
    """Whether a chat message's content holds text (a string, or a text / refusal part), not only images ..."""
    if isinstance(content, str):
        return bool(content.strip())
    return isinstance(content, list) and any(
        isinstance(p, dict) and any(isinstance(p.get(k), str) and p[k].strip() for k in ("text", "refusal"))
        or isinstance(p, str) and p.strip() for p in content)


def _texts(record: dict, chat: dict[str, int] | None = None, roles: set[str] | None = None,
           limits: Any = None) -> tuple[str | None, str | None, str | None]:
    """(input, target, output) of a samples line; ``chat`` counts the prompts that are chat messages ('chat') and
    those whose messages hold no text ('no text', their roles added to ``roles``)."""
    requests = _requests(record.get("arguments"))
    first = requests[0][0] if requests and requests[0] else None
    messages = _chat_messages(first, limits) if first is not None and not isinstance(first, str) or (
        isinstance(first, str) and first.lstrip().startswith("[{")) else None
    if messages is not None:
        context = messages_text(messages) if any(_has_text(m.get("content")) for m in messages) else None
        if chat is not None:
            chat["chat"] += 1
            if context is None:
                chat["no text"] += 1
                if roles is not None:
                    roles.update(str(m.get("role")) for m in messages)
    else:
        context = first if isinstance(first, str) else None
    if context is None and messages is None:
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
    rows, notes, uncounted, old = [], [], [], []
    for file, doc in results:
        model = _model(doc) or _folder_model(file) or "unknown model"
        groups = {g: list(subs) for g, subs in (optional(doc, "group_subtasks", {}) or {}).items() if subs}
        groups.update({g: [] for g in (optional(doc, "groups", {}) or {}) if g not in groups})
        category = _categories(doc)
        left_out: dict[str, list[str]] = {}
        chosen: dict[str, list[str]] = {}
        limited = []
        for task, values in field_of(doc, "results", file).items():
            if task in groups or not isinstance(values, dict):
                continue
            metric, why = _main_metric(values, task, doc)
            n = as_number(optional(doc, f"n-samples.{task}.effective"), booleans=False)
            original = as_number(optional(doc, f"n-samples.{task}.original"), booleans=False)
            if np.isnan(n):
                n = original
            if metric is not None and np.isnan(n):
                uncounted.append(task)
            if metric is None and np.isnan(n) and "n-samples" not in doc:
                old.append((task, why))
            if metric is None or np.isnan(n) or n < 1:
                left_out.setdefault(why if metric is None else "no sample count (n-samples)", []).append(task)
                continue
            key, value, se, unused = metric
            row = {"model": model, "task": task, "category": category.get(task, "all"), "n": int(n),
                   "accuracy": value, "se": se}
            rows.append(row)
            chosen.setdefault(f"'{key}'" + (f" (the {_quoted(unused)} filter{'s' if len(unused) > 1 else ''} not "
                                            "used)" if unused else ""), []).append(task)
            note = _limit_note(doc, task, n, original)
            if note:
                limited.append(note)
        if chosen:
            notes.append(f"{file.name}: accuracy = " + "; ".join(f"{how} for {_some(tasks)}"
                                                                  for how, tasks in chosen.items()) + ".")
        if limited:
            notes.append(f"{file.name}: {'; '.join(limited[:5])}"
                         + (f"; and {len(limited) - 5} more tasks" if len(limited) > 5 else "") + ".")
        if left_out:
            total = sum(map(len, left_out.values()))
            notes.append(f"{file.name}: {total} task(s) left out — a leaderboard summary row needs a proportion of "
                         "correct examples and its sample count: "
                         + "; ".join(f"{_some(tasks)} ({why})" for why, tasks in left_out.items()) + ".")
    if not rows and (uncounted or old):
        first = results[0][0].name
        metrics = list(dict.fromkeys(m for _, why in old for m in re.findall(r"'[^']+'(?: \(lower is better\))?", why)))
        what = (f", so its accuracies ({_some(uncounted)}) cannot be a leaderboard summary" if uncounted else
                f", and no accuracy-like metric ({', '.join(metrics[:6]) or 'none'}: not a proportion of correct "
                "examples), so it cannot be a leaderboard summary")
        raise EvalDataError(f"{first}: the results file gives no sample count ('n-samples', written by "
                            "lm-evaluation-harness 0.4 and later; this file, from an older version, has none)"
                            f"{what}. evalcore needs per-example results: re-run with lm-eval >= 0.4 and "
                            "--output_path <folder> --log_samples, and upload the samples_<task>_<time>.jsonl files "
                            "with their results_<time>.json.")
    if not rows:
        raise EvalDataError(f"{results[0][0].name}: no task of the results file has an accuracy-like metric (acc, "
                            "exact_match ... in [0, 1], higher is better) with its sample count "
                            f"({notes[-1].split(': ', 1)[-1] if notes else 'no task'}): upload its "
                            "samples_*.jsonl files instead.")
    notes.append("A results file without its samples files is a leaderboard summary (accuracy and sample count "
                 "per task); upload the samples_*.jsonl files for per-example analyses.")
    frame = pd.DataFrame(rows)
    if frame["se"].isna().all():
        frame = frame.drop(columns="se")
    else:
        notes.append("se = the run's own standard error of each accuracy ('<metric>_stderr,<filter>'), where it is "
                     "a number.")
    return Imported(frame, "summary", TOOL, tuple(f.name for f, _ in results), notes)


def _main_metric(values: dict, task: str, doc: Any) -> tuple[tuple[str, float, float, list[str]] | None, str]:
    """The task's accuracy: its first accuracy-type metric (by name: acc, exact_match, acc_norm, ...; see
    :func:`_is_correct_name`), higher is better, with a value in [0, 1] — its key ("<metric>,<filter>", or
    "<metric>" in older versions: filter 'none' when present, else the first), value, standard error
    ("<metric>_stderr,<filter>" when a number, else NaN) and the filters not used — or None and why none is."""
    found: dict[str, list[tuple[str, str, float]]] = {}
    others = []
    for key, value in values.items():
        name, _, filt = str(key).partition(",")
        if key in ("alias", "name", "sample_len", "sample_count") or "_stderr" in name:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                others.append(f"'{name}'")
            continue
        lower = _lower_is_better(name, task, doc)
        if not _is_correct_name(name) or lower or not 0 <= value <= 1:
            others.append(f"'{name}'" + (" (lower is better)" if lower else ""))
            continue
        found.setdefault(name, []).append((str(key), filt, float(value)))
    for name in (*[p for p in _PREFERRED if p in found], *found):
        candidates = found[name]
        pick = next((c for c in candidates if c[1] == "none"), candidates[0])
        se = values.get(pick[0].replace(name, f"{name}_stderr", 1))
        se = float(se) if isinstance(se, (int, float)) and not isinstance(se, bool) and math.isfinite(se) else math.nan
        return (pick[0], pick[2], se, [c[1] for c in candidates if c is not pick]), ""
    others = list(dict.fromkeys(others))
    return None, (f"{', '.join(others)}: not an accuracy" if others else "no metric")
