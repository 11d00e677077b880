"""evalcore.compare: the overall paired difference against hand-computed answers (2x2 tables, a paired t), repeats,
the pairs table, the verdict rules and the sentence."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from scipy import stats

from evalcore.compare import CELLS, SCORE_CELLS, VERDICTS, compare_runs
from evalcore.compare.paired import mcnemar_exact_p, newcombe_interval
from evalcore.compare.result import _verdict
from evalcore.data.validation import validate
from evalcore.errors import EvalDataError

Z95 = 1.959963984540054


def two_by_two(both: int, b: int, c: int, neither: int, task: str = "t", start: int = 0) -> pd.DataFrame:
    """Raw rows of models 'base' and 'new': ``both`` examples both right, ``b`` only base right, ``c`` only new
    right, ``neither`` both wrong."""
    pairs = [(1, 1)] * both + [(1, 0)] * b + [(0, 1)] * c + [(0, 0)] * neither
    ids = [f"e{start + i}" for i in range(len(pairs))]
    base = pd.DataFrame({"model": "base", "example_id": ids, "task": task, "correct": [p[0] for p in pairs]})
    new = pd.DataFrame({"model": "new", "example_id": ids, "task": task, "correct": [p[1] for p in pairs]})
    return pd.concat([base, new], ignore_index=True)


def wilson(k: float, n: float) -> tuple[float, float]:
    centre = (k + Z95 ** 2 / 2) / (n + Z95 ** 2)
    half = Z95 / (n + Z95 ** 2) * math.sqrt(k * (n - k) / n + Z95 ** 2 / 4)
    return centre - half, centre + half


def test_two_by_two_by_hand_exact_mcnemar_and_newcombe():
    # b = 3 only base right, c = 9 only new right, n = 40 (20 both right, 8 both wrong)
    c = compare_runs(validate(two_by_two(20, 3, 9, 8)), "base", "new")
    row = c.overall.iloc[0]
    assert row["n"] == 40 and row["base"] == pytest.approx(23 / 40) and row["new"] == pytest.approx(29 / 40)
    assert row["difference"] == pytest.approx(0.15)
    # exact McNemar: 2 P(Bin(12, 1/2) <= 3) = 2 (1 + 12 + 66 + 220) / 4096 = 598 / 4096
    assert row["p_value"] == pytest.approx(598 / 4096) and round(row["p_value"], 4) == 0.1460
    assert row["method"] == "exact McNemar (Newcombe score interval)"
    # Newcombe method 10 by hand: p1 = 29/40 (new), p2 = 23/40 (base), Wilson limits of each; A = ad - bc =
    # 20*8 - 3*9 = 133 > n/2 = 20, so phi = (133 - 20) / sqrt(29 * 11 * 23 * 17)
    l1, u1 = wilson(29, 40)
    l2, u2 = wilson(23, 40)
    p1, p2 = 29 / 40, 23 / 40
    phi = (133 - 20) / math.sqrt(29 * 11 * 23 * 17)
    low = 0.15 - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    high = 0.15 + math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    assert row["ci_low"] == pytest.approx(low, abs=1e-12) and row["ci_high"] == pytest.approx(high, abs=1e-12)
    assert round(low, 4) == -0.0213 and round(high, 4) == 0.3089  # contains 0, as p = 0.146 > 0.05
    assert list(c.pairs["cell"]) == list(CELLS) and list(c.pairs["n"]) == [20, 3, 9, 8]
    assert list(c.pairs["share"]) == pytest.approx([0.5, 0.075, 0.225, 0.2])
    assert c.cells == CELLS


def test_newcombe_matches_the_published_paired_example():
    # Fagerland, Lydersen & Laake (2017), Statistical Analysis of Contingency Tables, ch. 8: complete response
    # before and after consolidation therapy (Cavo et al. 2012), table [[59, 6], [16, 80]]: Newcombe square-and-add
    # estimate -0.0621 (95% CI -0.1186 to -0.0046) (also in ocbe-uio/contingencytables tests/testthat/test-ch8.R)
    low, high = newcombe_interval(59, 16, 6, 80, 0.95)
    assert round(float(low), 4) == -0.1186 and round(float(high), 4) == -0.0046
    c = compare_runs(validate(two_by_two(59, 16, 6, 80)), "base", "new")
    row = c.overall.iloc[0]
    assert round(row["difference"], 4) == -0.0621
    assert round(row["ci_low"], 4) == -0.1186 and round(row["ci_high"], 4) == -0.0046


def test_mcnemar_edge_cases():
    assert float(mcnemar_exact_p(0, 0)) == 1.0  # no discordant pair
    assert float(mcnemar_exact_p(5, 5)) == 1.0  # 2 P(Bin(10, .5) <= 5) > 1, capped
    assert float(mcnemar_exact_p(0, 6)) == pytest.approx(2 / 64)


def score_log(base, new) -> pd.DataFrame:
    ids = [f"q{i}" for i in range(len(base))]
    return pd.concat([pd.DataFrame({"model": "A", "example_id": ids, "score": base}),
                      pd.DataFrame({"model": "B", "example_id": ids, "score": new})], ignore_index=True)


def test_continuous_scores_paired_t_by_hand():
    c = compare_runs(validate(score_log([0.1, 0.4, 0.5, 0.9], [0.3, 0.4, 0.8, 1.0])), "A", "B")
    row = c.overall.iloc[0]
    # d = 0.2, 0, 0.3, 0.1: mean 0.15, sd = sqrt(0.05 / 3), se = sd / 2
    se = math.sqrt(0.05 / 3) / 2
    crit = 3.182446305284263  # t_{3, 0.975}
    assert row["difference"] == pytest.approx(0.15) and row["n"] == 4
    assert row["ci_low"] == pytest.approx(0.15 - crit * se) and row["ci_high"] == pytest.approx(0.15 + crit * se)
    assert row["p_value"] == pytest.approx(2 * stats.t.sf(0.15 / se, 3))
    assert row["method"] == "paired t (cluster-robust by example)"
    assert c.metric == "score" and c.cells == SCORE_CELLS
    assert dict(zip(c.pairs["cell"], c.pairs["n"])) == {"new higher": 3, "base higher": 0, "equal": 1}
    assert list(c.examples("equal")["example_id"]) == ["q1"]
    assert list(c.examples("new higher")["example_id"]) == ["q0", "q2", "q3"]


def test_repeats_are_averaged_per_example_five_identical_repeats_give_one():
    raw = two_by_two(20, 3, 9, 8)
    one = compare_runs(validate(raw), "base", "new")
    repeated = pd.concat([raw.assign(repeat=r) for r in range(5)], ignore_index=True)
    five = compare_runs(validate(repeated), "base", "new")
    pd.testing.assert_frame_equal(one.overall, five.overall)
    pd.testing.assert_frame_equal(one.pairs, five.pairs)
    assert five.overall["n"].iloc[0] == 40
    assert any("several samples" in note for note in five.notes)


def test_disagreeing_repeats_use_the_example_means():
    # example e0: base 1, 1 (mean 1), new 1, 0 (mean 0.5); e1: base 0, 0, new 1, 1; e2: base 1, 0 (0.5), new 1, 1
    rows = []
    for eid, b, n in (("e0", (1, 1), (1, 0)), ("e1", (0, 0), (1, 1)), ("e2", (1, 0), (1, 1))):
        for r in range(2):
            rows += [("base", eid, r, b[r]), ("new", eid, r, n[r])]
    raw = pd.DataFrame(rows, columns=["model", "example_id", "repeat", "correct"])
    c = compare_runs(validate(raw), "base", "new")
    row = c.overall.iloc[0]
    # per-example d = -0.5, 1, 0.5: mean 1/3, sd = sqrt(((-5/6)^2 + (2/3)^2 + (1/6)^2) / 2)
    sd = math.sqrt(((-5 / 6) ** 2 + (2 / 3) ** 2 + (1 / 6) ** 2) / 2)
    assert row["n"] == 3 and row["difference"] == pytest.approx(1 / 3)
    crit = stats.t.ppf(0.975, 2)
    assert row["ci_low"] == pytest.approx(1 / 3 - crit * sd / math.sqrt(3))
    assert row["method"] == "paired t (cluster-robust by example)" and c.cells == SCORE_CELLS


def test_only_shared_examples_are_paired():
    raw = two_by_two(10, 2, 4, 4)
    extra = pd.DataFrame({"model": ["base", "new"], "example_id": ["only_b", "only_n"], "task": "t",
                          "correct": [1, 0]})
    c = compare_runs(validate(pd.concat([raw, extra], ignore_index=True)), "base", "new")
    assert c.overall["n"].iloc[0] == 20 and c.overall["difference"].iloc[0] == pytest.approx(0.1)


@pytest.mark.parametrize("low, high, margin, worse_slice, verdict", [
    (-0.05, -0.01, 0.0, False, "regression"),       # ci_high < 0
    (-0.05, -0.01, 0.02, False, "inconclusive"),    # ci_high -0.01 not below -0.02; ci_low below -0.02
    (-0.05, -0.03, 0.02, False, "regression"),      # ci_high < -margin
    (0.01, 0.05, 0.0, False, "improvement"),
    (0.01, 0.05, 0.0, True, "regression"),          # a flagged slice is worse
    (-0.01, 0.01, 0.02, False, "no difference"),    # inside [-margin, margin]
    (-0.01, 0.01, 0.0, False, "inconclusive"),      # no margin: never "no difference"
    (-0.03, 0.01, 0.02, False, "inconclusive"),
])
def test_verdict_rules(low, high, margin, worse_slice, verdict):
    assert _verdict(low, high, margin, worse_slice) == verdict
    assert verdict in VERDICTS


def test_verdict_and_sentence_with_a_margin():
    # 200 examples, b = c = 2: difference 0, interval about +-0.02: no difference within a 5-point margin
    c = compare_runs(validate(two_by_two(100, 2, 2, 96)), "base", "new", margin=0.05)
    assert c.verdict == "no difference"
    assert c.sentence.startswith("new scores the same as base (95% interval ")
    assert "200 shared examples): no difference beyond the margin of 5.00 points;" in c.sentence
    c0 = compare_runs(validate(two_by_two(100, 2, 2, 96)), "base", "new")
    assert c0.verdict == "inconclusive"


def test_regression_sentence_in_points():
    c = compare_runs(validate(two_by_two(50, 30, 5, 15)), "base", "new", level=0.9)
    row = c.overall.iloc[0]
    assert row["difference"] == pytest.approx(-0.25) and row["ci_high"] < 0
    assert c.verdict == "regression" and c.level == 0.9
    assert c.sentence.startswith("new is worse than base by 25.0 points (90% interval ")
    assert "100 shared examples): a regression; no slice was searched" in c.sentence


def test_to_dict_is_json():
    c = compare_runs(validate(two_by_two(20, 3, 9, 8)), "base", "new")
    d = json.loads(json.dumps(c.to_dict()))
    assert d["overall"]["difference"] == pytest.approx(0.15) and d["verdict"] == c.verdict
    assert d["settings"]["base"] == "base" and [p["cell"] for p in d["pairs"]] == list(CELLS)


def test_clear_errors():
    frame = validate(two_by_two(20, 3, 9, 8))
    with pytest.raises(EvalDataError, match="no run named 'gpt'"):
        compare_runs(frame, "gpt", "new")
    with pytest.raises(EvalDataError, match="same run"):
        compare_runs(frame, "new", "new")
    with pytest.raises(EvalDataError, match="lacks"):
        compare_runs(frame, "base", "new", by=["nope"])
    with pytest.raises(EvalDataError, match="level"):
        compare_runs(frame, "base", "new", level=95)
    disjoint = pd.DataFrame({"model": ["base", "new"], "example_id": ["a", "b"], "correct": [1, 0]})
    with pytest.raises(EvalDataError, match="share no example"):
        compare_runs(validate(disjoint), "base", "new")
