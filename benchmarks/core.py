"""Timing helpers and the result table of the benchmarks (reports, never assertions)."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Result:
    """One row of the table: timings in seconds of ``samples`` repeats, compared with ``target`` (if any)."""

    name: str
    measures: str
    samples: list[float] = field(default_factory=list)
    target: float | None = None
    note: str = ""

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None

    @property
    def verdict(self) -> str:
        if self.median is None:
            return "skipped" if not self.note.startswith("error") else "error"
        if self.target is None:
            return "(no target)"
        return "yes" if self.median < self.target else "**no**"


def time_calls(fn: Callable[[], object], repeats: int) -> list[float]:
    """Wall-clock seconds of ``repeats`` calls of ``fn`` (results dropped and garbage collected in between)."""
    samples = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        out = fn()
        samples.append(time.perf_counter() - start)
        del out
    gc.collect()
    return samples


def _seconds(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def markdown_table(results: list[Result]) -> str:
    """The results as a Markdown table (one row per result)."""
    head = ("| benchmark | what it measures | n | median s | min s | max s | target | meets target |\n"
            "|---|---|---:|---:|---:|---:|---|---|")
    rows = []
    for r in results:
        target = f"< {r.target:g} s" if r.target is not None else "–"
        what = r.measures + (f" *({r.note})*" if r.note else "")
        rows.append(
            f"| {r.name} | {what} | {len(r.samples)} | {_seconds(r.median)} | "
            f"{_seconds(min(r.samples) if r.samples else None)} | {_seconds(max(r.samples) if r.samples else None)} | "
            f"{target} | {r.verdict} |"
        )
    return "\n".join([head, *rows])


def progress_line(result: Result) -> str:
    """A one-line summary printed as soon as a benchmark finishes."""
    if result.median is None:
        return f"{result.name}: {result.verdict} ({result.note})"
    spread = f"min {min(result.samples):.3f}, max {max(result.samples):.3f}, n={len(result.samples)}"
    target = f", target < {result.target:g} s: {result.verdict.strip('*')}" if result.target is not None else ""
    return f"{result.name}: median {result.median:.3f} s ({spread}){target}"
