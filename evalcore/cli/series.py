"""``evalcore compare --series NAME NEW`` (the gate of a series, for CI) and ``evalcore workspace series accept|pin
NAME RUN`` / ``unpin NAME``.

Every command sees a series as the History page shows it to a member: the runs that member may see
(:meth:`evalcore.workspace.Workspace.series_runs`), the member named by ``--as EMAIL`` (``compare``, ``report``) or
``--by EMAIL`` (``accept``, ``pin``, ``unpin``); without one, the runs without an owner. A series whose runs are all
hidden from the caller is named with their owners, never reported missing. Accepting, pinning and unpinning follow
the page's rule (:func:`evalcore.workspace.access.check_decide`): the series' owner, or a member on a run shared with
the team; refused naming the owner.

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


def _series_entries(workspace, folder: Path, name: str, viewer: str | None, option: str):
    """The runs of series ``name`` that ``viewer`` may see, as the History page lists them to that member; refused
    naming the series, and the owners of its runs where it has runs ``viewer`` may not see (give ``option``)."""
    from evalcore.cli import missing_in

    entries = workspace.series_runs(name, viewer)
    if entries:
        return entries
    hidden = workspace.series_hidden(name, viewer)
    if hidden:
        owners = ", ".join(o for o in hidden[:5] if o) or "nobody"
        who = f"as {viewer}" if viewer else f"without {option}"
        raise missing_in(folder, EvalDataError(
            f"The series {name!r} has runs, but none you may see {who}: they are private to {owners}. Give "
            f"{option} EMAIL: their owner, or a team member for runs shared with the team."))
    known = ", ".join(s for s, _, _ in workspace.series(viewer)[:10]) or "none yet"
    raise missing_in(folder, EvalDataError(f"No series named {name!r} (series: {known}). Add runs with evalcore "
                                           "workspace add LOG --name NAME --series SERIES."))


def _series_inputs(args: argparse.Namespace, new_log):
    """(workspace, entries, model, the new run's rows of the model, its name, its content digest)."""
    from evalcore.cli import workspace_folder
    from evalcore.compare.runs import run_name
    from evalcore.history.load import series_model
    from evalcore.workspace import Workspace

    if not hasattr(new_log, "attrs"):
        raise EvalDataError(f"{args.logs[0].name}: this log is read in the engine; comparing it with a series "
                            "needs it in memory: use --engine never.")
    folder = workspace_folder(args.workspace)
    workspace = Workspace(folder)
    entries = _series_entries(workspace, folder, args.series, args.viewer, "--as")
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


def series_arguments(parser: argparse.ArgumentParser) -> None:
    """``--as EMAIL`` (also ``--owner``) of ``compare --series`` and ``report --series``."""
    parser.add_argument("--as", "--owner", dest="viewer", default=None, metavar="EMAIL",
                        help="read --series as this team member sees it on the History page (the owner of its runs, "
                             "or any member for runs shared with the team); without it, the runs without an owner")


def series_comparison(args: argparse.Namespace, new_log):
    """(log, base, new, info) for ``evalcore report --series``: the combined log of the series' baseline
    (:func:`evalcore.history.gate.baseline_and_reference`) and ``new_log``, the run names, and what the report says
    of the series (name, baseline run and dataset, its time, whether pinned, model)."""
    from evalcore.compare.runs import runs_from_logs
    from evalcore.history.gate import baseline_and_reference, holding, run_rows

    workspace, entries, model, new_rows, name, digest = _series_inputs(args, new_log)
    pinned = workspace.series_baseline(args.series)
    baseline, _ = baseline_and_reference(holding(entries, model), pinned, digest)
    baseline_rows = run_rows(workspace.dataset(baseline.dataset_id, args.viewer), model)
    combined = runs_from_logs([(baseline.name, baseline_rows),
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
                 min_slice=args.min_slice, metric=args.metric, viewer=args.viewer)
    return found, workspace


def add_parser(actions) -> None:
    """``evalcore workspace series accept NAME RUN``, ``pin NAME RUN`` and ``unpin NAME`` on the workspace command's
    ``actions``."""
    from evalcore.cli import WORKSPACE_HELP

    series = actions.add_parser("series", help="decide on the runs of a series (accept a run, pin the baseline)",
                                description="The runs of a workspace series and the gate's decisions on them.")
    verbs = series.add_subparsers(title="actions", required=True, metavar="ACTION")
    accept = verbs.add_parser(
        "accept", help="accept a run the gate failed, so that it may be the baseline of the next comparison",
        description="Accept a run of a series: it may then be the baseline of the next evalcore compare --series "
                    "(the latest accepted run is), and it becomes the series' reference (the drift up to it is "
                    "acknowledged). Who accepted it and when are kept.")
    pin = verbs.add_parser(
        "pin", help="pin a run as the series' baseline and reference (what evalcore compare --series compares with)",
        description="Pin a run of a series: evalcore compare --series then compares every new run with it, as "
                    "baseline and reference, until it is unpinned. As on the History page, the series' owner pins "
                    "(or a member, on a run shared with the team).")
    unpin = verbs.add_parser(
        "unpin", help="unpin the series' baseline: the latest accepted run is the baseline again",
        description="Unpin the baseline of a series: evalcore compare --series compares new runs with the latest "
                    "accepted run again (and the reference with the latest run a member accepted).")
    for verb, run in ((accept, _accept), (pin, _pin), (unpin, _unpin)):
        verb.add_argument("name", metavar="NAME", help="the series")
        if verb is not unpin:
            verb.add_argument("run_name", metavar="RUN",
                              help="the run: its name as the History page shows it, or its dataset id")
        verb.add_argument("--by", default=None, metavar="EMAIL",
                          help="who decides: the series' owner, or a member on a run shared with the team (a series "
                               "without an owner: leave it out)")
        verb.add_argument("--workspace", type=Path, default=None, help=WORKSPACE_HELP)
        verb.add_argument("--debug", action="store_true", help="show the traceback of an error")
        verb.set_defaults(run=run)


def _chosen_run(args: argparse.Namespace):
    """(workspace, the run of series ``args.name`` named ``args.run_name``, its name) as ``args.by`` sees them."""
    from evalcore.cli import missing_in, workspace_folder
    from evalcore.compare.runs import unique_names
    from evalcore.workspace import Workspace

    folder = workspace_folder(args.workspace)
    workspace = Workspace(folder)
    entries = _series_entries(workspace, folder, args.name, args.by, "--by")
    names = unique_names([e.name for e in entries])
    chosen = [(e, n) for e, n in zip(entries, names) if args.run_name in (n, e.dataset_id)]
    if not chosen:
        raise missing_in(folder, EvalDataError(f"No run {args.run_name!r} in the series {args.name!r}; its runs: "
                                               f"{', '.join(names[-10:])}."))
    return workspace, *chosen[0]


def _decided(decide):
    """``decide()``'s result, a refusal (:func:`evalcore.workspace.access.check_decide`, naming the owner) as the
    command's error."""
    try:
        return decide()
    except (PermissionError, LookupError) as exc:
        raise EvalDataError(f"{exc} (--by EMAIL says who you are.)") from exc


def _accept(args: argparse.Namespace) -> int:
    from evalcore.cli import _one_line

    workspace, chosen, name = _chosen_run(args)
    run = _decided(lambda: workspace.accept_run(args.name, chosen.dataset_id, args.by))
    print(f"accepted {_one_line(name)} ({run.dataset_id}) in the series '{_one_line(args.name)}' by "
          f"{run.decided_by or 'nobody signed in'} at {run.decided_at}: it may be the baseline of the next "
          "comparison, and it is the series' reference unless a run is pinned.")
    return 0


def _pin(args: argparse.Namespace) -> int:
    from evalcore.cli import _one_line

    workspace, chosen, name = _chosen_run(args)
    _decided(lambda: workspace.pin_baseline(args.name, chosen.dataset_id, args.by))
    print(f"pinned {_one_line(name)} ({chosen.dataset_id}) as the baseline and reference of the series "
          f"'{_one_line(args.name)}': evalcore compare --series compares every new run with it until it is unpinned.")
    return 0


def _unpin(args: argparse.Namespace) -> int:
    from evalcore.cli import _one_line, workspace_folder
    from evalcore.workspace import Workspace

    folder = workspace_folder(args.workspace)
    workspace = Workspace(folder)
    _series_entries(workspace, folder, args.name, args.by, "--by")
    if workspace.series_baseline(args.name) is None:
        print(f"the series '{_one_line(args.name)}' has no pinned baseline: nothing to unpin.")
        return 0
    _decided(lambda: workspace.pin_baseline(args.name, None, args.by))
    print(f"unpinned the baseline of the series '{_one_line(args.name)}': evalcore compare --series compares new runs "
          "with its latest accepted run again.")
    return 0
