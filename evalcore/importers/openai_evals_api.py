"""(being written for issue 27) openai_evals_api importer."""

from __future__ import annotations

from evalcore.importers.base import Imported, LogFile

TOOL = "openai_evals_api"


def sniff(file: LogFile) -> bool:
    """Not yet recognised."""
    return False


def convert(files: list[LogFile]) -> list[Imported]:
    raise NotImplementedError
