"""The stakeholder report of the session's data and selection, built under a progress bar and kept in the store
(keyed by the data's key, the selection and the report's settings)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from evalcore.report import FileRecord, Settings, build_report, file_records

from . import data_source as ds
from .store import compute_with_progress, computed


@dataclass(frozen=True)
class Built:
    """What the page shows and downloads: the HTML file, its summary and what it holds."""

    html: bytes
    summary: tuple[str, ...]
    sections: tuple[str, ...]
    skipped: tuple[str, ...]
    timings: tuple[tuple[str, float], ...]


#: a selection of up to this many rows gets its report with the first screen (a few seconds at most); a larger one
#: (MMLU-Pro's 347,215 rows, ImageNet-X's 200,000: 5 s and more) when the user asks for it
AT_ONCE_ROWS = 50_000


def input_files(data: ds.ActiveData) -> tuple[FileRecord, ...]:
    """The uploaded files with their sha256 (a demo or a workspace dataset has none: the scope names it)."""
    if data.key.startswith("upload:"):
        return file_records(st.session_state[ds.UPLOAD_BYTES])
    return ()


def build(key: tuple, rows: pd.DataFrame, files: tuple[FileRecord, ...], settings: Settings, title: str,
          scope: str) -> Built:
    """The report of ``rows`` (the selection's validated rows, every sample), computed once per ``key``."""

    def job(progress) -> Built:
        report = build_report(rows, files, settings, title, lambda done, total, _: progress(done / total), scope)
        return Built(report.html().encode("utf-8"), tuple(report.summary), tuple(s.title for s in report.sections),
                     tuple(report.skipped), tuple(report.timings.items()))

    (built,) = compute_with_progress(("report", key), "Building the report...", [((), job)])
    return built


def built(key: tuple) -> Built | None:
    """The report of ``key`` if it was built (by :func:`build`) and is still in the store, else None."""
    return computed(("report", key))


def sentence(report: Built, n_rows: int, n_models: int) -> str:
    """What the report holds and its headline (the summary's first sentence), e.g. "The report holds Accuracy by
    model, Leaderboard and Calibration for 200,000 rows of 4 models. Top model: ViT, ..."."""
    sections = list(report.sections)
    if not sections:
        return f"The report of {n_rows:,} rows of {n_models} model(s) holds no method: this data supports none."
    held = sections[0] if len(sections) == 1 else ", ".join(sections[:-1]) + " and " + sections[-1]
    head = f"The report holds {held} for {n_rows:,} rows of {n_models} model{'s' if n_models != 1 else ''}."
    return f"{head} {report.summary[0]}" if report.summary else head
