"""(being written for issue 27) every_eval_ever importer."""

from __future__ import annotations

from evalcore.importers.base import Imported, LogFile

TOOL = "every_eval_ever"


def sniff(file: LogFile) -> bool:
    """Not yet recognised."""
    return False


def convert(files: list[LogFile]) -> list[Imported]:
    raise NotImplementedError
