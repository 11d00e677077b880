"""The Report page: the stakeholder report of the session's data and selection, downloadable as one HTML file."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pandas as pd
import pytest

from evalcore.data.validation import load_eval_log
from evalcore.data.export import csv_bytes
from evalcore.stats.summaries import mean_table
from pages.common.report_cache import Built
from pages.common.store import store
from test_pages import assert_no_exception, goto, open_app, texts, upload

NUMBERS = re.compile(r'<script type="application/json" id="evalcore-numbers">(.*?)</script>', re.S)


def three_models(n: int = 80, seed: int = 3) -> bytes:
    rng = np.random.default_rng(seed)
    parts = [pd.DataFrame({"model": model, "example_id": np.arange(n), "correct": (rng.random(n) < p).astype(int),
                           "confidence": rng.uniform(0.4, 1.0, n)})
             for model, p in (("alpha", 0.5), ("beta", 0.7), ("gamma", 0.9))]
    return csv_bytes(pd.concat(parts, ignore_index=True))


def last_report() -> Built:
    """The report the page built last (the store keeps the most recently used entry last)."""
    built = [value for value, _ in store()._data.values() if isinstance(value, Built)]
    assert built, "the page built no report"
    return built[-1]


def test_report_of_the_selection_holds_the_api_numbers_and_the_upload_digest():
    content = three_models()
    at = upload(open_app(), "three.csv", content)
    goto(at, "models")
    at.multiselect(key="w_models").set_value(["beta", "gamma"])
    at.select_slider(key="w_level").set_value(0.9)
    at.run()
    goto(at, "report")
    assert any("Covers 160 rows: 2 model(s)" in t for t in texts(at.caption))
    [button] = at.get("download_button")
    assert button.proto.label == "Download the report (HTML)"
    built = last_report()
    html = built.html.decode("utf-8")
    numbers = json.loads(NUMBERS.search(html).group(1))
    table = pd.DataFrame(numbers["sections"]["accuracy"]["tables"]["by model"]).set_index("model")
    assert sorted(table.index) == ["beta", "gamma"]
    log = load_eval_log(("three.csv", content))
    expected = mean_table(log[log["model"].isin(["beta", "gamma"])], ["model"], "correct", 0.1).set_index("model")
    for column in ("estimate", "ci_low", "ci_high"):
        assert table[column].to_dict() == pytest.approx(expected[column].to_dict(), abs=1e-12)
    assert hashlib.sha256(content).hexdigest() in html
    assert "selection: 2 model(s)" in html and "level = 0.9" in html
    shown = [t.value for t in at.text]
    assert shown[: len(built.summary)] == [f"• {line}" for line in built.summary]
    assert any("gamma" in line and " to " in line for line in shown)  # the top model with its interval


def test_the_seed_rebuilds_the_report():
    at = upload(open_app(), "three.csv", three_models())
    goto(at, "report")
    first = last_report()
    at.number_input(key="rp_seed").set_value(5)
    at.run()
    assert_no_exception(at)
    second = last_report()
    assert "seed = 5" in second.html.decode() and "seed = 0" in first.html.decode()
    assert any("Seed 5." in t for t in texts(at.caption))
    board = [json.loads(NUMBERS.search(b.html.decode()).group(1))["sections"]["leaderboard"]["tables"]
             for b in (first, second)]
    assert board[0]["pairwise differences"] != board[1]["pairwise differences"]  # other replicates, other ends
    assert board[0]["overall"] == board[1]["overall"]  # the overall number's interval has no seed in it
