"""DeepEval test runs: ``test_run_<YYYYMMDD_HHMMSS>.json`` (``DisplayConfig(results_folder=...)`` or
``DEEPEVAL_RESULTS_FOLDER``) and the ``.deepeval/`` files ``.latest_run_full.json``, ``.temp_test_run_data.json`` and
``.latest_test_run.json`` (``{"testRunData": <test run>}``, or ``{"testRunLink": <url>}`` once the run was uploaded to
Confident AI; older releases wrote ``test_run_<ts>`` without ``.json``).

Format (repository confident-ai/deepeval: ``deepeval/test_run/test_run.py`` ``TestRun``, ``deepeval/test_run/api.py``
``LLMApiTestCase`` / ``ConversationalApiTestCase`` / ``TurnApi``, ``deepeval/tracing/api.py`` ``MetricData``;
written with ``model_dump(by_alias=True, exclude_none=True)``: camelCase keys, absent fields omitted):
``{testFile, testCases[], conversationalTestCases[], metricsScores[], identifier, hyperparameters{...}, testPassed,
testFailed, runDuration, evaluationCost, ...}``; a test case ``{name, input, actualOutput, expectedOutput, context,
retrievalContext, success, metricsData[], order, ...}`` (a conversational one has ``turns[{role, content, order}]``,
``scenario`` and ``expectedOutcome`` instead of input and outputs); a metric verdict ``{name, threshold, success,
score, reason, strictMode, evaluationModel, error, ...}``.

Mapping to roles (one row per test case and metric):

- ``model`` = the model under test as the user logged it in ``hyperparameters`` (key ``model``, ``model_name``,
  ``llm`` ...: DeepEval has no other field for it), else the run's ``identifier``, else the project's folder (the
  folder above ``.deepeval/`` or the results folder), else the run's time (``test_run_<YYYYMMDD_HHMMSS>``), else the
  run's id (a hash of its test cases) — never the default file name ``latest_test_run`` (a note says which). Each
  file is a whole run (``Imported.whole_run``): runs that name one model are warned about by name when their cases
  are pooled (:func:`evalcore.importers.combine.pooled_runs`), and runs of one model that score shared cases
  differently become runs named after their project and time (``Imported.label``), the oldest first. ``evaluationModel`` is the LLM *judge* of a metric, never the model under test.
- ``task`` = the metric's ``name`` (e.g. "Answer Relevancy", "Correctness [GEval]"): each metric measures something
  else, with its own threshold, so each is a task of its own (DeepEval's own report, ``metricsScores``, is per
  metric too).
- ``example_id`` = the test case's ``name`` (``test_case_<n>`` when the user set none); names are not unique under
  pytest parametrisation, so when a file repeats one, every id is ``"<name> #<order>"`` (a note says so).
- ``correct`` = the metric's ``success``: DeepEval's pass/fail, the score compared with the metric's threshold (or
  a 0/1 score in strict mode) — what DeepEval reports and counts as passes. ``score`` = the metric's ``score`` (the
  number the threshold is applied to, usually in [0, 1]), kept as a second label when it is not just 0/1, so that a
  view can use the judge's graded score instead of the pass at an arbitrary threshold.
- text: ``input`` = ``input`` (a conversation: its ``scenario``, else its first user turn), ``output`` =
  ``actualOutput`` (a conversation: its turns as "role: content" lines), ``target`` = ``expectedOutput`` (a
  conversation: ``expectedOutcome``), ``explanation`` = the metric's ``reason`` (the judge's reasoning).
- metrics that errored (``error`` set; DeepEval then writes no score and ``success: false``, which is no verdict)
  are left out and counted; a metric with an
  ``evaluationModel`` makes a note that its labels are an LLM judge's verdicts, not human labels.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import pandas as pd

from evalcore.errors import EvalDataError, listed
from evalcore.importers.base import Imported, LogFile, as_number, left_out_note, parse_json

TOOL = "DeepEval"
_WRAPPER = re.compile(rb'^\{\s*"(testRunData|testRunLink)"\s*:')
_CASES = re.compile(rb'"(testCases|conversationalTestCases)"\s*:\s*\[')
_CACHE = re.compile(rb'^\{\s*"test_cases_lookup_map"\s*:')
_MARKERS = (b'"metricsData"', b'"metricsScores"', b'"testPassed"', b'"testFailed"', b'"actualOutput"',
            b'"testRunData"', b'"testRunLink"')
_MODEL_KEYS = ("model", "model_name", "model name", "modelname", "model_id", "llm", "llm_model", "target_model")


def sniff(file: LogFile) -> bool:
    """A JSON object with DeepEval's ``testCases`` / ``conversationalTestCases`` lists (or opening with the
    ``testRunData`` / ``testRunLink`` of ``.latest_test_run.json``) and one of its own camelCase keys
    (``metricsData``, ``actualOutput``, ``testPassed`` ...); also DeepEval's own by-products beside its runs (its
    cache ``.deepeval-cache.json`` and the empty ``.test_run.lock``), which are left out with a note."""
    try:
        if _by_product(file):
            return True
        head = file.head(1 << 15)
        if not head.startswith(b"{") or not (_WRAPPER.match(head) or _CASES.search(head)):
            return False
        return any(marker in head for marker in _MARKERS)
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def _by_product(file: LogFile) -> str | None:
    """What a DeepEval file that holds no test run is ("its cache" ...), else None."""
    if file.base == ".test_run.lock" and not file.data.strip():
        return "a lock file (.test_run.lock)"
    if _CACHE.match(file.head(256)):
        return "its metric cache (.deepeval-cache.json), not a test run"
    return None


#: the files DeepEval writes for one run, most complete first (a run saved under several names is read once)
_PREFERRED = ("test_run_", ".latest_run_full", ".temp_test_run_data", ".latest_test_run")


def _rank(file: LogFile) -> int:
    return next((i for i, prefix in enumerate(_PREFERRED) if file.base.startswith(prefix)), len(_PREFERRED))


def convert(files: list[LogFile]) -> list[Imported]:
    """One log per test run; files holding only a link to Confident AI, DeepEval's cache and lock files, and second
    copies of one run (DeepEval writes each run to several files) are left out with a note (refused when nothing
    else is given)."""
    runs: list[tuple[LogFile, dict]] = []
    left_out: list[str] = []
    for file in sorted(files, key=_rank):
        what = _by_product(file)
        if what:
            left_out.append(f"'{file.name}' ({what})")
            continue
        doc = parse_json(file)
        if not isinstance(doc, dict):
            raise EvalDataError(f"{file.name}: a DeepEval test run is a JSON object; this file is not.")
        if "testRunData" in doc:
            doc = doc["testRunData"]
            if not isinstance(doc, dict):
                raise EvalDataError(f"{file.name}: the field 'testRunData' is not an object; this DeepEval file is "
                                    "damaged.")
        elif "testRunLink" in doc and "testCases" not in doc and "conversationalTestCases" not in doc:
            left_out.append(f"'{file.name}' (only a link to the test run on Confident AI, testRunLink)")
            continue
        same = next((f for f, d in runs if _same_run(d, doc)), None)
        if same is not None:
            left_out.append(f"'{file.name}' (the same test run as '{same.name}': DeepEval saves each run under "
                            "several names)")
            continue
        runs.append((file, doc))
    if not runs:
        raise EvalDataError(f"{listed([f.name for f in files], 3)}: no DeepEval test run results here "
                            f"({listed(left_out, 3)}). Upload the run's test_run_<time>.json (written when "
                            "DEEPEVAL_RESULTS_FOLDER or DisplayConfig(results_folder=...) is set) or "
                            ".deepeval/.latest_run_full.json.")
    out = [_convert_one(file, doc) for file, doc in runs]
    if left_out:
        out[0].notes.append(f"{len(left_out):,} DeepEval file(s) left out: {listed(left_out, 5)}.")
    return out


def _same_run(a: dict, b: dict) -> bool:
    """Whether two test runs hold the same test cases and verdicts (one run saved twice)."""
    keys = ("testCases", "conversationalTestCases", "hyperparameters", "identifier")
    return all(a.get(k) == b.get(k) for k in keys)


#: folders that hold DeepEval's files, not a project: the project is the folder above them
_PLACES = frozenset({".deepeval", "results", "result", "outputs", "output", "runs", "run", "data", "tmp",
                     "deepeval_results", "test_results", "evals", "eval"})
_TIME = re.compile(r"^test_run_(\d{4})(\d{2})(\d{2})_(\d{2})(\d{2})(\d{2})")


def _project(file: LogFile) -> str | None:
    """The folder a DeepEval file belongs to: the nearest folder above it that is not ``.deepeval`` or a results
    folder ('recipes_bot' for 'recipes_bot/.deepeval/.latest_test_run.json'), or None."""
    for part in reversed([p for p in file.folder.split("/") if p and p not in (".", "..")]):
        if part.lower() not in _PLACES:
            return part
    return None


def _time(file: LogFile) -> str | None:
    """When the run ran, from DeepEval's file name test_run_<YYYYMMDD_HHMMSS> ('2026-03-10 09:15:00'), or None."""
    found = _TIME.match(file.base)
    return (f"{found[1]}-{found[2]}-{found[3]} {found[4]}:{found[5]}:{found[6]}") if found else None


def _run_id(doc: dict) -> str:
    """The test run's own id: a short hash of its test cases and verdicts (DeepEval writes no run id)."""
    cases = json.dumps([doc.get("testCases"), doc.get("conversationalTestCases")], sort_keys=True, default=str)
    return hashlib.sha1(cases.encode()).hexdigest()[:8]


def _identity(doc: dict, file: LogFile) -> str:
    """What names the run when it becomes a run of its own: its project folder, else its time, else its id."""
    project, when = _project(file), _time(file)
    if project and when:
        return f"{project} {when}"
    return project or (f"test run {when}" if when else f"test run {_run_id(doc)}")


def _model(doc: dict, file: LogFile, notes: list[str]) -> tuple[str, bool]:
    """The model under test and whether the log names it (hyperparameters or identifier); never the default file
    name: else the project's folder, else the run's time (test_run_<time>), else its id."""
    hyper = doc.get("hyperparameters")
    if isinstance(hyper, dict):
        for key, value in hyper.items():
            if str(key).strip().lower().replace("-", "_") in _MODEL_KEYS and isinstance(value, (str, int, float)) \
                    and str(value).strip():
                notes.append(f"{file.name}: the model is hyperparameters['{key}'] ('{value}').")
                return str(value), True
    identifier = doc.get("identifier")
    if isinstance(identifier, str) and identifier.strip():
        notes.append(f"{file.name}: no model in 'hyperparameters'; the model is named after the run's identifier "
                     f"('{identifier}'). Log it with evaluate(..., hyperparameters={{'model': ...}}) to name it.")
        return identifier, True
    project, when = _project(file), _time(file)
    if project:
        name, where = project, f"its folder '{project}'"
    elif when:
        name, where = f"test run {when}", f"when the run ran ({when}, from its file name)"
    else:
        name = f"test run {_run_id(doc)}"
        where = "the run's id (a hash of its test cases: DeepEval writes no run id, and the file's name is the default)"
    notes.append(f"{file.name}: no model in 'hyperparameters' (DeepEval has no other field for the model under "
                 f"test); the model is named after {where}: '{name}'. Log it with "
                 "evaluate(..., hyperparameters={'model': ...}) in the test run.")
    return name, False


def _list(value: Any) -> list:
    """A list field, or [] where the field is absent or not a list."""
    return value if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        parts = [t for t in (_text(v) for v in value) if t is not None]
        return "\n".join(parts) if parts else None
    return value if isinstance(value, str) else str(value)


def _conversation(case: dict) -> tuple[str | None, str | None]:
    """(input, output) of a conversational test case: its scenario (else first user turn) and its transcript."""
    turns = [t for t in _list(case.get("turns")) if isinstance(t, dict)]
    turns.sort(key=lambda t: as_number(t.get("order"), booleans=False) if not math.isnan(
        as_number(t.get("order"), booleans=False)) else math.inf)
    first_user = next((t.get("content") for t in turns if str(t.get("role", "")).lower() == "user"), None)
    transcript = "\n".join(f"{t.get('role', '?')}: {_text(t.get('content')) or ''}" for t in turns) or None
    return _text(case.get("scenario")) or _text(first_user), transcript


def _convert_one(file: LogFile, doc: dict) -> Imported:
    notes: list[str] = []
    for key in ("testCases", "conversationalTestCases"):
        if not isinstance(doc.get(key) or [], list):
            raise EvalDataError(f"{file.name}: the field '{key}' is not a list; this DeepEval test run is damaged.")
    cases = [("single", c) for c in doc.get("testCases") or []] + \
            [("conversation", c) for c in doc.get("conversationalTestCases") or []]
    if not cases:
        raise EvalDataError(f"{file.name}: the DeepEval test run holds no test case ('testCases' and "
                            "'conversationalTestCases' are empty or missing).")
    model, _ = _model(doc, file, notes)
    names = []
    for number, (_, case) in enumerate(cases, 1):
        if not isinstance(case, dict):
            raise EvalDataError(f"{file.name}: test case {number} is not a JSON object.")
        names.append(str(case.get("name") if case.get("name") is not None else f"test_case_{number - 1}"))
    unique = len(set(names)) == len(names)
    if not unique:
        notes.append(f"{file.name}: test case names repeat (e.g. pytest parametrisation); each example id is "
                     "'<name> #<order>'.")
    records, errored, no_metrics, total = [], [], 0, 0
    for position, ((shape, case), name) in enumerate(zip(cases, names)):
        order = case.get("order")
        example_id = name if unique else f"{name} #{order if order is not None else position}"
        if shape == "single":
            text = {"input": _text(case.get("input")), "target": _text(case.get("expectedOutput")),
                    "output": _text(case.get("actualOutput"))}
        else:
            prompt, transcript = _conversation(case)
            text = {"input": prompt, "target": _text(case.get("expectedOutcome")), "output": transcript}
        metrics = [m for m in _list(case.get("metricsData")) if isinstance(m, dict)]
        if not metrics:
            no_metrics += 1
            continue
        for metric in metrics:
            total += 1
            task = str(metric.get("name") or "metric")
            score = as_number(metric.get("score"), booleans=False)
            success = metric.get("success")
            passed = float(success) if isinstance(success, bool) else math.nan
            if metric.get("error") or (math.isnan(score) and math.isnan(passed)):
                errored.append(task)  # DeepEval writes success false beside the error: not a verdict
                continue
            records.append({"model": model, "task": task, "example_id": example_id, "correct": passed,
                            "score": score, **text, "explanation": _text(metric.get("reason")),
                            "_threshold": as_number(metric.get("threshold"), booleans=False),
                            "_judge": _text(metric.get("evaluationModel")),
                            "_strict": metric.get("strictMode") is True})
    if no_metrics:
        notes.append(left_out_note(no_metrics, len(cases), f"test cases of {file.name}", "no metric verdict "
                                   "(metricsData is empty)"))
    if errored:
        counts = pd.Series(errored).value_counts()
        errors = listed([f"{t} ({n})" for t, n in counts.items()], 5)
        notes.append(left_out_note(len(errored), total, f"metric verdicts of {file.name}",
                                   f"the metric errored (its error field is set; no score): {errors}"))
    if not records:
        raise EvalDataError(f"{file.name}: no metric of this DeepEval test run has a score or a pass/fail "
                            f"({len(errored):,} errored, {no_metrics:,} test cases without metrics).")
    frame = pd.DataFrame.from_records(records)
    frame = _notes_per_task(frame, file, notes)
    scores = frame["score"].dropna()
    if scores.empty or scores.isin([0.0, 1.0]).all():
        frame = frame.drop(columns="score")
    else:
        notes.append(f"{file.name}: each metric's score is kept as 'score' next to its pass/fail ('correct').")
    if frame["correct"].isna().all():
        frame = frame.drop(columns="correct")
    order = ["model", "task", "example_id", *[c for c in ("correct", "score") if c in frame],
             "input", "target", "output", "explanation"]
    return Imported(frame[order], "log", TOOL, (file.name,), notes, whole_run=True, label=_identity(doc, file),
                    when=(_time(file) or "").replace(" ", "T"))


def _notes_per_task(frame: pd.DataFrame, file: LogFile, notes: list[str]) -> pd.DataFrame:
    """What 'correct' means for each metric (its thresholds), and which metrics an LLM judged; the frame without
    the columns that said so."""
    thresholds, judged = [], []
    for task, rows in frame.groupby("task", sort=False):
        values = sorted(set(rows["_threshold"].dropna()))
        strict = " in strict mode" if rows["_strict"].all() else ""
        thresholds.append(f"'{task}' at threshold {listed([f'{v:g}' for v in values], 3) or '?'}{strict}")
        judges = sorted(set(rows["_judge"].dropna()))
        if judges:
            judged.append(f"'{task}' ({listed(judges, 3)})")
    notes.append(f"{file.name}: 'correct' is DeepEval's pass/fail (success: the score against the metric's "
                 f"threshold) for {listed(thresholds, 5)}.")
    if judged:
        notes.append(f"{file.name}: the labels of {listed(judged, 5)} are verdicts of an LLM judge "
                     "(metricsData.evaluationModel), not human labels: they carry the judge's errors (and its "
                     "leniency when it judges its own outputs).")
    return frame.drop(columns=["_threshold", "_judge", "_strict"])
