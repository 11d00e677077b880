"""Hostile uploads against a live server: outcome, peak memory and health latency per file.

``python -m benchmarks.hostile`` starts the dashboard, opens two browser sessions, uploads each file of the corpus
below from the first while the second keeps switching pages, and prints a Markdown table: the file, what the
user saw (the first words of the message), seconds until it was shown, the peak memory of the server with its
workers, and the worst ``/_stcore/health`` latency meanwhile. The browser test ``tests/e2e/test_hostile_server.py``
uses the same probes on a few of the files and asserts the bounds.

The files are generated into a temporary folder (nothing large is committed).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import threading
import time
import urllib.request
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

GOOD = b"model,example_id,correct,confidence\na,q1,1,0.9\na,q2,0,0.4\nb,q1,1,0.8\nb,q2,1,0.7\n"
MB = 2**20


def gzip_stream(line: bytes, repeats: int, chunk: int = 1 << 16) -> bytes:
    """gzip of about ``line * repeats`` without holding the expanded bytes."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = line * (chunk // len(line))
    parts = [compressor.compress(block) for _ in range(repeats * len(line) // len(block))]
    return b"".join(parts) + compressor.flush()


def _large_valid_log(rows: int = 2_000_000) -> bytes:
    rng = np.random.default_rng(0)
    models = rows // 100_000
    frame = pd.DataFrame({
        "model": np.repeat([f"model-{m:02d}" for m in range(models)], rows // models),
        "example_id": np.tile(np.arange(rows // models), models).astype(str),
        "correct": rng.integers(0, 2, rows), "confidence": rng.random(rows).round(4)})
    return gzip.compress(frame.to_csv(index=False).encode(), compresslevel=1)


def _parquet_3000_columns() -> bytes:
    buffer = io.BytesIO()
    pd.DataFrame({f"c{i}": [1, 2] for i in range(3000)}).to_parquet(buffer)
    return buffer.getvalue()


def names_log(models: list[str], tasks: dict[str, str], groups: list[str], seed: int) -> pd.DataFrame:
    """A log of ``models`` x 200 examples over three ``tasks`` (task -> category) and four ``groups``; every 10th
    example unlabeled for all models: the shape the name-escaping tests upload with hostile names."""
    rng = np.random.default_rng(seed)
    rows = []
    for m, model in enumerate(models):
        for i in range(200):
            task = list(tasks)[i % 3]
            confidence = float(rng.uniform(0.3 + 0.05 * m, 0.95))
            rows.append({"model": model, "example_id": f"e{i}", "task": task, "category": tasks[task],
                         "group": groups[(i // 3) % 4], "confidence": round(confidence, 3),
                         "correct": np.nan if i % 10 == 0 else float(rng.random() < confidence)})
    return pd.DataFrame(rows)


HOSTILE_NAMES = ("model,example_id,task,correct,confidence\n"
                 "**bold** $x^2$ :red[red] ![img](http://127.0.0.1:9/x.png),q1,=HYPERLINK(\"http://x\"),1,0.9\n"
                 "<b>html</b><br><a href='http://127.0.0.1:9/'>link</a>,q1,+1+1,0,0.4\n").encode()

#: name, file name, bytes factory
CORPUS: list[tuple[str, str, Callable[[], bytes]]] = [
    ("gzip bomb: 60 M short rows (240 MB) in 230 KB", "bomb.csv.gz", lambda: gzip_stream(b"a,1\n", 60_000_000)),
    ("gzip: 52 M short rows (198 MB) in 200 KB", "rows.csv.gz", lambda: gzip_stream(b"a,1\n", 52_000_000)),
    ("bzip2 bomb: 240 MB in 3 KB", "bomb.csv.bz2", lambda: bz2.compress(b"a,1\n" * 60_000_000)),
    ("xz bomb: 240 MB in 40 KB", "bomb.csv.xz", lambda: lzma.compress(b"a,1\n" * 60_000_000)),
    ("gzip inside gzip, valid", "double.csv.gz", lambda: gzip.compress(gzip.compress(GOOD))),
    ("CSV with 100,000 columns (0.9 MB)", "wide.csv",
     lambda: (",".join(f"c{i}" for i in range(100_000)) + "\n" + ",".join("1" * 100_000) + "\n").encode()),
    ("one 5 MB line of commas", "commas.csv", lambda: b"model,correct\n" + b"," * (5 * MB) + b"\n"),
    ("Parquet with 3,000 columns", "wide.parquet", _parquet_3000_columns),
    ("header model,model,correct", "dup.csv", lambda: b"model,model,correct\na,b,1\nc,d,0\n"),
    ("NUL byte in a value", "nul.csv", lambda: b"model,correct\na\x00b,1\nc,0\n"),
    ("UTF-16 without byte-order mark, valid", "utf16.csv", lambda: GOOD.decode().encode("utf-16-le")),
    ("random bytes (1 MB)", "random.csv", lambda: np.random.default_rng(0).bytes(MB)),
    ("Markdown/HTML/formula names, valid", "names.csv", lambda: HOSTILE_NAMES),
    ("valid log, 2 M rows x 20 models (gzip)", "large.csv.gz", _large_valid_log),
]


def write_corpus(folder: Path, names: list[str] | None = None) -> list[tuple[str, Path]]:
    """Write the corpus (or the entries whose file name is in ``names``) into ``folder``."""
    out = []
    for label, filename, make in CORPUS:
        if names is None or filename in names:
            path = folder / filename
            path.write_bytes(make())
            out.append((label, path))
    return out


def _tree_rss(root: int) -> int:
    """Resident memory (bytes) of ``root`` and all its descendants, from /proc."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        rss[int(entry)] = int(fields[21]) * page
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(child for child, parent in parents.items() if parent == pid)
    return total


@dataclass
class Probe:
    """Polls ``/_stcore/health`` and the server's memory every ``interval`` seconds in a thread."""

    url: str
    pid: int
    interval: float = 0.1
    latencies: list[float] = field(default_factory=list)
    memory: list[int] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> "Probe":
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=10) as response:
                    response.read()
                self.latencies.append(time.perf_counter() - start)
            except OSError:
                self.latencies.append(float("inf"))
            self.memory.append(_tree_rss(self.pid))
            self._stop.wait(self.interval)

    def mark(self) -> tuple[int, int]:
        return len(self.latencies), len(self.memory)

    def since(self, mark: tuple[int, int]) -> tuple[float, int]:
        """Worst latency (s) and peak memory (bytes) since ``mark``."""
        lat = self.latencies[mark[0]:] or [0.0]
        mem = self.memory[mark[1]:] or [0]
        return max(lat), max(mem)


ALERT = "[data-testid='stAlertContentError'], [data-testid='stAlertContentSuccess']"
IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"


def upload_and_read(page, path: Path, timeout_ms: int = 300_000) -> tuple[bool, str, float]:
    """Upload ``path`` on the Data page and wait for its validation report or its error message (the first alert
    that names the file); (accepted, message, seconds)."""
    start = time.perf_counter()
    remove = page.locator("[data-testid='stFileChipDeleteBtn']")
    while remove.count():  # the uploader takes several files: clear the previous upload first, as a user would
        remove.first.click()
        page.wait_for_timeout(200)
        page.wait_for_selector(IDLE, state="attached", timeout=timeout_ms)
    page.locator("[data-testid='stFileUploader'] input[type=file]").set_input_files(str(path))
    alert = page.locator(ALERT, has_text=path.name).first
    alert.wait_for(timeout=timeout_ms)
    page.wait_for_selector(IDLE, state="attached", timeout=timeout_ms)
    accepted = alert.get_attribute("data-testid") == "stAlertContentSuccess"
    return accepted, alert.inner_text().strip(), time.perf_counter() - start


def exercise(page, rounds: int = 2) -> float:
    """Switch between two pages ``rounds`` times in another session; the slowest switch in seconds."""
    worst = 0.0
    for title in ["Models", "Data"] * rounds:
        start = time.perf_counter()
        page.locator("[data-testid='stSidebarNav'] a", has_text=title).click()
        page.wait_for_timeout(300)
        page.wait_for_selector(IDLE, state="attached", timeout=120_000)
        worst = max(worst, time.perf_counter() - start)
    return worst


def main() -> int:
    import tempfile

    from playwright.sync_api import sync_playwright

    from benchmarks.browser import CHROMIUM, CHROMIUM_ARGS
    from benchmarks.server import streamlit_server

    with tempfile.TemporaryDirectory() as folder, streamlit_server() as server, sync_playwright() as pw:
        files = write_corpus(Path(folder))
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        attacker = browser.new_context(base_url=server.url).new_page()
        bystander = browser.new_context(base_url=server.url).new_page()
        for pg in (attacker, bystander):
            pg.goto(server.url)
            pg.wait_for_selector(IDLE, state="attached", timeout=120_000)
        rows = []
        with Probe(server.url, server.process.pid) as probe:
            for label, path in files:
                mark = probe.mark()
                accepted, message, seconds = upload_and_read(attacker, path)
                slowest_page = exercise(bystander, 1)
                latency, peak = probe.since(mark)
                verdict = "accepted" if accepted else "refused"
                rows.append((label, f"{path.stat().st_size / 1024:,.0f} KB", verdict, message.replace("\n", " ")[:110],
                             f"{seconds:.1f}", f"{peak / MB:,.0f}", f"{latency:.3f}", f"{slowest_page:.1f}"))
        print("| input | size | outcome | message shown | s | peak MB (server + workers) | worst health s | "
              "other session's slowest page s |")
        print("|---|---|---|---|---|---|---|---|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        start = time.perf_counter()
        server.process.send_signal(15)
        server.process.wait(timeout=30)
        print(f"\nSIGTERM to exit: {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
