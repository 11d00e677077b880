"""The Data page with several files and with repeated samples; the views use one row per example."""

from __future__ import annotations

import numpy as np
import pandas as pd

from test_pages import assert_no_exception, csv_bytes, goto, open_app, report_counts, table_with, texts


def _log(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [(m, f"q{i}", f"t{i % 2}", float(rng.random() < 0.5 + 0.1 * k), rng.uniform(0.3, 1))
            for k, m in enumerate(("alpha", "beta", "gamma")) for i in range(40)]
    return pd.DataFrame(rows, columns=["model", "example_id", "task", "correct", "confidence"])


def _upload(at, files: list[tuple[str, bytes]]):
    goto(at, "data")
    at.file_uploader(key="uploader").set_value([(name, data, "text/csv") for name, data in files])
    at.run()
    assert_no_exception(at)
    return at


def _accuracy_table(at) -> pd.DataFrame:
    goto(at, "models")
    return table_with(at, "model", "estimate", "ci_low", "ci_high").reset_index(drop=True)


def test_five_identical_epochs_show_the_numbers_of_one():
    base = _log()
    one = _upload(open_app(), [("one.csv", csv_bytes(base))])
    five = _upload(open_app(), [("five.csv", csv_bytes(pd.concat([base.assign(epoch=e) for e in range(5)])))])
    assert report_counts(five)[1:] == (600, 3)
    assert any("120 of 120 (model, example) pairs have several samples" in t for t in texts(five.info))
    assert any("mean over its samples" in t for t in texts(five.caption))   # the Data page's preview says so
    pd.testing.assert_frame_equal(_accuracy_table(one), _accuracy_table(five))
    assert any("Repeated samples" in t for t in texts(five.sidebar.caption))


def test_duplicates_without_repeat_column_are_refused_pointing_to_the_role():
    base = _log()
    at = _upload(open_app(), [("dup.csv", csv_bytes(pd.concat([base, base])))])
    assert any("role 'repeat'" in t for t in texts(at.error)), texts(at.error)


def test_files_of_two_models_uploaded_together_are_one_log():
    base = _log()
    at = _upload(open_app(), [(f"{m}.csv", csv_bytes(base[base["model"] == m])) for m in ("alpha", "beta")])
    assert report_counts(at)[1:] == (80, 2)
    assert any("Files: alpha.csv, beta.csv" in t for t in texts(at.caption))
    assert any("a plain table (2 files)" in t for t in texts(at.info))
