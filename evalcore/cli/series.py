"""``evalcore compare --series NAME NEW`` (the gate of a series, for CI) and ``evalcore workspace series accept NAME
RUN``.

The gate (:mod:`evalcore.history.gate`) compares the new log with the series' baseline (the pinned run, else the
latest accepted run) and its reference (the pinned run, else the latest run a member accepted, else the first
accepted run); the model followed is the one most of its runs hold (:func:`evalcore.history.load.series_model`). Its
verdict is kept on the new run (keyed by the log's content, whether the run is saved into the series before or after),
so a run that fails never becomes the next baseline unless a member accepts it. ``evalcore report --series`` compares
the new log with the same baseline (:func:`series_comparison`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalcore.errors import EvalDataError


def _series_inputs(args: argparse.Namespace, new_log):
    """(workspace, entries, model, the new run's rows of the model, its name, its content digest)."""
    from evalcore.cli import missing_in, workspace_folder
    from evalcore.compare.runs import run_name
    from evalcore.history.load import series_model
    from evalcore.workspace import Workspace

    if not hasattr(new_log, "attrs"):
        raise EvalDataError(f"{args.logs[0].name}: this log is read in the engine; comparing it with a series "
                            "needs it in memory: use --engine never.")
    folder = workspace_folder(args.workspace)
    workspace = Workspace(folder)
    entries = workspace.series_runs(args.series)
    if not entries:
        known = ", ".join(name for name, _, _ in workspace.series()[:10]) or "none yet"
        raise missing_in(folder, EvalDataError(f"No series named {args.series!r} (series: {known}). Add runs with "
                                               "evalcore workspace add LOG --name NAME --series SERIES."))
    model = series_model(entries)
    new_models = set(map(str, new_log["model"].unique()))
    if model in new_models:
        new_rows = new_log[new_log["model"].astype(str) == model]
        new_rows.attrs = new_log.attrs
    elif len(new_models) == 1:
        new_rows = new_log
    else:
        raise EvalDataError(f"{args.logs[0].name}: holds the models {', '.join(sorted(new_models)[:6])}, none of them "
                            f"{model!r}, the model of the series {args.series!r}: give a log of that model.")
    return (workspace, entries, model, new_rows, run_name(Path(args.logs[0]).name),
            workspace.content_digest(new_log))


def series_comparison(args: argparse.Namespace, new_log):
    """(log, base, new, info) for ``evalcore report --series``: the combined log of the series' baseline
    (:func:`evalcore.history.gate.baseline_and_reference`) and ``new_log``, the run names, and what the report says
    of the series (name, baseline run and dataset, its time, whether pinned, model)."""
    from evalcore.compare.runs import runs_from_logs
    from evalcore.history.gate import baseline_and_reference, run_rows

    workspace, entries, model, new_rows, name, digest = _series_inputs(args, new_log)
    pinned = workspace.series_baseline(args.series)
    baseline, _ = baseline_and_reference(entries, pinned, digest)
    combined = runs_from_logs([(baseline.name, run_rows(workspace.dataset(baseline.dataset_id), model)),
                               (name, new_rows)], named=True)
    base, new = list(dict.fromkeys(combined["model"].astype(str)))
    info = {"name": args.series, "baseline": base, "baseline_dataset": baseline.dataset_id,
            "baseline_time": baseline.run_time, "pinned": pinned is not None, "model": model}
    return combined, base, new, info


def series_gate(args: argparse.Namespace, new_log):
    """The gate of ``new_log`` against the series ``args.series`` (:func:`evalcore.history.gate.gate`), not yet
    recorded, and the workspace it reads."""
    from evalcore.history.gate import gate

    workspace, _, model, new_rows, name, digest = _series_inputs(args, new_log)
    found = gate(workspace, args.series, new_rows, name, digest, model, by=args.by or None, level=args.level,
                 margin=args.margin, fdr=args.fdr, seed=args.seed, pairs_of_slices=args.pairs_of_slices,
                 min_slice=args.min_slice, metric=args.metric)
    return found, workspace


def add_parser(actions) -> None:
    """``evalcore workspace series accept NAME RUN`` on the workspace command's ``actions``."""
    series = actions.add_parser("series", help="decide on the runs of a series (accept a run as a baseline)",
                                description="The runs of a workspace series and the gate's decisions on them.")
    verbs = series.add_subparsers(title="actions", required=True, metavar="ACTION")
    accept = verbs.add_parser(
        "accept", help="accept a run the gate failed, so that it may be the baseline of the next comparison",
        description="Accept a run of a series: it may then be the baseline of the next evalcore compare --series "
                    "(the latest accepted run is), and it becomes the series' reference (the drift up to it is "
                    "acknowledged). Who accepted it and when are kept.")
    accept.add_argument("name", metavar="NAME", help="the series")
    accept.add_argument("run_name", metavar="RUN", help="the run: its name as the History page shows it, or its dataset id")
    accept.add_argument("--by", default=None, metavar="EMAIL",
                        help="who accepts it: the series' owner, or a member on a run shared with the team (a "
                             "series without an owner: leave it out)")
    from evalcore.cli import WORKSPACE_HELP

    accept.add_argument("--workspace", type=Path, default=None, help=WORKSPACE_HELP)
    accept.add_argument("--debug", action="store_true", help="show the traceback of an error")
    accept.set_defaults(run=_accept)


def _accept(args: argparse.Namespace) -> int:
    from evalcore.cli import missing_in, workspace_folder
    from evalcore.compare.runs import unique_names
    from evalcore.workspace import Workspace

    folder = workspace_folder(args.workspace)
    workspace = Workspace(folder)
    entries = workspace.series_runs(args.name, args.by)
    if not entries:
        raise missing_in(folder, EvalDataError(f"No series named {args.name!r} with a run you may see."))
    names = unique_names([e.name for e in entries])
    chosen = [e for e, n in zip(entries, names) if args.run_name in (n, e.dataset_id)]
    if not chosen:
        raise missing_in(folder, EvalDataError(f"No run {args.run_name!r} in the series {args.name!r}; its runs: "
                                               f"{', '.join(names[-10:])}."))
    try:
        run = workspace.accept_run(args.name, chosen[0].dataset_id, args.by)
    except PermissionError as exc:
        raise EvalDataError(str(exc)) from exc
    print(f"accepted {args.run_name} ({run.dataset_id}) in the series '{args.name}' by {run.decided_by or 'nobody signed in'} "
          f"at {run.decided_at}: it may be the baseline of the next comparison, and it is the series' reference "
          "unless a run is pinned.")
    return 0
