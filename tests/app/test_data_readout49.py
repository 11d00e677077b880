"""The Data page shows what was read (issue 49, item 1): per model and task the examples, rows, repeats and the
label's mean with its interval at the sidebar's level, the numbers ``evalcore validate`` prints
(``tests/cli/test_validate_readout.py`` checks them by hand) and the Models page shows (one computation,
:func:`evalcore.stats.overall.overall_table`)."""

from __future__ import annotations

import math

import pytest

from test_pages import goto, open_app, table_with, upload

# model a: task t 2 of 3 right; task u 1 of 2 right, each example sampled twice; model b: t 3 of 3 and one
# unlabeled example, u 0 of 2
LOG = ("model,example_id,task,repeat,correct\n"
       "a,1,t,1,1\na,2,t,1,0\na,3,t,1,1\na,4,u,1,1\na,4,u,2,1\na,5,u,1,0\na,5,u,2,0\n"
       "b,1,t,1,1\nb,2,t,1,1\nb,3,t,1,1\nb,6,t,1,\nb,4,u,1,0\nb,4,u,2,0\nb,5,u,1,0\nb,5,u,2,0\n")


def test_the_data_page_shows_what_was_read_with_the_models_pages_numbers():
    at = upload(open_app(), "run.csv", LOG.encode())
    read = table_with(at, "examples", "labeled", "rows", "repeats", "estimate").set_index(["model", "task"])
    assert read.loc[("a", "(all)"), ["examples", "labeled", "rows", "repeats"]].tolist() == [5, 5, 7, 2]
    assert read.loc[("a", "u"), ["examples", "labeled", "rows", "repeats"]].tolist() == [2, 2, 4, 2]
    assert read.loc[("b", "t"), ["examples", "labeled", "rows", "repeats"]].tolist() == [4, 3, 4, 1]
    z, p, n = 1.959963984540054, 2 / 3, 3  # Wilson's interval of 2 of 3 at 95%
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert tuple(read.loc[("a", "t"), ["estimate", "ci_low", "ci_high"]]) == pytest.approx(
        (p, centre - half, centre + half), abs=1e-9)
    assert read.loc[("a", "(all)"), "estimate"] == pytest.approx((2 / 3 + 1 / 2) / 2, abs=1e-12)
    goto(at, "models")
    models = table_with(at, "model", "estimate", "ci_low", "ci_high").set_index("model")
    for model in ("a", "b"):
        assert tuple(models.loc[model, ["estimate", "ci_low", "ci_high"]]) == pytest.approx(
            tuple(read.loc[(model, "(all)"), ["estimate", "ci_low", "ci_high"]]), abs=1e-12)
