"""``evalcore compare``: is the new run worse than the base run, overall or in a slice? (issue #28, point 3)

Two forms:

- ``evalcore compare BASE NEW``: two logs (files or run folders) of the same model; each is loaded on its own (the
  same bounded loader as the other commands, :func:`evalcore.cli.load`) and becomes a run named after its file
  (:func:`evalcore.compare.runs_from_logs`); BASE is the first, NEW the second.
- ``evalcore compare LOG [LOG ...] --base A --new B``: two models of one log (several files are combined into one
  log as ``report`` and ``validate`` do).
- ``evalcore compare --series NAME NEW``: the gate of a workspace series (:mod:`evalcore.history.gate`): a new log
  against the series' baseline (its pinned run, else its latest accepted run) and its reference (the pinned run,
  else the latest run a member accepted, else the first accepted run), the verdict kept on the run; the JSON file
  gains a ``series`` object naming both and each one's verdict and the comparison with the reference
  (``against_reference``), the JUnit file their properties and a test suite per comparison.

The numbers are :func:`evalcore.compare.compare_runs`'s: the paired difference new - base on the examples both runs
scored, and every slice searched with Benjamini-Hochberg at ``--fdr``. ``--margin`` is in the metric's own units:
for a 0/1 metric a fraction, ``0.01`` is one percentage point.

Exit status: 0 when no regression is found (verdict "improvement", "no difference" or "inconclusive"), 3 when one is
(verdict "regression": new worse beyond the margin overall, or a flagged slice worse), 1 for unusable data, 2 for a
usage error. ``--json FILE`` writes ``Comparison.to_dict()``; ``--junit FILE`` a JUnit XML file (one testcase for
the overall comparison, one per flagged slice; a regression is a ``failure``) for CI systems that read test reports.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from evalcore.cli import (WORKSPACE_HELP, _level, _log_arguments, _one_line, _positive, load, load_each,
                          while_importing, write_output)
from evalcore.cli.series import series_arguments
from evalcore.errors import EvalDataError, listed

#: the exit status when the comparison finds a regression
REGRESSION = 3
USAGE = """evalcore compare BASE NEW [options]
       evalcore compare LOG [LOG ...] --base MODEL --new MODEL [options]
       evalcore compare --series NAME NEW [--workspace DIR] [options]"""
#: flagged slices printed (the worst first); the JSON and JUnit files hold all
PRINTED = 20
#: characters XML 1.0 cannot hold at all (escaping does not help): replaced in the JUnit file
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def add_parser(commands) -> None:
    """The ``compare`` subcommand on ``commands`` (the subparsers of :func:`evalcore.cli._parser`)."""
    compare = commands.add_parser(
        "compare", usage=USAGE,
        help="compare two runs: is NEW worse than BASE? exit 3 on a regression (for CI jobs)",
        description="Compare two runs example by example: the paired difference NEW - BASE on the examples both "
                    "scored, with its interval, and every slice (task, category, group, the --by columns) with "
                    "false discovery rate control. Exit status: 0 no regression found, 3 a regression (NEW worse "
                    "beyond --margin overall, or a flagged slice worse), 1 unusable data, 2 a usage error.",
        epilog="BASE NEW: two logs of the same model, each a run named after its file. LOG --base A --new B: two "
               "models of one log.")
    _log_arguments(compare)
    comparison_arguments(compare)
    compare.add_argument("--pairs-of-slices", action="store_true",
                         help="also search pairs of slices (e.g. category=law & group=y)")
    compare.add_argument("--min-slice", type=_positive, default=20, metavar="N",
                         help="smallest slice searched, in shared examples (20)")
    compare.add_argument("--level", type=_level, default=None,
                         help="confidence level of the intervals (evalcore's default, 0.95)")
    compare.add_argument("--seed", type=int, default=0, help="seed of any resampling (0)")
    compare.add_argument("--metric", choices=("correct", "score"), default=None,
                         help="the metric compared ('correct' when the log has it, else 'score')")
    compare.add_argument("--json", type=Path, default=None, metavar="FILE",
                         help="write the whole comparison (overall, slices, 2x2 table, verdict) as JSON")
    compare.add_argument("--junit", type=Path, default=None, metavar="FILE",
                         help="write a JUnit XML report: one testcase for the overall comparison and one per "
                              "flagged slice, a failure for each regression")
    compare.add_argument("--series", default=None, metavar="NAME",
                         help="compare the one LOG given with this series' baseline run (its pinned run, else its "
                              "latest) in the workspace; exit 3 on a regression")
    compare.add_argument("--workspace", type=Path, default=None, help=f"{WORKSPACE_HELP}, of --series")
    series_arguments(compare)
    compare.set_defaults(run=run, compare_parser=compare)


def comparison_arguments(parser: argparse.ArgumentParser) -> None:
    """--base, --new, --by, --margin and --fdr (``compare``, and ``report`` for its Comparison section)."""
    parser.add_argument("--base", default=None, metavar="MODEL", help="the base model of LOG (with --new)")
    parser.add_argument("--new", default=None, metavar="MODEL", help="the new model of LOG (with --base)")
    parser.add_argument("--by", action="append", default=[], metavar="COLUMN",
                        help="also search the slices of this column (repeatable; metadata or a numeric feature, "
                             "numeric ones in quartile bins); task, category and group are always searched")
    parser.add_argument("--margin", type=_margin, default=0.0,
                        help="non-inferiority margin in the metric's units: NEW is a regression only when worse "
                             "by more than this; for a 0/1 metric a fraction, 0.01 = one percentage point (0)")
    parser.add_argument("--fdr", type=_fdr, default=0.1,
                        help="false discovery rate of the slices flagged (Benjamini-Hochberg; 0.1)")


def _margin(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"the margin is a difference >= 0 in the metric's units (0.01 = one "
                                         f"point of accuracy), got {text}")
    return value


def _fdr(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"the false discovery rate is a probability in (0, 1), got {text}")
    return value


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Usage errors argparse cannot see (exit 2): --base and --new go together; without them, exactly two logs."""
    if args.series is not None:
        if args.base is not None or len(args.logs) != 1:
            parser.error("--series compares one new log with the series' baseline: give one LOG, without "
                         "--base/--new")
        return
    if (args.base is None) != (args.new is None):
        parser.error("--base and --new go together (two models of one log); without them give two logs, BASE NEW")
    if args.base is None and len(args.logs) != 2:
        parser.error(f"give two logs, BASE NEW (got {len(args.logs)}), or one log with --base MODEL --new MODEL")
    if args.base is not None and args.base == args.new:
        parser.error(f"--base and --new name the same model {args.base!r}")


def runs(args: argparse.Namespace):
    """(log, base, new): the log to compare and the names of its two runs."""
    if args.base is not None:
        log = while_importing(lambda: load(args.logs, args.mapping, args.engine, args.strict, args.model),
                              "evalcore.compare")
        return log, args.base, args.new
    loaded = while_importing(lambda: load_each(args.logs, args.mapping, args.engine, args.strict, args.model),
                             "evalcore.compare")
    from evalcore.compare import runs_from_logs

    logs = []
    for path, log in zip(args.logs, loaded):
        if not hasattr(log, "attrs"):  # a log in the engine (above EVALCORE_ENGINE_MB): runs are made in memory
            raise EvalDataError(f"{path.name}: this log is read in the engine (--engine, or larger than "
                                "EVALCORE_ENGINE_MB), but two logs become two runs in memory: use --engine never, or "
                                "write both runs into one file with a model column and run evalcore compare LOG "
                                "--base A --new B (compared in the engine).")
        logs.append((path.name, log))
    combined = runs_from_logs(logs)
    base, new = run_names(combined, [p.name for p in args.logs])
    return combined, base, new


def run_names(combined, files: list[str]) -> tuple[str, str]:
    """The names :func:`~evalcore.compare.runs_from_logs` gave the runs of the two logs ``files``: each file's name
    without its extension (made unique). A log with several models cannot be one run: use --base/--new."""
    from evalcore.compare.runs import run_name, unique_names

    names = unique_names([run_name(name) for name in files])
    models = set(map(str, combined["model"].unique()))
    if not set(names) <= models:
        several = sorted(m for m in models if " / " in m)
        raise EvalDataError(f"{listed(files)}: each log must hold one model to be one run; found "
                            f"{', '.join(several[:6]) or ', '.join(sorted(models)[:6])}. To compare two models of "
                            "the logs, run evalcore compare LOG [LOG ...] --base MODEL --new MODEL.")
    return names[0], names[1]


def run(args: argparse.Namespace) -> int:
    """The command: print the verdict sentence and the flagged slices, write --json/--junit; the exit status."""
    check_arguments(args.compare_parser, args)
    if args.series is not None:
        return run_gate(args)
    log, base, new = runs(args)  # imports evalcore.compare while it reads
    from evalcore.compare import compare_runs

    result = compare_runs(log, base, new, by=args.by or None, level=args.level, margin=args.margin, fdr=args.fdr,
                          seed=args.seed, pairs_of_slices=args.pairs_of_slices, min_slice=args.min_slice,
                          metric=args.metric)
    if args.json is not None:  # the files first: they are written even if the terminal goes away
        write_output(args.json, _json(result.to_dict()), "the JSON file")
    if args.junit is not None:
        write_output(args.junit, junit_xml(result), "the JUnit file")
    print(result.sentence)
    print(result.detectable_sentence())
    print(f"verdict: {result.verdict}")
    print(flagged_text(result))
    return REGRESSION if result.verdict == "regression" else 0


def run_gate(args: argparse.Namespace) -> int:
    """``--series``: the gate (:mod:`evalcore.history.gate`): the files, then each comparison as ``run`` prints one,
    the gate's verdict, and the verdict kept on the run (a workspace that cannot be written says so on stderr; the
    exit status is the gate's all the same)."""
    import sys

    from evalcore.cli.series import series_gate
    from evalcore.history.gate import record

    [loaded] = load_each(args.logs, args.mapping, args.engine, args.strict, args.model)
    gate, workspace = series_gate(args, loaded)
    info = gate.info()
    if args.json is not None:
        reference = gate.against_reference.to_dict() if gate.against_reference is not None else None
        data = {**gate.against_baseline.to_dict(), "verdict": gate.verdict, "series": info,
                "against_reference": reference}
        write_output(args.json, _json(data), "the JSON file")
    if args.junit is not None:
        write_output(args.junit, junit_xml(gate.against_baseline, info, gate.against_reference), "the JUnit file")
    print(gate.describe())
    for role, run, result in gate.comparisons():
        print(f"against the {role} {run.name}: {result.sentence}")
        print(result.detectable_sentence())
        print(flagged_text(result))
    print(f"verdict: {gate.verdict}")
    try:
        record(workspace, gate)
    except EvalDataError as exc:
        print(f"evalcore: the gate's verdict was not kept in the workspace: {exc}", file=sys.stderr)
    else:
        if not gate.passed:
            print(f"{gate.new} is kept as rejected in the series '{gate.series}': it will not be the baseline of the "
                  "next comparison unless a member accepts it (evalcore workspace series accept "
                  f"'{gate.series}' RUN, or on the History page).")
    return REGRESSION if not gate.passed else 0


def _json(data: dict) -> str:
    return json.dumps(finite(data), indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"


def finite(value):
    """``value`` with numpy scalars as Python values and NaN or infinity as None, so that any JSON parser reads it."""
    import numpy as np

    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, dict):
        return {str(key): finite(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _points(result) -> bool:
    """Whether differences read in percentage points (a 0/1 metric)."""
    return result.metric == "correct"


def _unit(result) -> str:
    return " points" if _points(result) else ""


def _margin_text(result) -> str:
    return f"{100 * result.margin:g} points" if _points(result) else f"{result.margin:g}"


def _difference(result, value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{100 * float(value):+.1f}" if _points(result) else f"{float(value):+.3g}"


def flagged_rows(result) -> list[dict]:
    """The flagged slices, largest change first (:meth:`evalcore.compare.result.Comparison.flagged`), as printed
    (and as the JUnit file names them)."""
    flagged = result.flagged()
    return [] if flagged is None or flagged.empty else flagged.to_dict("records")


def _too_many(result) -> str:
    """The slice columns left out for their many values, with their counts and the bound."""
    from evalcore.compare.slices import MAX_VALUES

    columns = ", ".join(f"'{_one_line(name)}' (about {values:,})" for name, values in result.too_many_values)
    return (f"column{'s' if len(result.too_many_values) > 1 else ''} {columns} not searched: more than "
            f"{MAX_VALUES:,} values (bin, or choose a column with fewer values)")


def flagged_text(result) -> str:
    """The flagged slices as a small aligned table, or one line saying none is."""
    from evalcore.stats.figures import percent
    from evalcore.stats.headline import count, number

    rows = flagged_rows(result)
    searched = f"{count(result.n_searched)} slices searched, {percent(result.fdr)} false discovery rate"
    if result.n_skipped_small:
        searched += f"; {count(result.n_skipped_small)} smaller than {result.min_slice} examples not searched"
    if result.too_many_values:
        searched += f"; {_too_many(result)}"
    if not result.n_searched:
        why = [f"{count(result.n_skipped_small)} smaller than {result.min_slice} examples"] * bool(
            result.n_skipped_small) + [_too_many(result)] * bool(result.too_many_values)
        return "no slice searched (" + ("; ".join(why) or "no slice column has two or more values among the "
                                        "shared examples") + ")."
    if not rows:
        return f"no slice is flagged ({searched})."
    shown = rows[:PRINTED]
    unit = " (points)" if _points(result) else ""
    head = ["slice", "n", "base", "new", f"difference{unit}", f"{percent(result.level)} interval", "q", "direction"]
    body = [[_one_line(str(row["slice"])), count(row["n"]), number(row["base"]), number(row["new"]),
             _difference(result, row["difference"]),
             f"{_difference(result, row['ci_low'])} to {_difference(result, row['ci_high'])}",
             number(row["q_value"], 2), str(row["direction"])] for row in shown]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head))]

    def line(cells):
        return "  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    more = ([f"  ... and {len(rows) - PRINTED:,} more flagged slices (--json and --junit list them all)"]
            if len(rows) > PRINTED else [])
    return "\n".join([f"flagged slices ({len(rows)}; {searched}):", line(head), *map(line, body), *more])


def _xml_text(text) -> str:
    """``text`` as XML 1.0 can hold it (ElementTree escapes &, < and quotes; characters XML forbids are replaced)."""
    return _NOT_XML.sub("\ufffd", str(text))


def overall_fails(result) -> bool:
    """Whether the overall comparison is a regression: the interval's upper end below -margin."""
    high = float(result.overall["ci_high"].iloc[0])
    return not math.isnan(high) and high < -result.margin


def junit_xml(result, series: dict | None = None, reference=None) -> str:
    """A JUnit XML report of ``result``: a testsuite with one testcase for the overall comparison (a failure when
    NEW is worse beyond the margin) and one per flagged slice (a failure when the slice is worse); the verdict
    sentence in ``system-out``; the settings as properties. With ``series`` (the gate's
    :meth:`~evalcore.history.gate.Gate.info`) the properties name the series, its baseline and its reference, and
    ``reference`` (the comparison with the reference, when another run) adds its own testsuite. Names from the data
    are escaped by ElementTree."""
    results = [("baseline", result)] + ([("reference", reference)] if reference is not None else [])
    suites = ET.Element("testsuites", name="evalcore compare")
    tests = failures = 0
    for role, each in results:
        t, f = _suite(suites, each, series, role if series else None)
        tests, failures = tests + t, failures + f
    suites.set("tests", str(tests))
    suites.set("failures", str(failures))
    suites.set("errors", "0")
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _suite(suites, result, series: dict | None, role: str | None) -> tuple[int, int]:
    """One comparison's testsuite (:func:`junit_xml`) under ``suites``; (its tests, its failures)."""
    from evalcore.stats.figures import percent
    from evalcore.stats.headline import count, number

    overall = result.overall.iloc[0]
    rows = flagged_rows(result)
    worse = [row for row in rows if row["direction"] == "worse"]
    fails_overall = overall_fails(result) or (result.verdict == "regression" and not worse)
    failures = int(fails_overall) + len(worse)
    tests = 1 + len(rows)
    against = f" (the {role})" if role else ""
    suite = ET.SubElement(suites, "testsuite",
                          name=_xml_text(f"evalcore compare: {result.new} vs {result.base}{against}"),
                          tests=str(tests), failures=str(failures), errors="0", skipped="0")
    properties = ET.SubElement(suite, "properties")
    gate = (("series", series["name"]), ("series baseline", series["baseline"]),
            ("series reference", series["reference"]), ("compared with", role), ("gate verdict", series["gate"])) \
        if series else ()
    for key, value in (("base", result.base), ("new", result.new), ("metric", result.metric),
                       ("verdict", result.verdict), ("level", result.level), ("margin", result.margin),
                       ("fdr", result.fdr), ("seed", result.seed), ("slices searched", result.n_searched), *gate):
        ET.SubElement(properties, "property", name=key, value=_xml_text(value))
    classname = f"evalcore.compare.{role}" if role else "evalcore.compare"
    case = ET.SubElement(suite, "testcase", classname=classname,
                         name=_xml_text(f"overall: {result.new} vs {result.base}{against}"))
    if fails_overall:
        failure = ET.SubElement(case, "failure", type="regression", message=_xml_text(
            f"{result.new} is worse than {result.base}{against}: difference "
            f"{_difference(result, overall['difference'])}{_unit(result)} ({percent(result.level)} interval "
            f"{_difference(result, overall['ci_low'])} to {_difference(result, overall['ci_high'])}{_unit(result)}; "
            f"margin {_margin_text(result)})"))
        failure.text = _xml_text(result.sentence)
    for row in rows:
        case = ET.SubElement(suite, "testcase", classname=f"{classname}.slices", name=_xml_text(row["slice"]))
        if row["direction"] == "worse":
            failure = ET.SubElement(case, "failure", type="regression", message=_xml_text(
                f"slice {row['slice']}: {result.new} is worse than {result.base}{against}: difference "
                f"{_difference(result, row['difference'])}{_unit(result)} (q = {number(row['q_value'], 2)}, "
                f"n = {count(row['n'])})"))
            failure.text = _xml_text(f"{percent(result.level)} interval {_difference(result, row['ci_low'])} to "
                                     f"{_difference(result, row['ci_high'])}{_unit(result)}; flagged at a "
                                     f"{percent(result.fdr)} false discovery rate over {result.n_searched} slices.")
    ET.SubElement(suite, "system-out").text = _xml_text(result.sentence)
    return tests, failures
