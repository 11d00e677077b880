"""Resource limits on what a file may make the reader do, so that no input can exhaust a shared host.

One :class:`ReadLimits` object carries every bound of :func:`evalcore.reading.read_table`: the size of the data
after decompression, the number of rows and of columns, and the length of one line (which also bounds one field). The defaults
come from the environment, so that a hosted instance, the command line and the API share one configuration:

=============================  ======================================================  =========
variable                       bound                                                   default
=============================  ======================================================  =========
``EVALCORE_MAX_FILE_MB``       bytes after decompression (and of the file itself)      200
``EVALCORE_MAX_ROWS``          rows of a table                                         10,000,000
``EVALCORE_MAX_COLUMNS``       columns of a table                                      2,000
``EVALCORE_MAX_LINE_KB``       bytes of one line of a text table (so of one value)     1,024
=============================  ======================================================  =========

200 MB is the dashboard's upload limit (``server.maxUploadSize``): a compressed upload may not expand beyond what
an uncompressed one may be. Ten million rows take about 3 GB in memory once validated (about 280 bytes a row);
larger logs belong in an engine that reduces them where they are stored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

MB = 2**20
KB = 2**10


def env_number(name: str, default: int) -> int:
    """A positive whole number from the environment; ``default`` when unset or not a positive number."""
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


@dataclass(frozen=True)
class ReadLimits:
    """Bounds on one file: ``max_bytes`` after decompression, ``max_rows``, ``max_columns``, ``max_line_bytes``."""

    max_bytes: int = 200 * MB
    max_rows: int = 10_000_000
    max_columns: int = 2000
    max_line_bytes: int = 1024 * KB

    @classmethod
    def from_env(cls) -> "ReadLimits":
        """The limits configured by the environment variables above."""
        return cls(max_bytes=env_number("EVALCORE_MAX_FILE_MB", 200) * MB,
                   max_rows=env_number("EVALCORE_MAX_ROWS", 10_000_000),
                   max_columns=env_number("EVALCORE_MAX_COLUMNS", 2000),
                   max_line_bytes=env_number("EVALCORE_MAX_LINE_KB", 1024) * KB)

    def raise_hint(self, what: str) -> str:
        """How to raise the limit called ``what`` (``bytes``, ``rows``, ``columns`` or ``line``)."""
        variable, field = {"bytes": ("EVALCORE_MAX_FILE_MB", "max_bytes"),
                           "rows": ("EVALCORE_MAX_ROWS", "max_rows"),
                           "columns": ("EVALCORE_MAX_COLUMNS", "max_columns"),
                           "line": ("EVALCORE_MAX_LINE_KB", "max_line_bytes")}[what]
        return (f"To allow more, set the environment variable {variable} where evalcore runs (or pass "
                f"limits=ReadLimits({field}=...) to read_table / load_eval_log).")


def size_text(n_bytes: int) -> str:
    """``'200 MB'``, ``'1,024 KB'``, ``'12 bytes'``: a byte count for a message."""
    if n_bytes >= MB:
        return f"{n_bytes / MB:,.0f} MB" if n_bytes % MB == 0 or n_bytes >= 10 * MB else f"{n_bytes / MB:,.1f} MB"
    if n_bytes >= KB:
        return f"{n_bytes / KB:,.0f} KB"
    return f"{n_bytes:,} bytes"
