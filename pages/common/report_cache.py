"""The stakeholder report of the session's data and selection, built under a progress bar and kept in the store
(keyed by the data's key, the selection and the report's settings)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from evalcore.report import FileRecord, Settings, build_report, file_records

from . import data_source as ds
from .store import compute_with_progress


@dataclass(frozen=True)
class Built:
    """What the page shows and downloads: the HTML file, its summary and what it holds."""

    html: bytes
    summary: tuple[str, ...]
    sections: tuple[str, ...]
    skipped: tuple[str, ...]
    timings: tuple[tuple[str, float], ...]


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
