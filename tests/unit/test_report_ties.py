"""The report's summary never lists the leading model as indistinguishable from itself (issue 37: VTAB-1k read
"Sup-Rotation-100% is not distinguishable from Sup-Exemplar-100%, Sup-Rotation-100%")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalcore.data.validation import validate
from evalcore.report import Settings, build_report


def test_the_leader_is_tied_with_the_others_but_not_with_itself():
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame({"model": np.repeat(["alpha", "beta", "gamma"], n),
                          "example_id": np.tile([f"q{i}" for i in range(n)], 3),
                          "task": np.tile([f"t{i % 3}" for i in range(n)], 3),
                          "correct": (rng.random(3 * n) < 0.7).astype(float)})  # three models of one accuracy
    report = build_report(validate(frame), settings=Settings(n_boot=200))
    line = next(s for s in report.summary if "is not distinguishable from" in s)
    top, rest = line.split(" is not distinguishable from ", 1)
    tied = rest.split(";", 1)[0].replace(" and ", ", ").split(", ")
    assert tied and top not in tied and set(tied) <= {"alpha", "beta", "gamma"}
