"""Resource limits on what a file may make the reader do, so that no input can exhaust a shared host.

One :class:`ReadLimits` object carries every bound of :func:`evalcore.data.reading.read_table` and of validation: the
size of the data after decompression (of all the files of one load together: a :class:`Budget` counts it), the
number of rows and of columns, the length of one line (which also bounds one field), and the number of distinct
models, tasks and groups (every view's cost grows with them). The defaults come from the environment, so that a
hosted instance, the command line and the API share one configuration:

=============================  ======================================================  =========
variable                       bound                                                   default
=============================  ======================================================  =========
``EVALCORE_MAX_FILE_MB``       bytes after decompression (and of the files themselves)  200
                               of all the files, archive members and Parquet pages
                               of one load together
``EVALCORE_MAX_ROWS``          rows of a table                                         10,000,000
``EVALCORE_MAX_COLUMNS``       columns of a table                                      2,000
``EVALCORE_MAX_LINE_KB``       bytes of one line of a text table or of JSON Lines      1,024
                               (so of one value)
``EVALCORE_MAX_MODELS``        distinct models of a log, summary or battles            1,000
``EVALCORE_MAX_TASKS``         distinct tasks of a log or summary                      10,000
``EVALCORE_MAX_GROUPS``        distinct groups of a log                                10,000
``EVALCORE_MAX_TEXT_KB``       bytes of one text value (an example's input, target,    4
                               output, explanation): longer ones are cut, and counted
``EVALCORE_MAX_TEXT_MB``       bytes of the text roles of a log together: text beyond  100
                               it is left out (rows in order), and counted
``EVALCORE_MAX_JSON_VALUES``   JSON values (objects, lists, keys and items) parsed     one per 32
                               from all the JSON and JSON Lines of one load together   bytes of
                                                                                       the above
``EVALCORE_MAX_NOTE_CHARS``    characters of a note typed or imported with a label or  10,000
                               an adjudication, of a series run's metadata (keys and
                               values together; refused beyond it)
``EVALCORE_MAX_NAME_CHARS``    characters of a name typed or imported: an annotator,   200
                               an adjudicator, a labeling campaign, a series, a
                               metadata key (refused beyond it)
=============================  ======================================================  =========

A note and a name are what people type (or import) for labels: without a bound one 50 MB note kept every member's
Label page loading for minutes. 10,000 characters hold a long paragraph; names are a person's or a campaign's.
200 MB is the dashboard's upload limit (``server.maxUploadSize``): a compressed upload may not expand beyond what
an uncompressed one may be. Ten million rows take about 3 GB in memory once validated (about 280 bytes a row);
larger logs belong in an engine that reduces them where they are stored. A JSON value takes 30 to 64 bytes of
memory however short it is in the file (``{}`` is two bytes, a dict 64), so bytes alone do not bound JSON: 200 MB
of ``[{},{},...]``, a few kilobytes compressed, made 5 GB of objects (issue 38). One value per 32 bytes of the byte
limit keeps a load's peak memory under 1 GB (6.5 million values for 200 MB; measured in ``evalcore validate``: the
worst, 6.5 million two-letter strings of a 47 KB ``.json.gz``, peaks at 690 MB, where one per 16 bytes, 12.8
million, peaked at 1.2-1.4 GB, issue 51); evaluation logs hold one per 10 to 65 bytes (measured on the logs of the
tools evalcore reads), so the densest reach the limit at 65 MB of JSON; the environment raises it. Text is kept to show people which example
it was, not to analyse: 4 KB holds a long question and its answer, and 100 MB of it is 25,000 such examples at
the cut, or a million of 100 bytes. A thousand models is ten times the largest
public leaderboards; beyond it the model column is usually an id column mapped by mistake.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from evalcore.errors import EvalDataError

MB = 2**20
KB = 2**10
#: bytes of the byte limit per JSON value allowed by default (see above)
BYTES_PER_JSON_VALUE = 32
#: characters of a note typed or imported with a label or an adjudication (``EVALCORE_MAX_NOTE_CHARS``)
MAX_NOTE_CHARS = 10_000
#: characters of a name typed or imported: an annotator, an adjudicator, a campaign (``EVALCORE_MAX_NAME_CHARS``)
MAX_NAME_CHARS = 200


def env_number(name: str, default: int) -> int:
    """A positive whole number from the environment; ``default`` when unset or not a positive number."""
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


def bounded_note(text: str, what: str = "The note") -> str:
    """``text``, a note typed or imported, when it has at most :data:`MAX_NOTE_CHARS` characters (or
    ``EVALCORE_MAX_NOTE_CHARS``); EvalDataError naming ``what``, its length and the bound otherwise."""
    return _bounded(text, what, "EVALCORE_MAX_NOTE_CHARS", MAX_NOTE_CHARS)


def bounded_name(text: str, what: str) -> str:
    """``text``, a name typed or imported (``what``: e.g. "The annotator's name"), when it has at most
    :data:`MAX_NAME_CHARS` characters (or ``EVALCORE_MAX_NAME_CHARS``); EvalDataError otherwise."""
    return _bounded(text, what, "EVALCORE_MAX_NAME_CHARS", MAX_NAME_CHARS)


def _bounded(text: str, what: str, variable: str, default: int) -> str:
    limit = env_number(variable, default)
    if len(text) > limit:
        raise EvalDataError(f"{what} has {len(text):,} characters; it may have at most {limit:,}: shorten it "
                            f"(nothing was recorded). The bound is {variable} where evalcore runs.")
    return text


@dataclass(frozen=True)
class ReadLimits:
    """Bounds on one load: ``max_bytes`` after decompression, ``max_rows``, ``max_columns``, ``max_line_bytes``,
    the distinct ``max_models``, ``max_tasks`` and ``max_groups``, the text roles' ``max_text_value_bytes``
    (one value) and ``max_text_bytes`` (all together), and ``max_json_values`` (None: one per
    :data:`BYTES_PER_JSON_VALUE` bytes of ``max_bytes``)."""

    max_bytes: int = 200 * MB
    max_rows: int = 10_000_000
    max_columns: int = 2000
    max_line_bytes: int = 1024 * KB
    max_models: int = 1000
    max_tasks: int = 10_000
    max_groups: int = 10_000
    max_text_value_bytes: int = 4 * KB
    max_text_bytes: int = 100 * MB
    max_json_values: int | None = None

    def __post_init__(self) -> None:
        if self.max_json_values is None:
            object.__setattr__(self, "max_json_values", self.max_bytes // BYTES_PER_JSON_VALUE)

    @classmethod
    def from_env(cls) -> "ReadLimits":
        """The limits configured by the environment variables above."""
        max_bytes = env_number("EVALCORE_MAX_FILE_MB", 200) * MB
        return cls(max_bytes=max_bytes,
                   max_rows=env_number("EVALCORE_MAX_ROWS", 10_000_000),
                   max_columns=env_number("EVALCORE_MAX_COLUMNS", 2000),
                   max_line_bytes=env_number("EVALCORE_MAX_LINE_KB", 1024) * KB,
                   max_models=env_number("EVALCORE_MAX_MODELS", 1000),
                   max_tasks=env_number("EVALCORE_MAX_TASKS", 10_000),
                   max_groups=env_number("EVALCORE_MAX_GROUPS", 10_000),
                   max_text_value_bytes=env_number("EVALCORE_MAX_TEXT_KB", 4) * KB,
                   max_text_bytes=env_number("EVALCORE_MAX_TEXT_MB", 100) * MB,
                   max_json_values=env_number("EVALCORE_MAX_JSON_VALUES", max_bytes // BYTES_PER_JSON_VALUE))

    def raise_hint(self, what: str) -> str:
        """How to raise the limit called ``what`` (``bytes``, ``rows``, ``columns``, ``line``, ``models``,
        ``tasks``, ``groups``, ``text value``, ``text`` or ``json values``)."""
        variable, field = {"bytes": ("EVALCORE_MAX_FILE_MB", "max_bytes"),
                           "rows": ("EVALCORE_MAX_ROWS", "max_rows"),
                           "columns": ("EVALCORE_MAX_COLUMNS", "max_columns"),
                           "line": ("EVALCORE_MAX_LINE_KB", "max_line_bytes"),
                           "models": ("EVALCORE_MAX_MODELS", "max_models"),
                           "tasks": ("EVALCORE_MAX_TASKS", "max_tasks"),
                           "groups": ("EVALCORE_MAX_GROUPS", "max_groups"),
                           "text value": ("EVALCORE_MAX_TEXT_KB", "max_text_value_bytes"),
                           "text": ("EVALCORE_MAX_TEXT_MB", "max_text_bytes"),
                           "json values": ("EVALCORE_MAX_JSON_VALUES", "max_json_values")}[what]
        return (f"To allow more, set the environment variable {variable} where evalcore runs (or pass "
                f"limits=ReadLimits({field}=...) to read_table / load_eval_log).")


def refuse_rows(n_rows: int, limits: ReadLimits, what: str = "The file has") -> None:
    """Refuse a table of more than ``limits.max_rows`` rows (``what`` says whose rows they are)."""
    if n_rows > limits.max_rows:
        raise EvalDataError(
            f"{what} {n_rows:,} rows; evalcore reads at most {limits.max_rows:,} into memory. Upload a sample "
            f"or a subset of the models. {limits.raise_hint('rows')}")


def size_text(n_bytes: int) -> str:
    """``'200 MB'``, ``'1,024 KB'``, ``'12 bytes'``: a byte count for a message."""
    if n_bytes >= MB:
        return f"{n_bytes / MB:,.0f} MB" if n_bytes % MB == 0 or n_bytes >= 10 * MB else f"{n_bytes / MB:,.1f} MB"
    if n_bytes >= KB:
        return f"{n_bytes / KB:,.0f} KB"
    return f"{n_bytes:,} bytes"


class Budget:
    """The bytes one load may still produce: ``limits.max_bytes`` for every file, archive member and layer of
    decompression of the load together, counted on the bytes actually produced (never on sizes a file declares).

    Readers ask :attr:`room` before they expand anything and expand at most that much; :meth:`spend` counts what
    they kept. The JSON values parsed for the load are counted the same way (:attr:`json_values`,
    :meth:`spend_json_values`, within ``limits.max_json_values``) before they are built.
    """

    def __init__(self, limits: ReadLimits) -> None:
        self.limits = limits
        self.used = 0
        self.json_values = 0

    @property
    def room(self) -> int:
        """Bytes that may still be produced."""
        return self.limits.max_bytes - self.used

    def spend(self, n_bytes: int, name: str) -> None:
        """Count ``n_bytes`` produced for ``name`` (a file or member, named in the message); refuse them when they
        pass the limit."""
        if n_bytes > self.room:
            raise self.refusal(name)
        self.used += n_bytes

    def refusal(self, name: str) -> EvalDataError:
        """The error for ``name`` producing more than :attr:`room`."""
        others = f" (with the {size_text(self.used)} read before it)" if self.used else ""
        return EvalDataError(
            f"{name}: expands beyond {size_text(self.limits.max_bytes)} after decompression{others}, the most "
            f"evalcore reads into memory for one load (the limit max_bytes applies to all its files, archive "
            f"members and compressed layers together). Upload fewer or smaller files, or a sample. "
            f"{self.limits.raise_hint('bytes')}")

    @property
    def json_room(self) -> int:
        """JSON values that may still be parsed."""
        return self.limits.max_json_values - self.json_values

    def spend_json_values(self, n_values: int, name: str) -> None:
        """Count ``n_values`` JSON values about to be parsed from ``name`` (named in the message); refuse them when
        they pass ``limits.max_json_values``."""
        if n_values > self.json_room:
            others = f" (with the {self.json_values:,} of the files before it)" if self.json_values else ""
            raise EvalDataError(
                f"{name} holds {n_values:,} JSON values (objects, lists, keys and items){others}, more than the "
                f"{self.limits.max_json_values:,} evalcore parses for one load: each takes 30 to 64 bytes of memory "
                f"however few bytes it has in the file. Upload fewer or smaller files, or a sample. "
                f"{self.limits.raise_hint('json values')}")
        self.json_values += n_values
