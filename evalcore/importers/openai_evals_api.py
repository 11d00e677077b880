"""OpenAI Evals API output items: the per-row results of a hosted eval run (``client.evals.runs.output_items.list``).

Format (openai/openai-python ``src/openai/types/evals/runs/output_item_retrieve_response.py`` and
``output_item_list_response.py``, generated from OpenAI's API spec; API reference
https://developers.openai.com/api/reference/python/resources/evals/subresources/runs/subresources/output_items):
an item is ``{"object": "eval.run.output_item", id, created_at, eval_id, run_id, status, datasource_item_id,
datasource_item: {...the user's data row...}, results: [{name, type, passed, score, sample, ...}], sample: {input:
[{role, content}], output: [{role, content}], model, finish_reason, usage, error: {code, message}, ...}}``. A file
holds items one per line (JSON Lines, e.g. ``model_dump_json()`` of each), a JSON list of items, or the list
endpoint's page ``{"object": "list", "data": [...], "has_more"}`` (several pages: one per line). A run object
``{"object": "eval.run", id, eval_id, model, name, result_counts, ...}`` (``src/openai/types/evals/
run_retrieve_response.py``) given with them, in the same file or another, names the model of its items when they
do not.

Mapping to roles:

- ``model`` = ``sample.model`` (else the run object's ``model``; else the run id, with a note); ``task`` =
  ``eval_id`` (the eval the items belong to; a run's ``name`` is not used: each run of a model has its own);
  ``example_id`` = ``datasource_item_id`` (the row of the data source); ``repeat`` = the run's number among the
  runs of the same model on the same eval (1 when each model was run once).
- the label from ``results[]``, one per grader (testing criterion). A pass/fail grader (``type``
  ``string_check`` / ``string-check-grader``, ``label_model``; Graders API
  https://developers.openai.com/api/reference/resources/graders) gives ``correct`` = ``passed`` (Azure's ``label``
  "pass"/"fail" when ``passed`` is missing); a graded one (``text_similarity``, ``score_model``, ``python``,
  ``multi``, or any other type) gives ``score`` = ``score`` (``correct`` = ``passed`` when it wrote no score, as
  Azure's evaluators may). A result without ``type`` (older dumps) is read from
  its values: ``correct`` when each ``score`` is 0 or 1 and agrees with ``passed``. With several graders, each
  pass/fail: ``correct`` = all passed (as the run counts an item as passed), each grader also kept as
  ``score_<name>``; otherwise the first grader gives the label and the others are ``score_<name>`` columns. A
  model grader (``label_model``, ``score_model``) is an LLM judge: a note says so.
- items whose ``sample.error.code`` is set (the model call failed) or without grader results are left out and
  counted.
- text roles: ``input`` = ``sample.input`` (messages as ``"role: content"`` lines; else the data row's ``input`` /
  ``question`` / ``prompt``); ``output`` = ``sample.output`` (the assistant messages' content); ``target`` = the data
  row's reference field (``ground_truth``, ``ideal``, ``expected``, ``expected_output``, ``answer``, ``reference``,
  ``target``, ``label``, ``correct_answer``: the first present; the keys are the user's own); ``explanation`` = the
  grader's ``reason`` (Azure), else a model grader's own output (``results[].sample.output``).

The platform's export (the dashboard's download of a run, one row per line) names the same parts by the grader
templates' namespaces (https://platform.openai.com/docs/guides/graders: ``{{ item.* }}`` is the data row,
``{{ sample.output_text }}`` the answer): ``{run_id, item: {...the data row...}, sample: {output_text | output |
choices, model, error}, grades: {grader: score}, passes: {grader: passed}}`` (also ``eval_id``, ``id`` /
``item_id`` / ``datasource_item_id``, ``status``, ``error`` where given). Each row is read as the output item it
describes (``_from_export``): ``item`` is the data row, ``grades`` / ``passes`` are the results (one per grader
name; ``passes`` may also be one boolean for the row, a list, or the number of graders passed), the row's number
in its file is its example id when it names none, and a row whose ``sample.error`` / ``error`` is set or whose
``status`` is "error" is left out and counted.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from evalcore.data import bounded_json
from evalcore.errors import EvalDataError
from evalcore.importers.base import Imported, LogFile, as_number, json_lines, left_out_note, parse_json
from evalcore.importers.chat_text import content_text, joined, messages_text, text_of, with_text_columns

TOOL = "OpenAI Evals API"
ITEM = "eval.run.output_item"
RUN = "eval.run"
_ITEM_MARK = re.compile(rb'"object"\s*:\s*"eval\.run\.output_item"')
_RUN_MARK = re.compile(rb'"object"\s*:\s*"eval\.run"')
#: grader types that give pass/fail (spellings of the Graders API and of the SDK's docstring example)
_PASS_FAIL = frozenset({"string_check", "string-check-grader", "string_check_grader", "label_model",
                        "label-model-grader", "label_model_grader"})
_MODEL_GRADERS = frozenset({"label_model", "score_model", "label-model-grader", "score-model-grader",
                            "label_model_grader", "score_model_grader"})
_TARGET_KEYS = ("ground_truth", "ideal", "expected", "expected_output", "answer", "reference", "target", "label",
                "correct_answer")
_INPUT_KEYS = ("input", "question", "prompt", "query")
_EXPORT_MARK = re.compile(rb'"(?:grades|passes)"\s*:')
_SAMPLE_MARK = re.compile(rb'"sample"\s*:')
_ITEM_KEY_MARK = re.compile(rb'"item"\s*:')


def sniff(file: LogFile) -> bool:
    """A JSON (Lines) file whose first object is an Evals API output item (or a list page of them, or a run
    object, ``"object": "eval.run"``, with its ``eval_id``), or a row of the platform's export (``item``,
    ``sample`` and ``grades`` or ``passes``)."""
    try:
        head = file.head(1 << 15)
        if not head[:1] in (b"{", b"["):
            return False
        export = all(mark.search(head) for mark in (_EXPORT_MARK, _SAMPLE_MARK, _ITEM_KEY_MARK))
        return (bool(_ITEM_MARK.search(head)) or export
                or (bool(_RUN_MARK.search(head)) and b'"eval_id"' in head))
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def convert(files: list[LogFile]) -> list[Imported]:
    """One log of all the items of ``files`` (the runs of several models on one eval belong together); run objects
    among them name the model of items that do not."""
    items: list[tuple[str, dict]] = []
    runs: dict[str, dict] = {}
    for file in files:
        for number, obj in enumerate(_objects(file), 1):
            kind = obj.get("object")
            if kind is None and "item" in obj and "sample" in obj and ("grades" in obj or "passes" in obj):
                items.append((file.name, _from_export(obj, number, file.name)))
            elif kind == ITEM or (kind is None and "datasource_item_id" in obj and "results" in obj):
                items.append((file.name, obj))
            elif kind == RUN and obj.get("id"):
                runs[str(obj["id"])] = obj
    names = tuple(f.name for f in files)
    if not items:
        raise EvalDataError(f"{', '.join(names)}: no OpenAI Evals API output items (\"object\": \"{ITEM}\") in "
                            f"{'this file' if len(names) == 1 else 'these files'}: a run object alone holds only "
                            "counts. Download the run's output items (GET /v1/evals/{eval_id}/runs/{run_id}/"
                            "output_items, or the run's export in the dashboard) and upload them.")
    return [_log(items, runs, names)]


def _objects(file: LogFile) -> list[dict]:
    """The objects of a file: items and runs, from JSON Lines, a JSON list or list pages."""
    first, _, rest = file.data.lstrip(b"\xef\xbb\xbf").lstrip().partition(b"\n")
    lines = bool(rest.strip()) and first.rstrip().endswith(b"}")
    if lines:
        try:
            bounded_json.loads_alone(first, file.name, file.budget.limits)
        except EvalDataError:
            raise
        except ValueError:
            lines = False
    values = [v for _, v in json_lines(file)] if lines else [parse_json(file)]
    out: list[dict] = []
    for number, value in enumerate(values, 1):
        where = f"{file.name}, line {number}" if lines else file.name
        if isinstance(value, dict) and value.get("object") == "list":
            value = value.get("data")
            if not isinstance(value, list):
                raise EvalDataError(f"{where}: the list page's field 'data' is not a list of output items.")
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, dict):
                raise EvalDataError(f"{where}: an output item is not a JSON object.")
            out.append(item)
    return out


def _from_export(row: dict, number: int, file_name: str) -> dict:
    """The output item a row of the platform's export describes (see the module's docstring)."""
    sample = dict(row["sample"]) if isinstance(row.get("sample"), dict) else {}
    if "output" not in sample:
        if "output_text" in sample:
            sample["output"] = sample["output_text"]
        elif isinstance(sample.get("choices"), list):
            sample["output"] = [c["message"] for c in sample["choices"]
                                if isinstance(c, dict) and isinstance(c.get("message"), dict)]
    error = row.get("error") or sample.get("error")
    if str(row.get("status") or "").lower() in ("error", "errored", "failed") and not error:
        error = {"code": str(row["status"]), "message": None}
    if error and not isinstance(error, dict):
        error = {"code": "error", "message": str(error)}
    sample["error"] = error or {}
    data = row.get("item") if isinstance(row.get("item"), dict) else {}
    example = next((v for v in (row.get("datasource_item_id"), row.get("item_id"), data.get("id"))
                    if v not in (None, "")), number)
    return {"object": ITEM, "id": row.get("id", f"{file_name}:{number}"), "run_id": row.get("run_id"),
            "eval_id": row.get("eval_id"), "datasource_item_id": example,
            "datasource_item": data or {"input": row.get("item")},
            "sample": sample, "results": _export_results(row.get("grades"), row.get("passes"))}


def _export_results(grades: Any, passes: Any) -> list[dict]:
    """Grader results from an export row's ``grades`` (name -> score, or a list of results) and ``passes`` (name ->
    passed; a list in the graders' order; one boolean for the row, or how many graders passed: the row passed when
    all did)."""
    if isinstance(grades, list):
        results = [dict(g) if isinstance(g, dict) else {"score": g} for g in grades]
        for index, result in enumerate(results, 1):
            result.setdefault("name", f"grader {index}")
    elif isinstance(grades, dict):
        results = [{"name": str(name), **(value if isinstance(value, dict) else {"score": value})}
                   for name, value in grades.items()]
    else:
        results = [] if grades is None else [{"name": "grade", "score": grades}]
    by_name = {r["name"]: r for r in results}
    if isinstance(passes, dict):
        for name, passed in passes.items():
            by_name.setdefault(str(name), {"name": str(name)})["passed"] = passed
    elif isinstance(passes, list):
        names = list(by_name) + [f"grader {i}" for i in range(len(by_name) + 1, len(passes) + 1)]
        for name, passed in zip(names, passes):
            by_name.setdefault(name, {"name": name})["passed"] = passed
    elif isinstance(passes, (bool, int, float)):  # the row's own verdict (a count: every grader passed)
        passed = bool(passes) if isinstance(passes, bool) else passes >= max(1, len(by_name))
        if len(by_name) == 1:
            next(iter(by_name.values()))["passed"] = passed
        else:
            by_name = {"passed": {"name": "passed", "passed": passed}, **by_name}
    for result in by_name.values():
        passed = result.get("passed")
        if isinstance(passed, str):
            result["label"] = result.pop("passed")
        elif isinstance(passed, (int, float)) and not isinstance(passed, bool) and passed in (0, 1):
            result["passed"] = bool(passed)
    return list(by_name.values())


def _log(items: list[tuple[str, dict]], runs: dict[str, dict], names: tuple[str, ...]) -> Imported:
    notes: list[str] = []
    records: list[dict] = []
    errored = ungraded = 0
    graders: dict[str, str | None] = {}   # name -> type, in the order met
    judges: dict[str, str | None] = {}    # model graders -> the judge model when recorded
    models_from_run = 0
    unnamed: set[str] = set()  # runs whose items name no model: the run id stands for it
    seen: set[tuple[str, str]] = set()
    repeated = 0
    for file_name, item in items:
        if item.get("id") is not None:
            key = (str(item.get("run_id")), str(item["id"]))
            if key in seen:  # the same item downloaded twice (overlapping pages, or a file given twice)
                repeated += 1
                continue
            seen.add(key)
        where = f"{file_name} (item {item.get('id', '?')})"
        sample = item.get("sample") if isinstance(item.get("sample"), dict) else {}
        error = sample.get("error") if isinstance(sample.get("error"), dict) else {}
        if error.get("code") or error.get("message"):
            errored += 1
            continue
        results = [r for r in item.get("results") or [] if isinstance(r, dict)]
        if not results:
            ungraded += 1
            continue
        run_id = str(item.get("run_id") or "")
        model = sample.get("model") or (runs.get(run_id) or {}).get("model")
        if not model:
            model = run_id or "unknown model"
            unnamed.add(model)
        elif not sample.get("model"):
            models_from_run += 1
        example = item.get("datasource_item_id")
        if example is None:
            raise EvalDataError(f"{where}: the field 'datasource_item_id' is missing; an output item needs the row "
                                "of the data source it answers (download the items again with the OpenAI SDK).")
        record = {"model": str(model), "task": str(item.get("eval_id") or "eval"), "example_id": str(example),
                  "_run": run_id, **_texts(item, sample, results)}
        for result in results:
            name = str(result.get("name") or f"grader {len(graders) + 1}")
            kind = result.get("type")
            graders.setdefault(name, str(kind) if kind else None)
            if _is_model_grader(kind):
                judge_sample = result.get("sample") if isinstance(result.get("sample"), dict) else {}
                judges.setdefault(name, judge_sample.get("model"))
            record[f"_passed/{name}"] = _passed(result)
            record[f"_score/{name}"] = as_number(result.get("score"), booleans=True)
        records.append(record)
    total = len(items) - repeated
    if repeated:
        notes.append(f"{repeated:,} output items appear more than once (same run and item id): counted once.")
    if errored:
        notes.append(left_out_note(errored, total, "OpenAI Evals API output items", "the model call failed "
                                   "(sample.error set), so there is no answer to grade"))
    if ungraded:
        notes.append(left_out_note(ungraded, total, "OpenAI Evals API output items", "no grader result"))
    if not records:
        raise EvalDataError(f"{', '.join(names)}: every output item errored or has no grader result; there is "
                            "nothing to evaluate.")
    frame = pd.DataFrame.from_records(records)
    _repeats(frame, notes)
    frame = _labels(frame, graders, judges, notes)
    if models_from_run:
        notes.append(f"{models_from_run:,} items name no model (sample.model): the model of their run object is "
                     "used.")
    if unnamed:
        notes.append(f"Items of {', '.join(sorted(unnamed)[:3])} name no model (sample.model) and no run object "
                     "names it: the run id stands for the model. Upload the run object (GET /v1/evals/{eval_id}/"
                     "runs/{run_id}) too.")
    columns = ["model", "task", "example_id", "repeat", *[c for c in ("correct", "score") if c in frame]]
    columns += [c for c in frame if c.startswith("score_")]
    columns += [c for c in ("input", "target", "output", "explanation") if c in frame]
    return Imported(with_text_columns(frame[columns].reset_index(drop=True)), "log", TOOL, names, notes)


def _is_model_grader(kind: Any) -> bool:
    return isinstance(kind, str) and kind.lower() in _MODEL_GRADERS


def _passed(result: dict) -> float:
    """``passed`` as 1/0 (Azure's ``label`` "pass"/"fail" when it is missing); NaN when neither says."""
    passed = result.get("passed")
    if isinstance(passed, bool):
        return float(passed)
    label = result.get("label")
    if isinstance(label, str) and label.strip().lower() in ("pass", "passed", "fail", "failed"):
        return float(label.strip().lower().startswith("pass"))
    return math.nan


def _repeats(frame: pd.DataFrame, notes: list[str]) -> None:
    """The run's number among the runs of one model on one eval (1, 2 ... in the order the runs first appear)."""
    runs = frame[["model", "task", "_run"]].drop_duplicates()
    runs = runs.assign(repeat=runs.groupby(["model", "task"], sort=False).cumcount() + 1)
    frame["repeat"] = frame.merge(runs, on=["model", "task", "_run"], how="left")["repeat"].to_numpy()
    if (runs["repeat"] > 1).any():
        notes.append(f"Some models were run several times on one eval ({len(runs):,} runs): each run is a repeat "
                     "of the examples, numbered in the order the runs appear.")


def _labels(frame: pd.DataFrame, graders: dict[str, str | None], judges: dict[str, str | None],
            notes: list[str]) -> pd.DataFrame:
    """``correct`` or ``score`` from the graders' results (see the module's docstring), with notes saying which."""
    kinds = {name: _grader_kind(frame, name, kind) for name, kind in graders.items()}
    names = list(graders)
    values = {n: frame[f"_passed/{n}"] if kinds[n] == "pass/fail" else frame[f"_score/{n}"] for n in names}
    if len(names) > 1 and all(kinds[n] == "pass/fail" for n in names):
        passed = pd.concat([values[n] for n in names], axis=1)
        frame["correct"] = passed.min(axis=1, skipna=False)
        notes.append(f"The items have {len(names)} graders ({', '.join(repr(n) for n in names)}), each pass/fail: "
                     "correct = all of them passed (as the run counts an item as passed); each grader is kept as "
                     "score_<name>.")
        others = names
        main = None
    else:
        main = names[0]
        role = "correct" if kinds[main] == "pass/fail" else "score"
        frame[role] = values[main]
        how = "its 'passed'" if role == "correct" else "its 'score'"
        if graders[main] is None:
            how += (" (no grader type recorded: every score is 0 or 1 and agrees with passed)" if role == "correct"
                    else " (no grader type recorded, and its scores are not all 0 or 1 matching passed)")
        notes.append(f"Grader '{main}'{f' ({graders[main]})' if graders[main] else ''} gives '{role}': {how}.")
        others = names[1:]
        if others:
            notes.append(f"The items have {len(names)} graders: '{main}' (the first) gives the label; the others "
                         f"({', '.join(repr(n) for n in others)}) are kept as score_<name>.")
    for name in others:
        frame[f"score_{name}"] = values[name].to_numpy(dtype=float)
    label_graders = names if main is None else [main]
    for name in label_graders:
        if name in judges:
            model = judges[name] or "judge model not recorded in the items"
            role = "correct" if "correct" in frame else "score"
            notes.append(f"{role} comes from an LLM judge ({model}): grader '{name}' ({graders[name]}) grades each "
                         "answer with a model, so its verdicts carry the judge's errors.")
    role = "correct" if "correct" in frame else "score"
    missing = frame[role].isna().to_numpy()
    if missing.any():
        notes.append(left_out_note(int(missing.sum()), len(frame), "graded OpenAI Evals API output items",
                                   f"no {'passed' if role == 'correct' else 'score'} value"))
        frame = frame[~missing]
    if frame.empty:
        raise EvalDataError(f"No OpenAI Evals API output item has a {'passed' if role == 'correct' else 'score'} "
                            "value from its grader: there is nothing to evaluate.")
    return frame


def _grader_kind(frame: pd.DataFrame, name: str, kind: str | None) -> str:
    """'pass/fail' or 'graded': from the grader's type, or from its values when no type is recorded."""
    passed, score = frame[f"_passed/{name}"], frame[f"_score/{name}"]
    if kind and kind.lower() in _PASS_FAIL:
        return "pass/fail"
    if kind:  # a graded type; pass/fail only when it wrote no score at all (Azure's evaluators: label, threshold)
        return "pass/fail" if score.isna().all() and passed.notna().any() else "graded"
    known = score.notna()
    if passed.notna().any() and (~known | score.isin((0.0, 1.0))).all() and (passed[known] == score[known]).all():
        return "pass/fail"
    if score.notna().any():
        return "graded"
    return "pass/fail"


def _texts(item: dict, sample: dict, results: list[dict]) -> dict[str, str | None]:
    row = item.get("datasource_item") if isinstance(item.get("datasource_item"), dict) else {}
    if isinstance(row.get("item"), dict):  # item_reference data sources nest the row under "item"
        row = row["item"]
    prompt = sample.get("input")
    input_text = messages_text(prompt) if isinstance(prompt, list) else text_of(prompt)
    if input_text is None:
        input_text = next((text_of(row[k]) for k in _INPUT_KEYS if row.get(k) not in (None, "")), None)
    output = sample.get("output")
    if isinstance(output, list):
        parts = [content_text(m.get("content"), reasoning=False) for m in output
                 if isinstance(m, dict) and m.get("role") in (None, "assistant")]
        output_text = "\n".join(p for p in parts if p) or None
    else:
        output_text = text_of(output)
    target = next((joined(row[k]) for k in _TARGET_KEYS if row.get(k) not in (None, "", [])), None)
    explanation = None
    for result in results:
        reason = result.get("reason")
        if isinstance(reason, str) and reason:
            explanation = reason
            break
        judge = result.get("sample") if isinstance(result.get("sample"), dict) else {}
        if _is_model_grader(result.get("type")) and isinstance(judge.get("output"), list):
            text = "\n".join(p for p in (content_text(m.get("content")) for m in judge["output"]
                                         if isinstance(m, dict)) if p)
            if text:
                explanation = text
                break
    return {"input": input_text, "output": output_text, "target": target, "explanation": explanation}
