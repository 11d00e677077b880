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
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from evalcore.errors import EvalDataError
from evalcore.importers.base import Imported, LogFile, as_number, field_of, json_lines, left_out_note

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
    matches: list[tuple[str, Any]] = []
    scores: list[tuple[str, Any]] = []
    for number, line in json_lines(file):
        if not isinstance(line, dict):
            raise EvalDataError(f"{file.name}, line {number}: not a JSON object.")
        if "spec" in line:
            spec = line["spec"]
        elif line.get("type") == "match":
            sample = str(field_of(line, "sample_id", file, f"line {number}"))
            matches.append((sample, field_of(line, "data.correct", file, f"line {number}")))
        elif line.get("type") == "metrics" and isinstance(line.get("data"), dict) and "score" in line["data"]:
            scores.append((str(field_of(line, "sample_id", file, f"line {number}")), line["data"]["score"]))
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
    frame = pd.DataFrame(events, columns=["example_id", role])
    frame[role] = [as_number(v, {"true": 1.0, "false": 0.0}) for v in frame[role]]
    frame.insert(0, "task", task)
    frame.insert(0, "model", model)
    frame["repeat"] = frame.groupby("example_id", sort=False).cumcount()
    notes = [f"{file.name}: {'match events give' if matches else 'scored metrics events give'} '{role}'."]
    missing = frame[role].isna().to_numpy()
    if missing.any():
        notes.append(left_out_note(int(missing.sum()), len(frame), f"events of {file.name}", f"no usable {role}"))
        frame = frame[~missing].reset_index(drop=True)
    return Imported(frame, "log", TOOL, (file.name,), notes)
