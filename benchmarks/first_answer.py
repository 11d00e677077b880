"""Speed to the first answer (issue 37, point 5): one table of medians, each against its target.

``python -m benchmarks.first_answer [--repeats N] [--only help compare report engine pages] [--pages ...]
[--data mmlu imagenet]`` (run it with ``nice`` on a shared machine). The targets hold for an idle 2-core machine;
the table says whether each median meets its target but nothing fails on a miss (timings are reports, not
assertions). What it times:

* ``help``: ``python -m evalcore --help`` (and ``report --help``, ``compare --help``) in a subprocess, target 0.5 s:
  the command line imports what a command needs only when the command runs;
* ``compare-12k``: ``python -m evalcore compare base.csv new.csv`` in a subprocess on two files of one model, each
  12,032 MMLU-Pro questions (Llama-2-13b-hf as base, Llama-2-70b-hf as new, written once, untimed, into a temporary
  folder), target 5 s;
* ``report-mmlu``: ``python -m evalcore report mmlu_pro_per_question.csv.gz --out report.html --quiet`` in a
  subprocess (347,215 rows, 29 models, 1,000 bootstrap replicates), target 4 s; beside it, taking turns with it,
  the reference ``python -c "import pandas; pandas.read_csv(...)"`` of the same file, and the ratio of the two
  medians, target 5.5 (issue 49; a busy machine sways a ratio to a reference run beside it less than seconds,
  but still: a load that slows the one-threaded reference more than the command lowers the ratio);
* ``engine-1m``, ``engine-10m``: the engine's leaderboard + calibration over the same passes written by hand in
  bare DuckDB (:mod:`benchmarks.engine`, each in a fresh subprocess, the paths taking turns), target a ratio under
  1.3 (the "measured" column is the ratio, not seconds);
* ``page-*``: each dashboard page's first script run after uploading MMLU-Pro or ImageNet-X, with empty caches in a
  new session (:func:`benchmarks.pages.measure`: Streamlit's AppTest, the upload through the Data page), target 2 s;
  before each measurement the reference ``python -c "import pandas"`` runs in a subprocess, each page's note gives
  the ratio of the medians, and the pages of :data:`PAGE_RATIO_TARGETS` get a ratio row with their target (issue 49:
  the Subgroups page on MMLU-Pro within 3 times ``import pandas``).

Rows that need ``../shared/data`` are skipped without it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = ROOT.parent / "shared" / "data"
MMLU = DATA_DIR / "mmlu_pro_per_question.csv.gz"
#: the two runs of ``compare-12k``: (file, MMLU-Pro model), 12,032 questions each
COMPARE_RUNS = (("base.csv", "Llama-2-13b-hf"), ("new.csv", "Llama-2-70b-hf"))
HELP_COMMANDS = ((), ("report",), ("compare",))
ENGINE_SIZES = (1, 10)
PAGE_TARGET = 2.0
#: (page, data) -> the most a page's first answer may take, in times ``python -c "import pandas"`` (issue 49)
PAGE_RATIO_TARGETS = {("subgroups", "mmlu"): 3.0}
#: the most ``evalcore report`` of MMLU-Pro may take, in times reading the same file with pandas (issue 49)
REPORT_RATIO_TARGET = 5.5
IMPORT_PANDAS = "import pandas"
PARTS = ("help", "compare", "report", "engine", "pages")


@dataclass
class Row:
    """One line of the table: ``samples`` (seconds, or a ratio where ``unit`` says so) against ``target`` (None: a
    reference, measured beside the rows it is compared with)."""

    name: str
    target: float | None
    samples: list[float] = field(default_factory=list)
    unit: str = "s"
    note: str = ""
    #: CPU seconds of each sample (subprocess rows)
    cpu: list[float] = field(default_factory=list)

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    def cells(self) -> list[str]:
        unit = " s" if self.unit == "s" else "x"
        median = "–" if self.median is None else f"{self.median:.2f}{unit}"
        if self.target is None:
            target, met = "reference", "–"
        else:
            target = f"< {self.target:g}{unit}"
            met = "–" if self.median is None else ("yes" if self.median < self.target else "**no**")
        cpu = [f"CPU {statistics.median(self.cpu):.2f} s"] if self.cpu else []
        return [self.name, target, median, met, "; ".join([*cpu, *filter(None, [self.note])])]


def _environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(command: list[str], cwd: Path, row: Row, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess:
    """Run ``command``; its wall-clock seconds go to ``row.samples``, its CPU seconds (with its own children: on a
    loaded machine the wall clock counts other processes' turns, CPU time does not) to ``row.cpu``."""
    cpu, start = _cpu_of_children(), time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=_environment(), capture_output=True, text=True)
    row.samples.append(time.perf_counter() - start)
    row.cpu.append(_cpu_of_children() - cpu)
    if done.returncode not in ok:
        raise RuntimeError(f"{' '.join(command[2:])} exited {done.returncode}: {done.stderr[-500:]}")
    return done


def bench_help(repeats: int) -> list[Row]:
    rows = []
    for words in HELP_COMMANDS:
        row = Row(f"evalcore {' '.join(words)} --help".replace("  ", " "), 0.5)
        for _ in range(repeats):
            _timed([sys.executable, "-m", "evalcore", *words, "--help"], ROOT, row)
        rows.append(row)
    return rows


def write_compare_runs(folder: Path) -> list[Path]:
    """The two files of ``compare-12k`` (module docstring), written into ``folder``."""
    import pandas as pd

    log = pd.read_csv(MMLU)
    paths = []
    for name, model in COMPARE_RUNS:
        path = folder / name
        log[log["model"] == model].to_csv(path, index=False)
        paths.append(path)
    return paths


def bench_compare(repeats: int) -> list[Row]:
    row = Row("evalcore compare BASE NEW, 2 x 12,032 examples", 5.0)
    if not MMLU.exists():
        row.note = "skipped: ../shared/data is absent"
        return [row]
    with tempfile.TemporaryDirectory(prefix="evalcore-compare-") as folder:
        paths = write_compare_runs(Path(folder))
        for _ in range(repeats):
            done = _timed([sys.executable, "-m", "evalcore", "compare", *map(str, paths)], Path(folder), row,
                          ok=(0, 3))
        row.note = next((line for line in done.stdout.splitlines() if line.startswith("verdict: ")), "no verdict")
    return [row]


def bench_report(repeats: int) -> list[Row]:
    row = Row("evalcore report MMLU-Pro (347,215 rows)", 4.0)
    reference = Row("reference: python -c 'import pandas; pandas.read_csv(MMLU-Pro)'", None)
    if not MMLU.exists():
        row.note = "skipped: ../shared/data is absent"
        return [row]
    with tempfile.TemporaryDirectory(prefix="evalcore-report-") as folder:
        out = Path(folder) / "report.html"
        for _ in range(repeats):  # taking turns: a busy machine slows both alike
            _timed([sys.executable, "-c", f"{IMPORT_PANDAS}; pandas.read_csv({str(MMLU)!r})"], Path(folder),
                   reference)
            _timed([sys.executable, "-m", "evalcore", "report", str(MMLU), "--out", str(out), "--quiet"],
                   Path(folder), row)
        row.note = f"{out.stat().st_size / 2**20:.1f} MB of HTML"
    ratio = Row("evalcore report MMLU-Pro / reading it with pandas", REPORT_RATIO_TARGET,
                [row.median / reference.median], unit="x",
                note=f"ratio of the medians: {row.median:.2f} s / {reference.median:.2f} s")
    return [reference, row, ratio]


def bench_engine(repeats: int) -> list[Row]:
    from benchmarks import engine

    rows = []
    for millions in ENGINE_SIZES:
        medians = engine.measure(millions, ["engine", "duckdb"], repeats)
        work = medians["engine"]["leaderboard"] + medians["engine"]["calibration"]
        bare = medians["duckdb"]["leaderboard"] + medians["duckdb"]["calibration"]
        rows.append(Row(f"engine leaderboard + calibration / bare DuckDB, {millions} million rows", 1.3,
                        [work / bare], unit="x", note=f"medians of {repeats}: {work:.2f} s vs {bare:.2f} s"))
    return rows


def bench_pages(repeats: int, data: list[str], pages: list[str]) -> list[Row]:
    from benchmarks import pages as page_bench

    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    rows = []
    reference = Row("reference: python -c 'import pandas'", None)
    page_bench._navigation_mode()
    page_bench.warm_up()
    for name in data:
        label, path = page_bench.DATASETS[name]
        for page in pages:
            row = Row(f"page {page_bench.PAGES[page]}, {label}", PAGE_TARGET)
            mine = Row(reference.name, None)  # the reference's runs beside this page's
            if not path.exists():
                row.note = "skipped: ../shared/data is absent"
            else:
                for _ in range(repeats):
                    _timed([sys.executable, "-c", IMPORT_PANDAS], ROOT, mine)
                    try:
                        row.samples.append(page_bench.measure(page, path)[0])
                    except Exception as exc:  # reported in the table: a benchmark reports
                        row.note = f"{type(exc).__name__}: {exc}"[:120]
            reference.samples += mine.samples
            rows.append(row)
            if row.samples:
                ratio = row.median / mine.median
                row.note = row.note or f"{ratio:.2f}x import pandas ({mine.median:.2f} s beside it)"
                if (page, name) in PAGE_RATIO_TARGETS:
                    rows.append(Row(f"page {page_bench.PAGES[page]}, {label} / import pandas",
                                    PAGE_RATIO_TARGETS[page, name], [ratio], unit="x",
                                    note=f"ratio of the medians: {row.median:.2f} s / {mine.median:.2f} s"))
            print(f"  {row.name}: {row.cells()[2]}", file=sys.stderr, flush=True)
    return [reference, *rows] if reference.samples else rows


def markdown(rows: list[Row], repeats: int) -> str:
    lines = [f"Medians of {repeats} run(s) each (engine rows: ratio of medians; CPU: of the command and its "
             "children).", "",
             "| what | target | measured | met? | note |", "|---|---|---:|---|---|"]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from benchmarks.pages import DATASETS, PAGES

    parser = argparse.ArgumentParser(prog="python -m benchmarks.first_answer", description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--data", nargs="+", choices=list(DATASETS), default=list(DATASETS))
    parser.add_argument("--pages", nargs="+", choices=list(PAGES), default=list(PAGES))
    args = parser.parse_args(argv)
    runs = {"help": bench_help, "compare": bench_compare, "report": bench_report, "engine": bench_engine,
            "pages": lambda repeats: bench_pages(repeats, args.data, args.pages)}
    rows = []
    for part in PARTS:
        if part in args.only:
            print(f"{part} ...", file=sys.stderr, flush=True)
            rows += runs[part](args.repeats)
    print(markdown(rows, args.repeats))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
