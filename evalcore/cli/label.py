"""``evalcore label``: labeling campaigns from the command line, for teams that label elsewhere.

``create DATASET_ID --model M --design D [--target W | --budget N]`` plans a campaign on a saved dataset and prints
its id; ``create DATASET_ID --models A B [C ...] --design srs|disagreement|neyman [--target W | --decide [--margin M]
| --budget N]`` plans a comparison campaign (issue 48) and prints its id, then its seed and its pool (the shared
examples, how many differ, what was left out); ``export CAMPAIGN_ID -o labels.csv`` writes one row per queued example
(``example_id``, ``inclusion_probability``, ``stratum``, ``label``: the settled value, ``status``, ``annotator``,
``adjudicator``; for a comparison ``pattern``, each model's output and verdict; cells neutralised against formula
injection) and beside it, for one model, ``labels.annotators.csv``, each annotator's agreement with the settled
labels and with the others;
``import CAMPAIGN_ID labels.csv`` records the labels of that file filled in (checked against the queue: all or
nothing); ``status CAMPAIGN_ID [--json F]`` prints the estimate, for a comparison the sentence of
:func:`evalcore.labeling.comparison.comparison_sentence` (and writes the numbers as JSON); ``report CAMPAIGN_ID -o
F.html`` writes the stakeholder report of the campaign's estimate (its summary opens with the design; a comparison's
with its answer); ``delete CAMPAIGN_ID`` deletes it with every label, for its owner only (``--by OWNER``; refused
naming the owner). ``--by EMAIL`` says who runs an action: without it only the campaigns without an owner open. Text from the data (model names, outputs, notes) is printed as one line with control and bidirectional
characters escaped (:func:`evalcore.cli._one_line`), file names too; a file the disk refuses to write is a one-line
error naming it (:func:`evalcore.cli.write_output`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evalcore.cli import WORKSPACE_HELP, _level, _one_line, _positive, missing_in, workspace_folder, write_output


def add_parser(commands) -> None:
    """The ``label`` command and its actions on ``commands`` (the subparsers of :func:`evalcore.cli._parser`)."""
    from evalcore.labeling.designs import COMPARISON_DESIGNS, DESIGNS

    label = commands.add_parser("label", help="labeling campaigns: create, export, import, status, report, delete",
                                description="Labeling campaigns run by statistics (the dashboard's Label page).")
    actions = label.add_subparsers(title="actions", required=True, metavar="ACTION")

    def action(name: str, help: str, run, by: bool = True) -> argparse.ArgumentParser:
        parser = actions.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".")
        parser.add_argument("--workspace", type=Path, default=None, help=WORKSPACE_HELP)
        if by:
            parser.add_argument("--by", default=None, metavar="EMAIL",
                                help="who runs the command: a member's e-mail, to reach a campaign with an owner "
                                     "(its owner's, or any member's once it is shared); without it, only the "
                                     "campaigns without an owner")
        parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
        parser.set_defaults(run=run)
        return parser

    create = action("create", "plan a campaign on a saved dataset and print its id", _create, by=False)
    create.add_argument("dataset", metavar="DATASET_ID")
    who = create.add_mutually_exclusive_group(required=True)
    who.add_argument("--model", help="the model whose outputs are labeled")
    who.add_argument("--models", nargs="+", metavar="MODEL",
                     help="two or more models to compare (a comparison campaign: the first minus the second is "
                          "the difference estimated)")
    create.add_argument("--design", required=True, choices=tuple(dict.fromkeys(DESIGNS + COMPARISON_DESIGNS)),
                        help=f"one model: {', '.join(DESIGNS)}; a comparison: {', '.join(COMPARISON_DESIGNS)} "
                             "(disagreement labels only the examples where the outputs differ; neyman too, "
                             "stratified by the models' confidences)")
    goal = create.add_mutually_exclusive_group()
    goal.add_argument("--target", type=float, help="the half-width to reach (default ±0.02 of the scale)")
    goal.add_argument("--decide", action="store_true",
                      help="a comparison: stop as soon as the confidence sequence shows which model is better")
    goal.add_argument("--budget", type=_positive, help="the number of labels")
    create.add_argument("--margin", type=float, default=0.0,
                        help="with --decide: the difference that does not matter, in accuracy (0.01 is 1 point): "
                             "stop once a model is shown not worse by more than it")
    create.add_argument("--level", type=_level, default=None, help="confidence level (0.95)")
    create.add_argument("--seed", type=int, default=None,
                        help="seed of the queue's order (default: one more than the largest seed of the workspace's "
                             "campaigns, so that each campaign has its own queue)")
    create.add_argument("--overlap", type=_positive, default=1, help="labels per example (for agreement; 1)")
    create.add_argument("--metric", choices=("correct", "score", "pairwise"), default=None)
    create.add_argument("--scale", type=float, nargs=2, metavar=("LOW", "HIGH"), help="a score's range")
    create.add_argument("--owner", default=None, help="the owner's e-mail on a team instance")
    create.add_argument("--shared", action="store_true", help="let every signed-in member label it")
    create.add_argument("--name", default=None)

    export = action("export", "write the campaign's queue with its labels as CSV", _export)
    export.add_argument("campaign", metavar="CAMPAIGN_ID")
    export.add_argument("--out", "-o", type=Path, required=True)

    imported = action("import", "record the labels of an exported file filled in", _import)
    imported.add_argument("campaign", metavar="CAMPAIGN_ID")
    imported.add_argument("labels", type=Path, metavar="LABELS_CSV")
    imported.add_argument("--annotator", default=None,
                          help="who labeled rows without an annotator (default: --by, else 'import'); on a "
                               "campaign with an owner every row is the importer's (--by), and where nobody signs "
                               "in a name is its author, never an e-mail address")

    report = action("report", "write the stakeholder report of the campaign's estimate (the design's)", _report)
    report.add_argument("campaign", metavar="CAMPAIGN_ID")
    report.add_argument("--out", "-o", type=Path, required=True, help="the HTML file to write")

    delete = action("delete", "delete the campaign with its queue and every label (its owner only)", _delete)
    delete.add_argument("campaign", metavar="CAMPAIGN_ID")

    status = action("status", "print the campaign's estimate", _status)
    status.add_argument("campaign", metavar="CAMPAIGN_ID")
    status.add_argument("--json", type=Path, default=None, help="also write the estimate to this JSON file")


def _finite(value):
    """``value`` with NaN as None (JSON has no NaN), inside lists and dicts too."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return None if isinstance(value, float) and value != value else value


def _open(args):
    from evalcore.labeling.campaign import Campaign
    from evalcore.workspace import Workspace

    return Campaign.open(Workspace(workspace_folder(args.workspace)), args.campaign, viewer=args.by)


def _lookup(fn):
    """Unknown campaigns and datasets and refused permissions as the command line's one-line errors (exit 1),
    naming the workspace folder searched."""
    def run(args) -> int:
        try:
            return fn(args)
        except (LookupError, PermissionError) as exc:
            raise missing_in(workspace_folder(args.workspace), exc) from exc
    return run


@_lookup
def _create(args) -> int:
    from evalcore.errors import EvalDataError
    from evalcore.labeling.campaign import Campaign
    from evalcore.workspace import Workspace

    workspace = Workspace(workspace_folder(args.workspace))
    if args.models is None:
        if args.decide or args.margin:
            raise EvalDataError("--decide and --margin are stop rules of a comparison: give --models A B (two or "
                                "more models) instead of --model.")
        campaign = Campaign.create(workspace, args.dataset, args.model, args.design, target=args.target,
                                   budget=args.budget, level=args.level, seed=args.seed, owner=args.owner,
                                   overlap=args.overlap, metric=args.metric, scale=args.scale, name=args.name,
                                   shared=args.shared)
        print(campaign.id)
        print(f"{campaign.info.description} (--seed {campaign.info.seed} draws this queue again); "
              f"{campaign.info.pool['N']:,} examples, about {campaign.info.planned:,} labels planned", file=sys.stderr)
        return 0
    if args.metric is not None or args.scale is not None:
        raise EvalDataError("A comparison (--models) labels each model's output right or wrong: drop --metric and "
                            "--scale.")
    if args.margin and not args.decide:
        raise EvalDataError(f"--margin {args.margin:g} is the margin of the decide rule: add --decide, or drop "
                            "--margin.")
    campaign = Campaign.create(workspace, args.dataset, models=args.models, design=args.design, target=args.target,
                               budget=args.budget, level=args.level, seed=args.seed, owner=args.owner,
                               overlap=args.overlap, name=args.name, shared=args.shared, decide=args.decide,
                               margin=args.margin)
    info = campaign.info
    pool = info.pool
    print(campaign.id)
    print(f"{_one_line(info.name)}: {info.description} (--seed {info.seed} draws this queue again)", file=sys.stderr)
    print(f"pool: {pool['N']:,} examples shared by {_one_line(', '.join(info.models))}; their outputs differ on "
          f"{pool['N_D']:,} ({pool['N_D'] / pool['N']:.0%}); the design draws from {pool['M']:,}; about "
          f"{info.planned:,} labels planned", file=sys.stderr)
    patterns = ", ".join(f"{_one_line(name)} {size:,}" for name, size in zip(pool["patterns"], pool["pattern_sizes"]))
    print(f"patterns: {patterns}", file=sys.stderr)
    for note in info.notes:
        print(f"note: {_one_line(note)}", file=sys.stderr)
    return 0


@_lookup
def _export(args) -> int:
    from evalcore.data.export import csv_bytes

    campaign = _open(args)
    table = campaign.export()
    write_output(args.out, csv_bytes(table))
    if campaign.info.kind == "comparison":
        counts = table["status"].value_counts()
        print(f"wrote {_one_line(args.out)} ({len(table):,} queued examples, "
              f"{int(counts.get('labeled', 0) + counts.get('adjudicated', 0)):,} settled, "
              f"{int(counts.get('disputed', 0) + counts.get('skipped', 0)):,} awaiting adjudication)", file=sys.stderr)
        return 0
    annotators = args.out.with_name(f"{args.out.stem}.annotators.csv")
    write_output(annotators, csv_bytes(campaign.annotator_quality()))
    print(f"wrote {_one_line(args.out)} ({len(table):,} queued examples, {int(table['label'].notna().sum()):,} settled, "
          f"{int((table['status'] == 'pending').sum()):,} awaiting adjudication) and {_one_line(annotators)} (each annotator's "
          "agreement with the settled labels and the others)", file=sys.stderr)
    return 0


@_lookup
def _import(args) -> int:
    from evalcore.data.reading import read_table
    from evalcore.data.sandbox import run_bounded

    from evalcore.errors import EvalDataError

    if not args.labels.is_file():
        raise EvalDataError(f"{args.labels}: no such file.")
    campaign = _open(args)
    try:
        table = run_bounded(read_table, args.labels.read_bytes(), what=f"Reading {args.labels.name}")
        done = campaign.import_labels(table, args.annotator, by=args.by)
    except EvalDataError as exc:
        raise EvalDataError(f"{args.labels}: {exc}") from exc
    print(f"recorded {done:,} labels from {_one_line(args.labels)}", file=sys.stderr)
    return 0


@_lookup
def _report(args) -> int:
    from evalcore.report import Settings, build_report

    campaign = _open(args)
    if campaign.info.kind == "comparison":
        from evalcore.report.campaign import comparison_report

        report = comparison_report(campaign)
    else:
        report = build_report(campaign.summary(), settings=Settings(level=campaign.info.level,
                                                                    seed=campaign.info.seed),
                              title=f"Labeling campaign {campaign.info.name}")
    write_output(args.out, report.html(), "the report")
    print(f"wrote {_one_line(args.out)}: {_one_line(report.summary[0]) if report.summary else ''}", file=sys.stderr)
    return 0


@_lookup
def _delete(args) -> int:
    campaign = _open(args)
    labels = len(campaign.history())
    campaign.delete(viewer=args.by)
    print(f"deleted the labeling campaign '{_one_line(campaign.info.name)}' ({campaign.id}) with its {labels:,} "
          f"label{'' if labels == 1 else 's'}", file=sys.stderr)
    return 0


@_lookup
def _status(args) -> int:
    campaign = _open(args)
    estimate = campaign.estimate()
    if campaign.info.kind == "comparison":
        from evalcore.labeling.comparison import comparison_sentence

        said = comparison_sentence(campaign.info, estimate)
        numbers = {**estimate.as_dict(), "campaign": campaign.id, "sentence": said}
    else:
        from evalcore.labeling.campaign import sentence

        said = sentence(campaign.info, estimate)
        numbers = {**estimate.as_dict(), "campaign": campaign.id, "model": campaign.info.model}
    if args.json is not None:
        write_output(args.json, json.dumps(_finite(numbers), indent=2), "the JSON")
    print(_one_line(said))
    return 0
