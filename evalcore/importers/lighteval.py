"""(being written for issue 27) lighteval importer."""

from __future__ import annotations

from evalcore.importers.base import Imported, LogFile

TOOL = "lighteval"


def sniff(file: LogFile) -> bool:
    """Not yet recognised."""
    return False


def convert(files: list[LogFile]) -> list[Imported]:
    raise NotImplementedError
