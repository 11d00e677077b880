"""evalcore.compare: the slice search (counts, hand-computed slice tests, Benjamini-Hochberg against scipy, numeric
bins, pairs), examples with their text, runs named after files, and the engine path giving the frame's numbers."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats

from evalcore.compare import compare_runs, run_name, runs_from_logs
from evalcore.compare.slices import bh_qvalues
from evalcore.data.validation import load_eval_log, validate
from evalcore.engine.frames import as_log
from evalcore.engine.scan import scan

#: category: (both right, only base right, only new right, both wrong)
TABLES = {"law": (15, 15, 0, 0), "math": (20, 2, 2, 16), "history": (13, 1, 1, 10), "tiny": (2, 1, 1, 1)}


def fixture_raw(text: bool = True) -> pd.DataFrame:
    """Models 'base' and 'new' on 100 examples in 4 categories (:data:`TABLES`), groups g0/g1 alternating, a
    numeric feature ``length`` = the example's number, and (``text``) input, target and each model's output."""
    rows, k = [], 0
    for category, counts in TABLES.items():
        for (yb, yn), m in zip(((1, 1), (1, 0), (0, 1), (0, 0)), counts):
            for _ in range(m):
                for model, y in (("base", yb), ("new", yn)):
                    row = {"model": model, "example_id": f"x{k:03d}", "category": category, "group": f"g{k % 2}",
                           "correct": y, "length": float(k)}
                    if text:
                        row |= {"input": f"question {k}", "target": f"answer {k}", "output": f"{model} says {k}"}
                    rows.append(row)
                k += 1
    return pd.DataFrame(rows)


def test_slices_searched_counted_and_tested_by_hand():
    c = compare_runs(validate(fixture_raw()), "base", "new")
    # category: law, math, history (tiny has 5 < 20: skipped); group: g0, g1 (50 each); one task: not searched
    assert c.n_searched == 5 and c.n_skipped_small == 1
    assert set(c.slices["slice"]) == {"category=law", "category=math", "category=history", "group=g0", "group=g1"}
    law = c.slices.set_index("slice").loc["category=law"]
    # b = 15, c = 0 of 30: difference -0.5, exact McNemar 2 (1/2)^15
    assert law["n"] == 30 and law["difference"] == pytest.approx(-0.5) and law["column"] == "category"
    assert law["value"] == "law" and law["p_value"] == pytest.approx(2 * 0.5 ** 15)
    assert law["base"] == pytest.approx(1.0) and law["new"] == pytest.approx(0.5)
    # worst first; law flagged worse; math and history (b = c) not flagged
    assert c.slices["slice"].iloc[0] == "category=law"
    assert list(c.slices["difference"]) == sorted(c.slices["difference"])
    assert law["flagged"] and law["direction"] == "worse"
    flagged = c.slices.set_index("slice")["flagged"]
    assert not flagged["category=math"] and not flagged["category=history"]
    assert set(c.slices.loc[~c.slices["flagged"], "direction"]) == {"same"}
    # BH over the 5 slices searched, as scipy computes it
    expected = stats.false_discovery_control(c.slices["p_value"].to_numpy())
    assert c.slices["q_value"].to_numpy() == pytest.approx(expected)
    assert c.verdict == "regression"  # a flagged slice is worse
    assert "slices searched" in c.sentence and "(worst: category=law, -50.0 points)" in c.sentence
    assert c.slices["shrunk"].notna().all()
    # empirical Bayes shrinks toward the mean: law's shrunk difference lies between its own and the others'
    assert -0.5 <= law["shrunk"] <= c.slices["difference"].mean()


def test_bh_by_hand_and_against_scipy():
    # p sorted 0.01, 0.03, 0.04, 0.2 (m = 4): 4p/i = 0.04, 0.06, 0.0533, 0.2; minimum from the end
    assert bh_qvalues([0.01, 0.04, 0.03, 0.2]) == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.2])
    p = [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216, 0.222, 0.251, 0.269, 0.275, 0.34,
         0.341, 0.384, 0.569, 0.594, 0.696, 0.762, 0.94, 0.942, 0.975, 0.986]
    assert bh_qvalues(p) == pytest.approx(stats.false_discovery_control(p))
    q = bh_qvalues([0.01, float("nan"), 0.02])  # NaN not counted in m
    assert q[0] == pytest.approx(0.02) and q[2] == pytest.approx(0.02) and q[1] != q[1]


def test_numeric_by_in_quartile_bins_and_pairs_of_slices():
    c = compare_runs(validate(fixture_raw()), "base", "new", by=["length"], min_slice=1)
    bins = c.slices[c.slices["column"] == "length"].set_index("value")
    # quartiles of 0..99 (the base run's rows): 24.75, 49.5, 74.25; min 0, max 99
    assert dict(bins["n"]) == {"[0.00, 24.8)": 25, "[24.8, 49.5)": 25, "[49.5, 74.2)": 25, "[74.2, 99.0]": 25}
    assert "length in [0.00, 24.8)" in set(c.slices["slice"])
    # the first 25 examples: law's 15 both right and 10 of its only-base-right (x000-x024)
    first = bins.loc["[0.00, 24.8)"]
    assert first["difference"] == pytest.approx(-10 / 25)
    # 4 categories + 2 groups + 4 bins (min_slice 1: tiny searched too)
    assert c.n_searched == 10 and c.n_skipped_small == 0
    p = compare_runs(validate(fixture_raw()), "base", "new", pairs_of_slices=True, min_slice=1)
    pairs = p.slices[p.slices["column"] == "category & group"].set_index("slice")
    # law's examples x000-x029: g0 the even ones (15), of which only-base-right x015..x029 even: 7
    assert pairs.loc["category=law & group=g0", "n"] == 15
    assert pairs.loc["category=law & group=g0", "difference"] == pytest.approx(-7 / 15)
    assert p.n_searched == 6 + 8


def test_examples_of_a_cell_and_slice_with_text():
    c = compare_runs(validate(fixture_raw()), "base", "new")
    only_base = c.examples("only base right", "category=law")
    assert list(only_base["example_id"]) == [f"x{k:03d}" for k in range(15, 30)]
    assert list(only_base.columns) == ["task", "example_id", "category", "group", "base_value", "new_value",
                                       "input", "target", "base_output", "new_output"]
    first = only_base.iloc[0]
    assert (first["base_value"], first["new_value"]) == (1.0, 0.0)
    assert first["input"] == "question 15" and first["target"] == "answer 15"
    assert first["base_output"] == "base says 15" and first["new_output"] == "new says 15"
    assert len(c.examples("only new right")) == 4  # math 2, history 1, tiny 1
    assert list(c.examples("only new right", "category=tiny")["example_id"]) == ["x098"]
    assert c.examples("only new right", "category=law").empty
    both_wrong_g1 = c.examples("both wrong", "group=g1")
    assert all(int(i[1:]) % 2 == 1 for i in both_wrong_g1["example_id"])
    with pytest.raises(Exception, match="Unknown cell"):
        c.examples("sometimes right")
    with pytest.raises(Exception, match="Unknown slice"):
        c.examples("both wrong", "category=art")
    plain = compare_runs(validate(fixture_raw(text=False)), "base", "new")
    assert list(plain.examples("both right").columns) == ["task", "example_id", "category", "group", "base_value",
                                                          "new_value"]


def test_engine_log_gives_the_frame_numbers(tmp_path):
    raw = fixture_raw(text=True)
    path = tmp_path / "two_models.parquet"
    raw.to_parquet(path)
    frame = compare_runs(validate(raw), "base", "new", by=["length"])
    engine = compare_runs(scan(str(path)), "base", "new", by=["length"])
    pd.testing.assert_frame_equal(frame.overall, engine.overall)
    pd.testing.assert_frame_equal(frame.slices, engine.slices)
    pd.testing.assert_frame_equal(frame.pairs, engine.pairs)
    assert frame.sentence == engine.sentence
    a = frame.examples("only base right", "category=law")
    b = engine.examples("only base right", "category=law")
    pd.testing.assert_frame_equal(a, b, check_dtype=False)
    lazy = compare_runs(as_log(validate(raw)), "base", "new")  # a LazyLog of the frame: same again
    pd.testing.assert_frame_equal(lazy.overall, frame.overall)


def test_runs_from_logs_names_runs_after_files(tmp_path):
    raw = fixture_raw(text=False)
    paths = []
    for name, model in (("gpt-jan.csv", "base"), ("gpt-feb.csv", "new")):
        path = tmp_path / name
        raw[raw["model"] == model].assign(model="gpt-4o").drop(columns=["length"]).to_csv(path, index=False)
        paths.append(path)
    combined = runs_from_logs([(str(p), load_eval_log(p)) for p in paths])
    assert sorted(combined["model"].unique()) == ["gpt-feb", "gpt-jan"]
    assert any("gpt-jan" in note and "gpt-jan.csv" in note for note in combined.attrs["report"]["notes"])
    c = compare_runs(combined, "gpt-jan", "gpt-feb")
    assert c.overall["n"].iloc[0] == 100
    assert c.overall["difference"].iloc[0] == pytest.approx((4 - 19) / 100)  # c - b over all categories
    assert run_name("runs/2024/x.jsonl.gz") == "x" and run_name("eval.json") == "eval"
    same = runs_from_logs([("a/x.csv", load_eval_log(paths[0])), ("b/x.csv", load_eval_log(paths[1]))])
    assert sorted(same["model"].unique()) == ["x", "x (2)"]


def test_a_numeric_column_with_few_values_is_searched_by_value():
    raw = fixture_raw(text=False)
    raw["flag"] = (raw["length"] % 3 == 0).astype(float)
    c = compare_runs(validate(raw), "base", "new", by=["flag"])
    flag = c.slices[c.slices["column"] == "flag"].set_index("slice")
    assert dict(flag["n"]) == {"flag=0.0": 66, "flag=1.0": 34}
    # multiples of 3 only base right: x015 x018 x021 x024 x027 (law), x051 (math); only new right: x084 (history)
    assert flag.loc["flag=1.0", "difference"] == pytest.approx((1 - 6) / 34)
    assert list(c.examples("only new right", "flag=1.0")["example_id"]) == ["x084"]


def test_one_engine_pass_per_column_gives_the_same_slices(monkeypatch):
    from evalcore.compare import slices

    frame = validate(fixture_raw(text=False))
    finest = compare_runs(frame, "base", "new", by=["length"], pairs_of_slices=True, min_slice=1)
    monkeypatch.setattr(slices, "MAX_CELLS", 1)  # too many finest cells: one group-by per column and pair
    apart = compare_runs(frame, "base", "new", by=["length"], pairs_of_slices=True, min_slice=1)
    pd.testing.assert_frame_equal(finest.overall, apart.overall)
    pd.testing.assert_frame_equal(finest.slices, apart.slices, check_dtype=False)
    # singles 4 + 2 + 4; category x group 8; category x length bins: law 0-1, math 1-2, history 2-3, tiny 3 = 7;
    # group x length 8
    assert finest.n_searched == apart.n_searched == 10 + 8 + 7 + 8


def test_a_column_with_one_value_on_the_shared_examples_is_not_a_slice():
    raw = fixture_raw(text=False)
    raw = raw[(raw["model"] == "base") | (raw["category"] == "math")]  # new scored only math
    c = compare_runs(validate(raw), "base", "new")
    assert c.overall["n"].iloc[0] == 40
    assert set(c.slices["column"]) == {"group"} and c.n_searched == 2  # category: math alone, the whole


def test_the_sentence_names_the_largest_gain_when_the_flagged_slices_are_better():
    c = compare_runs(validate(fixture_raw()), "new", "base")  # swapped: law is now 50 points better
    assert c.slices.set_index("slice").loc["category=law", "direction"] == "better"
    assert "(largest gain: category=law, 50.0 points)" in c.sentence and "worst" not in c.sentence
