"""evalcore.compare on real tool logs (Inspect AI's two ARC runs, promptfoo's two-model export) and on an engine log
with repeated samples and text (the text comes from the stored rows, the numbers equal the frame's)."""

from __future__ import annotations

import pandas as pd
import pytest

from evalcore.compare import CELLS, compare_runs
from evalcore.data.validation import load_eval_log, load_eval_logs, validate
from evalcore.engine.scan import scan
from test_compare_slices import fixture_raw


def test_inspect_two_runs_of_arc_with_their_text(shared_file):
    frame = load_eval_logs([shared_file("ecosystem/inspect_ai/data_arc_qwen.json"),
                            shared_file("ecosystem/inspect_ai/data_arc_sonnet.json")])
    c = compare_runs(frame, "ollama/qwen2.5:0.5b", "anthropic/claude-sonnet-4-0")
    # 3 shared ARC questions: qwen right on 1, sonnet on all 3 -> both right 1, only new right 2
    assert dict(zip(c.pairs["cell"], c.pairs["n"])) == dict(zip(CELLS, [1, 0, 2, 0]))
    row = c.overall.iloc[0]
    assert row["n"] == 3 and row["difference"] == pytest.approx(2 / 3)
    assert row["p_value"] == pytest.approx(0.5)  # 2 P(Bin(2, 1/2) <= 0)
    assert c.verdict == "inconclusive"
    differ = c.examples("only new right")
    assert len(differ) == 2 and differ["new_output"].notna().all() and differ["input"].notna().all()
    assert (differ["base_output"] != differ["new_output"]).all()
    empty = c.examples("only base right")  # no row, but the same columns
    assert empty.empty and list(empty.columns) == list(differ.columns)


def test_promptfoo_export_two_models(shared_file):
    frame = load_eval_log(shared_file("ecosystem/promptfoo/sample-export.json"))
    c = compare_runs(frame, "openai:gpt-5-mini", "openai:gpt-5")
    assert c.metric == "correct" and c.overall["n"].iloc[0] == 2
    assert list(c.pairs["n"]) == [0, 0, 0, 2]  # both runs fail both tests
    both = c.examples("both wrong")
    assert both["target"].iloc[0] == "echo" and both["new_output"].iloc[0] == "An echo."
    scores = compare_runs(frame, "openai:gpt-5-mini", "openai:gpt-5", metric="score")
    assert scores.overall["method"].iloc[0] == "paired t (cluster-robust by example)"


def test_engine_log_with_repeats_and_text(tmp_path):
    raw = fixture_raw()
    path = tmp_path / "repeats.parquet"
    pd.concat([raw.assign(repeat=r) for r in range(3)], ignore_index=True).to_parquet(path)
    engine = compare_runs(scan(str(path)), "base", "new")
    frame = compare_runs(validate(raw), "base", "new")
    pd.testing.assert_frame_equal(engine.overall, frame.overall)
    pd.testing.assert_frame_equal(engine.slices, frame.slices)
    a = engine.examples("only base right", "category=law")
    pd.testing.assert_frame_equal(a, frame.examples("only base right", "category=law"), check_dtype=False)
    assert a["base_output"].iloc[0] == "base says 15"
    assert any("several samples" in note for note in engine.notes)


def test_scan_runs_two_engine_logs_of_one_model(tmp_path):
    from evalcore.compare import scan_runs

    raw = fixture_raw()
    paths = []
    for name, model in (("gpt-jan.parquet", "base"), ("gpt-feb.parquet", "new")):
        paths.append(tmp_path / name)
        raw[raw["model"] == model].assign(model="gpt-4o").to_parquet(paths[-1])
    log = scan_runs(paths)
    assert log.models() == ["gpt-feb", "gpt-jan"] and log.frame is None
    engine = compare_runs(log, "gpt-jan", "gpt-feb")
    frame = compare_runs(validate(raw), "base", "new")
    pd.testing.assert_frame_equal(engine.overall, frame.overall)
    pd.testing.assert_frame_equal(engine.slices, frame.slices)  # the task filled in from the category: not searched
    assert list(engine.examples("only new right", "category=tiny")["new_output"]) == ["new says 98"]


def test_text_of_a_lazy_log_of_a_frame_and_of_given_samples():
    from evalcore.engine.frames import as_log

    raw = fixture_raw()
    lazy = compare_runs(as_log(validate(raw)), "base", "new")  # the page's path: a LazyLog wrapping the frame
    assert lazy.examples("only new right", "category=tiny")["new_output"].tolist() == ["new says 98"]
    repeated = validate(pd.concat([raw.assign(repeat=r) for r in range(2)], ignore_index=True))
    wrapped = as_log(repeated)  # samples averaged: the wrapped frame has no text
    assert "output" not in wrapped.frame.columns
    given = compare_runs(wrapped, "base", "new", text=repeated)
    assert given.examples("only new right", "category=tiny")["new_output"].tolist() == ["new says 98"]


def test_engine_text_through_a_semi_join_for_many_ids(tmp_path, monkeypatch):
    from evalcore.compare import result

    raw = fixture_raw()
    path = tmp_path / "text.parquet"
    raw.to_parquet(path)
    monkeypatch.setattr(result, "MAX_IN_LIST", 3)
    c = compare_runs(scan(str(path)), "base", "new")
    law = c.examples("only base right", "category=law")  # 15 ids > 3
    assert law["base_output"].tolist() == [f"base says {k}" for k in range(15, 30)]
