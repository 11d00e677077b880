"""The report's summary reads from its own sections' tables (issue 37, point 2), on every shared dataset that is an
evaluation log: the top model and its interval are the first row of the accuracy table and the leaderboard's overall
row, to four decimals; the models called indistinguishable from the leader are exactly those whose simultaneous
interval of the difference with it contains 0, never the leader itself; the calibration and battles sentences name
the models and numbers of their tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from evalcore.data.validation import load_eval_log
from evalcore.report import Settings, build_report

#: files of ../shared/data that are not evaluation logs: reference values of the EBCI package, VTAB's test sizes,
#: MMLU-Pro's per-model totals (no task: the reference the per-question file is checked against)
NOT_LOGS = ("ebci_", "vtab_test_sizes", "mmlu_pro_models_summary", "SOURCES")
#: the column mapping a person chooses for a file whose columns are not named after the roles (one row per trial
#: of a subject, human or model: the subject is the model; its "category" is the object shown, left unmapped)
MAPPINGS = {"model_vs_human_trials.csv.gz": {"subject": "model", "dataset": "task", "condition": "group",
                                             "correct": "correct", "category": None}}


def shared_logs(root: Path) -> list[Path]:
    """Every log of ../shared/data: its top-level files, and each tool's files (a folder of files is one run)."""
    top = [p for p in sorted(root.iterdir()) if p.is_file() and not p.name.startswith(NOT_LOGS)]
    runs = []
    for tool in sorted((root / "ecosystem").iterdir()) if (root / "ecosystem").is_dir() else []:
        if tool.is_dir():
            entries = sorted(tool.iterdir())
            runs += [tool] if tool.name == "lm_eval" else entries  # lm_eval: results and samples make one run
    return top + runs


def _interval(row) -> str:
    return f"{row['estimate']:.3f} ({row['ci_low']:.3f} to {row['ci_high']:.3f})"


def check_summary(report) -> None:
    sections = {s.key: s for s in report.sections}
    lines = report.summary
    acc, board = sections.get("accuracy"), sections.get("leaderboard")
    if acc is not None:
        first = acc.tables["by model"].iloc[0]
        assert acc.facts["top"] == str(first["model"])
        assert (acc.facts["estimate"], acc.facts["ci_low"], acc.facts["ci_high"]) == pytest.approx(
            (first["estimate"], first["ci_low"], first["ci_high"]), abs=5e-5)
    if board is not None:
        facts = board.facts
        top = facts["top"]
        assert acc is not None and top == acc.facts["top"]
        overall = board.tables["overall"].iloc[0]
        assert str(overall["model"]) == top
        assert (overall["estimate"], overall["ci_low"], overall["ci_high"]) == pytest.approx(
            (acc.facts["estimate"], acc.facts["ci_low"], acc.facts["ci_high"]), abs=5e-5)
        [line] = [s for s in lines if s.startswith("Top model:")]
        assert line.startswith(f"Top model: {top}, ") and _interval(overall) in line
        diffs = board.tables["pairwise differences"]
        mine = diffs[(diffs["model_a"].astype(str) == top) | (diffs["model_b"].astype(str) == top)]
        tied = mine[(mine["ci_low"] <= 0) & (mine["ci_high"] >= 0)]
        expected = sorted((set(tied["model_a"].astype(str)) | set(tied["model_b"].astype(str))) - {top})
        assert facts["tied_with"] == expected and top not in facts["tied_with"]
        separated = int(((diffs["ci_low"] > 0) | (diffs["ci_high"] < 0)).sum())
        assert facts["separated"] == separated and facts["pairs"] == len(diffs)
        [pairs] = [s for s in lines if f"{separated} of the {len(diffs)} pairs of models differ" in s]
        assert pairs.startswith(f"{top} is not distinguishable from {', '.join(expected[:5])}" if expected else
                                f"{top} is ahead of every other model")
    elif acc is not None:
        [line] = [s for s in lines if s.startswith(("Top model:", "Model:"))]
        assert f": {acc.facts['top']}, " in line and _interval(acc.tables["by model"].iloc[0]) in line
    cal = sections.get("calibration")
    if cal is not None:
        table = cal.tables["ece by model"]
        worst = table.loc[table["ece"].idxmax()]
        assert cal.facts["worst"] == str(worst["model"])
        assert cal.facts["miscalibrated"] == int((table["ci_low"] > 0).sum())
        ece = f"{worst['ece']:.3f} ({worst['ci_low']:.3f} to {worst['ci_high']:.3f})"
        assert [s for s in lines if str(worst["model"]) in s and ece in s], (ece, lines)
    battles = sections.get("battles")
    if battles is not None:
        [line] = [s for s in lines if s.startswith("Strongest model in the battles:")]
        assert f": {battles.facts['top']}, " in line


@pytest.mark.slow
def test_the_summary_reads_from_the_sections_on_every_shared_log(shared_data):
    logs = shared_logs(shared_data)
    assert len(logs) >= 10
    checked = {}
    for path in logs:
        log = load_eval_log(path, mapping=MAPPINGS.get(path.name))
        report = build_report(log, settings=Settings(n_boot=200))
        check_summary(report)
        checked[path.name] = [s.key for s in report.sections]
    summary = pd.Series(checked)
    assert summary.map(lambda keys: "leaderboard" in keys).sum() >= 3, summary  # MMLU-Pro, VTAB-1k, ImageNet-X, ...
    assert summary.map(lambda keys: "calibration" in keys).sum() >= 1, summary
