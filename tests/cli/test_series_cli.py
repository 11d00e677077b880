"""``evalcore workspace add LOG --series NAME`` and ``evalcore compare --series NAME NEW`` in subprocesses (issue 40):
a series built from the command line as CI builds it, a gate that exits 3 on a planted regression and 0 on an
unchanged run, the JSON's series and minimum detectable difference, a pinned baseline, and the refusals."""

from __future__ import annotations

import json
import math

import pandas as pd

from crafted import evalcore, write_series_runs

N = 1200  # examples of crafted.series_runs
SERIES = "bot / nightly"


def test_a_series_from_the_command_line_gates_a_new_run(tmp_path):
    paths = write_series_runs(tmp_path)
    for i in range(3):
        out = evalcore("workspace", "add", str(paths[i]), "--name", f"nightly-{i}", "--series", SERIES,
                       "--time", f"2026-11-1{i}T02:00:00Z", "--meta", f"commit=c{i}", "--workspace", "ws",
                       cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert f"added as a run of the series '{SERIES}' (2026-11-1{i}T02:00:00+00:00)" in out.stdout
    gate = evalcore("compare", "--series", SERIES, str(paths[3]), "--workspace", "ws", "--json", "gate.json",
                    cwd=tmp_path)
    assert gate.returncode == 3, gate.stdout + gate.stderr
    assert f"series '{SERIES}': run3 against its latest run nightly-2" in gate.stdout
    data = json.loads((tmp_path / "gate.json").read_text(encoding="utf-8"))
    assert data["series"]["name"] == SERIES and data["series"]["baseline"] == "nightly-2"
    assert data["verdict"] == "regression"
    # the minimum detectable difference, by hand from the 2x2 table: Connor (1987) at 95% and 80% power
    base = pd.read_csv(paths[2])["correct"].to_numpy()
    new = pd.read_csv(paths[3])["correct"].to_numpy()
    psi = float((base != new).mean())
    delta = 0.01
    for _ in range(200):
        delta = (1.959963984540054 * math.sqrt(psi) + 0.8416212335729143 * math.sqrt(psi - delta**2)) / math.sqrt(N)
    assert abs(data["overall"]["minimum_detectable_difference"] - delta) < 1e-9
    assert f"could see changes of {100 * delta:.3g} points or more" in gate.stdout

    same = evalcore("compare", "--series", SERIES, str(paths[2]), "--workspace", "ws", cwd=tmp_path)
    assert same.returncode == 0, same.stdout + same.stderr  # an unchanged run: no regression


def test_refusals_name_what_to_do(tmp_path):
    paths = write_series_runs(tmp_path)
    missing = evalcore("compare", "--series", "nope", str(paths[0]), "--workspace", "ws", cwd=tmp_path)
    assert missing.returncode == 1 and "No series named 'nope'" in missing.stderr and "--series" in missing.stderr
    two = evalcore("compare", "--series", SERIES, str(paths[0]), str(paths[1]), cwd=tmp_path)
    assert two.returncode == 2 and "give one LOG" in two.stderr
    bad_time = evalcore("workspace", "add", str(paths[0]), "--name", "x", "--series", SERIES, "--time", "tuesday",
                        "--workspace", "ws", cwd=tmp_path)
    assert bad_time.returncode == 1 and "ISO 8601" in bad_time.stderr and "saved" not in bad_time.stdout
    bad_meta = evalcore("workspace", "add", str(paths[0]), "--name", "x", "--meta", "commit", cwd=tmp_path)
    assert bad_meta.returncode == 2 and "KEY=VALUE" in bad_meta.stderr


def test_the_report_of_a_new_run_compares_it_with_the_series_baseline(tmp_path):
    paths = write_series_runs(tmp_path)
    for i in range(3):
        assert evalcore("workspace", "add", str(paths[i]), "--name", f"nightly-{i}", "--series", SERIES, "--time",
                        f"2026-11-1{i}T02:00:00Z", "--workspace", "ws", cwd=tmp_path).returncode == 0
    out = evalcore("report", str(paths[3]), "--series", SERIES, "--workspace", "ws", "--out", "r.html", "--quiet",
                   "--n-boot", "100", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    numbers = json.loads(html.split('id="evalcore-numbers">', 1)[1].split("</script>", 1)[0])
    facts = numbers["sections"]["comparison"]["facts"]
    assert facts["base"] == "nightly-2" and facts["new"] == "run3" and facts["verdict"] == "regression"
    assert facts["series"] == f"Series '{SERIES}': run3 against its latest run nightly-2 (2026-11-12T02:00:00+00:00)."
    assert facts["minimum_detectable_difference"] > 0
