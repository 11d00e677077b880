"""One number, one interval, everywhere (issue 37): the leading model's overall accuracy and its interval at the
sidebar's level are the same, to four decimals, on the Models page, the Leaderboard (its answer and its overall
rows), the Report page's HTML, ``evalcore report`` and the API (:func:`evalcore.stats.overall.overall_table`);
a page that shows another estimand (AI-assisted: pooled over the examples) says so beside its number with the
overall one; pages that pick one model open on the leader.

The expected bounds are the normal interval of the mean over tasks joined with Wilson's at the effective number of
examples, written out here from the per-task counts (not evalcore's code), for a hand-made log and the shared
datasets.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from evalcore.data.export import csv_bytes
from evalcore.data.validation import load_eval_log
from evalcore.stats.overall import overall_table
from crafted import evalcore
from test_pages import assert_no_exception, goto, open_app, shown, table_with, texts, upload
from test_autoeval import goto_autoeval
from test_report_page import last_report

NUMBERS = re.compile(r'<script type="application/json" id="evalcore-numbers">(.*?)</script>', re.S)
Z90 = 1.6448536269514722


def by_hand(frame: pd.DataFrame, model: str, z: float) -> tuple[float, float, float]:
    """Mean over tasks of a 0/1 log and its interval: se = sqrt(sum_j p_j (1 - p_j) / n_j) / T (binomial, every
    task here has right and wrong answers), the normal interval p ± z se joined with Wilson's at n_eff = p (1 - p) /
    se²."""
    rows = frame[(frame["model"] == model) & frame["correct"].notna()]
    cells = rows.groupby("task")["correct"].agg(["mean", "size"])
    p = float(cells["mean"].mean())
    se = math.sqrt(float((cells["mean"] * (1 - cells["mean"]) / cells["size"]).sum())) / len(cells)
    n_eff = p * (1 - p) / se**2
    centre = (p + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
    half = z / (1 + z * z / n_eff) * math.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff**2))
    return p, min(centre - half, p - z * se), max(centre + half, p + z * se)


def three_tasks(seed: int = 5) -> pd.DataFrame:
    """Three models on three tasks of different sizes (so the mean over tasks and the pooled mean differ), with a
    confidence on every example and a third of the labels missing (for the AI-assisted page)."""
    rng = np.random.default_rng(seed)
    parts = []
    for model, skill in (("alpha", 0.55), ("beta", 0.8), ("gamma", 0.7)):
        for task, n, hard in (("easy", 300, 0.15), ("mid", 120, 0.0), ("hard", 60, -0.35)):
            p = float(np.clip(skill + hard, 0.05, 0.95))
            correct = (rng.random(n) < p).astype(float)
            conf = np.clip(p + rng.normal(0, 0.15, n), 0.01, 0.99)
            parts.append(pd.DataFrame({"model": model, "task": task, "example_id": [f"{task}{i}" for i in range(n)],
                                       "correct": correct, "confidence": conf.round(4)}))
    frame = pd.concat(parts, ignore_index=True)
    frame.loc[frame["example_id"].str.endswith(("1", "4", "7")), "correct"] = np.nan  # unlabeled: same ids for all
    return frame


def leader_row(table: pd.DataFrame, model: str) -> tuple[float, float, float]:
    row = table[table["model"].astype(str) == model].iloc[0]
    return float(row["estimate"]), float(row["ci_low"]), float(row["ci_high"])


def report_numbers(html: str) -> dict:
    return json.loads(NUMBERS.search(html).group(1))["sections"]


def test_every_surface_shows_the_leaders_one_interval(tmp_path):
    frame = three_tasks()
    content = csv_bytes(frame)
    expected = by_hand(frame, "beta", Z90)

    at = upload(open_app(), "three_tasks.csv", content)
    goto(at, "models")
    at.select_slider(key="w_level").set_value(0.9)
    at.run()
    assert_no_exception(at)
    models = leader_row(table_with(at, "model", "estimate", "ci_low", "ci_high"), "beta")
    assert shown(at.main.subheader[0].value).startswith("beta leads on accuracy at 0.")

    goto(at, "leaderboard")
    board = table_with(at, "scope", "estimate", "ci_low", "ci_high")
    leaderboard = leader_row(board[board["scope"] == "overall"], "beta")
    answer = shown(at.main.subheader[0].value)
    assert answer.startswith(f"beta leads on overall accuracy at {expected[0]:.3f}"), answer
    assert f"90% interval {expected[1]:.3f}–{expected[2]:.3f}" in answer, answer
    tasks = board[board["scope"] == "task"]  # the tasks keep their bootstrap intervals: not the Wilson ones
    assert len(tasks) == 9 and (tasks["ci_high"] > tasks["ci_low"]).all()

    goto(at, "report")
    assert_no_exception(at)
    page_report = report_numbers(last_report().html.decode("utf-8"))

    path = tmp_path / "three_tasks.csv"
    path.write_bytes(content)
    done = evalcore("report", str(path), "--level", "0.9", "--out", str(tmp_path / "r.html"), "--quiet",
                    cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    cli_report = report_numbers((tmp_path / "r.html").read_text(encoding="utf-8"))

    api = leader_row(overall_table(load_eval_log(path), "correct", 0.1), "beta")
    surfaces = {"by hand": expected, "models": models, "leaderboard": leaderboard, "api": api}
    for name, numbers in (("report page", page_report), ("cli", cli_report)):
        surfaces[f"{name} accuracy"] = leader_row(pd.DataFrame(numbers["accuracy"]["tables"]["by model"]), "beta")
        surfaces[f"{name} leaderboard"] = leader_row(pd.DataFrame(numbers["leaderboard"]["tables"]["overall"]), "beta")
        facts = numbers["leaderboard"]["facts"]
        surfaces[f"{name} summary"] = (facts["estimate"], facts["ci_low"], facts["ci_high"])
        assert facts["top"] == "beta" and "beta" not in facts["tied_with"]
    for name, numbers in surfaces.items():
        assert numbers == pytest.approx(expected, abs=5e-5), name

    goto_autoeval(at)  # pooled over the examples: said beside the number, with the overall one
    notes = [t for t in texts(at.caption) if t.startswith("This accuracy is pooled over its")]
    assert notes == [f"This accuracy is pooled over its 480 examples; beta's overall accuracy (Models, Leaderboard, "
                     f"report) is the mean over 3 tasks, {expected[0]:.3f} ({expected[1]:.3f}–{expected[2]:.3f}) at "
                     "90%."], texts(at.caption)


def visit(at, page: str):
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert_no_exception(at)
    return at


def test_pages_that_pick_a_model_open_on_the_leader():
    frame = three_tasks(seed=6)
    at = upload(open_app(), "three_tasks.csv", csv_bytes(frame))
    visit(at, "sampling")
    assert at.selectbox(key="sp_model").value == "beta"  # alpha comes first in the selection, beta leads
    visit(at, "calibration")
    assert shown(at.tabs[0].label) == "beta"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["vtab_1k.csv", "imagenet_x_predictions.csv.gz"])
def test_shared_datasets_show_one_interval_on_every_surface(shared_file, tmp_path, name):
    path = shared_file(name)
    content = path.read_bytes()
    api_log = load_eval_log(path)
    summary = api_log.attrs["report"]["kind"] == "summary"
    api = overall_table(api_log, "correct", 0.05, summary=summary)
    leader = str(api["model"].iloc[0])
    expected = leader_row(api, leader)

    at = upload(open_app(), name, content, "application/gzip" if name.endswith(".gz") else "text/csv")
    goto(at, "models")
    assert leader_row(table_with(at, "model", "estimate", "ci_low", "ci_high"), leader) == pytest.approx(
        expected, abs=5e-5)
    goto(at, "leaderboard")
    board = table_with(at, "scope", "estimate", "ci_low", "ci_high")
    assert leader_row(board[board["scope"] == "overall"], leader) == pytest.approx(expected, abs=5e-5)
    done = evalcore("report", str(path), "--out", str(tmp_path / "r.html"), "--quiet", "--n-boot", "200",
                    cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    numbers = report_numbers((tmp_path / "r.html").read_text(encoding="utf-8"))
    facts = numbers["leaderboard"]["facts"]
    assert facts["top"] == leader and leader not in facts["tied_with"]
    assert (facts["estimate"], facts["ci_low"], facts["ci_high"]) == pytest.approx(expected, abs=5e-5)
    assert leader_row(pd.DataFrame(numbers["accuracy"]["tables"]["by model"]), leader) == pytest.approx(
        expected, abs=5e-5)
