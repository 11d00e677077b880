"""``evalcore validate`` says what it read (issue 49, item 1): per model, and per task where there are tasks, the
examples, labeled examples, rows, repeats and the label's mean with its interval at ``--level``, the label's name and
scale, as a table on stdout and as JSON (``--json``); the numbers are the Models page's
(:func:`evalcore.stats.overall.overall_table`), checked here against Wilson's interval and the mean over tasks
written out by hand."""

from __future__ import annotations

import json
import math

import pytest

from crafted import evalcore
from evalcore.data.validation import load_eval_log, report_of
from evalcore.stats.overall import overall_table
from evalcore.stats.readout import readout

Z95, Z90 = 1.959963984540054, 1.6448536269514722
# model a: task t 2 of 3 right, task u 1 of 2 right (each with two agreeing samples); model b: t 3 of 3 with one
# unlabeled example more, u 0 of 2
LOG = """model,example_id,task,repeat,acc
a,1,t,1,1
a,2,t,1,0
a,3,t,1,1
a,4,u,1,1
a,4,u,2,1
a,5,u,1,0
a,5,u,2,0
b,1,t,1,1
b,2,t,1,1
b,3,t,1,1
b,6,t,1,
b,4,u,1,0
b,4,u,2,0
b,5,u,1,0
b,5,u,2,0
"""


def wilson(k: float, n: float, z: float) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def mean_over_tasks(cells: list[tuple[int, int]], z: float) -> tuple[float, float, float]:
    """The mean over tasks of (right, examples) cells and its interval: the normal interval with se = sqrt(sum of
    the binomial variances) / T, clipped to [0, 1], joined with Wilson's at n_eff = p (1 - p) / se² (every cell here
    has 0 < p < 1)."""
    p = sum(k / n for k, n in cells) / len(cells)
    se = math.sqrt(sum((k / n) * (1 - k / n) / n for k, n in cells)) / len(cells)
    n_eff = p * (1 - p) / se**2
    low, high = wilson(p * n_eff, n_eff, z)
    return p, min(low, max(p - z * se, 0)), max(high, min(p + z * se, 1))


@pytest.fixture
def path(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text(LOG)
    return path


def test_validate_prints_each_models_examples_and_mean_as_the_models_page(path, tmp_path):
    out = evalcore("validate", str(path), "--mapping", "acc=correct", "--json", str(tmp_path / "read.json"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    start = lines.index("what was read (label 'acc', scale 0/1; the mean over tasks with its 95% interval, as on "
                        "the Models page):")
    table = [line.split() for line in lines[start + 1:start + 8]]
    assert table[0] == ["model", "task", "examples", "labeled", "rows", "repeats", "mean", "95%", "interval"]
    a, a_low, a_high = mean_over_tasks([(2, 3), (1, 2)], Z95)
    t_low, t_high = wilson(2, 3, Z95)
    u_low, u_high = wilson(1, 2, Z95)
    assert table[1] == ["a", "(all)", "5", "5", "7", "2", f"{a:.4g}", f"[{a_low:.4g},", f"{a_high:.4g}]"]
    assert table[2] == ["a", "t", "3", "3", "3", "1", "0.6667", f"[{t_low:.4g},", f"{t_high:.4g}]"]
    assert table[3] == ["a", "u", "2", "2", "4", "2", "0.5", f"[{u_low:.4g},", f"{u_high:.4g}]"]
    assert table[4][:6] == ["b", "(all)", "6", "5", "8", "2"] and table[5][:6] == ["b", "t", "4", "3", "4", "1"]

    written = json.loads((tmp_path / "read.json").read_text())
    assert written["usable"] and written["level"] == 0.95 and written["kind"] == "log"
    rows = {(r["model"], r["task"]): r for r in written["read"]}
    assert rows["a", "(all)"]["estimate"] == pytest.approx(a, abs=1e-12)
    assert (rows["a", "(all)"]["ci_low"], rows["a", "(all)"]["ci_high"]) == pytest.approx((a_low, a_high), abs=1e-9)
    assert (rows["a", "t"]["ci_low"], rows["a", "t"]["ci_high"]) == pytest.approx((t_low, t_high), abs=1e-9)
    assert rows["b", "t"] | {"estimate": None, "ci_low": None, "ci_high": None} == {
        "model": "b", "task": "t", "examples": 4, "labeled": 3, "rows": 4, "repeats": 1, "label": "acc",
        "scale": "0/1", "estimate": None, "ci_low": None, "ci_high": None}
    # the one computation: the Models page's overall_table of the same log
    log = load_eval_log(path, mapping={"model": "model", "example_id": "example_id", "task": "task",
                                       "repeat": "repeat", "acc": "correct"})
    overall = overall_table(log, "correct", 0.05).set_index("model")
    for model in ("a", "b"):
        for column in ("estimate", "ci_low", "ci_high"):
            assert rows[model, "(all)"][column] == pytest.approx(overall.loc[model, column], abs=1e-12)


def test_level_and_json_on_stdout_and_a_score_label(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("model,example_id,score\nm,1,2\nm,2,4\nm,3,9\n")
    out = evalcore("validate", str(path), "--level", "0.9", "--json", "-")
    assert out.returncode == 0, out.stderr
    written = json.loads(out.stdout)  # the JSON alone on stdout
    [row] = written["read"]
    sd = math.sqrt(((2 - 5) ** 2 + (4 - 5) ** 2 + (9 - 5) ** 2) / 2)
    half = 2.919985580355516 * sd / math.sqrt(3)  # Student-t, 2 degrees of freedom, 90%
    assert row["scale"] == "2 to 9 (values seen)" and row["label"] == "score" and row["task"] == "(all)"
    assert (row["estimate"], row["ci_low"], row["ci_high"]) == pytest.approx((5, 5 - half, 5 + half), abs=1e-9)
    text = evalcore("validate", str(path), "--level", "0.9").stdout
    assert "the mean with its 90% interval" in text and "  m             3        3     3        1     5  [" in text


def test_readout_of_a_summary_counts_its_examples(tmp_path):
    path = tmp_path / "board.csv"
    path.write_text("model,task,n,n_correct\nx,t1,10,7\nx,t2,20,10\n")
    log = load_eval_log(path)
    table = readout(log, report_of(log), 0.9).set_index("task")
    assert table.loc["(all)", ["examples", "labeled", "rows", "repeats"]].tolist() == [30, 30, 2, 1]
    expected = mean_over_tasks([(7, 10), (10, 20)], Z90)
    assert tuple(table.loc["(all)", ["estimate", "ci_low", "ci_high"]]) == pytest.approx(expected, abs=1e-9)
    assert tuple(table.loc["t1", ["ci_low", "ci_high"]]) == pytest.approx(wilson(7, 10, Z90), abs=1e-9)
