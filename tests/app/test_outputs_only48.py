"""A log of the models' outputs alone (issue 48) on the pages: it loads, and the Models page says that it holds
outputs only, with no value to estimate, and points to the Label page, instead of showing nothing or failing."""

from __future__ import annotations

import pandas as pd

from test_pages import goto, open_app, texts, upload


def test_the_models_page_says_the_log_holds_outputs_only():
    rows = [{"model": m, "example_id": f"q{i}", "input": f"Question {i}?", "output": "B" if i % 3 and m == "b"
             else "A"} for i in range(30) for m in ("a", "b")]
    at = open_app()
    upload(at, "outputs.csv", pd.DataFrame(rows).to_csv(index=False).encode())
    assert not texts(at.error)
    assert any("outputs only" in n for n in texts(at.info)), texts(at.info)
    goto(at, "models")
    [said] = [n for n in texts(at.info) if "outputs only" in n]
    assert "no value to estimate" in said and "Label page" in said
    assert [link.label for link in at.get("page_link")] == ["Label: start a comparison campaign"]
    assert not at.dataframe  # no table of numbers it does not have
