"""``evalcore label``: labeling campaigns from the command line, for teams that label elsewhere.

``create DATASET_ID --model M --design D [--target W | --budget N]`` plans a campaign on a saved dataset and prints
its id; ``export CAMPAIGN_ID -o labels.csv`` writes one row per queued example (``example_id``,
``inclusion_probability``, ``stratum``, ``label``: the settled value, ``status``, ``annotator``, ``adjudicator``;
cells neutralised against formula injection) and beside it ``labels.annotators.csv``, each annotator's agreement
with the settled labels and with the others;
``import CAMPAIGN_ID labels.csv`` records the labels of that file filled in (checked against the queue: all or
nothing); ``status CAMPAIGN_ID [--json F]`` prints the estimate (and writes it as JSON); ``report CAMPAIGN_ID -o
F.html`` writes the stakeholder report of the campaign's estimate (its summary opens with the design).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evalcore.cli import WORKSPACE_HELP, _level, _positive, missing_in, workspace_folder


def add_parser(commands) -> None:
    """The ``label`` command and its actions on ``commands`` (the subparsers of :func:`evalcore.cli._parser`)."""
    from evalcore.labeling.designs import DESIGNS

    label = commands.add_parser("label", help="labeling campaigns: create, export, import, status",
                                description="Labeling campaigns run by statistics (the dashboard's Label page).")
    actions = label.add_subparsers(title="actions", required=True, metavar="ACTION")

    def action(name: str, help: str, run) -> argparse.ArgumentParser:
        parser = actions.add_parser(name, help=help, description=help[0].upper() + help[1:] + ".")
        parser.add_argument("--workspace", type=Path, default=None, help=WORKSPACE_HELP)
        parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
        parser.set_defaults(run=run)
        return parser

    create = action("create", "plan a campaign on a saved dataset and print its id", _create)
    create.add_argument("dataset", metavar="DATASET_ID")
    create.add_argument("--model", required=True, help="the model whose outputs are labeled")
    create.add_argument("--design", required=True, choices=DESIGNS)
    goal = create.add_mutually_exclusive_group()
    goal.add_argument("--target", type=float, help="the half-width to reach (default ±0.02 of the scale)")
    goal.add_argument("--budget", type=_positive, help="the number of labels")
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
    imported.add_argument("--annotator", default="import", help="who labeled rows without an annotator")

    report = action("report", "write the stakeholder report of the campaign's estimate (the design's)", _report)
    report.add_argument("campaign", metavar="CAMPAIGN_ID")
    report.add_argument("--out", "-o", type=Path, required=True, help="the HTML file to write")

    status = action("status", "print the campaign's estimate", _status)
    status.add_argument("campaign", metavar="CAMPAIGN_ID")
    status.add_argument("--json", type=Path, default=None, help="also write the estimate to this JSON file")


def _open(args):
    from evalcore.labeling.campaign import Campaign
    from evalcore.workspace import Workspace

    return Campaign.open(Workspace(workspace_folder(args.workspace)), args.campaign)


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
    from evalcore.labeling.campaign import Campaign
    from evalcore.workspace import Workspace

    campaign = Campaign.create(Workspace(workspace_folder(args.workspace)), args.dataset, args.model, args.design,
                               target=args.target, budget=args.budget, level=args.level, seed=args.seed,
                               owner=args.owner, overlap=args.overlap, metric=args.metric, scale=args.scale,
                               name=args.name, shared=args.shared)
    print(campaign.id)
    print(f"{campaign.info.description} (--seed {campaign.info.seed} draws this queue again); "
          f"{campaign.info.pool['N']:,} examples, about {campaign.info.planned:,} labels planned", file=sys.stderr)
    return 0


@_lookup
def _export(args) -> int:
    from evalcore.data.export import csv_bytes

    campaign = _open(args)
    table = campaign.export()
    args.out.write_bytes(csv_bytes(table))
    annotators = args.out.with_name(f"{args.out.stem}.annotators.csv")
    annotators.write_bytes(csv_bytes(campaign.annotator_quality()))
    print(f"wrote {args.out} ({len(table):,} queued examples, {int(table['label'].notna().sum()):,} settled, "
          f"{int((table['status'] == 'pending').sum()):,} awaiting adjudication) and {annotators} (each annotator's "
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
        done = campaign.import_labels(table, args.annotator)
    except EvalDataError as exc:
        raise EvalDataError(f"{args.labels}: {exc}") from exc
    print(f"recorded {done:,} labels from {args.labels}", file=sys.stderr)
    return 0


@_lookup
def _report(args) -> int:
    from evalcore.report import Settings, build_report

    campaign = _open(args)
    report = build_report(campaign.summary(), settings=Settings(level=campaign.info.level, seed=campaign.info.seed),
                          title=f"Labeling campaign {campaign.info.name}")
    args.out.write_text(report.html(), encoding="utf-8")
    print(f"wrote {args.out}: {report.summary[0] if report.summary else ''}", file=sys.stderr)
    return 0


@_lookup
def _status(args) -> int:
    from evalcore.labeling.campaign import sentence

    campaign = _open(args)
    estimate = campaign.estimate()
    numbers = {**estimate.as_dict(), "campaign": campaign.id, "model": campaign.info.model}
    if args.json is not None:  # NaN (no estimate yet) as null: JSON has no NaN
        args.json.write_text(json.dumps({k: None if isinstance(v, float) and v != v else v
                                         for k, v in numbers.items()}, indent=2))
    print(sentence(campaign.info, estimate))
    return 0
