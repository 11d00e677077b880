"""Stakeholder report: one self-contained HTML file with every method the log supports.

:mod:`.sections` (one per method: data in, tables, figures and facts out), :mod:`.summary` (the opening
sentences, written from the numbers), :mod:`.html` (assembly and provenance). :func:`build_report` runs them.
"""

from evalcore.report.build import FileRecord, Provenance, Report, build_report, file_records
from evalcore.report.sections import Settings

__all__ = ["FileRecord", "Provenance", "Report", "Settings", "build_report", "file_records"]
