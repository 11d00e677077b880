"""A log in the engine keeps an example's text (cut at 4,096 characters) next to its numbers, never reduces it, and
a workspace stores every sample of a log with repeats, so that the stored log validates again."""

from __future__ import annotations

import pandas as pd

from evalcore.engine import scan
from evalcore.stats.overall import overall_table
from evalcore.workspace import Workspace

LOG = pd.DataFrame({"model": ["a", "a", "b", "b", "b"], "example_id": ["1", "2", "1", "2", "2"],
                    "repeat": [1, 1, 1, 1, 2], "correct": [1.0, 0, 1, 1, 0],
                    "question": ["q1", "q2", "q1", "q2", "q2"], "response": ["x" * 5000, "y", "z", "w", "v"]})


def test_the_engine_reads_text_roles_and_reduces_only_numbers(tmp_path):
    path = tmp_path / "log.parquet"
    LOG.drop(columns="repeat").iloc[:4].to_parquet(path)
    log = scan(str(path))
    assert {"input", "output"} <= set(log.table.columns)
    rows = log.run(log.table.select("model", "example_id", "input", "output")).sort_values(["model", "example_id"])
    assert rows["input"].tolist() == ["q1", "q2", "q1", "q2"]
    assert rows["output"].str.len().tolist() == [4096, 1, 1, 1]
    table = overall_table(log).set_index("model")
    assert table.loc["a", "estimate"] == 0.5 and table.loc["b", "estimate"] == 1.0


def test_a_saved_engine_log_with_repeats_opens_again_with_its_samples_and_text(tmp_path):
    path = tmp_path / "log.parquet"
    LOG.to_parquet(path)
    ws = Workspace(tmp_path / "ws")
    record = ws.add_log(str(path), "runs")
    stored = ws.lazy_dataset(record.id)
    samples = stored.run(stored.rows.select("model", "repeat", "output"))
    assert len(samples) == 5 and sorted(samples["repeat"].astype(int)) == [1, 1, 1, 1, 2]
    table = overall_table(stored).set_index("model")  # b: example 1 right, example 2 right once in two samples
    assert table.loc["b", "estimate"] == 0.75 and table.loc["a", "estimate"] == 0.5
