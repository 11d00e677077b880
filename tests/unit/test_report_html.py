"""The report's HTML: names from the data escaped (also inside the embedded JSON), no external resource, provenance
with sha256, sections chosen from what the log supports, hand-computed Wilson intervals in the table."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pandas as pd
import pytest

from evalcore import __version__
from evalcore.data.validation import validate
from evalcore.report import Settings, build_report, file_records

NUMBERS = re.compile(r'<script type="application/json" id="evalcore-numbers">(.*?)</script>', re.S)
HOSTILE = "</script><img src=x onerror=alert(1)>"


def small_log(names=("alpha", "beta"), n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    parts = [pd.DataFrame({"model": name, "example_id": np.arange(n), "correct": (rng.random(n) < p).astype(int),
                           "confidence": rng.uniform(0.4, 1.0, n)})
             for name, p in zip(names, (0.5, 0.8))]
    return validate(pd.concat(parts, ignore_index=True))


def test_a_hostile_model_name_stays_text_everywhere():
    html = build_report(small_log((HOSTILE, "beta")), settings=Settings(n_boot=100)).html()
    assert "<img src=x" not in html  # neither in a table, a sentence nor the embedded data
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert html.count("</script>") == html.count("<script")  # no element closed early by the data
    numbers = json.loads(NUMBERS.search(html).group(1))
    models = {row["model"] for row in numbers["sections"]["accuracy"]["tables"]["by model"]}
    assert models == {HOSTILE, "beta"}  # the machine-readable copy keeps the name exactly


def test_no_external_resource_and_plotly_once():
    html = build_report(small_log(), settings=Settings(n_boot=100)).html()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    library = [s for s in re.findall(r"<script[^>]*>(.*?)</script>", html, re.S) if "plotly.js v" in s]
    assert len(library) == 1 and len(library[0]) > 1_000_000  # plotly.js, embedded once
    page = html.replace(library[0], "")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert page.count("Plotly.newPlot") == len(re.findall(r"id=\"figure-\d+\"", page)) >= 2
    assert len(html) < 15 * 2**20


def test_wilson_interval_by_hand_in_the_accuracy_table():
    raw = pd.DataFrame({"model": ["m"] * 10 + ["n"] * 10, "example_id": list(range(10)) * 2,
                        "correct": [1] * 7 + [0] * 3 + [1] * 4 + [0] * 6})
    report = build_report(validate(raw), settings=Settings(level=0.95, n_boot=100))
    table = pd.DataFrame(report.numbers()["sections"]["accuracy"]["tables"]["by model"]).set_index("model")
    z, k, n = 1.959963984540054, 7, 10
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert table.loc["m", "ci_low"] == pytest.approx(centre - half, abs=1e-12)
    assert table.loc["m", "ci_high"] == pytest.approx(centre + half, abs=1e-12)
    assert f"0.700 ({centre - half:.3f} to {centre + half:.3f})" in report.html()


def test_sections_follow_what_the_log_supports():
    without_confidence = validate(small_log().drop(columns="confidence"))
    report = build_report(without_confidence, settings=Settings(n_boot=100))
    keys = [s.key for s in report.sections]
    assert "calibration" not in keys and "accuracy" in keys and "leaderboard" in keys
    assert any(line.startswith("Calibration: needs") for line in report.skipped)
    tiny = validate(pd.DataFrame({"model": ["a", "a", "b", "b"], "example_id": [1, 2, 1, 2], "correct": [1, 0, 1, 1],
                                  "group": ["g", "h", "g", "g"]}))
    report = build_report(tiny, settings=Settings(n_boot=50))
    assert any(line.startswith("Subgroups: Empirical Bayes needs") for line in report.skipped)
    for section in report.sections:
        assert section.meaning.strip()


def test_provenance_has_sha256_rows_seed_and_version(tmp_path):
    path = tmp_path / "run.csv"
    path.write_bytes(b"model,example_id,correct\na,1,1\na,2,0\nb,1,1\nb,2,1\n")
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "x.csv").write_bytes(b"1")
    records = file_records([path, ("upload.csv", b"abc"), folder])
    assert records[0].sha256 == hashlib.sha256(path.read_bytes()).hexdigest() and records[0].size == len(path.read_bytes())
    assert records[1].sha256 == hashlib.sha256(b"abc").hexdigest()
    assert records[2].name == "runs/" and records[2].size == 1
    report = build_report(validate(pd.read_csv(path)), records, Settings(seed=13, n_boot=50))
    html = report.html()
    assert records[0].sha256 in html and "seed = 13" in html and f"evalcore {__version__}" in html
    assert report.provenance.rows == 4 and report.provenance.models == 2


def test_the_seed_decides_the_bootstrap():
    log = small_log(n=60)
    a, b = (build_report(log, settings=Settings(seed=s, n_boot=200)).numbers() for s in (1, 1))
    c = build_report(log, settings=Settings(seed=2, n_boot=200)).numbers()
    differences = lambda numbers: numbers["sections"]["leaderboard"]["tables"]["pairwise differences"]  # noqa: E731
    assert differences(a) == differences(b) and differences(a) != differences(c)
    overall = lambda numbers: numbers["sections"]["leaderboard"]["tables"]["overall"]  # noqa: E731
    assert overall(a) == overall(c)  # the overall number's interval is the one of every page: no seed in it
