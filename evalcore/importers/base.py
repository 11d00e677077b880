"""What every importer shares: the files it reads, what it returns, and JSON parsing whose errors name the file.

An importer turns the files one evaluation tool wrote into a *raw canonical table*: a DataFrame whose columns are
named after evalcore's roles (``model``, ``example_id``, ``task``, ``repeat``, ``correct`` / ``score``,
``confidence``, ``proxy`` ... for a log; ``model_a``, ``model_b``, ``outcome``, ``judge`` for battles; ``model``,
``task``, ``category``, ``n``, ``n_correct`` for a summary), with values as the tool wrote them (converted to
numbers where the tool's documentation says how). :func:`evalcore.data.validation.validate` then checks it like any table.
An importer never computes a statistic; it counts what it leaves out and says why in ``notes``.
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Iterator

import pandas as pd

from evalcore.errors import EvalDataError
from evalcore.data import bounded_json
from evalcore.data.limits import Budget, ReadLimits
from evalcore.data.reading import nonblank_lines, refuse_long_lines


@dataclass(frozen=True)
class LogFile:
    """One file of an upload: its name (a relative path inside a folder or zip, or the file name), its bytes,
    already decompressed (gzip / bzip2 / xz), and the budget of the load it belongs to, within which its importer
    reads what it holds (the members of an Inspect ``.eval`` zip) and whose limits bound its lines. ``parents`` are
    the folders above it on disk (the last :data:`PARENT_FOLDERS` of them, e.g. ``"runs/v1"``) when it was given by
    path: tools name models and runs by folder (lm-eval's ``<model>/results_*.json``, HELM's run folders)."""

    name: str
    data: bytes
    budget: Budget = field(default_factory=lambda: Budget(ReadLimits.from_env()), compare=False, repr=False)
    parents: str = ""
    given: str = field(default="", compare=False)  # the path as given (command line), when given by path

    @property
    def shown(self) -> str:
        """How a message names the file: its path as given when it was given by path, else its name (a path inside
        an upload or zip), never its base name alone."""
        return self.given or self.name

    @property
    def base(self) -> str:
        """The file name without its folders."""
        return PurePosixPath(self.name).name

    @property
    def folder(self) -> str:
        """The folder holding the file: its folder inside the upload, below its folders on disk when it was given
        by path ('' for a file at the top of an upload)."""
        inside = str(PurePosixPath(self.name).parent).strip(".")
        return "/".join(part for part in (self.parents, inside) if part)

    def head(self, n: int = 4096) -> bytes:
        """The first ``n`` bytes without leading whitespace or a UTF-8 byte-order mark."""
        return self.data[: n + 64].lstrip(b"\xef\xbb\xbf").lstrip()[:n]


@dataclass
class Imported:
    """What an importer made of some files: a raw canonical table of one shape, with notes for the report."""

    frame: pd.DataFrame
    kind: str                      # "log", "summary" or "battles" (evalcore.data.schema)
    tool: str                      # e.g. "Inspect AI"
    files: tuple[str, ...]         # the file names it read
    notes: list[str] = field(default_factory=list)
    judges: tuple[str, ...] = ()   # the AI judges whose verdicts the table holds (battles), by name
    run: str = ""                  # the id of the run that wrote it, where the tool records one (Inspect's eval_id)
    when: str = ""                 # when that run ran, where the tool records it (ISO 8601 text: sorts as time)
    #: the file is one whole test run by what its log says (DeepEval): files of one model that are separate runs
    #: are warned about when they are pooled; ``label`` names the run (its folder, time or id) when it becomes one
    whole_run: bool = False
    label: str = ""
    #: the log names no model and the importer named it after the file (Ragas): ``--model NAME`` renames it
    model_from_file: bool = False
    #: files of the tool's set left out with a warning, each 'name was left out: why' (the others were read)
    left_out: list[str] = field(default_factory=list)
    #: what the reader warns of in the files it read, each naming its file (e.g. ratings outside the judge's scale)
    warnings: list[str] = field(default_factory=list)


#: how many folders above a file given by path are kept in :attr:`LogFile.parents`
PARENT_FOLDERS = 3


def parents_of(path: PurePosixPath | "os.PathLike[str]") -> str:
    """The last :data:`PARENT_FOLDERS` folders above ``path`` ('runs/v1/mmlu:subject=x,model=org_m' for
    '/data/helm/runs/v1/mmlu:subject=x,model=org_m/per_instance_stats.json'), without the root."""
    parts = [part for part in PurePosixPath(os.fspath(path)).parent.parts if part not in ("/", "")]
    return "/".join(parts[-PARENT_FOLDERS:])


def parse_json(file: LogFile) -> Any:
    """The JSON document in ``file``, its values counted against the load's budget before they are built
    (:mod:`evalcore.data.bounded_json`); a truncated or corrupt file raises :class:`EvalDataError` naming it."""
    bounded_json.spend(file.data, file.name, file.budget)
    try:
        return json.loads(file.data)
    except UnicodeDecodeError as exc:
        raise EvalDataError(f"{file.name}: not UTF-8 text ({exc.reason} at byte {exc.start}).") from exc
    except RecursionError as exc:
        raise EvalDataError(f"{file.name}: JSON nested too deeply to read.") from exc
    except json.JSONDecodeError as exc:
        raise EvalDataError(json_error(file, exc)) from exc
    except ValueError as exc:
        raise EvalDataError(f"{file.name}: not valid JSON (truncated or corrupt?): {exc}.") from exc


def named_with_folder(file: LogFile) -> str:
    """The file's path as given, or its name with the folder it lies in ('lm_eval/gpt-4o/results_x.json')."""
    name = file.shown
    if "/" in name or not file.folder:
        return name
    return f"{file.folder}/{name}"


def json_error(file: LogFile, exc: json.JSONDecodeError) -> str:
    """'<folder/file>: not valid JSON (Expecting value at line 1, column 3) ...': JSON's own message, the file
    named with its folder."""
    where = f"line {exc.lineno}, column {exc.colno}"
    head = file.head(1)
    start = ("; it does not open with { or [ as JSON does (its first line, or its start, cut off?)"
             if head not in (b"{", b"[") else "")
    return (f"{named_with_folder(file)}: not valid JSON ({exc.msg} at {where}){start}; the file is truncated or "
            "damaged: upload it as the tool wrote it.")


def json_lines(file: LogFile) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for every non-blank line of a JSON Lines file; a line longer than the limit
    ``max_line_bytes``, or more JSON values in all the lines than the load's budget has room for, are refused
    before any line is parsed, and a bad line raises :class:`EvalDataError` naming the file and the line."""
    refuse_long_lines_of(file)
    bounded_json.spend(file.data, file.name, file.budget)
    for number, line in nonblank_lines(file.data):
        try:
            yield number, json.loads(line)  # counted with the others above
        except UnicodeDecodeError as exc:
            raise EvalDataError(f"{file.name}, line {number}: not UTF-8 text.") from exc
        except (ValueError, RecursionError) as exc:
            raise EvalDataError(f"{file.name}, line {number}: not valid JSON (truncated or corrupt?): {exc}.") from exc


def refuse_long_lines_of(file: LogFile) -> None:
    """Refuse a line of ``file`` longer than its limit ``max_line_bytes`` (the message names the file)."""
    try:
        refuse_long_lines(file.data, file.budget.limits)
    except EvalDataError as exc:
        raise EvalDataError(f"{file.name}: {exc}") from exc


def header_cells(file: LogFile, n: int = 4096) -> list[str]:
    """The cells of the first line of a CSV / TSV file (its first ``n`` bytes), stripped of spaces, as written:
    how a tool's table is told from its header. Tab-separated when the line has more tabs than commas; [] for an
    empty file."""
    lines = file.head(n).decode("utf-8", errors="replace").splitlines()
    if not lines:
        return []
    delimiter = "\t" if lines[0].count("\t") > lines[0].count(",") else ","
    return [cell.strip() for cell in next(csv.reader([lines[0]], delimiter=delimiter), [])]


def field_of(obj: Any, path: str, file: LogFile, where: str = "") -> Any:
    """``obj[a][b]...`` for ``path`` = ``"a.b"``; a missing field raises :class:`EvalDataError` naming the file,
    the place (``where``, e.g. "sample 3") and the field."""
    value = obj
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            place = f" ({where})" if where else ""
            raise EvalDataError(f"{file.name}{place}: the field '{path}' is missing; this file does not look like a "
                                "complete log of its tool (truncated, or written by another version?).")
        value = value[part]
    return value


def optional(obj: Any, path: str, default: Any = None) -> Any:
    """``obj[a][b]...`` for ``path`` = ``"a.b"``, or ``default`` where any part is missing."""
    value = obj
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return default
        value = value[part]
    return value


def as_number(value: Any, words: dict[str, float] | None = None, booleans: bool = True) -> float:
    """A value of a tool's log as a float: numbers as they are (NaN when infinite), true/false as 1/0 (NaN when
    ``booleans`` is False), text through ``words`` (lower-cased, e.g. Inspect's "C" / "I") or as a number; NaN for
    anything else (lists, objects, other text)."""
    if isinstance(value, bool):
        return float(value) if booleans else math.nan
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else math.nan
    if isinstance(value, str):
        text = value.strip().lower()
        if words is not None and text in words:
            return words[text]
        try:
            result = float(text)
        except ValueError:
            return math.nan
        return result if math.isfinite(result) else math.nan
    return math.nan


#: the end of the warning for a file left out of an upload
OTHERS_READ = " The other files were read (the command line's --strict refuses instead)."


def left_out_warning(shown: str, reason: str) -> str:
    """The warning for a file left out of an upload: its path as given (never only its base name) and why."""
    return f"{shown} was left out: {reason}{OTHERS_READ}"


def left_out_note(count: int, total: int, what: str, why: str) -> str:
    """'3 of 120 samples were left out: no score.' for the validation report."""
    return f"{count:,} of {total:,} {what} were left out: {why}."
