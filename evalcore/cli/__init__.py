"""The ``evalcore`` command line: ``report``, ``validate``, ``compare`` (:mod:`evalcore.cli.compare`: exit status 3
on a regression), ``label`` (:mod:`evalcore.cli.label`: labeling campaigns), ``workspace`` and ``serve``.

Bad input ends the command with exit status 1 and one line on stderr naming the files and the problem (the
:class:`~evalcore.errors.EvalDataError` message); ``--debug`` shows the traceback instead. Usage errors (an unknown
option, a malformed ``--mapping``) exit with status 2, as argparse does.

A command imports what it uses when it runs (pandas, the engine, the readers): building the parser and ``--help``
import none of them, and neither does the bounded reader's child beyond what reading needs.
"""

from __future__ import annotations

import argparse
import atexit
import errno
import importlib
import importlib.util
import os
import sys
import tomllib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NoReturn, TypeVar

from evalcore import __version__
from evalcore.errors import EvalDataError, listed
from evalcore.stats.level import DEFAULT_LEVEL

PROG = "evalcore"
T = TypeVar("T")
#: the dashboard's entry point: next to this package in a checkout, or installed as ``evalcore_dashboard``
APP = "app.py"
#: the help of every --workspace option (the rule: :func:`evalcore.workspace.folder.default_root`)
WORKSPACE_HELP = ("the workspace folder (default: EVALCORE_WORKSPACE, else the dashboard's per-user folder "
                  "$XDG_DATA_HOME/evalcore/workspace, ~/.local/share/evalcore/workspace)")


def run() -> NoReturn:
    """The ``evalcore`` command (``python -m evalcore`` too): :func:`main`, then the process ends as soon as its
    output is flushed and the exit handlers have run (temporary folders removed). The interpreter's own teardown —
    freeing every object one by one, closing DuckDB, unloading XGBoost: half a second after a report of MMLU-Pro,
    an eighth of the command — is skipped; the operating system frees the process's memory at once."""
    status = main()
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # a reader that went away: nothing left to say
        pass
    os._exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; the exit status (0 done, 1 bad input or an unusable log, 2 a usage error, 3 ``compare``
    found a regression)."""
    args = _parser().parse_args(argv)
    try:
        status = args.run(args)
        sys.stdout.flush()  # a reader that went away (``| head -1``) shows here, not in the flush at exit
        return status
    except BrokenPipeError:
        return _stdout_closed()
    except EvalDataError as exc:
        if args.debug:
            raise
        print(f"{PROG}: error: {_one_line(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a defect, not the user's data: one line, the traceback with --debug
        if args.debug:
            raise
        print(f"{PROG}: internal error: {type(exc).__name__}: {_one_line(str(exc))} (--debug shows the traceback)",
              file=sys.stderr)
        return 1


def _stdout_closed() -> int:
    """The reader of stdout went away (``evalcore validate FILE | head -1``): end quietly, as Python's documentation
    advises: stdout onto /dev/null, so that nothing more is written, not even by the flush at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Precise model evaluation when labels are scarce: reports, validation, dashboard.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")
    from evalcore.cli.compare import add_parser as add_compare, comparison_arguments  # here: it imports this module
    from evalcore.cli.label import add_parser as add_label
    from evalcore.cli.series import add_parser as add_series, series_arguments

    report = commands.add_parser(
        "report", help="write a self-contained HTML report of evaluation logs",
        description="Write one self-contained HTML report (opens offline) with every method the logs support.")
    _log_arguments(report)
    report.add_argument("--out", "-o", required=True, type=Path, help="the HTML file to write")
    report.add_argument("--title", default="Evaluation report", help="the report's title")
    report.add_argument("--level", type=_level, default=DEFAULT_LEVEL,
                        help=f"confidence level of every interval ({DEFAULT_LEVEL})")
    report.add_argument("--seed", type=int, default=0, help="seed of every bootstrap and fold (0)")
    report.add_argument("--n-boot", type=_positive, default=1000, help="bootstrap replicates (1000)")
    report.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    report.add_argument("--series", default=None, metavar="NAME",
                        help="compare the one LOG with this workspace series' baseline run in a Comparison section")
    report.add_argument("--workspace", type=Path, default=None, help=f"{WORKSPACE_HELP}, of --series")
    series_arguments(report)
    comparison_arguments(report)
    report.set_defaults(run=_report, report_parser=report)

    check = commands.add_parser(
        "validate", help="check evaluation logs; exit 0 when usable, 1 when not",
        description="Read and validate evaluation logs and print the validation report (for CI jobs).")
    _log_arguments(check)
    check.add_argument("--level", type=_level, default=DEFAULT_LEVEL,
                       help=f"confidence level of the intervals in the table of what was read ({DEFAULT_LEVEL})")
    check.add_argument("--json", type=Path, default=None, metavar="FILE",
                       help="also write the table of what was read as JSON to FILE ('-': stdout, instead of the text); "
                            "for a log that cannot be used, {\"usable\": false, \"error\": ...}")
    check.set_defaults(run=_validate)
    add_compare(commands)
    add_label(commands)

    workspace = commands.add_parser("workspace", help="save logs into the dashboard's workspace",
                                    description="Manage the workspace of saved datasets (EVALCORE_WORKSPACE).")
    actions = workspace.add_subparsers(title="actions", required=True, metavar="ACTION")
    add = actions.add_parser("add", help="save a log as a dataset (large Parquet/CSV logs through the engine)",
                             description="Validate a log and save it as a workspace dataset. Logs above "
                                         "EVALCORE_ENGINE_MB are validated and written by DuckDB, never loaded; "
                                         "the dashboard then analyses them in the engine.")
    _log_arguments(add)
    add.add_argument("--name", required=True, help="the dataset's name in the workspace")
    add.add_argument("--workspace", type=Path, default=None, help=WORKSPACE_HELP)
    add.add_argument("--owner", default=None,
                     help="the owner's e-mail on a team instance (private unless --shared); without it the dataset "
                          "has no owner: everyone sees it, signed-in members read-only")
    add.add_argument("--shared", action="store_true", help="share the dataset with the team")
    add.add_argument("--series", default=None, metavar="NAME",
                     help="also add the dataset as a run of this series (e.g. 'support-bot / nightly'), for the "
                          "History page and evalcore compare --series")
    add.add_argument("--time", default=None, metavar="ISO",
                     help="when the run ran (ISO 8601, e.g. 2026-11-28T09:30:00Z); default: the time the log records "
                          "(Inspect, lm-evaluation-harness), else now")
    add.add_argument("--meta", action="append", default=[], type=_meta_entry, metavar="KEY=VALUE",
                     help="free metadata of the run (repeatable), e.g. commit=3f2a1c0 config=prompt-v2")
    add.set_defaults(run=_workspace_add)
    add_series(actions)

    serve = commands.add_parser("serve", help="start the dashboard",
                                description="Start the evalcore dashboard (Streamlit) in this terminal.")
    serve.add_argument("--port", type=int, default=8501, help="port to listen on (8501)")
    serve.add_argument("--address", default="127.0.0.1",
                       help="address to listen on (127.0.0.1: this machine only; 0.0.0.0 opens it to the network)")
    serve.add_argument("--workspace", type=Path, default=None, help=WORKSPACE_HELP)
    serve.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    serve.set_defaults(run=_serve)
    return parser


def _log_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logs", nargs="+", type=Path, metavar="LOG",
                        help="log files or run folders (CSV, TSV, JSON Lines, Parquet, zip, or a tool's log: "
                             "Inspect, lm-evaluation-harness, HELM, lighteval, promptfoo, OpenAI evals and Evals "
                             "API, DeepEval, Ragas, every_eval_ever, AlpacaEval, MT-Bench, Chatbot Arena, "
                             "OpenCompass predictions)")
    parser.add_argument("--mapping", "-m", action="append", default=[], type=_mapping_entry,
                        metavar="COLUMN=ROLE",
                        help="the role of a column (repeatable); COLUMN= leaves the column out; other columns get "
                             "the suggested roles")
    parser.add_argument("--model", default=None, metavar="NAME",
                        help="the model (system) of a log without a model column, e.g. one system's per-example "
                             "scores (Ragas, a judge's export)")
    parser.add_argument("--engine", choices=("auto", "always", "never"), default="auto",
                        help="read Parquet/CSV logs in DuckDB instead of memory: 'auto' above EVALCORE_ENGINE_MB "
                             "megabytes (200)")
    parser.add_argument("--strict", action="store_true",
                        help="refuse the logs when one file cannot be used (by default it is left out, with a "
                             "warning naming it and why)")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")


def _mapping_entry(text: str) -> tuple[str, str | None]:
    column, sep, role = text.partition("=")
    if not sep or not column:
        raise argparse.ArgumentTypeError(f"expected COLUMN=ROLE, got {text!r}")
    return column, role or None


def _meta_entry(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"give metadata as KEY=VALUE (e.g. commit=3f2a1c0), got {text!r}")
    return key.strip(), value.strip()


def _level(text: str) -> float:
    value = float(text)
    if not 0.5 <= value < 1:
        raise argparse.ArgumentTypeError(f"the level is a probability in [0.5, 1), got {text}")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text}")
    return value


def _one_line(message: object) -> str:
    """``message`` as one terminal line, the one way every text from the data or the user (names of files, columns,
    models, campaigns) reaches the terminal: whitespace runs as one space, control characters (ESC of escape
    sequences, BEL) and other invisible ones (the bidirectional controls U+202A-U+202E, U+2066-U+2069, U+200E,
    U+200F, U+061C: Unicode's format characters) escaped as Python writes them (``\x1b``, ``\u202e``)."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in " ".join(str(message).split()))


#: what to do when the disk refuses a file a command writes, by errno
_WRITE_FIXES = {errno.ENOENT: "its folder does not exist: create it, or give a path in an existing folder",
                errno.ENOTDIR: "a part of its path is a file, not a folder: give a path in a folder",
                errno.EISDIR: "it is a folder: give a file name",
                errno.EACCES: "the user running evalcore may not write there: give a path in a writable folder",
                errno.EPERM: "the user running evalcore may not write there: give a path in a writable folder",
                errno.EROFS: "the file system is read-only: give a path on a writable disk",
                errno.ENOSPC: "the disk is full: free space on it, or give a path on another disk",
                errno.EDQUOT: "the disk quota is used up: free space, or give a path on another disk"}


def write_output(path: Path, data: bytes | str, what: str = "the file") -> None:
    """Write ``data`` (text as UTF-8) to ``path``, a file the command was asked for (``-o``, ``--json``); a write the
    disk refuses (a missing folder, a read-only folder or file system, a full disk) is the command's one-line error
    naming the file, what happened and what to do."""
    try:
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)
    except OSError as exc:
        code = errno.errorcode.get(exc.errno or 0, "error")
        fix = _WRITE_FIXES.get(exc.errno or 0, exc.strerror or str(exc))
        raise EvalDataError(f"{path}: cannot write {what} ({code}): {fix}.") from exc


def load(paths: Sequence[Path], entries: Sequence[tuple[str, str | None]], engine: str = "never",
         strict: bool = False, model: str | None = None):
    """The validated log of ``paths``: a plain table's columns get the suggested roles with ``entries`` on top;
    a tool's log (or several files) arrive role-named and ``entries`` rename them. Errors name the files; a file
    that cannot be used among others is left out with a warning (``strict``: the load is refused); ``model`` names
    the model of a log without a model column (``--model``).
    Large Parquet/CSV logs (``engine``, :func:`evalcore.engine.belongs_in_engine`) open in DuckDB as a LazyLog;
    the others are read and validated in a bounded worker (:func:`evalcore.data.sandbox.run_bounded`: a memory and a
    time limit), so that a file that slips through the reader's limits cannot take the host down; files clearly
    within those limits (:func:`evalcore.data.sandbox.clearly_small`) are read in this process."""
    from evalcore.data.routing import belongs_in_engine
    from evalcore.data.sandbox import clearly_small, run_bounded

    if belongs_in_engine(paths, engine):
        from evalcore.engine import scan

        if model is not None:
            raise EvalDataError(f"{listed([p.name for p in paths])}: --model names the model of a log read in memory; "
                                "this one is read in the engine (large Parquet/CSV): add a column 'model' to it.")
        return scan([str(p) for p in paths], mapping=dict(entries))
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise EvalDataError(f"{listed(missing)}: no such file or folder.")
    names = listed([p.name for p in paths])
    try:
        return run_bounded(read_validated, list(paths), dict(entries), strict, model, what=f"Reading {names}",
                           in_process=clearly_small(paths))
    except EvalDataError as exc:
        if any(path.name in str(exc) for path in paths):  # the message names its file already
            raise
        raise EvalDataError(f"{names}: {exc}") from exc


def load_each(paths: Sequence[Path], entries: Sequence[tuple[str, str | None]], engine: str = "never",
              strict: bool = False, model: str | None = None) -> list:
    """The validated log of each of ``paths`` on its own, as :func:`load` of that path alone returns it, but read in
    one bounded worker for all of them (one child's start, about a second of imports, instead of one per file; the
    worker's memory bound then holds for the files together). Logs that belong in the engine are opened there."""
    from evalcore.data.routing import belongs_in_engine
    from evalcore.data.sandbox import clearly_small, run_bounded

    if len(paths) < 2 or any(belongs_in_engine([p], engine) for p in paths):
        return [load([p], entries, engine, strict, model) for p in paths]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise EvalDataError(f"{listed(missing)}: no such file or folder.")
    return run_bounded(read_each, list(paths), dict(entries), strict, model,
                       what=f"Reading {listed([p.name for p in paths])}", in_process=clearly_small(paths))


def read_each(paths: list[Path], overrides: dict[str, str | None], strict: bool = False,
              model: str | None = None) -> list:
    """:func:`read_validated` of each path alone (see :func:`load_each`, which runs this in the bounded worker); an
    error names its file, as :func:`load` does."""
    logs = []
    for path in paths:
        try:
            logs.append(read_validated([path], overrides, strict, model))
        except EvalDataError as exc:
            if path.name in str(exc):
                raise
            raise EvalDataError(f"{path.name}: {exc}") from exc
    return logs


def read_validated(paths: list[Path], overrides: dict[str, str | None], strict: bool = False,
                   model: str | None = None):
    """The validated log of ``paths`` with the mapping ``overrides`` and, for a log without a model column, the
    model ``model`` (see :func:`load`, which runs this in the bounded worker)."""
    from evalcore.data.mapping import with_overrides
    from evalcore.data.validation import validate_raw_log
    from evalcore.importers import read_logs

    raw = read_logs(paths, overrides, strict=strict)
    if model is not None:
        overrides = _named_model(raw, overrides, model)
    if not raw.mapped:
        unknown = [column for column in overrides if column not in raw.frame.columns]
        if unknown:
            raise EvalDataError(f"--mapping names a column {unknown[0]!r} that is not in the file; its columns "
                                f"are: {', '.join(map(str, raw.frame.columns))}.")
        overrides = with_overrides(raw.frame.columns, overrides)
    return validate_raw_log(raw, overrides)


def _named_model(raw, overrides: dict[str, str | None], model: str) -> dict[str, str | None]:
    """``raw`` given the model ``model`` (``--model``) in a column of its own, and the mapping with that column;
    refused for a log that has a model column already, unless its importer named the model after the file (a
    Ragas result), which ``model`` then replaces."""
    import pandas as pd

    from evalcore.data.mapping import with_overrides

    mapped = raw.frame.columns if raw.mapped else [c for c, r in with_overrides(raw.frame.columns, overrides).items()
                                                   if r == "model"]
    if raw.mapped and raw.model_from_file:  # the importer named the model after the file (Ragas): --model renames it
        named = list(map(str, pd.unique(raw.frame["model"])))
        if len(named) > 1:
            raise EvalDataError(f"--model names the one system of a log; these files are {len(named)} systems, each "
                                f"named after its file ({listed(named, 3, repr)}). Leave --model out, or give one "
                                "file.")
        raw.frame = raw.frame.assign(model=model)
        raw.notes.append(f"model = '{model}' (--model): the log names no model (not the file's name, "
                         f"'{named[0]}').")
        return overrides
    if "model" in mapped:
        column = "model" if raw.mapped else mapped[0]
        raise EvalDataError(f"--model names the model of a log without a model column; this log has one "
                            f"('{column}': {listed(list(map(str, raw.frame[column].dropna().unique())), 3, repr)}). "
                            "Leave --model out, or leave the column out (--mapping COLUMN=).")
    column = "model" if "model" not in raw.frame.columns else "model (--model)"
    raw.frame = raw.frame.assign(**{column: model})
    raw.notes.append(f"model = '{model}' (--model): the log has no model column.")
    return {**overrides, column: "model"} if not raw.mapped else overrides


def _validate(args: argparse.Namespace) -> int:
    import pandas as pd

    from evalcore.data.validation import report_of
    from evalcore.importers.detect import TABLE

    names = listed([p.name for p in args.logs])
    try:
        log = load(args.logs, args.mapping, args.engine, args.strict, args.model)
    except EvalDataError as exc:
        if args.debug:
            raise
        if args.json is not None:  # what went wrong as JSON too: a CI job parses it as it parses a usable log's
            _emit_json(args.json, {"files": names, "usable": False, "error": str(exc)})
            if str(args.json) == "-":
                return 1
        print(f"{_one_line(names)}: NOT USABLE\n  {_one_line(str(exc))}")
        return 1
    if not isinstance(log, pd.DataFrame):  # a log in the engine (DuckDB)
        print(f"{_one_line(names)}: usable: a log table with {log.n_rows:,} rows and {len(log.models())} models "
              "(read in the engine, DuckDB).")
        print("column mapping (role: column):")
        for role, column in log.mapping.items():
            print(f"  {role}: {_one_line(column)}")
        if log.notes:
            print("notes:")
            for line in log.notes:
                print(f"  - {_one_line(line)}")
        return 0
    from evalcore.stats.readout import readout

    info = report_of(log)
    table = readout(log, info, args.level)
    if args.json is not None:
        _write_json(args.json, names, info, table, args.level)
        if str(args.json) == "-":
            return 0
    print(f"{_one_line(names)}: usable: a {info.kind} table with {info.n_rows:,} rows and {info.n_models} models.")
    if info.files:
        print("files (file: tool that wrote it):")
        for file, tool in zip(info.files, info.tools):
            print(f"  {_one_line(file)}: {'a plain table' if tool == TABLE else _one_line(tool)}")
    print("column mapping (role: column):")
    for role, column in info.mapping.items():
        print(f"  {role}: {_one_line(column)}")
    if len(table):
        print(_readout_text(table, args.level))
    for title, lines in (("warnings", info.warnings), ("notes", info.notes)):
        if lines:
            print(f"{title}:")
            for line in lines:
                print(f"  - {_one_line(line)}")
    return 0


def _readout_text(table, level: float) -> str:
    """The table of what was read (:func:`evalcore.stats.readout.readout`) as aligned text: a heading naming the
    label, its scale and the interval, then one line per model (and per task under it)."""
    from evalcore.stats.level import percent
    from evalcore.stats.readout import ALL_TASKS

    first = table.iloc[0]
    tasks = bool((table["task"] != ALL_TASKS).any())
    heading = (f"what was read (label '{_one_line(str(first['label']))}', scale {first['scale']}; the mean "
               f"{'over tasks ' if tasks else ''}with its {percent(level)} interval, as on the Models page):")
    header = ["model", *(["task"] if tasks else []), "examples", "labeled", "rows", "repeats", "mean",
              f"{percent(level)} interval"]
    lines = [header]
    for row in table.itertuples(index=False):
        interval = "-" if row.ci_low != row.ci_low else f"[{row.ci_low:.4g}, {row.ci_high:.4g}]"  # NaN: none
        mean = "-" if row.estimate != row.estimate else f"{row.estimate:.4g}"
        lines.append([_one_line(str(row.model)), *([_one_line(str(row.task))] if tasks else []),
                      f"{row.examples:,}", f"{row.labeled:,}", f"{row.rows:,}", str(row.repeats), mean, interval])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = ["  " + "  ".join(cell.ljust(width) if i < (2 if tasks else 1) else cell.rjust(width)
                             for i, (cell, width) in enumerate(zip(line, widths))).rstrip() for line in lines]
    return "\n".join([heading, *text])


def _write_json(target: Path, names: str, info, table, level: float) -> None:
    """The validation's outcome and the table of what was read as JSON, to ``target`` ('-': stdout): NaN as null."""
    rows = [{key: (None if isinstance(value, float) and value != value else value)
             for key, value in row.items()} for row in table.to_dict("records")]
    document = {"files": names, "usable": True, "kind": info.kind, "rows": info.n_rows, "models": info.n_models,
                "level": level, "read": rows, "warnings": list(info.warnings), "notes": list(info.notes)}
    _emit_json(target, document)


def _emit_json(target: Path, document: dict) -> None:
    """``document`` as JSON to ``target`` ('-': stdout); control and bidirectional characters escaped (\\uXXXX)."""
    import json

    text = json.dumps(document, indent=2, default=int)
    if str(target) == "-":
        print(text)
        return
    write_output(target, text + "\n", "the JSON")


def while_importing(work: Callable[[], T], *modules: str) -> T:
    """``work()`` run in a thread while this thread imports ``modules``, what the command needs next. Reading the
    logs is mostly waiting on the bounded reader's child process (or on DuckDB), so the imports, a second or two of
    a command's start, use the other core meanwhile; ``work``'s exception is raised here."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalcore-read") as pool:
        reading = pool.submit(work)
        for module in modules:
            importlib.import_module(module)
        return reading.result()


def _report(args: argparse.Namespace) -> int:
    if (args.base is None) != (args.new is None):
        args.report_parser.error("--base and --new go together: the Comparison section compares two models")
    if args.series is not None and (args.base is not None or len(args.logs) != 1):
        args.report_parser.error("--series compares one new log with the series' baseline: give one LOG, without "
                                 "--base/--new")
    # what the sections use first (the engine's DuckDB backend, XGBoost for the subgroups' cross-fitting) is
    # imported while the worker reads, on the other core
    log = while_importing(lambda: load(args.logs, args.mapping, args.engine, args.strict, args.model),
                          "evalcore.report",
                          "ibis.backends.duckdb", "xgboost")
    from evalcore.report import Settings, build_report, file_records

    series = ""
    if args.series is not None:  # the new log against the series' baseline run: the Comparison section
        from evalcore.cli.series import series_comparison

        log, args.base, args.new, info = series_comparison(args, log)
        series = (f"Series '{info['name']}': {args.new} against its baseline, the "
                  f"{'pinned' if info['pinned'] else 'latest accepted'} run {info['baseline']} "
                  f"({info['baseline_time']}).")
    settings = Settings(level=args.level, seed=args.seed, n_boot=args.n_boot, base=args.base, new=args.new,
                        by=tuple(args.by), margin=args.margin, fdr=args.fdr, series=series)
    bar = None if args.quiet else ProgressBar(sys.stderr)
    report = build_report(log, file_records(args.logs), settings, title=args.title, progress=bar)
    if args.base is not None and not any(section.key == "comparison" for section in report.sections):
        why = next((line for line in report.skipped if line.startswith("Comparison:")), "Comparison: not possible.")
        raise EvalDataError(f"the report was asked to compare {args.new} with {args.base}; {why}")
    write_output(args.out, report.html(), "the report")
    if not args.quiet:
        size = args.out.stat().st_size / 2**20
        print(f"wrote {_one_line(args.out)} ({size:.1f} MB, {len(report.sections)} sections)", file=sys.stderr)
    return 0


def workspace_folder(given: Path | None) -> Path:
    """The workspace a command uses: ``--workspace``, else the dashboard's
    (:func:`evalcore.workspace.folder.default_root`: ``EVALCORE_WORKSPACE``, else the per-user data folder)."""
    from evalcore.workspace.folder import default_root

    return given or default_root()


def missing_in(folder: Path, exc: Exception) -> EvalDataError:
    """A missing item (dataset, campaign, series) or a refused one as the command line's error, naming the
    workspace folder searched and how to search another."""
    said = str(exc).strip("'\"")
    return EvalDataError(f"{said} The workspace searched is {folder}; --workspace or EVALCORE_WORKSPACE names "
                         "another.")


def _workspace_add(args: argparse.Namespace) -> int:
    """Save the log as a dataset; with --series, save it and add it to the series as one step
    (:meth:`~evalcore.workspace.Workspace.save_run`: the series' name, the metadata and --time are checked first,
    and a dataset that cannot be added is not kept)."""
    from evalcore.data.routing import belongs_in_engine
    from evalcore.workspace import Workspace, access
    from evalcore.workspace.workspace import iso_time, series_fields

    folder = workspace_folder(args.workspace)
    if args.time:  # refused before anything is saved, or the workspace made
        iso_time(args.time)
    if args.series:
        series_fields(args.series, dict(args.meta))
    workspace = Workspace(folder)

    def save():
        if belongs_in_engine(args.logs, args.engine):
            return workspace.add_log([str(p) for p in args.logs], args.name, dict(args.mapping) or None, args.owner,
                                     args.shared)
        return workspace.add_dataset(load(args.logs, args.mapping, strict=args.strict, model=args.model), args.name,
                                     None, args.owner, args.shared)

    if args.series:
        record, run = workspace.save_run(save, args.series, args.time, dict(args.meta))
    else:
        record, run = save(), None
    print(f"saved '{_one_line(record.name)}' ({record.rows:,} rows, {record.models} models) as dataset {record.id} "
          f"in {_one_line(folder)}")
    print(_one_line(access.who(record.owner, record.shared)))
    if run is not None:
        print(f"added as a run of the series '{_one_line(run.series)}' ({run.run_time})")
        if run.note:
            print(f"{PROG}: note: {_one_line(run.note)}", file=sys.stderr)
    return 0


class ProgressBar:
    """``[#####.....] 3/7 Calibration`` on a terminal (redrawn in place); one line per section otherwise."""

    WIDTH = 24

    def __init__(self, stream) -> None:
        self.stream = stream
        self.live = stream.isatty()

    def __call__(self, done: int, total: int, name: str) -> None:
        filled = self.WIDTH * done // max(total, 1)
        line = f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {done}/{total} {name}"
        if self.live:
            self.stream.write(f"\r\033[K{line}" + ("\n" if done == total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def dashboard_script() -> Path:
    """The dashboard's ``app.py``: in the checkout next to this package, else in the installed dashboard."""
    here = Path(__file__).resolve().parent.parent / APP
    if here.is_file():
        return here
    spec = importlib.util.find_spec("evalcore_dashboard")
    if spec is None or not spec.submodule_search_locations:
        raise EvalDataError("The dashboard is not installed: pip install 'evalcore[dashboard]'.")
    return Path(next(iter(spec.submodule_search_locations))) / APP


def streamlit_options(script: Path) -> list[str]:
    """The dashboard's ``.streamlit/config.toml`` as command-line options, so that it applies whatever the
    working directory (Streamlit reads that file from the working directory only)."""
    config = script.parent / ".streamlit" / "config.toml"
    options = []
    with config.open("rb") as handle:
        for section, values in tomllib.load(handle).items():
            options += [f"--{section}.{key}={str(value).lower() if isinstance(value, bool) else value}"
                        for key, value in values.items()]
    return options


def _serve(args: argparse.Namespace) -> int:
    """Replace this process by ``python -m streamlit run pages/common/server.py`` (app.py behind evalcore's request
    guard; so signals reach the server directly)."""
    script = dashboard_script()
    if importlib.util.find_spec("streamlit") is None:
        raise EvalDataError("The dashboard needs Streamlit: pip install 'evalcore[dashboard]'.")
    if args.workspace is not None:
        os.environ["EVALCORE_WORKSPACE"] = str(args.workspace.resolve())
    launcher = script.parent / "pages" / "common" / "server.py"
    command = [sys.executable, "-m", "streamlit", "run", str(launcher), *streamlit_options(script),
               f"--server.port={args.port}", f"--server.address={args.address}"]
    sys.stdout.flush()
    os.execv(sys.executable, command)
    return 0  # not reached: execv replaces the process
