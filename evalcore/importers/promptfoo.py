"""promptfoo: the results file of ``promptfoo eval -o results.json`` (or ``.jsonl``): a row per test x prompt x
provider.

Format (promptfoo's ``src/types/index.ts``: ``EvaluateResult``, ``EvaluateSummaryV2/V3``, ``GradingResult``,
``ResultFailureReason``; docs https://www.promptfoo.dev/docs/configuration/outputs):

- current: ``{evalId, results: {version: 3, timestamp, prompts, results: [...], stats}, config, shareableUrl,
  metadata}``; version 2 has ``results.table`` instead of ``results.prompts``; early versions wrote the summary
  ``{version, results: [...], table, stats}`` at the top level. A summary holding only ``table`` (``head.prompts``
  columns, ``body`` rows of ``outputs``) is read from the table. ``-o results.jsonl`` writes one result per line.
- each result: ``provider`` (``{id, label}``, or a string in old files), ``testIdx`` (the test row; a repeated test
  gets a new index), ``promptIdx`` (the column: one per prompt x provider, so it is not the prompt), ``promptId`` /
  ``prompt.label``, ``vars``, ``testCase``, ``success``, ``score``, ``failureReason`` (0 none, 1 an assertion
  failed, 2 an error), ``error`` (also set to the failing assertion's reason when failureReason is 1),
  ``gradingResult.componentResults[]`` (one per assertion: ``pass``, ``score``, ``assertion.type``).

Mapping to roles:

- ``model`` = ``provider.label`` when set, else ``provider.id``: promptfoo itself keys providers by
  ``label || id``, and a label is how two configurations of one model id are told apart.
- ``task`` = the prompt's label when the file holds several prompts (``"prompt <n>"`` when labels do not tell them
  apart), else the eval's ``description`` (or its ``evalId``).
- ``example_id`` = ``testIdx`` (else the test's description or its vars), written ``"<task>/<id>"`` when there are
  several prompts (evalcore needs an example id unique per model). Results of one test case that occur
  several times for a model and prompt (``--repeat``: same test case, new ``testIdx``) share the first one's id and
  are numbered in ``repeat``.
- ``correct`` = ``success`` (promptfoo's pass/fail of all the test's assertions, including model-graded ones and
  cost/latency thresholds); ``score`` = promptfoo's aggregate ``score`` when it is not just 0/1.
- ``proxy`` = the score (in [0, 1]) of the model-graded assertions (``llm-rubric``, ``model-graded-closedqa``,
  ``factuality``, ``g-eval``, RAG and red-team graders ...; their mean when several) on rows that also have an
  assertion not graded by a model (other than cost/latency), so that an AI judge's verdict can be set against it.
- an eval record without results (``{_resultsLoaded: false, id, config, results: [], prompts: [{provider, metrics:
  {testPassCount, testFailCount, ...}}]}``, promptfoo ``examples/config-node-package/output.json``, written by the
  Node package's ``evaluate()``) is refused, saying how to write the results.
- results that errored (``failureReason`` 2; in files without it, a provider error or no grading) are left out
  and counted.

Text roles: ``input`` = the prompt as sent (``prompt.raw``; a chat prompt, a JSON list of messages, is written as
``"role: content"`` lines), else the test's ``vars`` as ``"name: value"`` lines; ``output`` = ``response.output``
(JSON text when it is not a string; the ``text`` of a table-only summary's output); ``target`` = the values of the
test's assertions that state an expected answer (``testCase.assert[].value`` of ``equals``, ``contains``,
``similar``, ``factuality`` ...: not negated ``not-`` assertions, code, cost or latency checks, nor rubrics such
as ``llm-rubric``, which state criteria rather than an answer), several joined by newlines, else a var named
``expected`` / ``answer`` / ``reference`` / ``ideal`` / ``target`` / ``ground_truth``; ``explanation`` =
``gradingResult.reason``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np
import pandas as pd

from evalcore.data import bounded_json
from evalcore.errors import EvalDataError
from evalcore.importers.base import (
    Imported, LogFile, as_number, field_of, json_lines, left_out_note, parse_json, refuse_long_lines_of,
)
from evalcore.importers.chat_text import TEXT_ROLES, joined, messages_text, text_of, with_text_columns

TOOL = "promptfoo"

#: what promptfoo writes when an assertion's own code fails (javascript / python assertions)
_CRASH = re.compile(r"threw error|execution failed|Error running Python|Python code execution", re.IGNORECASE)
#: assertion types graded by a model (promptfoo's "model-graded metrics"); ``not-`` variants count too
MODEL_GRADED = frozenset({
    "llm-rubric", "model-graded-closedqa", "model-graded-factuality", "factuality", "g-eval", "answer-relevance",
    "context-faithfulness", "context-recall", "context-relevance", "conversation-relevance", "search-rubric",
    "trajectory:goal-success", "pi",
})
_MODEL_GRADED_PREFIXES = ("promptfoo:redteam:",)
#: assertions about the call rather than the answer, and comparisons across outputs: not a deterministic check
_NOT_ANSWER_CHECKS = frozenset({"cost", "latency", "select-best", "max-score", "assert-set"})
_ERROR = 2
#: assertions whose value is not an expected answer: code, schemas, call checks, comparisons across outputs, and
#: rubrics (criteria a judge applies, not a reference answer)
_NOT_TARGETS = _NOT_ANSWER_CHECKS | {
    "javascript", "python", "ruby", "webhook", "regex", "is-json", "is-xml", "is-sql", "contains-json",
    "contains-xml", "contains-sql", "is-valid-openai-tools-call", "is-valid-openai-function-call", "perplexity",
    "perplexity-score", "classifier", "moderation", "guardrails", "is-refusal", "llm-rubric", "g-eval",
    "model-graded-closedqa", "search-rubric", "trajectory:goal-success", "pi",
}
_TARGET_VARS = ("expected", "answer", "reference", "ideal", "target", "ground_truth", "expected_output")

_MARKERS = (b'"evalId"', b'"promptIdx"', b'"testIdx"', b'"gradingResult"', b'"failureReason"',
            b'"promptfooVersion"', b'"shareableUrl"', b'"testPassCount"')
_OLD_LAYOUTS = (
    re.compile(rb'^\{\s*"version"\s*:\s*\d+\s*,\s*"results"\s*:\s*\[\s*\{\s*"provider"\s*:'),
    re.compile(rb'^\{\s*"results"\s*:\s*\{\s*"version"\s*:\s*\d+\s*,\s*"(timestamp|results)"\s*:'),
    re.compile(rb'^\{\s*"results"\s*:\s*\{\s*"results"\s*:\s*\['),  # results.results first (also empty)
)


def sniff(file: LogFile) -> bool:
    """A promptfoo results file: a JSON object with ``results`` and promptfoo's own keys near the start."""
    try:
        head = file.head(1 << 15)
        if not head.startswith(b"{"):
            return False
        if any(layout.match(head) for layout in _OLD_LAYOUTS):
            return True
        if b'"results"' in head and any(marker in head for marker in _MARKERS):
            return True
        return _looks_like_result_lines(head)
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def _looks_like_result_lines(head: bytes) -> bool:
    """A ``.jsonl`` results file: one result per line (testIdx, promptIdx, provider)."""
    return all(key in head for key in (b'"testIdx"', b'"promptIdx"', b'"provider"'))


def _is_result(value: Any) -> bool:
    return isinstance(value, dict) and {"testIdx", "promptIdx", "provider"} <= set(value)


def convert(files: list[LogFile]) -> list[Imported]:
    return [_convert_one(file) for file in files]


# ----------------------------------------------------------------------------------------------------------------
# the results of one file


def _convert_one(file: LogFile) -> Imported:
    results, summary, doc = _results(file)
    if not results:
        if doc.get("_resultsLoaded") is False or (summary is doc and any(
                isinstance(p, dict) and isinstance(p.get("metrics"), dict) for p in doc.get("prompts") or [])):
            raise EvalDataError(
                f"{file.name}: this is promptfoo's record of an eval ({doc.get('id') or 'no id'}) without its results "
                "('results' is empty; only each prompt's totals, e.g. testPassCount, are kept), as the Node "
                "package's evaluate() writes it: evalcore needs each test's result. Write them with promptfoo "
                "eval -o results.json, or promptfoo export eval <eval id> --output results.json.")
        raise EvalDataError(f"{file.name}: the promptfoo results file holds no test results.")
    prompts = summary.get("prompts") if isinstance(summary.get("prompts"), list) else []
    records = [_record(r, i, file, prompts) for i, r in enumerate(results)]
    frame = pd.DataFrame.from_records(records)
    notes: list[str] = []
    errors = frame.pop("_error").to_numpy(bool)
    if errors.any():
        notes.append(left_out_note(int(errors.sum()), len(frame), "promptfoo results", "the test errored (provider "
                                   "or runtime error, promptfoo's failureReason 2) and has no pass/fail"))
        frame = frame[~errors].reset_index(drop=True)
    if frame.empty:
        raise EvalDataError(f"{file.name}: every promptfoo result errored; there is no pass/fail to read.")
    _tasks(frame, doc, notes)
    frame = _examples(frame, notes)
    frame = _values(frame, notes, _default_grader(doc))
    columns = [c for c in ("model", "task", "example_id", "repeat", "correct", "score", "proxy") if c in frame]
    columns += [c for c in TEXT_ROLES if c in frame]
    return Imported(with_text_columns(frame[columns].copy()), kind="log", tool=TOOL, files=(file.name,), notes=notes)


def _results(file: LogFile) -> tuple[list, dict, dict]:
    """The result rows, the summary holding them (for its ``prompts``), and the document (for ``config``)."""
    first, _, rest = file.data.lstrip(b"\xef\xbb\xbf").lstrip().partition(b"\n")
    if rest.strip() and first.rstrip().endswith(b"}"):  # JSON Lines, one result a line
        refuse_long_lines_of(file)
        try:
            one = bounded_json.loads_alone(first, file.name, file.budget.limits)
        except EvalDataError:
            raise
        except ValueError:
            one = None
        if _is_result(one):
            return [value for _, value in json_lines(file)], {}, {}
    doc = parse_json(file)
    if _is_result(doc):
        return [doc], {}, {}
    if not isinstance(doc, dict):
        raise EvalDataError(f"{file.name}: expected a JSON object (promptfoo's results file), found "
                            f"{type(doc).__name__}.")
    results = field_of(doc, "results", file)
    summary = doc if isinstance(results, list) else results
    if not isinstance(summary, dict):
        raise EvalDataError(f"{file.name}: the field 'results' is neither a list of results nor promptfoo's summary.")
    rows = summary.get("results")
    if isinstance(rows, list) and rows:
        return rows, summary, doc
    if isinstance(summary.get("table"), dict):
        return _table_results(summary["table"], file), summary, doc
    return field_of(summary, "results", file) or [], summary, doc


def _table_results(table: dict, file: LogFile) -> list[dict]:
    """Results rebuilt from a summary's ``table`` (``head.prompts`` are the columns, ``body`` the tests)."""
    columns = field_of(table, "head.prompts", file, "results.table")
    rows = []
    for i, row in enumerate(field_of(table, "body", file, "results.table")):
        outputs = field_of(row, "outputs", file, f"table row {i}")
        test = row.get("test") if isinstance(row.get("test"), dict) else {}
        for j, out in enumerate(outputs):
            if not isinstance(out, dict):
                continue
            column = columns[j] if j < len(columns) and isinstance(columns[j], dict) else {}
            rows.append({
                "provider": out.get("provider") or column.get("provider"),
                "prompt": {"label": column.get("label") or column.get("display") or column.get("raw")},
                "promptId": column.get("id"), "testIdx": row.get("testIdx", i), "promptIdx": j,
                "description": row.get("description"), "testCase": out.get("testCase") or test,
                "vars": test.get("vars"), "success": out.get("pass"), "score": out.get("score"),
                "error": out.get("error"), "failureReason": out.get("failureReason"),
                "gradingResult": out.get("gradingResult"),
                "response": (out.get("response") if isinstance(out.get("response"), dict)
                             else {"output": out.get("text")}),
            })
    return rows


def _record(result: Any, i: int, file: LogFile, prompts: list) -> dict:
    where = f"result {i}"
    if not isinstance(result, dict):
        raise EvalDataError(f"{file.name} ({where}): a result is not a JSON object.")
    grading = result.get("gradingResult") if isinstance(result.get("gradingResult"), dict) else None
    error = _errored(result, grading)
    success = result.get("success", grading.get("pass") if grading else None)
    if success is None and not error:
        field_of(result, "success", file, where)
    prompt = result.get("prompt") if isinstance(result.get("prompt"), dict) else {}
    label = prompt.get("label") or prompt.get("display") or prompt.get("raw")
    test_case = result.get("testCase") if isinstance(result.get("testCase"), dict) else None
    description = result.get("description") or (test_case or {}).get("description")
    judge, checked, graders = _components(grading)
    crashed = _crashed_assertion(grading)
    return {
        "model": _model(result, file, where, prompts),
        "_prompt": result.get("promptId") or label, "_label": label,
        "_test": result.get("testIdx"), "_description": description,
        "_case": _case_key(test_case, result.get("vars"), description, result.get("testIdx"), i),
        "_vars": result.get("vars"), "_test_case": test_case,
        "correct": np.nan if success is None else float(bool(success)),
        "score": as_number(result.get("score", grading.get("score") if grading else None), booleans=False),
        "_judge": judge, "_checked": checked, "_graders": graders, "_crashed": crashed, "_error": error,
        **_texts(result, prompt, test_case, grading, file),
    }


def _texts(result: dict, prompt: dict, test_case: dict | None, grading: dict | None,
           file: LogFile) -> dict[str, str | None]:
    """The text roles of a result (see the module's docstring); a chat prompt written as JSON text is parsed
    within the limits of ``file``'s load (and dropped once read as text)."""
    variables = result.get("vars") if isinstance(result.get("vars"), dict) else (test_case or {}).get("vars")
    variables = variables if isinstance(variables, dict) else {}
    raw = prompt.get("raw")
    prompt_text = None
    if isinstance(raw, str) and raw.lstrip().startswith("["):
        try:
            messages = bounded_json.loads_alone(raw, file.name, file.budget.limits)
        except EvalDataError:
            raise
        except ValueError:
            messages = None
        if isinstance(messages, list) and messages and all(isinstance(m, dict) and "role" in m for m in messages):
            prompt_text = messages_text(messages)
    if prompt_text is None:
        prompt_text = text_of(raw) if isinstance(raw, str) else None
    if prompt_text is None and variables:
        prompt_text = "\n".join(f"{k}: {text_of(v) or ''}" for k, v in variables.items())
    response = result.get("response") if isinstance(result.get("response"), dict) else {}
    targets: list[str] = []
    for assertion in (test_case or {}).get("assert") or []:
        if not isinstance(assertion, dict):
            continue
        kind = str(assertion.get("type") or "")
        value = assertion.get("value")
        if kind.startswith("not-") or kind in _NOT_TARGETS or not isinstance(value, (str, list)):
            continue
        text = joined(value) if isinstance(value, list) else value
        if text and text not in targets:
            targets.append(text)
    target = "\n".join(targets) or next((joined(variables[k]) for k in _TARGET_VARS if variables.get(k)), None)
    reason = grading.get("reason") if grading else None
    return {"input": prompt_text, "output": text_of(response.get("output")), "target": target,
            "explanation": reason if isinstance(reason, str) and reason else None}


def _errored(result: dict, grading: dict | None) -> bool:
    reason = result.get("failureReason")
    if isinstance(reason, (int, float)) and not isinstance(reason, bool):
        return reason == _ERROR
    response = result.get("response")
    if isinstance(response, dict) and response.get("error"):
        return True
    return bool(result.get("error")) and grading is None


def _model(result: dict, file: LogFile, where: str, prompts: list) -> str:
    provider = result.get("provider")
    if isinstance(provider, dict):
        name = provider.get("label") or provider.get("id")
        if name:
            return str(name)
    elif isinstance(provider, str) and provider:
        return provider
    column = result.get("promptIdx")
    if isinstance(column, int) and 0 <= column < len(prompts) and isinstance(prompts[column], dict):
        if prompts[column].get("provider"):
            return str(prompts[column]["provider"])
    field_of(result, "provider.id", file, where)
    raise EvalDataError(f"{file.name} ({where}): the field 'provider.id' is empty.")


def _case_key(test_case: dict | None, variables: Any, description: Any, test: Any, i: int) -> str:
    """A cheap key of the test case (its vars and description); repeats share it. Tests that share it are told
    apart by their whole test case later (:func:`_refine_cases`)."""
    if test_case is not None:
        variables = test_case.get("vars", variables)
        description = test_case.get("description", description)
    if variables is None and description is None:
        return f"#{test if test is not None else i}"
    return repr((variables, description))


def _refine_cases(frame: pd.DataFrame) -> pd.Series:
    """The test-case key, made exact where several tests share vars and description (promptfoo groups repeats by
    the whole serialised test case)."""
    case = frame["_case"]
    shared = frame.duplicated(["model", "task", "_case"], keep=False).to_numpy()
    if not shared.any():
        return case
    whole = frame.loc[shared, "_test_case"].map(lambda t: json.dumps(t, sort_keys=True, default=str))
    return case.where(~shared, case[shared] + "|" + whole)


def _crashed_assertion(grading: dict | None) -> str | None:
    """The first line of the reason of a failed assertion whose own code raised an error (promptfoo: "Custom function
    threw error: ...", "Python code execution failed ..."), else None: the answer was not judged by it."""
    pending = list(grading.get("componentResults") or []) if isinstance(grading, dict) else []
    while pending:
        part = pending.pop(0)
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("componentResults"), list):
            pending.extend(part["componentResults"])
        reason = part.get("reason")
        if part.get("pass") is False and isinstance(reason, str) and _CRASH.search(reason):
            return reason.strip().splitlines()[0][:160]
    return None


def _components(grading: dict | None) -> tuple[float, bool, tuple[str, ...]]:
    """The mean score of the model-graded assertions (NaN if none or outside [0, 1]), whether an assertion not
    graded by a model checked the answer, and the graders the model-graded assertions name (``assertion.provider``:
    an id, or ``{id}``; absent when promptfoo's default grading provider graded)."""
    judged: list[float] = []
    graders: set[str] = set()
    checked = False
    pending = list(grading.get("componentResults") or []) if grading else []
    while pending:
        part = pending.pop()
        if not isinstance(part, dict):
            continue
        kind = str((part.get("assertion") or {}).get("type") or "")
        if isinstance(part.get("componentResults"), list) and (kind in ("", "assert-set")):
            pending.extend(part["componentResults"])
            continue
        base = kind[4:] if kind.startswith("not-") else kind
        if base in MODEL_GRADED or base.startswith(_MODEL_GRADED_PREFIXES):
            judged.append(as_number(part.get("score"), booleans=False))
            provider = (part.get("assertion") or {}).get("provider")
            provider = provider.get("label") or provider.get("id") if isinstance(provider, dict) else provider
            if isinstance(provider, str) and provider:
                graders.add(provider)
        elif base and base not in _NOT_ANSWER_CHECKS:
            checked = True
    if not judged:
        return math.nan, checked, ()
    value = sum(judged) / len(judged)
    return (value if 0.0 <= value <= 1.0 else math.inf), checked, tuple(sorted(graders))


# ----------------------------------------------------------------------------------------------------------------
# roles from the records


def _tasks(frame: pd.DataFrame, doc: dict, notes: list[str]) -> None:
    keys = pd.unique(frame["_prompt"].astype(str))
    if len(keys) > 1:
        labels = frame.groupby(frame["_prompt"].astype(str), sort=False)["_label"].first()
        labels = labels.reindex(keys)
        if labels.notna().all() and labels.astype(str).nunique() == len(keys):
            names = dict(zip(keys, labels.astype(str)))
            how = "the prompt's label"
        else:
            names = {key: f"prompt {n}" for n, key in enumerate(keys, 1)}
            how = "'prompt <n>' in the order the prompts first appear (their labels do not tell them apart)"
        frame["task"] = frame["_prompt"].astype(str).map(names)
        notes.append(f"The file holds {len(keys)} prompts: each is a task, named by {how}.")
        return
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    name = config.get("description") or doc.get("evalId") or "promptfoo eval"
    frame["task"] = str(name)


def _examples(frame: pd.DataFrame, notes: list[str]) -> pd.DataFrame:
    has_index = frame["_test"].notna()
    base = frame["_test"].map(lambda v: str(int(v)) if isinstance(v, (int, float)) else str(v))
    if not has_index.all():
        fallback = frame["_description"].where(
            frame["_description"].notna(), frame["_vars"].map(lambda v: json.dumps(v, sort_keys=True, default=str)))
        base = base.where(has_index, fallback.astype(str))
        notes.append(f"{int((~has_index).sum()):,} results have no testIdx (an older promptfoo): their example is "
                     "named by the test's description or its vars.")
    if frame["task"].nunique() > 1:
        base = frame["task"] + "/" + base
    frame = frame.assign(example_id=base.astype(str),
                         _order=np.where(has_index, pd.to_numeric(frame["_test"], errors="coerce"),
                                         np.arange(len(frame), dtype=float)))
    frame["_case"] = _refine_cases(frame)
    keys = ["model", "task", "_case"]
    ordered = frame.sort_values([*keys, "_order"], kind="stable")
    repeat = ordered.groupby(keys, sort=False).cumcount()
    if not (repeat > 0).any():
        return frame
    first = ordered.groupby(keys, sort=False)["example_id"].transform("first")
    n_tests = int(ordered.loc[repeat > 0, keys].drop_duplicates().shape[0])
    notes.append(f"{n_tests:,} test cases were run several times for one model and prompt (promptfoo's repeat, "
                 "or an identical test listed twice): each run is a repeat of the first run's example.")
    return frame.assign(example_id=first.sort_index(), repeat=repeat.sort_index().astype(int))


def _default_grader(doc: Any) -> str | None:
    """The grading provider the configuration sets for every model-graded assertion that names none
    (``config.defaultTest.options.provider``: an id, ``{id, label}``, or ``{text: ...}`` by modality)."""
    options = ((doc.get("config") or {}).get("defaultTest") or {}) if isinstance(doc, dict) else {}
    provider = options.get("options", {}).get("provider") if isinstance(options.get("options"), dict) else None
    if isinstance(provider, dict):
        provider = provider.get("label") or provider.get("id") or provider.get("text")
        provider = provider.get("id") if isinstance(provider, dict) else provider
    return provider if isinstance(provider, str) and provider else None


def _values(frame: pd.DataFrame, notes: list[str], default_grader: str | None = None) -> pd.DataFrame:
    notes.append("correct = promptfoo's pass/fail of each test (success), which combines all of the test's "
                 "assertions.")
    crashed = frame["_crashed"].notna() & (frame["correct"] == 0)
    if crashed.any():
        failed = int((frame["correct"] == 0).sum())
        notes.append(f"{int(crashed.sum()):,} of the {failed:,} failed results failed an assertion whose own code "
                     f"raised an error (e.g. {frame.loc[crashed, '_crashed'].iloc[0]!r}): promptfoo counts them as "
                     "failures, and so does evalcore, although that assertion did not judge the answer. Fix the "
                     "assertion and re-run to grade them.")
    score = frame["score"]
    if not (score.isna() | score.isin((0.0, 1.0))).all():
        notes.append("score = promptfoo's aggregate score of the test's assertions (their weighted mean).")
    else:
        frame = frame.drop(columns="score")
    judge = frame["_judge"]
    judged = judge.notna()
    if judged.any():
        unnamed = judged & (frame["_graders"].map(len) == 0)
        if default_grader:
            frame.loc[unnamed, "_graders"] = pd.Series([(default_grader,)] * int(unnamed.sum()),
                                                       index=frame.index[unnamed], dtype=object)
            unnamed = unnamed & False
        graders = sorted({g for named in frame.loc[judged, "_graders"] for g in named})
        unnamed = int(unnamed.sum())
        if graders:
            own = sorted(set(graders) & set(frame["model"].astype(str)))
            grades = "grades its" if len(own) == 1 else "grade their"
            notes.append(f"The model-graded assertions name their grader (the AI judge): {', '.join(graders)}"
                         + (f"; {unnamed:,} results were graded by promptfoo's default grader, which the file does "
                            "not name" if unnamed else "")
                         + (f". {', '.join(own)} {grades} own outputs (a judge tends to favour them)." if own else "."))
        else:
            notes.append("The model-graded assertions do not name their grader: promptfoo's default grading provider "
                         "(set in its configuration or environment, not in this file) judged them.")
        only_judge = int((judged & ~frame["_checked"]).sum())
        if only_judge:
            notes.append(f"{only_judge:,} result{' is' if only_judge == 1 else 's are'} graded only by model-graded "
                         "assertions (besides cost or latency): their pass/fail rests on an AI judge's verdict.")
        outside = judged & np.isinf(judge)
        proxy = judge.where(frame["_checked"] & ~outside)
        if outside.any():
            notes.append(f"{int(outside.sum()):,} results have a model-graded score outside [0, 1]: no proxy for "
                         "them.")
        if proxy.notna().any():
            frame = frame.assign(proxy=proxy)
            notes.append(f"proxy = the model-graded assertions' score (an AI judge; their mean when several) on the "
                         f"{int(proxy.notna().sum()):,} results that also have an assertion not graded by a model.")
    return frame
