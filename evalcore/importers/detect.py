"""Which tool wrote each file, and the raw canonical table of several files together.

Sources (paths, folders, zips, bytes, ``(name, bytes)`` pairs) are expanded into :class:`~.base.LogFile` s; each
file goes to the first tool whose ``sniff`` recognises its content (and, where the format needs it, its name);
a file no tool claims is read as a plain table (CSV, TSV, JSON Lines with the canonical column names, Parquet).
Every tool module has ``TOOL`` (its name), ``sniff(file) -> bool`` and ``convert(files) -> list[Imported]``
(all the files it claimed, so that it can pair the files of one run).
"""

from __future__ import annotations

import importlib
import itertools
import json
from dataclasses import replace
from pathlib import Path, PurePosixPath
from types import ModuleType
from typing import Iterable, Union


from evalcore.data import bounded_json
from evalcore.data.compression import decompress
from evalcore.errors import EvalDataError, listed
from evalcore.data.limits import Budget, ReadLimits
from evalcore.data.reading import Source, nonblank_lines, read_bytes, read_table
from evalcore.importers.archive import folder_files, is_office_document, is_zip, zip_members
from evalcore.importers.base import (OTHERS_READ, Imported, LogFile, json_error, left_out_warning, named_with_folder,
                                     parents_of)

#: the tool modules, most specific first (imported on first use, so that importing evalcore.data.validation stays light)
TOOL_MODULES = ("every_eval_ever", "inspect", "lm_eval", "lighteval", "helm", "promptfoo", "openai_evals",
                "openai_evals_api", "deepeval", "ragas", "opencompass", "chatbot_arena", "pairwise",
                "alpaca_eval_leaderboard")
#: a source with the name it had (an upload's file name): the name matters to some formats
NamedSource = tuple[str, Union[bytes, bytearray, memoryview]]
_COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz")
#: how a Git LFS pointer file begins (git-lfs spec: docs/spec.md)
_LFS_POINTER = b"version https://git-lfs.github.com/spec/"
TABLE = "table"


def expand(sources: Iterable[Source | NamedSource], limits: ReadLimits) -> list[LogFile]:
    """The files of ``sources``, decompressed, within one :class:`~evalcore.data.limits.Budget` of ``limits`` for all
    of them (and for what their importers read later, such as an Inspect ``.eval`` log's members); a folder gives
    its files, a zip (other than an Inspect ``.eval`` log, which its importer reads whole) its members."""
    budget = Budget(limits)
    files = [file for number, source in enumerate(sources, 1) for file in _expand_one(source, number, budget)]
    if not files:
        raise EvalDataError("No file to read: choose at least one evaluation log.")
    return _distinct_names(files)


def _distinct_names(files: list[LogFile]) -> list[LogFile]:
    """Files given by path that share a name (three projects' ``.deepeval/.latest_test_run.json``) are named by
    their paths as given, so that every message and run tells them apart."""
    counts: dict[str, int] = {}
    for file in files:
        counts[file.name] = counts.get(file.name, 0) + 1
    return [replace(file, name=file.given, parents="") if counts[file.name] > 1 and file.given
            and file.given != file.name else file for file in files]


def _expand_one(source: Source | NamedSource, number: int, budget: Budget) -> list[LogFile]:
    parents, given = "", ""
    if isinstance(source, tuple):
        name, payload = str(source[0]), source[1]
    elif isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir():
            return folder_files(path, budget)
        name, payload, parents = path.name, source, parents_of(path.resolve().as_posix())
        given = path.as_posix()
    else:
        name, payload = str(getattr(source, "name", "") or f"file {number}"), source
        name = PurePosixPath(name).name
    try:
        data = decompress(read_bytes(payload, budget.limits), budget)
    except EvalDataError as exc:
        raise EvalDataError(f"{name}: {exc}") from exc
    name = _without_compression_suffix(name)
    if is_zip(data) and not is_office_document(data) and not _module("inspect").is_eval_zip(data):
        return zip_members(data, name, budget, prefix="")
    budget.spend(len(data), name)
    return [LogFile(name, data, budget, parents, given if given != name else "")]


def _without_compression_suffix(name: str) -> str:
    for suffix in _COMPRESSED_SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"{__package__}.{name}")


def tools() -> tuple[ModuleType, ...]:
    """The tool modules, in the order their ``sniff`` is tried."""
    return tuple(_module(name) for name in TOOL_MODULES)


def tools_read() -> str:
    """The tools whose logs evalcore reads, as a sentence's list with where the README describes them (for a
    message about a tool's log it does not read)."""
    names = list(dict.fromkeys(module.TOOL for module in tools()))
    return (f"evalcore reads the logs of {', '.join(names[:-1])} and {names[-1]} (README, \"Logs written by "
            "evaluation tools\")")


def tool_of(file: LogFile) -> str:
    """The name of the tool that wrote ``file``, or ``"table"`` for a plain table."""
    for module in tools():
        if module.sniff(file):
            return module.TOOL
    return TABLE


def import_files(files: list[LogFile], limits: ReadLimits, strict: bool = False) -> tuple[list[Imported], list[str]]:
    """Each tool's files converted (a tool's files all at once, so that it can pair the files of one run); plain
    tables read as they are (kind None). With several files, a file that cannot be used (a corrupt or unscored
    log) is left out and named, with why, in the returned warnings, and the others are read; ``strict`` refuses
    instead. One file that cannot be used, or files none of which can, are refused."""
    claimed: dict[str, list[LogFile]] = {}
    for file in files:
        claimed.setdefault(tool_of(file), []).append(file)
    out: list[Imported] = []
    left_out: list[tuple[str, EvalDataError]] = []
    shown = {file.name: file.shown for file in files}
    for module in tools():
        if module.TOOL in claimed:
            out.extend(_convert(module, claimed[module.TOOL], strict or len(files) == 1, left_out))
    for file in claimed.get(TABLE, []):
        try:
            refuse_broken_json(file)
        except EvalDataError as exc:
            if strict or len(files) == 1:
                raise
            left_out.append((file.name, exc))
            continue
        try:
            frame = read_table(file.data, limits, file.budget, file.name)
        except EvalDataError as exc:
            error = _unrecognised(file, exc)
            if len(files) == 1 and error is exc:
                raise
            error = error if error is not exc or str(exc).startswith(file.name) else EvalDataError(f"{file.name}: {exc}")
            if strict or len(files) == 1:
                raise error from exc
            left_out.append((file.name, error))
            continue
        out.append(Imported(frame, kind="", tool=TABLE, files=(file.name,)))
    if not out:
        raise left_out[0][1]
    inside = [warning for item in out for warning in item.left_out]
    if inside and strict:
        raise EvalDataError(inside[0].replace(OTHERS_READ, " (--strict refuses a load with a file that cannot be "
                                                           "read; without it, the file is left out).")
                            .replace(" was left out: ", ": ", 1))
    return out, [_left_out_warning(name, shown.get(name, name), error) for name, error in left_out] + inside


def refuse_broken_json(file: LogFile) -> None:
    """A ``.json`` file (or one that opens like JSON) that does not parse is refused with JSON's own message (line,
    column, the file named with its folder), never read as a one-column CSV table. JSON Lines saved as ``.json``
    (a complete value on its first line, more after it) is left to the table reader."""
    head = file.head(1)
    if not file.name.lower().endswith(".json") and head not in (b"{", b"["):
        return
    try:
        bounded_json.loads_alone(file.data, file.name, file.budget.limits)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and head in (b"{", b"["):
            return  # JSON Lines
        raise EvalDataError(json_error(file, exc)) from exc
    except UnicodeDecodeError as exc:
        raise EvalDataError(f"{named_with_folder(file)}: not UTF-8 text ({exc.reason} at byte {exc.start}).") from exc
    except (ValueError, RecursionError):
        return


def _convert(module: ModuleType, files: list[LogFile], strict: bool,
             left_out: list[tuple[str, EvalDataError]]) -> list[Imported]:
    """``module.convert(files)``; a refusal that names one of the files leaves that file out (appended to
    ``left_out``) and the others are converted again; a refusal that names none leaves them all out. The JSON
    values a failed conversion counted are given back to the budget (what it built is gone), so that converting
    the others again does not count theirs twice."""
    files = list(files)
    while files:
        budget, counted = files[0].budget, files[0].budget.json_values
        try:
            return module.convert(files)
        except EvalDataError as exc:
            budget.json_values = counted
            if strict:
                raise
            named = [f for f in files if str(exc).startswith(f.name)] or [f for f in files if f.name in str(exc)]
            bad = [max(named, key=lambda f: len(f.name))] if named else files
            twins = [f for f in files if f.name == bad[0].name]
            if len(twins) > 1:  # uploads of one name (three annotations.json): the one that fails alone
                bad = [f for f in twins if _fails_alone(module, f)] or bad
                budget.json_values = counted
            left_out.extend((f.name, exc) for f in bad)
            files = [f for f in files if f not in bad]
    return []


def _fails_alone(module: ModuleType, file: LogFile) -> bool:
    """Whether ``module`` refuses ``file`` converted on its own."""
    try:
        module.convert([file])
    except EvalDataError:
        return True
    return False


def _left_out_warning(name: str, shown: str, error: EvalDataError) -> str:
    """'<path as given> was left out: <why> The other files were read ...'."""
    reason = str(error)
    head = reason.split(": ", 1)[0].split(", line ", 1)[0]
    if head.endswith(name) or head == shown:
        reason = reason[len(head):].lstrip(" :,")
    return left_out_warning(shown, reason)


def _unrecognised(file: LogFile, error: EvalDataError) -> EvalDataError:
    """For a JSON document no importer claimed and the table reader refused: a message saying which logs evalcore
    reads; for a Git LFS pointer, that it is one (``error`` itself for other files, e.g. JSON Lines with a corrupt
    line)."""
    if file.head(len(_LFS_POINTER)) == _LFS_POINTER:
        return EvalDataError(f"{file.name}: a Git LFS pointer, not the file itself (the repository stores the file "
                             "in Git LFS): fetch it with `git lfs pull` and upload the real file.")
    head = file.head(1)
    if head not in (b"{", b"["):
        return error
    lines = [line for _, line in itertools.islice(nonblank_lines(file.data), 2)]
    if head == b"{" and len(lines) > 1:
        try:
            bounded_json.loads_alone(lines[0], file.name, file.budget.limits)
            return error  # JSON Lines whose first line is a complete object: the table reader's message stands
        except EvalDataError as exc:
            return exc
        except ValueError:
            pass
    try:
        bounded_json.loads_alone(file.data, file.name, file.budget.limits)
        broken = ""
    except EvalDataError as exc:
        return exc
    except (ValueError, RecursionError) as exc:
        broken = f" It is not complete JSON either ({exc}): truncated?"
    return EvalDataError(f"{file.name}: this JSON is not a log evalcore recognises. {tools_read()}, and tables "
                         "(CSV, TSV, Parquet, JSON Lines or a JSON list of flat records with named columns): for "
                         "another tool, write its per-example results as such a table (model, example_id, correct or "
                         f"score) and name the columns' roles with -m COLUMN=ROLE where they differ.{broken}")


def describe(imported: list[Imported]) -> str:
    """'Inspect AI (2 files), a table (1 file)' for the validation report."""
    counts: dict[str, int] = {}
    for item in imported:
        counts[item.tool] = counts.get(item.tool, 0) + len(item.files)
    return listed([f"{'a plain table' if t == TABLE else t} ({n} file{'s' if n > 1 else ''})"
                   for t, n in counts.items()], 10)

