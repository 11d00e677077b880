"""``evalcore compare`` in subprocesses (issue #28, point 3): exit 3 on a regression, 0 on an improvement, 1 for
unusable data, 2 for usage errors; the JSON and JUnit files parsed back; ``evalcore report --base --new``.

The logs are made by hand, so every number below is counted from them:

- 200 examples of one task ``qa``, ids 0..199; group ``law`` for ids 0..99, ``math`` for 100..199. The slices
  searched: group=law and group=math (one task: not a slice), so Benjamini-Hochberg runs over 2 slices.
- ``base`` is right on ids 20..199 (180 right, accuracy 0.9); ``new`` on ids 80..199 (120 right, accuracy 0.6).
- 2x2 table: both right = ids 80..199 = 120; only base right = ids 20..79 = 60; only new right = 0; both wrong = ids
  0..19 = 20. Difference new - base = (0 - 60) / 200 = -0.30; exact McNemar p = 2 * 0.5**60.
- law (ids 0..99): base right on 20..99 (0.80), new on 80..99 (0.20): difference -0.60 (60 discordant, all "only base
  right"); math (ids 100..199): both right on all, difference 0.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalcore.cli import main
from crafted import evalcore

ROOT = Path(__file__).resolve().parents[2]
NUMBERS = re.compile(r'<script type="application/json" id="evalcore-numbers">(.*?)</script>', re.S)
N = 200
BASE_RIGHT = np.arange(N) >= 20
NEW_RIGHT = np.arange(N) >= 80
GROUP = np.where(np.arange(N) < 100, "law", "math")
#: a model name with every character XML and HTML escape, to check the files quote it
NEW_NAME = 'new <v2> & "beta"'


def run_frame(model: str, right: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"model": model, "task": "qa", "example_id": np.arange(N), "group": GROUP,
                         "correct": right.astype(int)})


def one_log(tmp_path: Path, new: str = NEW_NAME) -> Path:
    """One CSV log with both models: ``base`` and ``new`` (named ``new``)."""
    path = tmp_path / "both.csv"
    pd.concat([run_frame("base", BASE_RIGHT), run_frame(new, NEW_RIGHT)]).to_csv(path, index=False)
    return path


def two_logs(tmp_path: Path) -> tuple[Path, Path]:
    """Two JSON Lines logs of the same model ``m``: yesterday's run (base.jsonl) and today's (new.jsonl)."""
    base, new = tmp_path / "base.jsonl", tmp_path / "new.jsonl"
    run_frame("m", BASE_RIGHT).to_json(base, orient="records", lines=True)
    run_frame("m", NEW_RIGHT).to_json(new, orient="records", lines=True)
    return base, new


# ------------------------------------------------------------------------------------------------ exit 3
def test_a_clear_regression_between_two_logs_exits_3_and_writes_json_and_junit(tmp_path):
    base, new = two_logs(tmp_path)
    out = evalcore("compare", str(base), str(new), "--json", str(tmp_path / "c.json"),
                   "--junit", str(tmp_path / "report.xml"))
    assert out.returncode == 3, out.stderr
    lines = out.stdout.splitlines()
    assert "regression" in lines[0] and "new" in lines[0] and "base" in lines[0]  # the verdict sentence first
    assert "verdict: regression" in out.stdout
    assert "flagged slices (1; 2 slices searched, 10% false discovery rate):" in out.stdout
    law = next(line for line in lines if line.strip().startswith("group=law"))
    assert law.split()[1:5] == ["100", "0.800", "0.200", "-60.0"]  # n, base, new, difference in points
    assert "group=math" not in out.stdout  # no difference there: not flagged

    data = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "regression"
    overall = data["overall"]
    assert overall["n"] == N and overall["base"] == pytest.approx(0.9) and overall["new"] == pytest.approx(0.6)
    assert overall["difference"] == pytest.approx(-0.30)
    assert overall["p_value"] == pytest.approx(2 * 0.5 ** 60, rel=1e-6)
    assert overall["ci_high"] < 0
    cells = {row["cell"]: row["n"] for row in data["pairs"]}
    assert cells == {"both right": 120, "only base right": 60, "only new right": 0, "both wrong": 20}

    suite = ET.parse(tmp_path / "report.xml").getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["overall: new vs base", "group=law"]
    assert all(c.find("failure") is not None for c in cases)  # both are regressions
    assert suite.get("tests") == "2" and suite.get("failures") == "2"
    assert "regression" in suite.find("system-out").text


def test_a_regression_between_two_models_of_one_log_names_them_literally_in_the_files(tmp_path):
    path = one_log(tmp_path)
    out = evalcore("compare", str(path), "--base", "base", "--new", NEW_NAME, "--junit", str(tmp_path / "j.xml"),
                   "--json", str(tmp_path / "j.json"))
    assert out.returncode == 3, out.stderr
    assert NEW_NAME in out.stdout.splitlines()[0]
    text = (tmp_path / "j.xml").read_text(encoding="utf-8")
    assert "&lt;v2&gt; &amp;" in text  # escaped in the file, read back whole
    root = ET.fromstring(text.encode("utf-8"))
    names = [c.get("name") for c in root.iter("testcase")]
    assert names[0] == f"overall: {NEW_NAME} vs base"
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["new"] == NEW_NAME and props["verdict"] == "regression"
    assert json.loads((tmp_path / "j.json").read_text(encoding="utf-8"))["settings"]["new"] == NEW_NAME


def test_a_margin_wider_than_the_drop_is_still_a_flagged_slice_regression(tmp_path):
    """A margin of 0.5 (50 points) covers the overall drop of 30 points (interval above -0.5), but the law slice
    (-60 points) is flagged and worse: still a regression (the contract: any flagged slice worse)."""
    path = one_log(tmp_path, new="new")
    out = evalcore("compare", str(path), "--base", "base", "--new", "new", "--margin", "0.5",
                   "--junit", str(tmp_path / "m.xml"))
    assert out.returncode == 3, out.stderr
    cases = {c.get("name"): c for c in ET.parse(tmp_path / "m.xml").getroot().iter("testcase")}
    assert cases["overall: new vs base"].find("failure") is None  # overall within the margin
    assert cases["group=law"].find("failure") is not None


def test_by_a_numeric_column_searches_its_quartiles_with_benjamini_hochberg_over_all_slices(tmp_path):
    """--by length (= the example id 0..199): quartiles of 50 examples. The first two hold the drop: 30 of 50
    discordant, all "only base right" (-0.60; exact McNemar p = 2 * 0.5**30); the others none. Six slices searched
    (group=law, group=math and four quartiles): BH q of the two quartiles = p * 6 / 3 (ranks 2 and 3, the law group
    rank 1 with p = 2 * 0.5**60, q = p * 6)."""
    path = tmp_path / "by.csv"
    frame = pd.concat([run_frame("base", BASE_RIGHT), run_frame("new", NEW_RIGHT)], ignore_index=True)
    frame["length"] = np.tile(np.arange(N), 2)
    frame.to_csv(path, index=False)
    out = evalcore("compare", str(path), "--base", "base", "--new", "new", "--by", "length", "--json",
                   str(tmp_path / "by.json"))
    assert out.returncode == 3, out.stderr
    data = json.loads((tmp_path / "by.json").read_text(encoding="utf-8"))
    assert data["n_searched"] == 6 and data["settings"]["by"] == ["length"]
    slices = {row["slice"]: row for row in data["slices"]}
    bins = [row for name, row in slices.items() if name.startswith("length in ")]
    assert len(bins) == 4 and all(row["n"] == 50 for row in bins)
    drop = sorted((row for row in bins if row["flagged"]), key=lambda row: row["slice"])
    assert len(drop) == 2 and all(row["difference"] == pytest.approx(-0.6) for row in drop)
    assert all(row["q_value"] == pytest.approx(2 * 0.5 ** 30 * 6 / 3, rel=1e-6) for row in drop)
    assert slices["group=law"]["q_value"] == pytest.approx(2 * 0.5 ** 60 * 6, rel=1e-6)
    assert "flagged slices (3; 6 slices searched" in out.stdout


def test_slice_columns_with_too_many_values_are_named_with_the_bound(tmp_path):
    """category and group with 5,000 values each (one example per value), at most 1,000 are searched: neither is,
    and the output says which columns were left out, about how many values they hold and the bound (issue 38: it
    said "no slice column has two or more values")."""
    n = 5000
    path = tmp_path / "many.csv"
    frame = pd.concat([pd.DataFrame({"model": model, "example_id": np.arange(n), "correct": np.arange(n) % 2,
                                     "category": [f"c{i}" for i in range(n)], "group": [f"g{i}" for i in range(n)]})
                       for model in ("base", "new")], ignore_index=True)
    frame.to_csv(path, index=False)
    out = evalcore("compare", str(path), "--base", "base", "--new", "new", "--json", str(tmp_path / "many.json"))
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "many.json").read_text(encoding="utf-8"))["n_searched"] == 0
    said = re.search(r"no slice searched \(columns 'category' \(about ([\d,]+)\), 'group' \(about ([\d,]+)\) not "
                     r"searched: more than 1,000 values \(bin, or choose a column with fewer values\)\)\.", out.stdout)
    assert said, out.stdout
    assert all(int(v.replace(",", "")) > 1000 for v in said.groups())  # approximate counts of 5,000 values
    assert "no slice column has two or more values" not in out.stdout


# ------------------------------------------------------------------------------------------------ exit 0
def test_an_improvement_exits_0_and_its_junit_has_no_failure(tmp_path):
    base, new = two_logs(tmp_path)
    out = evalcore("compare", str(new), str(base), "--junit", str(tmp_path / "ok.xml"), "--json",
                   str(tmp_path / "ok.json"))  # the better run second: +30 points
    assert out.returncode == 0, out.stderr
    assert "verdict: improvement" in out.stdout
    data = json.loads((tmp_path / "ok.json").read_text(encoding="utf-8"))
    overall = data["overall"]
    assert data["verdict"] == "improvement" and overall["difference"] == pytest.approx(0.30)
    cells = {row["cell"]: row["n"] for row in data["pairs"]}
    assert cells == {"both right": 120, "only base right": 0, "only new right": 60, "both wrong": 20}
    root = ET.parse(tmp_path / "ok.xml").getroot()
    assert root.find("testsuite").get("failures") == "0"
    assert not list(root.iter("failure"))
    assert [c.get("name") for c in root.iter("testcase")] == ["overall: base vs new", "group=law"]  # better


def test_identical_runs_are_no_regression(tmp_path):
    path = tmp_path / "same.csv"
    pd.concat([run_frame("a", BASE_RIGHT), run_frame("b", BASE_RIGHT)]).to_csv(path, index=False)
    out = evalcore("compare", str(path), "--base", "a", "--new", "b", "--margin", "0.05")
    assert out.returncode == 0, out.stderr
    assert "verdict: no difference" in out.stdout  # difference 0, interval within +-0.05
    assert "no slice is flagged" in out.stdout


# ------------------------------------------------------------------------------------------------ exit 1
def test_unusable_data_exits_1_naming_the_file(tmp_path):
    base, _ = two_logs(tmp_path)
    bad = tmp_path / "broken.csv"
    bad.write_text("model,example_id,correct\nm,1,1\nm,2,7\n", encoding="utf-8")
    out = evalcore("compare", str(base), str(bad))
    assert out.returncode == 1
    assert "broken.csv" in out.stderr and "Traceback" not in out.stderr


def test_two_leaderboard_summaries_are_refused_naming_what_works_not_a_python_call(tmp_path, capsys):
    for name in ("old.csv", "new.csv"):
        (tmp_path / name).write_text("model,task,n,n_correct\na,t,10,5\nb,t,10,6\n", encoding="utf-8")
    assert main(["compare", str(tmp_path / "old.csv"), str(tmp_path / "new.csv")]) == 1
    err = capsys.readouterr().err
    assert "old.csv: a leaderboard summary (counts per model and task)" in err
    assert "per-example log" in err and "evalcore validate" in err
    assert "evalcore.data" not in err and "load_eval_log" not in err


def test_a_model_not_in_the_log_exits_1(tmp_path):
    path = one_log(tmp_path, new="new")
    out = evalcore("compare", str(path), "--base", "base", "--new", "nope")
    assert out.returncode == 1
    assert "nope" in out.stderr and "Traceback" not in out.stderr


# ------------------------------------------------------------------------------------------------ exit 2
@pytest.mark.parametrize("args, says", [
    (["one.csv"], "give two logs"),
    (["a.csv", "b.csv", "c.csv"], "give two logs"),
    (["a.csv", "--base", "x"], "--base and --new go together"),
    (["a.csv", "--base", "x", "--new", "x"], "the same model"),
    (["a.csv", "b.csv", "--fdr", "1.5"], "false discovery rate"),
    (["a.csv", "b.csv", "--margin", "-0.01"], "margin"),
    (["a.csv", "b.csv", "--min-slice", "0"], "positive whole number"),
])
def test_usage_errors_exit_2(args, says, capsys):
    """In this process (argparse's exit): the files are never read, so they need not exist."""
    with pytest.raises(SystemExit) as stop:
        main(["compare", *args])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert says in err and "usage: evalcore compare BASE NEW" in err


def test_a_usage_error_exits_2_in_a_subprocess():
    out = evalcore("compare", "a.csv", "b.csv", "--no-such-option")
    assert out.returncode == 2 and "unrecognized arguments: --no-such-option" in out.stderr


def test_help_lists_the_command_and_its_options():
    assert "compare" in evalcore("--help").stdout
    text = evalcore("compare", "--help").stdout
    for option in ("--base", "--new", "--by", "--margin", "--level", "--fdr", "--seed", "--json", "--junit",
                   "--strict", "--mapping"):
        assert option in text


# ------------------------------------------------------------------------------------------------ report
def test_report_with_base_and_new_has_the_comparison_section(tmp_path):
    path = one_log(tmp_path, new="new")
    out = evalcore("report", str(path), "--out", str(tmp_path / "r.html"), "--base", "base", "--new", "new",
                   "--n-boot", "50", "--quiet")
    assert out.returncode == 0, out.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    numbers = json.loads(NUMBERS.search(html).group(1))
    section = numbers["sections"]["comparison"]
    assert section["facts"]["verdict"] == "regression" and section["facts"]["n"] == N
    assert section["facts"]["difference"] == pytest.approx(-0.30)
    assert "<section id='comparison'><h2>Comparison</h2>" in html
    plain = evalcore("report", str(path), "--out", str(tmp_path / "p.html"), "--n-boot", "50", "--quiet")
    assert plain.returncode == 0, plain.stderr
    assert "id='comparison'" not in (tmp_path / "p.html").read_text(encoding="utf-8")


def test_report_asked_to_compare_an_unknown_model_exits_1_and_writes_nothing(tmp_path):
    path = one_log(tmp_path, new="new")
    out = evalcore("report", str(path), "--out", str(tmp_path / "r.html"), "--base", "base", "--new", "nope",
                   "--n-boot", "50", "--quiet")
    assert out.returncode == 1 and "Comparison" in out.stderr and "nope" in out.stderr
    assert not (tmp_path / "r.html").exists()
    half = evalcore("report", str(path), "--out", str(tmp_path / "r.html"), "--base", "base")
    assert half.returncode == 2 and "--base and --new go together" in half.stderr


def test_two_logs_with_several_models_each_are_not_two_runs(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for path in (a, b):
        pd.concat([run_frame("x", BASE_RIGHT), run_frame("y", NEW_RIGHT)]).to_csv(path, index=False)
    out = evalcore("compare", str(a), str(b))
    assert out.returncode == 1 and "each log must hold one model" in out.stderr and "--base MODEL" in out.stderr


# ------------------------------------------------------------------------------------------------ in this process
def test_junit_names_with_characters_xml_cannot_hold_still_parse():
    """A slice value with a control character (XML 1.0 forbids it even escaped) and markup: the file parses, the
    markup is kept literally, the control character is replaced by U+FFFD."""
    from evalcore.cli.compare import flagged_text, junit_xml
    from evalcore.compare import compare_runs
    from evalcore.data.validation import validate

    odd = "la\x0bw <b>&amp;"
    frame = pd.concat([run_frame("base", BASE_RIGHT), run_frame("new", NEW_RIGHT)], ignore_index=True)
    frame["group"] = np.where(frame["group"] == "law", odd, "math")
    result = compare_runs(validate(frame), "base", "new")
    root = ET.fromstring(junit_xml(result).encode("utf-8"))
    names = [c.get("name") for c in root.iter("testcase")]
    assert names == ["overall: new vs base", "group=la\ufffdw <b>&amp;"]
    assert root.find("testsuite").get("failures") == "2"
    text = flagged_text(result)
    assert "group=la w <b>&amp;" in text  # printed on one line, as is


def test_flagged_slices_are_listed_by_the_size_of_their_change():
    """An improvement's largest gains come first (issue 37: the CLI listed the smallest first and cut the largest)."""
    from types import SimpleNamespace

    import pandas as pd

    from evalcore.cli.compare import flagged_rows
    from evalcore.compare.result import Comparison

    slices = pd.DataFrame({"slice": ["a", "b", "c", "d"], "difference": [0.02, 0.30, -0.05, 0.10],
                           "flagged": [True, True, False, True]})
    result = SimpleNamespace(slices=slices, flagged=lambda: Comparison.flagged(SimpleNamespace(slices=slices)))
    assert [row["slice"] for row in flagged_rows(result)] == ["b", "d", "a"]
