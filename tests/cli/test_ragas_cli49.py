"""``--model NAME`` names the system of a Ragas result (issue 49, item 5a), which its reader otherwise names after the
file; several Ragas files are several systems, which one --model cannot name. On the real files of
``tests/data/ecosystem49/ragas/`` (see ../SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crafted import evalcore

RAGAS = Path(__file__).resolve().parents[1] / "data" / "ecosystem49" / "ragas"


def test_model_names_a_ragas_result():
    out = evalcore("validate", str(RAGAS / "ragas_results.json"), "--model", "veritas-rag", "--json", "-")
    assert out.returncode == 0, out.stdout + out.stderr
    read = {row["task"]: row for row in json.loads(out.stdout)["read"]}
    assert {row["model"] for row in read.values()} == {"veritas-rag"}
    assert read["context_recall"]["examples"] == 6 and read["context_recall"]["estimate"] == pytest.approx(5 / 6)


def test_one_model_name_for_two_ragas_files_is_refused():
    out = evalcore("validate", str(RAGAS), "--model", "x")
    assert out.returncode == 1
    assert ("--model names the one system of a log; these files are 2 systems, each named after its file "
            "('ragas_evaluation_results', 'ragas_results'). Leave --model out, or give one file.") in out.stdout
