"""`make run` installs the project itself, so the README's `evalcore` command exists in .venv (issue 26)."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_installs_the_project_editable_before_starting(tmp_path):
    # A dry run into an empty venv directory lists every step `make run` would take on a fresh machine.
    venv = tmp_path / "venv"
    out = subprocess.run(["make", "-n", "run", f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    install = [i for i, line in enumerate(out) if "pip install" in line and "--no-deps -e ." in line]
    start = [i for i, line in enumerate(out) if "streamlit run" in line]
    assert len(install) == 1 and len(start) == 1
    assert install[0] < start[0]
    assert f"touch {venv}/.project-installed" in out
