"""OpenAI evals event logs (``oaieval ... --record_path``): JSON Lines of a run's spec, its events and final report.

Format (openai/evals ``evals/record.py``, ``LocalRecorder``): a ``{"spec": {completion_fns, eval_name, run_id,
...}}`` line, a ``{"final_report": {...}}`` line and one line per event ``{run_id, event_id, sample_id, type, data,
created_at}``. ``type`` is ``sampling`` (the prompt and the completion), ``match`` (``data.correct``, ``expected``,
``picked``: basic and multiple-choice evals), ``metrics`` (e.g. a model-graded eval's ``score`` / ``choice``) and
others.

Mapping to roles: ``model`` = ``spec.completion_fns`` (joined by "+" when several), ``task`` = ``spec.eval_name``,
``example_id`` = ``sample_id``; one row per ``match`` event with ``correct`` = ``data.correct``. A log without match
events uses the ``metrics`` events that carry a numeric ``score`` (``score``). A sample with several such events
(several completions of one sample) gets a ``repeat`` number per event. A log with no per-sample event is refused:
its ``final_report`` alone cannot give intervals.

Text roles (``evals/record.py`` ``record_sampling(prompt, sampled)`` and ``record_match(correct, expected, picked,
sampled)``): ``input`` = the ``prompt`` of the sample's ``sampling`` event (a string, or chat messages written as
``"role: content"`` lines), the last one before the row's event; ``output`` = the match event's own ``sampled``, else
that sampling event's ``sampled`` (several completions joined by newlines); ``target`` = the match event's
``expected`` (several accepted answers joined by newlines). Rows of ``metrics`` events (model-graded evals, where
the grader's calls are recorded as sampling events too) take the sample's first sampling event, the model's own.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from evalcore.errors import EvalDataError
from evalcore.importers.base import Imported, LogFile, as_number, field_of, json_lines, left_out_note
from evalcore.importers.chat_text import joined, text_of, with_text_columns

TOOL = "OpenAI evals"
_SPEC_LINE = re.compile(rb'^\s*\{\s*"(spec|final_report)"\s*:\s*\{')
_EVENT = re.compile(rb'"run_id"\s*:.*"event_id"\s*:.*"sample_id"\s*:|"event_id"\s*:.*"type"\s*:')


def sniff(file: LogFile) -> bool:
    """JSON Lines starting with a ``spec`` line (or made of events with run_id / event_id / sample_id)."""
    try:
        head = file.head(8192)
        return bool(_SPEC_LINE.match(head)) or (head.startswith(b"{") and bool(_EVENT.search(head.split(b"\n")[0])))
    except Exception:  # noqa: BLE001 - sniffing never raises
        return False


def convert(files: list[LogFile]) -> list[Imported]:
    """One log per file (a run of one completion function on one eval)."""
    return [_convert_one(file) for file in files]


def _convert_one(file: LogFile) -> Imported:
    spec: dict | None = None
    matches: list[tuple[Any, ...]] = []
    scores: list[tuple[Any, ...]] = []
    sampled: dict[str, list[dict]] = {}   # the sampling events of each sample, in the order of the file
    for number, line in json_lines(file):
        if not isinstance(line, dict):
            raise EvalDataError(f"{file.name}, line {number}: not a JSON object.")
        data = line.get("data") if isinstance(line.get("data"), dict) else {}
        if "spec" in line:
            spec = line["spec"]
        elif line.get("type") == "sampling":
            sampled.setdefault(str(line.get("sample_id")), []).append(data)
        elif line.get("type") == "match":
            sample = str(field_of(line, "sample_id", file, f"line {number}"))
            matches.append((sample, field_of(line, "data.correct", file, f"line {number}"),
                            *_texts(data, sampled.get(sample))))
        elif line.get("type") == "metrics" and "score" in data:
            sample = str(field_of(line, "sample_id", file, f"line {number}"))
            scores.append((sample, data["score"], None, None, None))  # texts: the sample's first sampling event
    if spec is None:
        raise EvalDataError(f"{file.name}: no 'spec' line: this OpenAI evals log is truncated (the spec is its "
                            "first line) or is not one.")
    model = "+".join(map(str, field_of(spec, "completion_fns", file, "spec") or ["unknown"]))
    task = str(field_of(spec, "eval_name", file, "spec"))
    if not matches and not scores:
        raise EvalDataError(f"{file.name}: the log has no per-sample events (no 'match' or scored 'metrics' "
                            "events), only a final report: evalcore needs each sample's result. Re-run the eval with "
                            "its events recorded (oaieval --record_path) and upload that log.")
    role, events = ("correct", matches) if matches else ("score", scores)
    frame = pd.DataFrame(events, columns=["example_id", role, "input", "output", "target"], dtype=object)
    if not matches:  # model-graded evals: the sample's first sampling event is the model's, later ones the grader's
        frame["input"] = [_first(sampled.get(e), "prompt") for e in frame["example_id"]]
        frame["output"] = [_first(sampled.get(e), "sampled") for e in frame["example_id"]]
    frame[role] = [as_number(v, {"true": 1.0, "false": 0.0}) for v in frame[role]]
    frame.insert(0, "task", task)
    frame.insert(0, "model", model)
    frame["repeat"] = frame.groupby("example_id", sort=False).cumcount()
    notes = [f"{file.name}: {'match events give' if matches else 'scored metrics events give'} '{role}'."]
    missing = frame[role].isna().to_numpy()
    if missing.any():
        notes.append(left_out_note(int(missing.sum()), len(frame), f"events of {file.name}", f"no usable {role}"))
        frame = frame[~missing].reset_index(drop=True)
    return Imported(with_text_columns(frame), "log", TOOL, (file.name,), notes)


def _texts(data: dict, sampling: list[dict] | None) -> tuple[str | None, str | None, str | None]:
    """(input, output, target) of a match event: the prompt of the sample's last sampling event so far, the
    event's own ``sampled`` (else that sampling event's), and its ``expected``."""
    last = sampling[-1] if sampling else {}
    prompt = text_of(last.get("prompt"))
    output = joined(data.get("sampled")) if data.get("sampled") is not None else joined(last.get("sampled"))
    return prompt, output, joined(data.get("expected"))


def _first(sampling: list[dict] | None, key: str) -> str | None:
    return (joined(sampling[0].get(key)) if key == "sampled" else text_of(sampling[0].get(key))) if sampling else None
