"""The report's Comparison section (issue #28, point 4): present with Settings(base, new), first in the report, its
sentence opening the summary, the 2x2 table counted by hand, the flagged slices, the forest plot; absent without
base/new; a reason in "Not in this report" when the comparison is impossible.

The log, by hand: 200 examples of task ``qa``, ids 0..199, group ``law`` for ids 0..99 and ``math`` for 100..199;
``old`` is right on ids 20..199, ``new`` on ids 80..199. Both right: 120 (80..199); only old right: 60 (20..79); only
new right: 0; both wrong: 20 (0..19). Difference (0 - 60) / 200 = -0.30; law: 0.80 -> 0.20 (-0.60); math: 1 -> 1.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from evalcore.data.validation import validate
from evalcore.report import Settings, build_report
from evalcore.report.comparison import two_by_two

NUMBERS = re.compile(r'<script type="application/json" id="evalcore-numbers">(.*?)</script>', re.S)
N = 200
HOSTILE = "new</script><b>x</b>"


def paired_log(new: str = "new") -> pd.DataFrame:
    ids = np.arange(N)
    parts = [pd.DataFrame({"model": model, "task": "qa", "example_id": ids,
                           "group": np.where(ids < 100, "law", "math"), "correct": right.astype(int)})
             for model, right in (("old", ids >= 20), (new, ids >= 80))]
    return validate(pd.concat(parts, ignore_index=True))


def comparison_of(report):
    return next(s for s in report.sections if s.key == "comparison")


def test_the_section_is_there_with_the_sentence_the_2x2_table_and_the_flagged_slice():
    report = build_report(paired_log(), settings=Settings(n_boot=50, base="old", new="new"))
    section = comparison_of(report)
    assert report.sections[0] is section  # the question asked comes first
    f = section.facts
    assert (f["base"], f["new"], f["verdict"], f["n"]) == ("old", "new", "regression", N)
    assert f["difference"] == pytest.approx(-0.30) and f["ci_high"] < 0
    assert f["p_value"] == pytest.approx(2 * 0.5 ** 60, rel=1e-6)  # exact McNemar, 60 discordant, all one way
    assert (f["flagged"], f["worse"], f["n_searched"]) == (1, 1, 2)
    assert report.summary[0] == f["sentence"] and section.intro.startswith(f["sentence"])
    assert f["sentence"].startswith("new is worse than old by 30.0 points (95% interval ")
    table = section.tables["2x2 table (examples both runs scored)"]
    assert table.to_dict("list") == {"base": ["right", "wrong", "total"], "new right": [120, 0, 120],
                                     "new wrong": [60, 20, 80], "total": [180, 20, 200]}
    flagged = section.tables["flagged slices"]
    assert flagged["slice"].tolist() == ["group=law"]
    assert flagged["difference"].iloc[0] == pytest.approx(-0.60) and flagged["n"].iloc[0] == 100
    assert flagged["direction"].tolist() == ["worse"]
    assert sorted(section.tables["slices searched"]["slice"]) == ["group=law", "group=math"]
    assert section.tables["overall"]["difference"].iloc[0] == pytest.approx(-0.30)
    assert len(section.figures) == 1  # the forest plot of the slices
    html = report.html()
    assert "<section id='comparison'><h2>Comparison</h2>" in html
    numbers = json.loads(NUMBERS.search(html).group(1))
    assert numbers["sections"]["comparison"]["facts"]["verdict"] == "regression"
    assert numbers["settings"]["base"] == "old" and numbers["settings"]["new"] == "new"


def test_no_section_without_base_and_new():
    report = build_report(paired_log(), settings=Settings(n_boot=50))
    assert "comparison" not in [s.key for s in report.sections]
    assert not any(line.startswith("Comparison") for line in report.skipped)  # not asked: not listed as missing
    assert "id='comparison'" not in report.html()


def test_an_improvement_and_a_margin():
    """new as the base: +30 points, an improvement; with a margin the facts and the meaning carry it."""
    report = build_report(paired_log(), settings=Settings(n_boot=50, base="new", new="old", margin=0.02))
    f = comparison_of(report).facts
    assert f["verdict"] == "improvement" and f["difference"] == pytest.approx(0.30) and f["worse"] == 0
    assert "margin 0.02" in comparison_of(report).meaning


def test_an_unknown_model_is_said_in_the_report_not_raised():
    report = build_report(paired_log(), settings=Settings(n_boot=50, base="old", new="nobody"))
    assert "comparison" not in [s.key for s in report.sections]
    why = [line for line in report.skipped if line.startswith("Comparison:")]
    assert len(why) == 1 and "nobody" in why[0]


def test_names_from_the_data_are_escaped():
    report = build_report(paired_log(new=HOSTILE), settings=Settings(n_boot=50, base="old", new=HOSTILE))
    html = report.html()
    assert comparison_of(report).facts["new"] == HOSTILE
    assert HOSTILE not in html and "new&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;" in html


def test_scores_give_the_three_way_pairs_table():
    """A continuous score: new higher on ids 0..9 (+0.5), lower on ids 10..14 (-0.2), equal on 15..39."""
    ids = np.arange(40)
    base = np.full(40, 0.5)
    new = base.copy()
    new[:10] += 0.5
    new[10:15] -= 0.2
    log = validate(pd.concat([pd.DataFrame({"model": m, "example_id": ids, "score": v})
                              for m, v in (("a", base), ("b", new))], ignore_index=True))
    section = comparison_of(build_report(log, settings=Settings(n_boot=50, base="a", new="b")))
    pairs = section.tables["pairs (examples both runs scored)"]
    assert dict(zip(pairs["cell"], pairs["n"])) == {"new higher": 10, "base higher": 5, "equal": 25}
    assert section.facts["difference"] == pytest.approx((10 * 0.5 - 5 * 0.2) / 40)
    assert "2x2 table (examples both runs scored)" not in section.tables


def test_two_by_two_from_the_pairs_cells():
    pairs = pd.DataFrame({"cell": ["both right", "only base right", "only new right", "both wrong"],
                          "n": [5, 3, 2, 1], "share": [5 / 11, 3 / 11, 2 / 11, 1 / 11]})
    assert two_by_two(pairs).to_dict("list") == {"base": ["right", "wrong", "total"], "new right": [5, 2, 7],
                                                 "new wrong": [3, 1, 4], "total": [8, 3, 11]}


def test_by_columns_reach_the_comparison():
    """Settings(by=("length",)) with length = the id: four quartiles of 50 searched beside the two groups; the drop
    (ids 20..79) makes group=law and the first two quartiles flagged (3 of 6)."""
    frame = paired_log().copy()
    frame["length"] = frame["example_id"].astype(int)
    log = validate(frame.drop(columns=[c for c in frame.columns if c not in ("model", "task", "example_id", "group",
                                                                             "correct", "length")]))
    section = comparison_of(build_report(log, settings=Settings(n_boot=50, base="old", new="new", by=("length",))))
    assert (section.facts["n_searched"], section.facts["flagged"], section.facts["worse"]) == (6, 3, 3)
    assert "and of length" in section.intro
    assert sum(name.startswith("length in ") for name in section.tables["slices searched"]["slice"]) == 4
