"""The command line's speed to the first answer, as behaviour (issue 37, point 5; the timings themselves are in
``benchmarks/first_answer.py``, never asserted): building the parser imports none of the heavy libraries, the
lazily exported names are the same objects, and ``load_each`` reads several files in one bounded worker with the
same result and the same messages as loading each alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from evalcore.cli import load, load_each
from evalcore.errors import EvalDataError

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "pandas", "scipy", "ibis", "duckdb", "pyarrow", "plotly")


def test_the_parser_and_every_help_import_no_heavy_library():
    code = ("import sys\nfrom evalcore.cli import _parser\nparser = _parser()\n"
            "for words in ([], ['report'], ['compare'], ['label', 'create'], ['workspace', 'add'], ['validate']):\n"
            "    try:\n        parser.parse_args([*words, '--help'])\n    except SystemExit:\n        pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"
    assert "--level LEVEL" in done.stdout and "0.95" in done.stdout
    assert "{srs,proportional,neyman,active,ppi,disagreement}" in done.stdout  # comparison campaigns: disagreement


def test_the_report_imports_the_modules_of_a_method_only_when_its_section_runs():
    """A report of a log without confidences or battles (MMLU-Pro) never loads calibration, the labeling designs or
    prediction-powered inference (issue 49, item 6); a section that runs imports its own (the report tests)."""
    code = ("import sys\nimport evalcore.report\n"
            "print(sorted(m for m in sys.modules if m.startswith(('evalcore.calibration', 'evalcore.ppi', "
            "'evalcore.sampling.designs'))), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_lazy_exports_are_the_definitions():
    import evalcore.labeling as labeling
    import evalcore.stats as stats
    from evalcore.labeling import designs, estimate, queue
    from evalcore.stats import intervals, level, overall, summaries

    assert stats.DEFAULT_LEVEL == intervals.DEFAULT_LEVEL == level.DEFAULT_LEVEL == 0.95
    assert intervals.DEFAULT_ALPHA == 0.05
    assert stats.overall_table is overall.overall_table and stats.mean_table is summaries.mean_table
    assert stats.wilson_interval is intervals.wilson_interval
    assert labeling.DESIGNS is designs.DESIGNS is queue.DESIGNS and queue.DESIGN_NAMES is designs.DESIGN_NAMES
    assert labeling.plan_queue is queue.plan_queue and labeling.live_estimate is estimate.live_estimate
    with pytest.raises(AttributeError):
        stats.no_such_name  # noqa: B018 - the access is the test


def _run(path: Path, right: list[int]) -> Path:
    pd.DataFrame({"model": "m", "example_id": range(len(right)), "category": ["a", "b"] * (len(right) // 2),
                  "correct": right}).to_csv(path, index=False)
    return path


def test_load_each_reads_every_file_as_load_of_that_file_alone(tmp_path):
    paths = [_run(tmp_path / "base.csv", [1, 0, 1, 1, 0, 1]), _run(tmp_path / "new.csv", [1, 1, 1, 0, 0, 1])]
    together = load_each(paths, [])
    alone = [load([path], []) for path in paths]
    assert len(together) == 2
    for got, expected in zip(together, alone):
        pd.testing.assert_frame_equal(got, expected)
        assert got.attrs["report"] == expected.attrs["report"]


def test_load_each_names_the_file_it_cannot_use(tmp_path):
    good = _run(tmp_path / "base.csv", [1, 0, 1, 1])
    bad = tmp_path / "broken.csv"
    bad.write_text("model,example_id,correct\nm,1,1\nm,2,7\n", encoding="utf-8")
    with pytest.raises(EvalDataError) as alone:
        load([bad], [])
    with pytest.raises(EvalDataError) as together:
        load_each([good, bad], [])
    assert str(together.value) == str(alone.value) and "broken.csv" in str(together.value)
    with pytest.raises(EvalDataError, match="missing.csv: no such file"):
        load_each([good, tmp_path / "missing.csv"], [])
