"""Build a report: run every section the log supports, time each, write the summary, record provenance."""

from __future__ import annotations

import hashlib
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from evalcore.data.validation import report_of
from evalcore.errors import EvalDataError
from evalcore.engine import as_log
from evalcore.data.schema import BATTLES, SUMMARY
from evalcore.report import html as html_layer
from evalcore.report import sections as sec
from evalcore.report.comparison import comparison
from evalcore.report.summary import sentences

#: (key, title, function, what the log needs for it)
SECTIONS = (
    ("comparison", "Comparison", comparison, "a per-example log with both models (--base, --new)"),
    ("accuracy", "Accuracy by model", sec.accuracy, "a labeled metric (`correct` or `score`)"),
    ("leaderboard", "Leaderboard", sec.leaderboard, "two or more models with a 0/1 `correct` metric"),
    ("subgroups", "Subgroups", sec.subgroups, "a `group` column with two or more labeled subgroups"),
    ("calibration", "Calibration", sec.calibration_section, "`confidence` and `correct` columns"),
    ("labeling", "Labeling budget", sec.labeling, "a `proxy` or `confidence` in [0, 1] on every example"),
    ("ppi", "AI-assisted evaluation", sec.prediction_powered,
     "unlabeled examples and an annotator (`proxy`, or `confidence` for 0/1) on every example"),
    ("battles", "Pairwise battles", sec.battles,
     "pairwise battles with human `outcome` votes or an AI judge's `judge` verdicts"),
)
#: sections that use the top model of the accuracy section, and those that use its overall table (computed once)
USES_TOP = {"subgroups", "labeling"}
USES_OVERALL = {"leaderboard", "subgroups"}
#: sections run first, one after the other (the others use what the accuracy section found)
FIRST = ("comparison", "accuracy")
#: the other sections run on this many threads: their work is mostly outside the interpreter's lock (DuckDB's
#: queries, XGBoost's fits, BLAS products), so a second core builds a second section meanwhile (the report of
#: MMLU-Pro: the leaderboard's bootstrap beside the subgroups' cross-fitting, 1.2 s -> 0.9 s); the results do not
#: depend on the order (each section draws from its own seeded generator)
SECTION_THREADS = 2


@dataclass(frozen=True)
class FileRecord:
    name: str
    sha256: str
    size: int


@dataclass(frozen=True)
class Provenance:
    files: tuple[FileRecord, ...]
    rows: int
    models: int
    kind: str
    mapping: dict
    created: str
    #: what part of which data the report covers, when not every row of the files (e.g. a dashboard selection)
    scope: str = ""


@dataclass
class Report:
    title: str
    settings: sec.Settings
    sections: list[sec.Section]
    summary: list[str]
    skipped: list[str]
    provenance: Provenance
    timings: dict[str, float] = field(default_factory=dict)

    def html(self) -> str:
        """The self-contained HTML document."""
        return html_layer.render(self)

    def numbers(self) -> dict:
        """Every section's tables and facts (as embedded in the HTML)."""
        return html_layer.numbers(self)


def file_records(sources: Iterable[str | Path | tuple[str, bytes]]) -> tuple[FileRecord, ...]:
    """Name, sha256 and size of each input: a file, a folder (every file under it, in path order, hashed as
    (relative path, content) pairs) or a (name, bytes) pair."""
    out = []
    for source in sources:
        if isinstance(source, tuple):
            name, data = source
            out.append(FileRecord(str(name), hashlib.sha256(data).hexdigest(), len(data)))
            continue
        path = Path(source)
        if path.is_dir():
            h, size = hashlib.sha256(), 0
            for member in sorted(p for p in path.rglob("*") if p.is_file()):
                data = member.read_bytes()
                h.update(str(member.relative_to(path)).encode() + b"\0" + hashlib.sha256(data).digest())
                size += len(data)
            out.append(FileRecord(path.name + "/", h.hexdigest(), size))
        else:
            h = hashlib.sha256()
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    h.update(block)
            out.append(FileRecord(path.name, h.hexdigest(), path.stat().st_size))
    return tuple(out)


def build_report(log, files: Iterable[FileRecord] = (), settings: sec.Settings | None = None,
                 title: str = "Evaluation report",
                 progress: Callable[[int, int, str], None] | None = None, scope: str = "") -> Report:
    """The report of a validated log (:func:`evalcore.data.validation.load_eval_logs`), or of rows of one (``scope`` says
    which), or of a log in an engine (:func:`evalcore.engine.scan`: the sections run their reductions there);
    ``progress(done, total, section)`` is called before each section and once at the end."""
    settings = settings or sec.Settings()
    # what validation warned about (e.g. files that share no example and no task) ends the summary
    validated = log if isinstance(log, pd.DataFrame) else getattr(log, "frame", None)  # a log in memory wraps its frame
    validation = report_of(validated) if isinstance(validated, pd.DataFrame) and "report" in validated.attrs else None
    checks = [f"Warning: {w}" for w in validation.warnings] if validation else []
    design = [validation.design] if validation and validation.design else []  # labels from a campaign's design
    if isinstance(log, pd.DataFrame):  # a validated frame: its kind and mapping from its report
        rows, kind, mapping = len(log), report_of(log).kind, report_of(log).mapping
        log = log if kind == SUMMARY else as_log(log, scope or "the log")
    else:
        rows, kind, mapping = log.n_rows, log.kind, log.mapping
    wanted = [entry for entry in SECTIONS if (entry[0] == "battles") == (kind == BATTLES)
              and (entry[0] != "comparison" or (settings.base and settings.new))]  # a comparison when asked
    done, skipped, timings, context = {}, [], {}, {}

    def run(entry: tuple) -> tuple[sec.Section | None, str | None]:
        """(the section, None), or (None, why it was skipped)."""
        key, name, fn, needs = entry
        start = time.perf_counter()
        try:
            extra = {**({"top": context.get("top")} if key in USES_TOP else {}),
                     **({"overall": context.get("overall")} if key in USES_OVERALL else {})}
            section = fn(log, kind, settings, **extra)
        except EvalDataError as exc:  # the method refuses this data (e.g. too few labels): the report says why
            return None, f"{name}: {exc}"
        finally:
            timings[name] = time.perf_counter() - start
        return (section, None) if section is not None else (None, f"{name}: needs {needs}.")

    results: dict[str, tuple] = {}
    first = [entry for entry in wanted if entry[0] in FIRST]
    for i, entry in enumerate(first):
        if progress:
            progress(i, len(wanted), entry[1])
        results[entry[0]] = run(entry)
        if entry[0] == "accuracy" and results["accuracy"][0] is not None:
            context["top"], context["overall"] = (results["accuracy"][0].facts["top"],
                                                  results["accuracy"][0].tables["by model"])
    rest = [entry for entry in wanted if entry[0] not in FIRST]
    with ThreadPoolExecutor(max_workers=SECTION_THREADS, thread_name_prefix="evalcore-report") as pool:
        futures = {pool.submit(run, entry): entry for entry in rest}
        for i, future in enumerate(as_completed(futures), len(first)):
            if progress:  # called here, in the caller's thread (a page's progress bar lives there)
                running = [entry[1] for f, entry in futures.items() if not f.done()]
                progress(i, len(wanted), running[0] if running else futures[future][1])
            results[futures[future][0]] = future.result()
    for key, _, _, _ in wanted:
        section, why = results[key]
        if section is None:
            skipped.append(why)
        else:
            done[key] = section
    if progress:
        progress(len(wanted), len(wanted), "done")
    created = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
    provenance = Provenance(tuple(files), rows, len(sec.models_of(log, kind)), kind, dict(mapping), created, scope)
    opening = [done["comparison"].facts["sentence"]] if "comparison" in done else []  # the question asked first
    opening += design
    return Report(title, settings, list(done.values()), opening + sentences(done, settings) + checks, skipped,
                  provenance, timings)
