"""First-screen screenshots of the dashboard's Models, Leaderboard and Subgroups pages on an uploaded log.

Starts the dashboard of a checkout (``streamlit run``, headless, on a free port of 127.0.0.1), opens it in Debian's
headless chromium (``/usr/bin/chromium``) through Playwright, uploads a log on the Data page, then opens each page
through the sidebar (so the upload stays in the session) and saves its first screen (viewport 1400 x 900, not the
full page) as a palette PNG (256 colours, optimized: each file well under 300 kB).

The server entry is the checkout's ``pages/common/server.py`` when it has one (what ``make run`` starts),
``app.py`` otherwise (older checkouts).

Usage (from the repository root, with the project's virtual environment)::

    # the dashboard as it is now, into docs/screenshots/after-{models,leaderboard,subgroups}.png
    .venv/bin/python docs/screenshots.py --checkout . --prefix after

    # the dashboard before issue 26 (commit b9a0868), from a worktree of that commit
    git worktree add /tmp/before b9a0868
    .venv/bin/python docs/screenshots.py --checkout /tmp/before --prefix before
    git worktree remove /tmp/before

Options: ``--data`` the log to upload (default ../shared/data/mmlu_pro_per_question.csv.gz), ``--out`` the
folder (default docs/screenshots), ``--pages`` which pages (default Models Leaderboard Subgroups); or give the
output files one by one with ``--models PATH --leaderboard PATH --subgroups PATH``. The server's log is written
next to the screenshots as ``<prefix>-streamlit.log`` only when the run fails.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the repository's benchmarks package: one launcher's port and health check
from benchmarks.server import free_port, healthy, stop  # noqa: E402
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1400, "height": 900}
DEFAULT_DATA = HERE.parents[1] / "shared" / "data" / "mmlu_pro_per_question.csv.gz"  # ../shared/data of the repo
DEFAULT_PAGES = ("Models", "Leaderboard", "Subgroups")
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
EXCEPTION = "[data-testid='stException']"
NAV_LINK = "[data-testid='stSidebarNav'] a"
PLOTLY = "[data-testid='stPlotlyChart'] .main-svg"
TIMEOUT_MS = 240_000
SETTLE_MS = 1_500  # lets charts finish their transition before the shot
MAX_BYTES = 300_000


# --------------------------------------------------------------------------------------------- the server

def entry(checkout: Path) -> str:
    """The script ``streamlit run`` starts in ``checkout``."""
    server = checkout / "pages" / "common" / "server.py"
    return "pages/common/server.py" if server.exists() else "app.py"


@contextlib.contextmanager
def dashboard(checkout: Path, log_path: Path, timeout: float = 120.0) -> Iterator[str]:
    """The checkout's dashboard on a free port until the block ends; yields its base URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # the checkout's own package first (the virtual environment may have another checkout installed editable)
    env = {**os.environ, "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(checkout), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "streamlit", "run", entry(checkout), "--server.headless", "true",
               "--server.address", "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none",
               "--browser.gatherUsageStats", "false"]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, cwd=checkout, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            start = time.monotonic()
            while process.poll() is None and time.monotonic() - start < timeout and not healthy(url):
                time.sleep(0.1)
            if not healthy(url):
                raise RuntimeError(f"the dashboard of {checkout} did not start; its log: {log_path}")
            yield url
        finally:
            stop(process)


# --------------------------------------------------------------------------------------------- the browser

def wait_idle(page) -> None:
    """Until the script run triggered by the last interaction has finished; no exception on the page."""
    page.wait_for_timeout(400)
    page.wait_for_selector(IDLE, state="attached", timeout=TIMEOUT_MS)
    if page.locator(EXCEPTION).count():
        raise RuntimeError("the page shows an exception:\n" + "\n".join(page.locator(EXCEPTION).all_inner_texts()))


def save_png(raw: bytes, path: Path) -> int:
    """``raw`` (a PNG) as a 256-colour optimized PNG at ``path``; returns its size in bytes."""
    from PIL import Image

    image = Image.open(io.BytesIO(raw)).convert("RGB")
    palette = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    path.parent.mkdir(parents=True, exist_ok=True)
    palette.save(path, format="PNG", optimize=True)
    return path.stat().st_size


def capture(checkout: Path, data: Path, shots: dict[str, Path], log_path: Path) -> dict[str, int]:
    """Upload ``data`` on the Data page of ``checkout``'s dashboard, then shoot each page of ``shots`` (title ->
    file). Returns the size of each file written."""
    from playwright.sync_api import expect, sync_playwright

    sizes = {}
    with dashboard(checkout, log_path) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=VIEWPORT, base_url=url)
            context.set_default_timeout(TIMEOUT_MS)
            expect.set_options(timeout=TIMEOUT_MS)
            page = context.new_page()
            page.goto("/")
            expect(page.locator("h1").first).to_have_text("Data")
            wait_idle(page)
            page.locator("[data-testid='stFileUploader'] input[type=file]").set_input_files(str(data))
            expect(page.get_by_text(f"Columns of {data.name}")).to_be_visible()
            wait_idle(page)
            for title, path in shots.items():
                page.locator(NAV_LINK, has_text=title).first.click()
                expect(page.locator("h1").first).to_have_text(title)
                wait_idle(page)
                with contextlib.suppress(Exception):  # a page without a chart is shot as it is
                    page.locator(PLOTLY).first.wait_for(state="visible", timeout=30_000)
                wait_idle(page)
                page.wait_for_timeout(SETTLE_MS)
                page.evaluate("() => document.activeElement && document.activeElement.blur()")
                sizes[title] = save_png(page.screenshot(animations="disabled"), path)
        finally:
            browser.close()
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", type=Path, default=HERE.parent, help="the checkout whose dashboard to shoot")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the log uploaded on the Data page")
    parser.add_argument("--out", type=Path, default=HERE / "screenshots", help="folder of the screenshots")
    parser.add_argument("--prefix", default="after", help="file names are <prefix>-<page>.png")
    parser.add_argument("--pages", nargs="+", default=list(DEFAULT_PAGES), help="titles of the pages to shoot")
    for title in DEFAULT_PAGES:
        parser.add_argument(f"--{title.lower()}", type=Path, default=None, help=f"output file of {title}")
    args = parser.parse_args(argv)
    checkout = args.checkout.resolve()
    shots = {}
    for title in args.pages:
        explicit = getattr(args, title.lower(), None) if title in DEFAULT_PAGES else None
        shots[title] = (explicit or args.out / f"{args.prefix}-{title.lower().replace(' ', '-')}.png").resolve()
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "streamlit.log"
        try:
            sizes = capture(checkout, args.data.resolve(), shots, log_path)
        except Exception:
            args.out.mkdir(parents=True, exist_ok=True)
            kept = args.out / f"{args.prefix}-streamlit.log"
            if log_path.exists():
                kept.write_bytes(log_path.read_bytes())
                print(f"server log kept at {kept}", file=sys.stderr)
            raise
    for title, size in sizes.items():
        flag = "" if size < MAX_BYTES else f"  (over {MAX_BYTES // 1000} kB)"
        print(f"{title}: {shots[title]} {size / 1000:.0f} kB{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
