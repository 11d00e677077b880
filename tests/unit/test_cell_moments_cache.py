"""A log keeps its cell moments (:func:`evalcore.engine.reductions.cell_moments`): the engine is asked once per
(cells, metric), every caller gets its own copy, and a restriction of the log has moments of its own."""

from __future__ import annotations

import pandas as pd

from evalcore.data.validation import validate
from evalcore.engine import as_log, reductions
from evalcore.engine.scan import LazyLog


def test_cell_moments_are_asked_once_and_handed_out_as_copies(monkeypatch):
    frame = validate(pd.DataFrame({"model": ["a", "a", "b", "b"], "example_id": [1, 2, 1, 2],
                                   "correct": [1.0, 0.0, 1.0, 1.0]}))
    log = as_log(frame)
    queries = []
    run = LazyLog.run
    monkeypatch.setattr(LazyLog, "run", lambda self, expr, arrow=False: queries.append(expr) or run(self, expr, arrow))
    first = reductions.cell_moments(log, ["model"], "correct")
    first.loc[0, "total"] = 99.0  # a caller's change stays with the caller
    second = reductions.cell_moments(log, ["model"], "correct")
    assert len(queries) == 1
    assert second["total"].tolist() == [1.0, 2.0] and second["n"].tolist() == [2, 2]
    only_b = reductions.cell_moments(log.restrict(model=["b"]), ["model"], "correct")
    assert only_b["model"].tolist() == ["b"] and only_b["total"].tolist() == [2.0]
