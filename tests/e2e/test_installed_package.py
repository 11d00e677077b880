"""``pip install '.[dashboard]'`` into a fresh virtual environment, then the installed ``evalcore`` command:
``--version``, ``validate``, ``report`` and ``serve`` (the dashboard opened in chromium), all run outside the
checkout so that nothing comes from the source tree."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import expect

from benchmarks.server import streamlit_server
from e2e_helpers import download_bytes, goto_page, wait_idle
import crafted

ROOT = Path(__file__).resolve().parents[2]
#: what a source distribution holds: the package, the dashboard and the project's metadata
SOURCES = ("pyproject.toml", "README.md", "app.py", "evalcore", "pages", ".streamlit/config.toml")
CSV = b"model,question,is_correct\nalpha,1,1\nalpha,2,0\nalpha,3,1\nbeta,1,1\nbeta,2,1\nbeta,3,1\n"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv with evalcore and its dashboard installed from a copy of the sources; its bin folder."""
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    for name in SOURCES:
        origin, target = ROOT / name, source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_dir():
            shutil.copytree(origin, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(origin, target)
    bin_dir = crafted.fresh_venv(base / "venv")
    done = subprocess.run([bin_dir / "python", "-m", "pip", "install", "--quiet", f"{source}[dashboard]"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return bin_dir


def run(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([bin_dir / "evalcore", *args], capture_output=True, text=True, cwd=cwd, timeout=300,
                          env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(cwd)})


def test_the_installed_command_validates_and_reports(installed, tmp_path):
    assert run(installed, "--version", cwd=tmp_path).stdout.startswith("evalcore 0.")
    where = subprocess.run([installed / "python", "-c", "import evalcore; print(evalcore.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert "site-packages" in where.stdout  # the installed copy, not the checkout
    log = tmp_path / "run.csv"
    log.write_bytes(CSV)
    checked = run(installed, "validate", str(log), cwd=tmp_path)
    assert checked.returncode == 0 and "usable: a log table with 6 rows and 2 models" in checked.stdout
    module = subprocess.run([installed / "python", "-m", "evalcore", "validate", str(log)], capture_output=True,
                            text=True, cwd=tmp_path)
    assert module.stdout == checked.stdout
    made = run(installed, "report", str(log), "--out", "report.html", "--quiet", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert hashlib.sha256(CSV).hexdigest() in html and "Accuracy by model" in html


def test_the_installed_dashboard_serves(installed, tmp_path, browser):
    env = {"PATH": f"{installed}:/usr/bin:/bin", "HOME": str(tmp_path)}
    command = lambda port: [str(installed / "evalcore"), "serve", "--port", str(port), "--address", "127.0.0.1"]  # noqa: E731
    with streamlit_server(command=command, cwd=tmp_path, env=env, log_path=tmp_path / "serve.log") as server:
        context = browser.new_context(base_url=server.url, accept_downloads=True)
        page = context.new_page()
        try:
            page.goto("/")
            expect(page.locator("h1").first).to_have_text("Data", timeout=60_000)
            wait_idle(page)
            goto_page(page, "Report")
            report = download_bytes(page, "Download the report (HTML)").decode("utf-8")
            assert "<title>Evaluation report</title>" in report and "Top model" in report
        finally:
            context.close()
