"""``evalcore validate`` (a subprocess) on every_eval_ever and DeepEval files: exit status, the shape, rows and
models it reports, and the refusal of an aggregate without sample counts (fixtures of tests/data/ecosystem27)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from crafted import evalcore

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "ecosystem27"


def validate(*paths: Path) -> subprocess.CompletedProcess:
    return evalcore("validate", *map(str, paths), cwd=ROOT.parent)


def test_validate_an_every_eval_ever_pair_and_an_aggregate():
    run = DATA / "every_eval_ever" / "gsm8k_run"
    out = validate(*sorted(run.iterdir()))
    assert out.returncode == 0, out.stderr
    assert "usable: a log table with 7 rows and 1 models" in out.stdout  # 5 gsm8k samples + 2 judged samples
    assert "paired with its aggregate" in out.stdout
    summary = validate(run / "5e0c7a4e-1111-4a2b-9c3d-000000000001.json")
    assert summary.returncode == 0, summary.stderr
    assert "usable: a summary table with 4 rows" in summary.stdout  # gsm8k, mmlu, helpfulness, ifeval


def test_validate_refuses_an_aggregate_without_sample_counts_with_exit_1():
    out = validate(DATA / "every_eval_ever" / "real" / "98ea850e-7019-4728-a558-8b1819ec47c2.json")
    assert out.returncode == 1
    text = out.stdout + out.stderr
    assert "no sample count" in text and "Traceback" not in text


def test_validate_deepeval_runs():
    out = validate(DATA / "deepeval" / "results")
    assert out.returncode == 0, out.stderr
    assert "usable: a log table with 7 rows and 2 models" in out.stdout  # 5 + 2 metric verdicts
    assert "DeepEval" in out.stdout
