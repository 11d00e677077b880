"""Inspect AI evaluation logs: ``.eval`` (a zip) and ``.json`` (one document).

Format (UKGovernmentBEIS/inspect_ai ``src/inspect_ai/log/_log.py`` and ``log/_recorders/eval.py``; log format
version 2):

- ``.eval``: a zip holding ``header.json`` (``{version, status, eval, plan, results, stats}``), one
  ``samples/<id>_epoch_<n>.json`` per sample and epoch, ``reductions.json`` and ``summaries.json``. A run that was
  interrupted has no ``header.json``; its ``_journal/start.json`` holds ``eval`` and ``plan``.
- ``.json``: one document ``{version, status, eval, plan, results, stats, samples: [...], reductions}``. Logs
  rewritten by other tools may lack ``version`` (evaleval/every_eval_ever
  ``tests/data/inspect/data_with_llm_scoring.json``: ``{status, eval, plan, results, stats}``), and a log written
  with ``--no-log-samples`` has no ``samples``.

A sample is ``{id, epoch, input, target, messages, output, scores: {<scorer>: {value, answer, explanation,
metadata}}, metadata, error, ...}``; version 1 logs have a single ``score`` instead of ``scores``. ``input`` is a
string or a list of chat messages, ``target`` a string or a list of strings, ``output`` ``{model, choices:
[{message}], completion}``. A scorer is declared in ``eval.scorers[]`` as ``{name, options, metrics}``, ``metrics``
being a list of ``{name: "inspect_ai/accuracy", options}`` (or a dict of such lists per key of a dict-valued score);
``results.scores[]`` holds ``{name, scorer, scored_samples, unscored_samples, params, metrics: {accuracy: {value},
stderr: {value}, ...}}`` (``log/_log.py`` ``EvalScorer``, ``EvalScore``; declarations in ``scorer/_scorer.py``).

Mapping to roles: ``model`` = ``eval.model``; ``task`` = ``eval.task``; ``example_id`` = the sample's ``id``;
``repeat`` = its ``epoch``. Score values are turned into numbers as Inspect's ``value_to_float`` does
(``scorer/_metric.py``): ``"C"`` (correct) 1, ``"I"`` (incorrect) 0, ``"P"`` (partial) 0.5, ``"N"`` (no answer) 0,
``yes``/``true`` 1, ``no``/``false`` 0, booleans and numbers as they are; a scorer that returns a dict gives one value
per key (``<scorer>/<key>``).

- The main scorer is the first one the log lists (``eval.scorers``, else ``results.scores``, else the samples'
  order), preferring one that is not an LLM judge. A scorer is an LLM judge when it is named ``model_graded_*`` (or
  has ``judge`` / ``grader`` in its name), when its options name a grader model (``grader_model``, ``model``,
  ``model_role: "grader"``), or when the log has a grader model role (``eval.model_roles.grader``) and the scorer is
  not one of Inspect's deterministic built-ins. A judge next to a deterministic scorer becomes ``proxy``, the judge's
  estimate of the metric; a judge that is the main scorer gives the label, with a note naming the grader model.
- The scorer's declared metrics decide the label: ``accuracy`` declared gives ``correct`` (``score`` when its values
  are not all 0 or 1, e.g. partial credit), ``mean`` (or ``std`` / ``var``) without ``accuracy`` gives ``score``
  even when every value happens to be 0 or 1, unless every value is Inspect's letter grade ``"C"`` / ``"I"``
  (CORRECT / INCORRECT: e.g. the built-in ``exact()``, which declares ``mean`` and ``stderr``; inspect_ai
  ``tests/log/test_eval_log/log_length_stop_reason.txt``), which gives ``correct``. Only a scorer without such a
  declaration (older logs, custom metrics) is read from its values: ``correct`` when every value is 0 or 1, else
  ``score``. Other scorers are kept as numeric columns ``score_<name>``.
- Text roles: ``input`` = the sample's input (chat messages as ``"role: content"`` lines); ``target`` = its target
  (several joined by newlines); ``output`` = ``output.completion``, else the content of the output's first choice
  (its text, without reasoning parts), else the last assistant message; ``explanation`` = the main scorer's
  ``explanation``. A completed ``.eval`` log whose samples are large is read through its ``summaries.json`` (id,
  epoch, input, target, scores), which holds no output: its ``output`` is then empty, with a note.
- Samples without a value of the main scorer (an error, or not scored) are left out and counted. A log holding
  fewer samples than its ``results.completed_samples`` (cut by another tool, e.g. every_eval_ever's
  ``tests/data/inspect/data_cyse2_vuln_exploit_challenges.json``: 1 sample of 2,340) is read with a note, as is a
  run whose ``status`` is not ``success`` (``error``, ``cancelled``, ``started``).
- A log without samples (``--no-log-samples``), or whose samples all lack a score while its results have the run's
  accuracy (inspect_ai ``tests/log/test_eval_log/log_tool_call_error.json``), becomes a summary, one row (model,
  task) with ``n`` = the main scorer's ``scored_samples`` (else ``results.completed_samples``), ``accuracy`` = its
  ``accuracy`` metric and ``se`` = its ``stderr`` metric; it is refused, saying samples are needed, when its
  results give no accuracy or no sample count.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from evalcore.errors import EvalDataError
from evalcore.importers.archive import files_of, has_member, is_zip, members, open_zip
from evalcore.importers.base import Imported, LogFile, as_number, field_of, left_out_note, optional, parse_json
from evalcore.importers.chat_text import content_text, joined, last_message, text_of, with_text_columns

TOOL = "Inspect AI"
_VALUES = {"c": 1.0, "i": 0.0, "p": 0.5, "n": 0.0, "correct": 1.0, "incorrect": 0.0, "partial": 0.5,
           "yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}
_JUDGE = re.compile(r"model_graded|judge|grader", re.IGNORECASE)
#: Inspect's built-in scorers that grade without a model (src/inspect_ai/scorer/: _match.py, _pattern.py,
#: _answer.py, _choice.py, _math.py, _classification.py, _perplexity.py, _target_perplexity.py)
_DETERMINISTIC = frozenset({"match", "includes", "pattern", "answer", "choice", "math", "f1", "exact",
                            "perplexity", "target_perplexity"})
#: scorer options that name the model grading the answers
_GRADER_OPTIONS = ("grader_model", "judge_model", "grader", "judge", "model")
_CONTINUOUS = frozenset({"mean", "std", "var"})
_JSON_HEAD = re.compile(rb'"eval"\s*:\s*\{')
#: keys of Inspect's eval spec (EvalSpec), to recognise a log whose ``version`` key was dropped
_SPEC_KEYS = (b'"task_id"', b'"run_id"', b'"eval_id"', b'"task_version"', b'"task_file"', b'"task_registry_name"',
              b'"model_generate_config"', b'"task_attribs"')
_HEADER = "header.json"
_START = "_journal/start.json"
#: a completed .eval log whose sample files state more bytes than this is read through its summaries.json
SAMPLES_TEXT_BYTES = 32 * 2**20


def is_eval_zip(data: bytes) -> bool:
    """Whether the zip ``data`` is an Inspect ``.eval`` log (a header, a journal or samples at its root)."""
    return is_zip(data) and has_member(data, (_HEADER, _START), ("samples/", "_journal/"))


def sniff(file: LogFile) -> bool:
    """An ``.eval`` zip, or a JSON document with Inspect's ``eval`` object and ``version`` / ``status`` keys (or,
    without ``version``, the keys of Inspect's eval spec: ``task_id``, ``run_id`` ...)."""
    try:
        if is_zip(file.data):
            return is_eval_zip(file.data)
        head = file.head(8192)
        if not head.startswith(b"{") or not _JSON_HEAD.search(head):
            return False
        if b'"status"' in head and b'"version"' in head:
            return True
        return b'"task"' in head and sum(key in head for key in _SPEC_KEYS) >= 2
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def convert(files: list[LogFile]) -> list[Imported]:
    """One log per file (a run of one model on one task); a summary for a file without samples. Files without
    samples given with files that have them are left out, with a note (a summary and per-example logs cannot be
    analysed as one log)."""
    out = [_convert_one(file) for file in files]
    logs = [item for item in out if item.kind == "log"]
    summaries = [item for item in out if item.kind == "summary"]
    if not logs or not summaries:
        return out
    names = [name for item in summaries for name in item.files]
    logs[0].notes.append(left_out_note(len(names), len(out), "Inspect AI logs", f"{', '.join(names)} "
                                       f"{'has' if len(names) == 1 else 'have'} no per-sample results, only the "
                                       "run's accuracy, which cannot join the per-example logs; load "
                                       f"{'it' if len(names) == 1 else 'them'} alone for a summary"))
    return logs


def _convert_one(file: LogFile) -> Imported:
    notes: list[str] = []
    if is_zip(file.data):
        spec, results, samples, status = _read_eval_zip(file, notes)
    else:
        doc = parse_json(file)
        if not isinstance(doc, dict):
            raise EvalDataError(f"{file.name}: an Inspect AI log is a JSON object; this file is not.")
        spec, results = field_of(doc, "eval", file), doc.get("results")
        samples, status = doc.get("samples"), doc.get("status")
        if samples is not None and not isinstance(samples, list):
            raise EvalDataError(f"{file.name}: the field 'samples' is not a list; this is not a complete Inspect AI "
                                "log.")
    if not isinstance(spec, dict):
        raise EvalDataError(f"{file.name}: the field 'eval' is not an object; this is not a complete Inspect AI log.")
    model = str(field_of(spec, "model", file, "eval"))
    task = str(field_of(spec, "task", file, "eval"))
    scorers = _scorers(spec, results)
    unfinished = isinstance(status, str) and status not in ("success", "")
    imported = None
    if samples and not any(_has_score(sample) for sample in samples) and _result_scores(results):
        errored = sum(1 for s in samples if isinstance(s, dict) and s.get("error"))
        # the samples carry no score, the results do: the run's figures, as for a log without samples (or, when
        # they give no accuracy either, the reason why neither can be used)
        imported = _summary(file, model, task, scorers, results, why=(
            f"{file.name}: none of the {len(samples):,} sample(s) it holds has a score ({errored:,} errored; or the "
            "log was cut) and only its results hold the run's figures"))
    if imported is None and not samples:
        imported = _summary(file, model, task, scorers, results)
    elif imported is None:
        try:
            imported = _samples_frame(file, model, task, scorers, samples, notes)
        except EvalDataError as exc:
            if unfinished:
                raise EvalDataError(f"{exc} The run's status is '{status}': it stopped before its samples were "
                                    "scored; the log's header says why.") from exc
            raise
        completed = as_number(optional(results, "completed_samples"), booleans=False)
        if math.isfinite(completed) and len(samples) < completed:
            held = f"{len(samples):,} sample{'' if len(samples) == 1 else 's'}"
            imported.notes.append(
                f"{file.name}: the log holds {held}, but its results count {int(completed):,} "
                "(results.completed_samples): the log was cut (e.g. copied in part by another tool), so the rows "
                "here cover only the samples it holds, and their figures differ from the run's results.")
    imported.run = str(spec.get("eval_id") or spec.get("run_id") or "")
    imported.when = str(spec.get("created") or "")  # when the run started (ISO 8601)
    if model == "none/none":
        imported.notes.append(f"{file.name}: the log names no model ('none/none', Inspect's placeholder when an agent "
                              "or external solver stands in for the model): give the files of each agent their own "
                              "model name (e.g. a table with a model column) to compare them.")
    if unfinished:
        imported.notes.append(f"{file.name}: the run's status is '{status}', not 'success': it may have stopped "
                              "before every sample was run and scored.")
    return imported


def _read_eval_zip(file: LogFile, notes: list[str]) -> tuple[dict, Any, list, Any]:
    """The eval spec, results, samples and status ("started" without header.json) of an ``.eval`` zip. Inspect also
    writes every sample's id, epoch, input, target and scores into ``summaries.json`` (or
    ``_journal/summaries/<n>.json`` while running): when those cover every sample file and the sample files are
    large, they are read instead (without the samples' output)."""
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
    if not isinstance(header, dict):
        raise EvalDataError(f"{head_file.name}: not a JSON object; the .eval log is corrupt.")
    spec = field_of(header, "eval", head_file)
    status = header.get("status") if head is infos.get(_HEADER) else "started"  # no header: the run never ended
    if not samples:
        return spec, header.get("results"), [], status
    if sum(i.file_size for i in samples) > SAMPLES_TEXT_BYTES:
        summaries = _summaries(archive, file, infos)
        if summaries is not None and len(summaries) == len(samples):
            notes.append(f"{file.name}: read through its summaries.json (the samples are large), which holds no "
                         "output: the model's answers ('output') are not kept; input, target and the scorer's "
                         "explanation are.")
            return spec, header.get("results"), summaries, status
    return spec, header.get("results"), [parse_json(m) for m in members(archive, file.name, budget, samples,
                                                                        prefix=f"{file.name}/")], status


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


# ----------------------------------------------------------------------------------------------------------------
# what the log says about its scorers


@dataclass
class _Scorer:
    """A scorer as the log declares it: its metric names (short: "accuracy", "stderr"), whether it is an LLM judge
    and the grader model it names."""

    name: str
    metrics: dict[str, list[str]]   # "" for the scorer's value, a key for a dict-valued score's key; "*" for all
    judge: bool = False
    grader: str | None = None

    def declared(self, key: str = "") -> list[str]:
        return self.metrics.get(key) or self.metrics.get("*") or (self.metrics.get("") if key else []) or []


def _short(metric: Any) -> str:
    """'inspect_ai/accuracy' -> 'accuracy'; a metric given with options (grouped(accuracy())) keeps its options'
    metric names after a space."""
    if isinstance(metric, str):
        return metric.rsplit("/", 1)[-1]
    if isinstance(metric, dict):
        name = _short(metric.get("name", ""))
        options = metric.get("options")
        inner = re.findall(r"\b(accuracy|mean)\b", json.dumps(options, default=str)) if options else []
        return " ".join([name, *inner])
    return ""


def _metric_lists(declaration: Any) -> dict[str, list[str]]:
    if isinstance(declaration, list):
        return {"": [_short(m) for m in declaration]}
    if isinstance(declaration, dict):
        return {str(k): [_short(m) for m in (v if isinstance(v, list) else [v])] for k, v in declaration.items()}
    return {}


def _scorers(spec: dict, results: Any) -> list[_Scorer]:
    """The scorers in the order the log lists them (``eval.scorers``, then those only in ``results.scores``)."""
    out: dict[str, _Scorer] = {}
    options: dict[str, dict] = {}
    for entry in optional(spec, "scorers", []) or []:
        if isinstance(entry, dict) and entry.get("name"):
            name = str(entry["name"])
            out.setdefault(name, _Scorer(name, _metric_lists(entry.get("metrics"))))
            options[name] = entry.get("options") if isinstance(entry.get("options"), dict) else {}
    for entry in (results.get("scores") if isinstance(results, dict) else None) or []:
        if not isinstance(entry, dict):
            continue
        scorer = str(entry.get("scorer") or entry.get("name") or "")
        if not scorer:
            continue
        item = out.setdefault(scorer, _Scorer(scorer, {}))
        key = "" if str(entry.get("name") or scorer) == scorer else str(entry["name"])
        metrics = entry.get("metrics") if isinstance(entry.get("metrics"), dict) else {}
        if key not in item.metrics and metrics:
            item.metrics[key] = [_short(v.get("name", k) if isinstance(v, dict) else k) for k, v in metrics.items()]
        if not options.get(scorer) and isinstance(entry.get("params"), dict):
            options[scorer] = entry["params"]
    roles = optional(spec, "model_roles") if isinstance(optional(spec, "model_roles"), dict) else {}
    role_grader = _model_name(roles.get("grader"))
    for item in out.values():
        item.judge, item.grader = _judge(item.name, options.get(item.name) or {}, roles, role_grader)
    return list(out.values())


def _model_name(value: Any) -> str | None:
    """A model as scorer options or model roles write it: a string, or ``{model: ...}``, or a list of them."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):
        return _model_name(value.get("model") or value.get("name"))
    if isinstance(value, list):
        names = [n for n in (_model_name(v) for v in value) if n]
        return ", ".join(names) or None
    return None


def _judge(name: str, options: dict, roles: dict, role_grader: str | None) -> tuple[bool, str | None]:
    """Whether the scorer ``name`` grades with a model, and the grader model it names."""
    for key in _GRADER_OPTIONS:
        grader = _model_name(options.get(key))
        if grader:
            return True, grader
    role = options.get("model_role")
    if isinstance(role, str) and role:
        return True, _model_name(roles.get(role)) or f"no '{role}' model role set: Inspect then grades with the " \
                                                      "evaluated model"
    if _JUDGE.search(name):
        return True, role_grader
    if role_grader and name not in _DETERMINISTIC:
        return True, role_grader
    return False, None


def _kind(declared: list[str]) -> str | None:
    """'binary' when accuracy is declared, 'continuous' for mean / std / var without it, None otherwise."""
    words = {w for metric in declared for w in metric.split()}
    if "accuracy" in words:
        return "binary"
    if words & _CONTINUOUS:
        return "continuous"
    return None


_NOT_RECORDED = "grader model not recorded in the log"


def _grader_text(scorer: _Scorer | None, model: str) -> str:
    """The judge of an LLM-judge scorer, for a note: the grader its options name, else, for Inspect's
    ``model_graded_*`` scorers, their documented default (the model being evaluated: it grades its own answers)."""
    if scorer is None:
        return _NOT_RECORDED
    if scorer.grader:
        own = scorer.grader.split("/")[-1] == model.split("/")[-1]
        return scorer.grader + (": the evaluated model grades its own answers" if own else "")
    if scorer.name.split("/")[-1].startswith("model_graded"):
        return (f"no grader in the scorer's options, so Inspect's default, the evaluated model {model}: it grades its "
                "own answers")
    return _NOT_RECORDED


# ----------------------------------------------------------------------------------------------------------------
# a log without samples: a summary


def _result_scores(results: Any) -> list:
    """The results' score entries: ``results.scores`` (current), ``results.scorers`` (format version 2 logs of
    May 2024, inspect_ai ``tests/log/test_eval_log/log_valid.txt``), or version 1's single ``results.scorer`` with
    ``results.metrics`` (``log_with_nan.txt``)."""
    if not isinstance(results, dict):
        return []
    entries = results.get("scores") or results.get("scorers")
    if isinstance(entries, list):
        return entries
    scorer = results.get("scorer")
    if isinstance(scorer, dict) and isinstance(results.get("metrics"), dict):
        return [{**scorer, "metrics": results["metrics"]}]
    return []


def _has_score(sample: Any) -> bool:
    """Whether a sample holds any scorer's score (``scores``, or version 1's ``score``)."""
    return isinstance(sample, dict) and (bool(sample.get("scores")) or sample.get("score") is not None)


def _summary(file: LogFile, model: str, task: str, scorers: list[_Scorer], results: Any,
             why: str | None = None) -> Imported:
    why = why or (f"{file.name}: this Inspect AI log has no per-sample results (it was written without samples, e.g. "
                  "with --no-log-samples, or the run stopped before any sample finished)")
    fix = "Re-run with samples logged (the default), or upload the .eval file, for per-example analysis."
    entries = [e for e in _result_scores(results) if isinstance(e, dict) and isinstance(e.get("metrics"), dict)]
    by_name = {s.name: s for s in scorers}

    def accuracy_of(entry: dict) -> float:
        metric = entry["metrics"].get("accuracy")
        return as_number(metric.get("value") if isinstance(metric, dict) else metric, booleans=False)

    usable = [e for e in entries if math.isfinite(accuracy_of(e))]
    if not usable:
        reported = sorted({k for e in entries for k in e["metrics"]})
        what = ("its accuracy is not a number" if "accuracy" in reported
                else f"only {', '.join(reported)}" if reported else "no metric")
        raise EvalDataError(f"{why}, and its results give no accuracy ({what}): samples are needed for per-example "
                            f"analysis. {fix}")
    ordered = sorted(usable, key=lambda e: by_name.get(str(e.get("scorer") or e.get("name")), _Scorer("", {})).judge)
    entry = ordered[0]
    scorer_name = str(entry.get("scorer") or entry.get("name"))
    n = as_number(entry.get("scored_samples"), booleans=False)
    source = "its scored_samples"
    if not math.isfinite(n) or n <= 0:
        n, source = as_number(optional(results, "completed_samples"), booleans=False), "results.completed_samples"
    if not math.isfinite(n) or n <= 0:
        n, source = as_number(optional(results, "total_samples"), booleans=False), "results.total_samples"
    if not math.isfinite(n) or n <= 0:
        raise EvalDataError(f"{why}, and its results give no number of samples (scored_samples, completed_samples): "
                            f"samples are needed for per-example analysis. {fix}")
    row: dict[str, Any] = {"model": model, "task": task, "n": int(n), "accuracy": accuracy_of(entry)}
    stderr = entry["metrics"].get("stderr")
    se = as_number(stderr.get("value") if isinstance(stderr, dict) else stderr, booleans=False)
    if math.isfinite(se):
        row["se"] = se
    label = (f"'{entry.get('name')}' of scorer '{scorer_name}'" if entry.get("name") not in (None, scorer_name)
             else f"scorer '{scorer_name}'")
    what = "accuracy and se (its stderr)" if "se" in row else "accuracy"
    notes = [f"{why}: read as a summary, n = {int(n):,} ({source}), {what} of {label} from the log's results. "
             f"Per-example views need the samples. {fix}"]
    if len(usable) > 1:
        others = ", ".join(f"'{e.get('name')}'" for e in ordered[1:])
        notes.append(f"{file.name}: the results give the accuracy of several scorers; {label} is used ({others} "
                     "not).")
    unscored = as_number(entry.get("unscored_samples"), booleans=False)
    if math.isfinite(unscored) and unscored > 0:
        notes.append(f"{file.name}: {int(unscored):,} samples were not scored by {label} and are not counted in n.")
    scorer = by_name.get(scorer_name)
    if scorer is not None and scorer.judge:
        notes.append(f"{file.name}: accuracy comes from an LLM judge ({_grader_text(scorer, model)}): scorer "
                     f"'{scorer_name}' grades each answer with a model, so it carries the judge's errors.")
    return Imported(pd.DataFrame([row]), "summary", TOOL, (file.name,), notes)


# ----------------------------------------------------------------------------------------------------------------
# a log with samples


def _samples_frame(file: LogFile, model: str, task: str, scorers: list[_Scorer], samples: list,
                   notes: list[str]) -> Imported:
    ids, epochs, values, all_scores = [], [], [], []
    texts: dict[str, list[str | None]] = {"input": [], "target": [], "output": []}
    order = [s.name for s in scorers]
    for number, sample in enumerate(samples, 1):
        if not isinstance(sample, dict):
            raise EvalDataError(f"{file.name}: sample {number} is not a JSON object.")
        ids.append(str(field_of(sample, "id", file, f"sample {number}")))
        epochs.append(sample.get("epoch", 1))
        scores = sample.get("scores")
        if scores is None and "score" in sample:  # version 1 logs: one score
            scores = {order[0] if order else "score": sample["score"]}
        scores = scores if isinstance(scores, dict) else {}
        values.append(_sample_values(scores))
        all_scores.append(scores)
        given, target = sample.get("input"), sample.get("target")
        texts["input"].append(given if isinstance(given, str) and given else text_of(given))
        texts["target"].append(target if isinstance(target, str) and target else joined(target))
        texts["output"].append(_output_text(sample) if "output" in sample or "messages" in sample else None)
    columns = pd.DataFrame(values, index=pd.RangeIndex(len(samples)))
    if columns.shape[1] == 0:
        errored = sum(1 for s in samples if s.get("error"))
        if errored:
            raise EvalDataError(f"{file.name}: none of its {len(samples):,} samples has a score ({errored:,} of them "
                                "errored): the log holds no results to evaluate (did every sample fail?).")
        declared = f" (the task declares {', '.join(repr(s.name) for s in scorers)})" if scorers else ""
        raise EvalDataError(f"{file.name}: none of its {len(samples):,} samples has a score and none errored: the run "
                            f"was not scored{declared}, e.g. made with --no-score or without a scorer. Score it "
                            "with `inspect score <log>` and upload the scored log.")
    known = {s.name: s for s in scorers}
    owner = {c: _owner(c, known) for c in columns}
    listed = [c for name in order for c in columns if owner[c][0] == name]
    ordered = listed + [c for c in columns if c not in listed]
    attack = [c for c in ordered if owner[c][1] and _ATTACK_KEY.search(owner[c][1])]
    if attack and len(attack) < len(ordered):  # the main task's key is the label (ControlArena's control_scorer)
        ordered = [c for c in ordered if c not in attack] + attack
        said = ", ".join(f"'{column}'" for column in attack)
        notes.append(f"{file.name}: {said} measure{'s' if len(attack) == 1 else ''} an attack (a side "
                     "task's success or its detection by a monitor), not the main task: the label is read from "
                     f"'{ordered[0]}', and {'it is' if len(attack) == 1 else 'they are'} kept as score_ columns.")
    is_judge = {c: known[owner[c][0]].judge if owner[c][0] in known else bool(_JUDGE.search(c)) for c in ordered}
    deterministic = [c for c in ordered if not is_judge[c]]
    main = deterministic[0] if deterministic else ordered[0]
    judge = next((c for c in ordered if is_judge[c] and c != main), None) if deterministic else None
    frame = pd.DataFrame({"model": model, "task": task, "example_id": ids,
                          "repeat": pd.to_numeric(pd.Series(epochs), errors="coerce").fillna(1).astype("int64")})
    main_values = columns[main]
    scorer_name, key = owner[main]
    role, how = _label(main, main_values, known.get(scorer_name), key,
                       _letter_grades([scores.get(scorer_name) for scores in all_scores], key))
    if role == "correct" and _marks_an_answer(main_values, known.get(scorer_name), key):
        declared = ", ".join(known[scorer_name].declared(key))
        raise EvalDataError(
            f"{file.name}: scorer '{main}' gives every sample the value C (CORRECT) and declares the metrics "
            f"{declared}, not accuracy: its value marks that an answer was given (e.g. any_choice in a questionnaire "
            "such as personality's BFI), not that the answer is right, so it is not a correctness score and its "
            f"accuracy would be 1.0. The log's results are its metrics ({declared}), computed over the answers "
            "chosen, which have no per-sample value to estimate; upload a log scored for correctness (a scorer "
            "declaring accuracy, e.g. choice() or match()).")
    frame[role] = main_values.to_numpy(dtype=float)
    notes.append(f"{file.name}: scorer '{main}' is the metric ('{role}'): {how}.")
    if is_judge[main]:
        grader = _grader_text(known.get(scorer_name), model)
        notes.append(f"{file.name}: {role} comes from an LLM judge ({grader}): scorer '{main}' grades each answer "
                     "with a model, so its verdicts carry the judge's errors.")
    if judge is not None:
        frame["proxy"] = columns[judge].to_numpy(dtype=float)
        judge_scorer = known.get(owner[judge][0])
        grader = f"; grader: {_grader_text(judge_scorer, model)}" if judge_scorer is not None else ""
        notes.append(f"{file.name}: the model-graded scorer '{judge}' is the annotator ('proxy'{grader}).")
    for other in ordered:
        if other not in (main, judge):
            frame[f"score_{other}"] = columns[other].to_numpy(dtype=float)
    texts["explanation"] = [_explanation(scores.get(scorer_name)) for scores in all_scores]
    for name, column in texts.items():
        if any(v is not None for v in column):
            frame[name] = pd.Series(column, dtype=object)
    missing = main_values.isna().to_numpy()
    if missing.any():
        notes.append(left_out_note(int(missing.sum()), len(frame), f"samples of {file.name}",
                                   f"no value of scorer '{main}' (an error, or not scored)"))
        frame = frame[~missing].reset_index(drop=True)
    return Imported(with_text_columns(frame), "log", TOOL, (file.name,), notes)


#: keys of a dict-valued score that measure an attack rather than the main task (ControlArena's control_scorer:
#: side_task_success, detected_by_monitor, beside main_task_success and success)
_ATTACK_KEY = re.compile(r"side_task|attack|backdoor|detected_by_monitor|suspicion", re.IGNORECASE)


def _owner(column: str, known: dict[str, _Scorer]) -> tuple[str, str]:
    """The scorer and key of a value column ('scorer' or 'scorer/key')."""
    if column in known:
        return column, ""
    scorer, _, key = column.partition("/")
    return scorer, key


def _letter_grades(scores: list, key: str) -> bool:
    """Whether every value the scorer gave is Inspect's grade "C" (CORRECT) or "I" (INCORRECT)."""
    values = []
    for score in scores:
        value = score.get("value") if isinstance(score, dict) else score
        if key and isinstance(value, dict):
            value = value.get(key)
        if value is not None:
            values.append(value)
    return bool(values) and all(isinstance(v, str) and v.strip().upper() in ("C", "I") for v in values)


def _label(column: str, values: pd.Series, scorer: _Scorer | None, key: str,
           letters: bool = False) -> tuple[str, str]:
    """'correct' or 'score' for the main scorer's values, and why (``letters``: every value is the grade C or I)."""
    declared = scorer.declared(key) if scorer is not None else []
    kind = _kind(declared)
    binary = bool(values.dropna().isin((0.0, 1.0)).all())
    names = ", ".join(m.split()[0] for m in declared)
    if kind == "continuous" and letters:
        return "correct", (f"it declares {names} without accuracy, but every value is Inspect's grade C (CORRECT) "
                           "or I (INCORRECT), e.g. the built-in exact() scorer: right or wrong")
    if kind == "binary":
        if binary:
            return "correct", f"it declares the metric accuracy ({names})"
        return "score", (f"it declares accuracy ({names}) but gives values other than 0 and 1 (partial credit or "
                         "fractions), which are read as a score")
    if kind == "continuous":
        extra = ", although every value is 0 or 1" if binary else ""
        return "score", f"it declares {names} without accuracy: a continuous score{extra}"
    basis = f"its metrics ({names}) do not say" if names else "the log declares no metric for it"
    return ("correct" if binary else "score"), (f"{basis}, so its values decide: "
                                                f"{'every value is 0 or 1' if binary else 'values other than 0 and 1'}")


def _marks_an_answer(values: pd.Series, scorer: _Scorer | None, key: str) -> bool:
    """Whether a scorer read as correctness gives every sample 1 (C) while declaring only metrics that are neither
    accuracy nor a mean (e.g. trait ratios): the value then marks an answer given, not a right one."""
    declared = scorer.declared(key) if scorer is not None else []
    return bool(declared) and _kind(declared) is None and bool(values.dropna().eq(1).all())


def _output_text(sample: dict) -> str | None:
    """The model's answer: ``output.completion``, else its first choice's message, else the last assistant message."""
    output = sample.get("output")
    if isinstance(output, dict):
        if isinstance(output.get("completion"), str) and output["completion"]:
            return output["completion"]
        choices = output.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            text = content_text(message.get("content"), reasoning=False) if isinstance(message, dict) else None
            if text:
                return text
    return last_message(sample.get("messages"))


def _explanation(score: Any) -> str | None:
    value = score.get("explanation") if isinstance(score, dict) else None
    return value if isinstance(value, str) and value else None


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
