"""The ``evalcore`` command line in subprocesses: exit codes, messages on stderr, ``--help``, the report file."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import crafted
from crafted import evalcore
from evalcore import __version__
from evalcore.leaderboard import bootstrap as aggregate
from evalcore.data.validation import load_eval_log
from evalcore.stats.overall import overall_table

ROOT = Path(__file__).resolve().parents[2]
NUMBERS = re.compile(r'<script type="application/json" id="evalcore-numbers">(.*?)</script>', re.S)


def log_csv(tmp_path: Path, name: str = "run.csv", n: int = 60, seed: int = 1) -> Path:
    """Two models on ``n`` examples with confidence: model b is right more often."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, p in (("model-a", 0.55), ("model-b", 0.8)):
        conf = rng.uniform(0.3, 1.0, n)
        rows.append(pd.DataFrame({"model": model, "item": np.arange(n), "acc": (rng.random(n) < p).astype(int),
                                  "conf": conf, "topic": np.where(np.arange(n) % 2, "x", "y")}))
    path = tmp_path / name
    pd.concat(rows).to_csv(path, index=False)
    return path


def embedded(html: str) -> dict:
    return json.loads(NUMBERS.search(html).group(1))


def test_help_and_version():
    out = evalcore("--help")
    assert out.returncode == 0
    for command in ("report", "validate", "serve"):
        assert command in out.stdout
    report_help = evalcore("report", "--help")
    assert report_help.returncode == 0
    for option in ("--mapping", "--level", "--seed", "--out", "--quiet", "--debug"):
        assert option in report_help.stdout
    assert evalcore("--version").stdout.strip() == f"evalcore {__version__}"


def test_no_command_is_a_usage_error():
    out = evalcore()
    assert out.returncode == 2 and "usage: evalcore" in out.stderr


def test_validate_a_usable_log_exits_0_and_prints_the_report(tmp_path):
    path = log_csv(tmp_path)
    out = evalcore("validate", str(path), "--mapping", "item=example_id", "--mapping", "acc=correct",
                   "--mapping", "conf=confidence")
    assert out.returncode == 0, out.stderr
    assert "run.csv: usable: a log table with 120 rows and 2 models." in out.stdout
    assert "  example_id: item" in out.stdout and "  confidence: conf" in out.stdout


@pytest.mark.parametrize("content, problem", [
    (b"model,example_id,correct\na,1,1\na,2,7\n", "'correct'"),
    (b"", "empty"),
    (b"model,example_id,correct\na,1,1\na,1,0\n", "row"),
])
def test_validate_an_unusable_log_exits_1_naming_the_file(tmp_path, content, problem):
    path = tmp_path / "broken-log.csv"
    path.write_bytes(content)
    out = evalcore("validate", str(path))
    assert out.returncode == 1
    assert out.stdout.startswith("broken-log.csv: NOT USABLE")
    assert problem in out.stdout
    assert "Traceback" not in out.stdout + out.stderr


def test_bad_input_gives_one_line_and_no_traceback(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(b"model,example_id,correct\na,1,1\na,2,maybe\n")
    out = evalcore("report", str(path), "--out", str(tmp_path / "r.html"))
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evalcore: error: bad.csv: "), out.stderr
    assert "'correct'" in lines[0] and "maybe" in lines[0]
    assert not (tmp_path / "r.html").exists()
    debug = evalcore("report", str(path), "--out", str(tmp_path / "r.html"), "--debug")
    assert debug.returncode == 1 and "Traceback" in debug.stderr and "EvalDataError" in debug.stderr


@pytest.mark.parametrize("name, make, problem", [
    ("noise.csv", lambda path: path.write_bytes(bytes(range(256)) * 20), "not a text table"),
    ("bomb.csv.gz", lambda path: path.write_bytes(gzip.compress(b"a,b\n" + b"1,2\n" * 600_000, 9)),
     "expands beyond 1 MB"),
    ("array.json", lambda path: path.write_text("[1, 2, 3]"), "not a log evalcore recognises"),
    ("empty-folder", lambda path: path.mkdir(), "No file to read"),
])
def test_hostile_files_are_refused_in_one_line_naming_the_file(tmp_path, name, make, problem):
    path = tmp_path / name
    make(path)
    out = evalcore("report", str(path), "--out", str(tmp_path / "r.html"), EVALCORE_MAX_FILE_MB="1")
    assert out.returncode == 1
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("evalcore: error: ") and problem in line and line.count(name) == 1, line
    assert not (tmp_path / "r.html").exists()


MEMORY_BOUND = 1536 * 2**20  # the watchdog kills `evalcore validate` (with its worker) above this resident memory


def _zip_member_stating_100_bytes(size: int) -> bytes:
    deflated, crc = crafted.deflated_member(size, b"a")
    return crafted.raw_zip([("run.csv", deflated, 100, crc)])


def _json_lines_with_a_long_line() -> bytes:
    return b'{"model": "a", "correct": 1}\n{"model": "b", "correct": 0, "note": "' + b"x" * (2 * 2**20) + b'"}\n'


@pytest.mark.parametrize("name, make, problem, env", [
    ("claims.parquet", lambda: crafted.lying_row_group(10**12),
     ["Row group 1 of the Parquet file states 1,000,000,000,000 rows", "EVALCORE_MAX_ROWS"], {}),
    ("pages.parquet", lambda: crafted.lying_pages("uncompressed_page_size"),
     ["page headers state", "EVALCORE_MAX_FILE_MB"], {}),
    ("run.eval", lambda: crafted.inspect_sample_bomb(12, 5 * 2**20),
     ["run.eval/samples/", "expands beyond", "EVALCORE_MAX_FILE_MB"], {"EVALCORE_MAX_FILE_MB": "20"}),
    ("inflates.zip", lambda: _zip_member_stating_100_bytes(300 * 2**20),
     ["member 'run.csv' cannot be read", "does not match the size"], {}),
    ("long-line.jsonl", _json_lines_with_a_long_line, ["Line 2 is", "EVALCORE_MAX_LINE_KB"], {}),
    ("models.csv", lambda: b"model,example_id,correct\n" + b"".join(b"m%d,q,1\n" % i for i in range(2000)),
     ["2,000 distinct models", "at most 1,000", "EVALCORE_MAX_MODELS"], {}),
])
def test_crafted_files_are_refused_within_bounded_memory(tmp_path, name, make, problem, env):
    path = tmp_path / name
    path.write_bytes(make())
    out, peak, seconds = crafted.run_watched([sys.executable, "-m", "evalcore", "validate", str(path)], MEMORY_BOUND,
                                             env={**os.environ, "PYTHONPATH": str(ROOT), **env})
    assert out.returncode == 1, (out.returncode, out.stdout, out.stderr)
    head, message, *rest = out.stdout.splitlines()
    assert head == f"{name}: NOT USABLE" and not rest and message.startswith(f"  {name}"), out.stdout
    for fragment in problem:
        assert fragment in message, message
    assert "Traceback" not in out.stdout + out.stderr
    assert peak < MEMORY_BOUND and seconds < 60, (peak, seconds)


def test_the_report_reads_in_the_bounded_worker(tmp_path):
    path = tmp_path / "big.csv.gz"
    path.write_bytes(crafted.gzip_of(30 * 2**20, b"model,correct\n", b"a,1\n"))
    out = evalcore("report", str(path), "--out", str(tmp_path / "r.html"), EVALCORE_WORKER_MEMORY_MB="256")
    assert out.returncode == 1
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("evalcore: error: Reading big.csv.gz needed more than 256 MB of memory"), line
    assert "EVALCORE_WORKER_MEMORY_MB" in line


def test_missing_file_unknown_column_and_bad_options(tmp_path):
    missing = evalcore("validate", str(tmp_path / "nope.csv"))
    assert missing.returncode == 1 and "nope.csv: no such file or folder" in missing.stdout
    path = log_csv(tmp_path)
    unknown = evalcore("report", str(path), "--mapping", "accuracy=correct", "--out", str(tmp_path / "r.html"))
    assert unknown.returncode == 1
    assert "--mapping names a column 'accuracy' that is not in the file" in unknown.stderr
    malformed = evalcore("report", str(path), "--mapping", "acc", "--out", str(tmp_path / "r.html"))
    assert malformed.returncode == 2 and "expected COLUMN=ROLE" in malformed.stderr
    level = evalcore("report", str(path), "--level", "95", "--out", str(tmp_path / "r.html"))
    assert level.returncode == 2 and "probability" in level.stderr
    unwritable = evalcore("report", str(path), "-m", "acc=correct", "-m", "item=example_id",
                          "--out", str(tmp_path / "no-such-folder" / "r.html"), "--quiet")
    assert unwritable.returncode == 1 and "cannot write the report" in unwritable.stderr


def test_report_writes_the_api_numbers_with_provenance(tmp_path):
    path = log_csv(tmp_path)
    out_file = tmp_path / "report.html"
    out = evalcore("report", str(path), "-m", "item=example_id", "-m", "acc=correct", "-m", "conf=confidence",
                   "-m", "topic=", "--level", "0.9", "--seed", "7", "--n-boot", "300", "--out", str(out_file))
    assert out.returncode == 0, out.stderr
    assert "[########################] " in out.stderr and f"wrote {out_file}" in out.stderr  # the progress bar
    html = out_file.read_text(encoding="utf-8")
    numbers = embedded(html)
    log = load_eval_log(path, mapping={"model": "model", "item": "example_id", "acc": "correct",
                                       "conf": "confidence", "topic": None})
    overall = overall_table(log, "correct", 0.1).set_index("model")  # the one overall interval of every surface
    shown = {row["model"]: row for row in numbers["sections"]["leaderboard"]["tables"]["overall"]}
    differences = aggregate.pairwise_differences(aggregate.bootstrap_replicates(log, n_boot=300, seed=7), level=0.9)
    for model in ("model-a", "model-b"):
        for column in ("estimate", "ci_low", "ci_high"):
            assert shown[model][column] == pytest.approx(overall.loc[model, column], abs=1e-12)
    reported = numbers["sections"]["leaderboard"]["tables"]["pairwise differences"][0]  # the seeded bootstrap's
    assert reported["ci_low"] == pytest.approx(float(differences["ci_low"].iloc[0]), abs=1e-12)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest in html and "run.csv" in html and "seed = 7" in html and f"evalcore {__version__}" in html
    assert "level = 0.9" in html


def test_quiet_prints_nothing_and_reports_a_tools_log(tmp_path, shared_data):
    logs = shared_data / "ecosystem" / "inspect_ai"
    files = sorted(str(p) for p in logs.glob("data_arc_*.json"))
    if not files:
        pytest.skip("Inspect logs not present")
    out_file = tmp_path / "inspect.html"
    out = evalcore("report", *files, "--quiet", "--n-boot", "200", "--out", str(out_file))
    assert out.returncode == 0, out.stderr
    assert out.stderr == "" and out.stdout == ""
    html = out_file.read_text(encoding="utf-8")
    for name in files:
        assert hashlib.sha256(Path(name).read_bytes()).hexdigest() in html
    assert embedded(html)["sections"]["accuracy"]["tables"]["by model"]


def test_validate_several_tools_logs(shared_data):
    folder = shared_data / "ecosystem"
    checked = 0
    for log in sorted(folder.iterdir()):
        if not log.is_dir():
            continue
        out = evalcore("validate", *(str(p) for p in sorted(log.iterdir())))
        assert out.returncode in (0, 1), out.stderr
        assert "Traceback" not in out.stdout + out.stderr
        assert ": usable: " in out.stdout or ": NOT USABLE" in out.stdout
        checked += 1
    assert checked >= 5


def test_large_logs_are_read_in_the_engine(tmp_path):
    path = log_csv(tmp_path, n=20_000)  # about 1.3 MB of CSV
    mapping = ["-m", "item=example_id", "-m", "acc=correct", "-m", "conf=confidence"]
    checked = evalcore("validate", str(path), *mapping, EVALCORE_ENGINE_MB="1")
    assert checked.returncode == 0 and "40,000 rows and 2 models (read in the engine, DuckDB)" in checked.stdout
    in_memory = evalcore("validate", str(path), *mapping, "--engine", "never", EVALCORE_ENGINE_MB="1")
    assert "(read in the engine" not in in_memory.stdout and "40,000 rows" in in_memory.stdout
    out_file = tmp_path / "big.html"
    made = evalcore("report", str(path), *mapping, "--engine", "always", "--n-boot", "200", "--quiet", "--out",
                    str(out_file))
    assert made.returncode == 0, made.stderr
    numbers = embedded(out_file.read_text(encoding="utf-8"))["sections"]
    log = load_eval_log(path, mapping={"model": "model", "item": "example_id", "acc": "correct",
                                       "conf": "confidence"})
    board = aggregate.leaderboard(log, level=0.95, n_boot=200, seed=0)
    overall = board[board["scope"] == "overall"].set_index("model")["estimate"]
    shown = {row["model"]: row["estimate"] for row in numbers["leaderboard"]["tables"]["overall"]}
    assert shown == pytest.approx(overall.to_dict(), abs=1e-12)
    broken = evalcore("validate", str(tmp_path / "none.parquet"), "--engine", "always")
    assert broken.returncode == 1 and "none.parquet: no such file or folder" in broken.stdout


def test_workspace_add_saves_a_log_through_the_engine(tmp_path):
    from evalcore.stats.summaries import mean_table
    from evalcore.workspace import Workspace

    path = log_csv(tmp_path, n=500)
    mapping = ["-m", "item=example_id", "-m", "acc=correct", "-m", "conf=confidence"]
    folder = tmp_path / "ws"
    out = evalcore("workspace", "add", str(path), *mapping, "--name", "big run", "--engine", "always",
                   "--workspace", str(folder))
    assert out.returncode == 0, out.stderr
    [record] = Workspace(folder).datasets()
    assert (record.name, record.rows, record.models) == ("big run", 1000, 2)
    assert f"as dataset {record.id}" in out.stdout
    lazy = Workspace(folder).lazy_dataset(record.id)
    log = load_eval_log(path, mapping={"model": "model", "item": "example_id", "acc": "correct",
                                       "conf": "confidence"})
    expected = mean_table(log, ["model"], "correct")
    pd.testing.assert_frame_equal(mean_table(lazy, ["model"], "correct"), expected, check_dtype=False, atol=1e-12)
    refused = evalcore("workspace", "add", str(tmp_path / "nope.csv"), "--name", "x", "--workspace", str(folder))
    assert refused.returncode == 1 and "nope.csv: no such file or folder" in refused.stderr


def test_report_names_one_overall_number_and_one_level(tmp_path):
    """A log with tasks of unequal size: pooled over examples, model-p leads (its strong task is the big one); the
    mean over tasks puts model-t first. Summary, accuracy section and leaderboard give the mean over tasks, and
    --level 0.9 makes every interval a 90% one."""
    # (model, task, examples, correct): model-p 0.9 on 200 + 0.3 on 20 -> over tasks 0.6, pooled 186/220 = 0.845;
    # model-t 0.7 on 200 + 0.7 on 20 -> 0.7 both ways
    cells = [("model-p", "big", 200, 180), ("model-p", "small", 20, 6),
             ("model-t", "big", 200, 140), ("model-t", "small", 20, 14)]
    rows = [pd.DataFrame({"model": m, "task": t, "example_id": [f"{t}{i}" for i in range(n)],
                          "correct": (np.arange(n) < k).astype(int)}) for m, t, n, k in cells]
    path = tmp_path / "tasks.csv"
    pd.concat(rows).to_csv(path, index=False)
    out_file = tmp_path / "tasks.html"
    out = evalcore("report", str(path), "--level", "0.9", "--n-boot", "200", "--quiet", "--out", str(out_file))
    assert out.returncode == 0, out.stderr
    html = out_file.read_text(encoding="utf-8")
    sections = embedded(html)["sections"]
    accuracy, board = sections["accuracy"], sections["leaderboard"]
    assert accuracy["facts"]["top"] == board["facts"]["top"] == "model-t"
    assert accuracy["facts"]["estimate"] == pytest.approx(0.7) == board["facts"]["estimate"]
    assert [r["model"] for r in accuracy["tables"]["by model"]] == [r["model"] for r in board["tables"]["overall"]]
    by_model = {r["model"]: r["estimate"] for r in accuracy["tables"]["by model"]}
    assert by_model == pytest.approx({"model-t": 0.7, "model-p": 0.6})
    assert "Top model: model-t, overall accuracy (mean over tasks) 0.700 (" in html
    for section in sections.values():
        assert "90%" in section["meaning"] and "95%" not in section["meaning"] and "83.4%" not in section["meaning"]
