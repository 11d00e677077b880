"""(being written for issue 27) alpaca_eval_leaderboard importer."""

from __future__ import annotations

from evalcore.importers.base import Imported, LogFile

TOOL = "alpaca_eval_leaderboard"


def sniff(file: LogFile) -> bool:
    """Not yet recognised."""
    return False


def convert(files: list[LogFile]) -> list[Imported]:
    raise NotImplementedError
