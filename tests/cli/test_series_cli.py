"""``evalcore workspace add LOG --series NAME`` and ``evalcore compare --series NAME NEW`` in subprocesses (issue 40):
a series built from the command line as CI builds it, a gate that exits 3 on a planted regression and 0 on an
unchanged run, the JSON's series and minimum detectable difference, a pinned baseline, and the refusals."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from evalcore.compare.power import interval_power

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
    assert (f"series '{SERIES}': run3 against its baseline nightly-2 (the latest accepted run, "
            "2026-11-12T02:00:00+00:00) and its reference nightly-0 (the first accepted run, "
            "2026-11-10T02:00:00+00:00)") in gate.stdout
    assert "against the reference nightly-0: run3 is worse than nightly-0" in gate.stdout
    data = json.loads((tmp_path / "gate.json").read_text(encoding="utf-8"))
    assert data["series"]["name"] == SERIES and data["series"]["baseline"] == "nightly-2"
    assert data["series"]["reference"] == "nightly-0" and data["series"]["gate"] == "regression"
    assert [(v["against"], v["run"]) for v in data["series"]["verdicts"]] == [("baseline", "nightly-2"),
                                                                              ("reference", "nightly-0")]
    assert data["verdict"] == "regression" and data["against_reference"]["settings"]["base"] == "nightly-0"
    # the minimum detectable difference: the interval's power there is 80% with the 2x2 table's discordance and
    # share of the concordant examples right in both
    base = pd.read_csv(paths[2])["correct"].to_numpy()
    new = pd.read_csv(paths[3])["correct"].to_numpy()
    psi = float((base != new).mean())
    share = float(((base == 1) & (new == 1)).sum() / (base == new).sum())
    delta = data["overall"]["minimum_detectable_difference"]
    assert interval_power(N, psi, share, delta, 0.95) == pytest.approx(0.8, abs=1e-5)
    said = re.findall(r"could see changes of ([0-9.]+) points or more", gate.stdout)
    assert said and float(said[0]) == pytest.approx(100 * delta, abs=0.006), (said, delta)

    same = evalcore("compare", "--series", SERIES, str(paths[2]), "--workspace", "ws", cwd=tmp_path)
    assert same.returncode == 0, same.stdout + same.stderr  # an unchanged run: no regression
    assert "run2 against its baseline nightly-1" in same.stdout  # a run of the series: against the runs before it


def test_a_failed_run_is_not_the_next_baseline_until_a_member_accepts_it(tmp_path):
    """The gate fails run3 (exit 3); saved into the series afterwards, run3 is kept as rejected, so the next run is
    compared with nightly-2, the latest accepted run; once accepted, run3 is the baseline and the reference, with who
    and when in the JUnit file's properties and the accept command's answer."""
    paths = write_series_runs(tmp_path)
    for i in range(3):
        assert evalcore("workspace", "add", str(paths[i]), "--name", f"nightly-{i}", "--series", SERIES, "--time",
                        f"2026-11-1{i}T02:00:00Z", "--workspace", "ws", cwd=tmp_path).returncode == 0
    assert evalcore("compare", "--series", SERIES, str(paths[3]), "--workspace", "ws", cwd=tmp_path).returncode == 3
    assert evalcore("workspace", "add", str(paths[3]), "--name", "nightly-3", "--series", SERIES, "--time",
                    "2026-11-13T02:00:00Z", "--workspace", "ws", cwd=tmp_path).returncode == 0
    later = pd.read_csv(paths[2])
    later.loc[0, "correct"] = 1 - later.loc[0, "correct"]  # another run, as good as nightly-2
    later.to_csv(tmp_path / "run4.csv", index=False)
    gate = evalcore("compare", "--series", SERIES, "run4.csv", "--workspace", "ws", "--junit", "gate.xml",
                    cwd=tmp_path)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "run4 against its baseline nightly-2 (the latest accepted run" in gate.stdout
    properties = {p.get("name"): p.get("value") for p in ET.parse(tmp_path / "gate.xml").iter("property")}
    assert properties["series baseline"] == "nightly-2" and properties["series reference"] == "nightly-0"
    assert len(ET.parse(tmp_path / "gate.xml").getroot().findall("testsuite")) == 2
    accepted = evalcore("workspace", "series", "accept", SERIES, "nightly-3", "--workspace", "ws", cwd=tmp_path)
    assert accepted.returncode == 0, accepted.stderr
    assert "accepted nightly-3" in accepted.stdout and "by nobody signed in at 20" in accepted.stdout
    after = evalcore("compare", "--series", SERIES, "run4.csv", "--workspace", "ws", cwd=tmp_path)
    assert "run4 against its baseline nightly-3 (the latest accepted run" in after.stdout
    assert "also its reference" in after.stdout
    unknown = evalcore("workspace", "series", "accept", SERIES, "nightly-9", "--workspace", "ws", cwd=tmp_path)
    assert unknown.returncode == 1 and "No run 'nightly-9'" in unknown.stderr and "nightly-3" in unknown.stderr


def test_only_the_owner_or_a_signed_in_member_on_a_shared_run_accepts(tmp_path):
    paths = write_series_runs(tmp_path)
    assert evalcore("workspace", "add", str(paths[0]), "--name", "shared-0", "--series", SERIES, "--owner",
                    "alice@example.org", "--shared", "--workspace", "ws", cwd=tmp_path).returncode == 0
    assert evalcore("workspace", "add", str(paths[1]), "--name", "open-1", "--series", SERIES,
                    "--workspace", "ws", cwd=tmp_path).returncode == 0  # no owner: not shared with the team
    refused = evalcore("workspace", "series", "accept", SERIES, "open-1", "--by", "bob@example.org", "--workspace",
                       "ws", cwd=tmp_path)
    assert refused.returncode == 1 and "alice@example.org" in refused.stderr and "sign in" in refused.stderr
    nobody = evalcore("workspace", "series", "accept", SERIES, "open-1", "--workspace", "ws", cwd=tmp_path)
    assert nobody.returncode == 1 and "alice@example.org" in nobody.stderr  # alice's series: not without signing in
    member = evalcore("workspace", "series", "accept", SERIES, "shared-0", "--by", "Bob@Example.org", "--workspace",
                      "ws", cwd=tmp_path)
    assert member.returncode == 0 and "by bob@example.org" in member.stdout


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
    assert facts["series"] == (f"Series '{SERIES}': run3 against its baseline, the latest accepted run nightly-2 "
                               "(2026-11-12T02:00:00+00:00).")
    assert facts["minimum_detectable_difference"] > 0
