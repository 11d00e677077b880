"""A reader that goes away (``evalcore validate FILE | head -1``) ends the command quietly: no "internal error:
BrokenPipeError" (issue 38: about one run in eight), nothing on stderr, every time."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from crafted import ROOT

CSV = "model,example_id,correct\n" + "".join(f"{m},q{i},{i % 3 > 0:d}\n" for m in ("a", "b") for i in range(50))


def piped(path, lines: int) -> tuple[int, str]:
    """``python -m evalcore validate path`` whose stdout is read for ``lines`` lines, then closed: (exit status,
    stderr)."""
    process = subprocess.Popen([sys.executable, "-m", "evalcore", "validate", str(path)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    for _ in range(lines):
        process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read()
    return process.wait(timeout=120), stderr


def test_a_reader_closed_before_the_first_line_ends_the_command_quietly(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text(CSV)
    assert piped(path, 0) == (1, "")  # every write meets the closed pipe


@pytest.mark.parametrize("run", range(8))
def test_head_one_never_prints_an_internal_error(tmp_path, run):
    path = tmp_path / "run.csv"
    path.write_text(CSV)
    status, stderr = piped(path, 1)
    assert stderr == "" and status in (0, 1)  # 0 when the whole report fitted in the pipe before it closed
