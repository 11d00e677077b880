"""Reading evaluation tables from bytes or paths: CSV, TSV, compressed CSV/TSV, Parquet, within limits.

The format is recognised from the content, never from the file name: Parquet by its ``PAR1`` magic, gzip / bzip2
/ xz by theirs (expanded by :mod:`evalcore.data.compression`, never beyond the limit), text otherwise (UTF-8, or UTF-16
with or without a byte-order mark): JSON Lines or a JSON list of flat records when it starts with ``{`` or
``[{``, a delimited table with the delimiter sniffed from the first lines otherwise. Every bound of
:class:`~evalcore.data.limits.ReadLimits` (size after decompression, columns, line length) is checked before the parser
allocates anything in proportion to it. Well-formed text goes straight to pyarrow's multithreaded CSV parser; only
when it refuses the file does a diagnostic pass find the line to name (ragged rows, unclosed quotes). Every failure
becomes an :class:`EvalDataError` whose message says what to fix.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
import warnings
from pathlib import Path
from typing import BinaryIO, Iterator, Union

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from evalcore.data.bounded_json import spend as spend_json
from evalcore.data.compression import decompress
from evalcore.errors import EvalDataError, listed
from evalcore.data.limits import Budget, ReadLimits, refuse_rows, size_text
from evalcore.data.parquet_bounds import read_parquet

__all__ = ["EvalDataError", "ReadLimits", "listed", "nonblank_lines", "read_bytes", "read_table", "refuse_long_lines",
           "sniff_delimiter"]

Source = Union[str, Path, bytes, bytearray, memoryview, BinaryIO]

_DELIMITERS = (",", "\t", ";", "|")
_DELIMITER_NAMES = {",": "commas", "\t": "tabs", ";": "semicolons", "|": "pipes"}
_SNIFF_BYTES = 64 * 1024
#: the values pandas reads as missing, so that both parsers agree on what is missing
_NULL_VALUES = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>",
                "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]


def read_bytes(source: Source, limits: ReadLimits | None = None) -> bytes:
    """The raw bytes of ``source`` (a path, bytes, or a binary file object), at most ``limits.max_bytes``."""
    limits = limits or ReadLimits.from_env()
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif isinstance(source, (str, Path)):
        path = Path(source)
        try:
            if not path.is_file():
                raise EvalDataError(f"No file at '{path}': check the path.")
            _refuse_size(path.stat().st_size, limits)
            data = path.read_bytes()
        except OSError as exc:
            raise EvalDataError(f"Cannot read '{path}' ({exc.strerror or exc}): check the path.") from exc
    elif hasattr(source, "read"):
        data = source.read(limits.max_bytes + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
        data = bytes(data)
    else:
        raise EvalDataError(
            f"Cannot read a table from a {type(source).__name__}: give a file path, bytes or a binary file."
        )
    _refuse_size(len(data), limits)
    return data


def _refuse_size(n_bytes: int, limits: ReadLimits) -> None:
    if n_bytes > limits.max_bytes:
        raise EvalDataError(
            f"The file is larger than {size_text(limits.max_bytes)}, the largest table evalcore reads into memory. "
            f"Upload a smaller file or a sample. {limits.raise_hint('bytes')}")


def read_table(source: Source, limits: ReadLimits | None = None, budget: Budget | None = None,
               name: str = "The file") -> pd.DataFrame:
    """Read ``source`` into a raw DataFrame (column names and values as in the file), within ``limits``.

    ``limits`` None takes :meth:`ReadLimits.from_env`. The values of a JSON table are counted against ``budget``
    (the load's, when the table is one of its files; one of its own when None), under ``name`` in messages.
    """
    limits = limits or ReadLimits.from_env()
    data = read_bytes(source, limits)
    if _blank(data):
        raise EvalDataError("The file is empty: expected a header row and at least one data row.")
    data = decompress(data, Budget(limits))
    if data[:4] == b"PAR1":
        frame = read_parquet(data, limits)
    else:
        text = _to_utf8(data)
        if _blank(text):
            raise EvalDataError("The file is empty: expected a header row and at least one data row.")
        frame = (_read_json(text, limits, budget or Budget(limits), name) if _JSON_START.match(text)
                 else _read_text(text, limits))
    if frame.shape[1] == 0:
        raise EvalDataError("The file has no columns: expected a header row naming the columns.")
    if len(frame) == 0:
        raise EvalDataError("The file has a header but no data rows.")
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


_JSON_START = re.compile(rb"\s*(\{|\[\s*[{\]])")  # a JSON object, or a list of objects (or an empty list)


def _read_json(data: bytes, limits: ReadLimits, budget: Budget, name: str) -> pd.DataFrame:
    """JSON Lines (one object per line) or a JSON list of objects: one row per object, one column per field, its
    values counted against ``budget`` before any is built (:mod:`evalcore.data.bounded_json`).

    Every value must be a single value (text, number, true/false or null): nested objects and lists are what the
    logs of evaluation tools hold, not a table, and are refused with a message saying so.
    """
    spend_json(data, name, budget)
    if data.lstrip().startswith(b"["):
        try:
            records = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise EvalDataError(f"The file starts like a JSON list but is not valid JSON ({exc}).") from exc
        where = "item"
    else:
        refuse_long_lines(data, limits)
        records, where = [], "line"
        for number, line in nonblank_lines(data):
            try:
                records.append(json.loads(line))
            except (ValueError, RecursionError) as exc:
                raise EvalDataError(
                    f"Line {number} is not valid JSON ({exc}): JSON Lines need one complete object per line."
                ) from exc
    if not records:
        raise EvalDataError("The JSON file holds no records: expected one object per row, e.g. "
                            '{"model": "a", "example_id": "q1", "correct": 1}.')
    refuse_rows(len(records), limits)
    for number, record in enumerate(records, 1):
        if not isinstance(record, dict):
            raise EvalDataError(f"JSON {where} {number} is a {type(record).__name__}, not an object: expected one "
                                'object per row, e.g. {"model": "a", "example_id": "q1", "correct": 1}.')
        nested = next((k for k, v in record.items() if isinstance(v, (dict, list))), None)
        if nested is not None:
            from evalcore.importers.detect import tools_read  # here: the importers read tables through this module

            raise EvalDataError(
                f"Field '{nested}' of JSON {where} {number} holds nested values (an object or a list): this looks "
                f"like an evaluation tool's own log, of a format evalcore does not read. {tools_read()}; for another "
                "tool, write its per-example results as a table with one value per column, e.g. "
                '{"model": "a", "example_id": "q1", "correct": 1}, or name the columns\' roles with -m COLUMN=ROLE.')
    frame = pd.DataFrame.from_records(records)
    _check_header([str(c) for c in frame.columns], limits)
    return frame


def _blank(data: bytes) -> bool:
    """Whether ``data`` holds only whitespace (without copying it, as ``strip`` would)."""
    return _BLANK.match(data) is not None


_BLANK = re.compile(rb"\s*\Z")


def _to_utf8(data: bytes) -> bytes:
    """Return UTF-8 bytes; UTF-16 (with a byte-order mark, or recognisably without) is converted, anything else
    must be UTF-8 text without NUL bytes."""
    if data[:4] == b"PK\x03\x04":
        raise EvalDataError(
            "This is a zip archive (an Excel workbook?), not a table: save the sheet as CSV and upload that."
        )
    encoding = _utf16_encoding(data)
    if encoding:
        try:
            data = data.decode(encoding).encode("utf-8")
        except UnicodeDecodeError as exc:
            raise EvalDataError(f"The file looks like UTF-16 text but is not valid UTF-16 ({exc.reason}).") from exc
        if data.startswith(codecs.BOM_UTF8):
            data = data[len(codecs.BOM_UTF8):]
    elif data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    _refuse_nul(data)
    if data.isascii():
        return data
    try:
        codecs.decode(data, "utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise EvalDataError(
            f"The file is not UTF-8 text: byte 0x{data[exc.start]:02x} on line {line} cannot be decoded. "
            "Save the file with UTF-8 encoding (e.g. 'CSV UTF-8' in a spreadsheet program) and upload it again."
        ) from exc
    return data


def _utf16_encoding(data: bytes) -> str | None:
    """'utf-16' for a byte-order mark; 'utf-16-le' / 'utf-16-be' when the first bytes are ASCII text with a zero
    byte after (before) every character, as UTF-16 without a byte-order mark writes it; None otherwise."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    head = data[: min(len(data), 4096) // 2 * 2]
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    for zeros, text, name in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
        if zeros.count(0) >= 0.9 * len(zeros) and text.count(0) == 0 and all(32 <= b < 127 or b in b"\t\r\n"
                                                                               for b in text[:64]):
            return name
    return None


def _refuse_nul(data: bytes) -> None:
    position = data.find(b"\x00")
    if position < 0:
        return
    head = data[:_SNIFF_BYTES]
    controls = sum(head.count(bytes([b])) for b in range(32) if b not in (9, 10, 13))
    if controls >= 4 and controls > 0.01 * len(head):  # an image, an archive, a binary format: not a damaged table
        raise EvalDataError(
            "This is not a text table (it contains binary bytes): upload CSV, TSV, gzip-compressed CSV or Parquet."
        )
    line = data.count(b"\n", 0, position) + 1
    raise EvalDataError(
        f"Line {line} contains a NUL byte (\\x00), which never belongs in a text table: the file is damaged or "
        "was not saved as text. Remove the byte or export the table again."
    )


def sniff_delimiter(text: str) -> str | None:
    """The delimiter among , tab ; | that splits the first lines into the same number (> 1) of fields.

    Fields are counted outside double quotes. Among consistent candidates the one giving most fields wins; when
    none is consistent (ragged rows), the one most consistent with the header, so that the parser can name the
    ragged line. ``None`` when no candidate appears in the header.
    """
    lines = [ln for ln in text.splitlines()[:50] if ln.strip()]
    if not lines:
        return None
    if len(lines) > 1 and len(text) >= _SNIFF_BYTES:
        lines = lines[:-1]  # the last line of a truncated sample may be cut
    best, best_fields = None, 1
    fallback, fallback_rank = None, (0.0, 0)
    for delim in _DELIMITERS:
        counts = [_count_outside_quotes(ln, delim) for ln in lines]
        header = counts[0]
        if header == 0:
            continue
        consistent = sum(c == header for c in counts) / len(counts)
        if consistent >= 0.8 and header + 1 > best_fields:
            best, best_fields = delim, header + 1
        if (consistent, header) > fallback_rank:
            fallback, fallback_rank = delim, (consistent, header)
    return best or fallback


def _count_outside_quotes(line: str, delim: str) -> int:
    return re.sub(r'"[^"]*"', "", line).count(delim) if '"' in line else line.count(delim)


_PARSER_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_PARSER_QUOTE = re.compile(r"EOF inside string starting at row (\d+)")
_MARKUP = re.compile(r'\s*(<|\[\s*[\["\d-])')  # HTML, XML, JSON that is not a list of records


def _read_text(data: bytes, limits: ReadLimits) -> pd.DataFrame:
    if b"\r" in data:  # one line break for the checks and the parser alike (old Mac files end lines with \r alone)
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    refuse_long_lines(data, limits)
    refuse_rows(data.count(b"\n") - 1 + (not data.endswith(b"\n")), limits)  # minus the header
    sample = data[:_SNIFF_BYTES].decode("utf-8", errors="ignore")
    if _MARKUP.match(sample):
        raise EvalDataError(
            "This looks like JSON, HTML or XML, not a table: upload CSV, TSV, JSON Lines, gzip-compressed CSV or "
            "Parquet."
        )
    delim = sniff_delimiter(sample)
    if delim is None:
        header = sample.strip().splitlines()[0][:80] if sample.strip() else ""
        raise EvalDataError(
            f"Only one column was found (header: '{header}'). Expected columns separated by commas (CSV) or tabs "
            "(TSV), e.g. 'model,example_id,correct,confidence'. Check the delimiter."
        )
    names = _header(data, delim, limits)
    _check_header(names, limits)
    frame = _parse_fast(data, delim, names)
    if frame is None:
        frame = _parse_diagnosed(data, delim, limits)
    return frame


_NONBLANK_LINE = re.compile(rb"^[^\S\n]*+\S[^\n]*", re.MULTILINE)


def nonblank_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` for each line of ``data`` holding more than white space, found one at a time: blank
    lines cost neither a Python object each (``splitlines`` of 190 MB of line breaks is a list of 1.5 GB) nor a step
    of Python (the pattern is tried at line starts only, possessively, so each line is read once)."""
    number, at = 1, 0
    for match in _NONBLANK_LINE.finditer(data):
        number += data.count(b"\n", at, match.start())
        at = match.start()
        yield number, match.group()


def refuse_long_lines(data: bytes, limits: ReadLimits) -> None:
    """Refuse a line longer than ``limits.max_line_bytes``, naming it: of a text table or of JSON Lines, before
    any parser holds the line.

    A line longer than L covers some whole window [k L/2, (k+1) L/2) without a line break, so one ``find`` per
    window clears an ordinary file; only a file with such a window is scanned line by line (one chunk of line
    ends in memory at a time).
    """
    step = max(1, limits.max_line_bytes // 2)
    if all(data.find(b"\n", start, start + step) >= 0 for start in range(0, len(data) - step + 1, step)):
        return
    chunk, lines, last_end = 16 * 2**20, 0, -1
    for offset in range(0, len(data), chunk):
        ends = np.flatnonzero(np.frombuffer(data, np.uint8, min(chunk, len(data) - offset), offset) == 10) + offset
        if len(data) - offset <= chunk:
            ends = np.append(ends, len(data))  # the last line may lack its line break
        lengths = np.diff(ends, prepend=last_end) - 1
        longest = int(np.argmax(lengths)) if len(lengths) else 0
        if len(lengths) and lengths[longest] > limits.max_line_bytes:
            raise EvalDataError(
                f"Line {lines + longest + 1:,} is {int(lengths[longest]):,} bytes long; evalcore reads lines of at "
                f"most {limits.max_line_bytes:,} bytes (this bounds every value too). Check that the file holds "
                f"one record per line. {limits.raise_hint('line')}")
        if len(ends):
            lines, last_end = lines + len(ends), int(ends[-1])


def _header(data: bytes, delim: str, limits: ReadLimits) -> list[str]:
    """The column names of the first non-blank record (quoted names may span lines)."""
    head = data[: 2 * limits.max_line_bytes + 2].decode("utf-8", errors="ignore")
    csv.field_size_limit(max(limits.max_line_bytes, 131072))
    try:
        for row in csv.reader(io.StringIO(head, newline=""), delimiter=delim):
            if row and not (len(row) == 1 and not row[0].strip()):
                return row
    except csv.Error:
        pass  # a damaged header: the parsers name the problem
    return []


def _check_header(names: list[str], limits: ReadLimits) -> None:
    """At most ``max_columns`` columns, and unique names (a parser would rename 'model' twice to 'model.1')."""
    if len(names) > limits.max_columns:
        raise EvalDataError(
            f"The header has {len(names):,} columns; evalcore reads at most {limits.max_columns:,}. Check the "
            f"delimiter, or keep only the columns you need. {limits.raise_hint('columns')}")
    stripped = [n.strip() for n in names]
    repeated = sorted({n for n in stripped if n and stripped.count(n) > 1})
    if repeated:
        raise EvalDataError(
            f"Column names must be unique; repeated in the header: {listed(repeated, fmt=repr)}. Rename them.")


def _parse_fast(data: bytes, delim: str, names: list[str]) -> pd.DataFrame | None:
    """pyarrow's parser on a well-formed file: None when it refuses the file (ragged rows, quoted line breaks,
    loose quotes), so that the diagnosed parse names the problem. Values read as pandas reads them: the same
    missing-value markers, and dates and times kept as the text they are."""
    parse = pa_csv.ParseOptions(delimiter=delim, newlines_in_values=False)
    as_text: dict[str, pa.DataType] = {}
    for _ in range(4):  # a column typed from its first block may hold text further down: read it as text
        convert = pa_csv.ConvertOptions(null_values=_NULL_VALUES, strings_can_be_null=True,
                                        quoted_strings_can_be_null=True, column_types=as_text)
        try:
            table = pa_csv.read_csv(io.BytesIO(data), parse_options=parse, convert_options=convert)
        except pa.ArrowInvalid as exc:
            column = _CONVERSION.search(str(exc))
            if column is None:
                return None
            index = int(column.group(1))
            if index >= len(names) or names[index] in as_text:
                return None
            as_text[names[index]] = pa.string()
            continue
        except (pa.ArrowException, ValueError, UnicodeError):
            return None
        temporal = [f.name for f in table.schema if pa.types.is_temporal(f.type)]
        if temporal:
            as_text.update({name: pa.string() for name in temporal})
            continue
        table = table.cast(pa.schema([pa.field(f.name, pa.float64()) if pa.types.is_null(f.type) else f
                                      for f in table.schema]))
        frame = table.to_pandas()
        frame.columns = [name or f"Unnamed: {i}" for i, name in enumerate(frame.columns)]
        return frame
    return None


_CONVERSION = re.compile(r"In CSV column #(\d+): CSV conversion error")


def _parse_diagnosed(data: bytes, delim: str, limits: ReadLimits) -> pd.DataFrame:
    """pandas' parser after a pass that names the first ragged line (the parser would pad short lines)."""
    _refuse_long_quoted_values(data, limits)
    ragged = _ragged_line(data, delim)
    if ragged:
        raise _ragged_error(*ragged, delim)
    try:
        # index_col=False: a trailing delimiter must not turn the first column into the index; pandas' warning
        # that values beyond the header's columns would be dropped is turned into an error (no silent loss)
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(
                io.BytesIO(data), sep=delim, engine="c", low_memory=False, encoding="utf-8", index_col=False
            )
    except pd.errors.ParserWarning as exc:
        raise EvalDataError(
            "Some lines have more values than the header has columns, and the extra values would be lost: check "
            "the delimiter and the quotes around values that contain it."
        ) from exc
    except pd.errors.EmptyDataError as exc:
        raise EvalDataError("The file is empty: expected a header row and at least one data row.") from exc
    except pd.errors.ParserError as exc:
        match = _PARSER_FIELDS.search(str(exc))
        if match:
            expected, line, saw = match.groups()
            raise _ragged_error(int(line), int(saw), int(expected), delim) from exc
        match = _PARSER_QUOTE.search(str(exc))
        if match:
            raise EvalDataError(
                f"A quoted value starting on line {int(match.group(1)) + 1} is never closed: a '\"' is missing. "
                "Check the quotes around values."
            ) from exc
        raise EvalDataError(f"The file could not be parsed as a table ({exc}).") from exc
    except (ValueError, UnicodeError, OverflowError) as exc:
        raise EvalDataError(f"The file could not be parsed as a table ({exc}).") from exc
    return frame


def _refuse_long_quoted_values(data: bytes, limits: ReadLimits) -> None:
    """A quoted value may span lines; it may not be longer than a line may be."""
    quotes = np.flatnonzero(np.frombuffer(data, np.uint8) == ord('"'))
    if len(quotes) < 2:
        return
    lengths = quotes[1::2][: len(quotes) // 2] - quotes[0::2][: len(quotes) // 2]
    longest = int(np.argmax(lengths))
    if lengths[longest] > limits.max_line_bytes:
        line = data.count(b"\n", 0, int(quotes[2 * longest])) + 1
        raise EvalDataError(
            f"A quoted value starting on line {line:,} is {int(lengths[longest]):,} bytes long; evalcore reads "
            f"values of at most {limits.max_line_bytes:,} bytes. Check the quotes around values. "
            f"{limits.raise_hint('line')}")


def _ragged_error(line: int, fields: int, expected: int, delim: str) -> EvalDataError:
    what = (
        f"check the delimiter and the quoting of values that contain a {_DELIMITER_NAMES[delim][:-1]}"
        if fields > expected
        else "every line needs one value per column (leave missing values empty between two separators)"
    )
    return EvalDataError(
        f"Line {line} has {fields} field{'s' if fields != 1 else ''} but the header has {expected} (the file is "
        f"separated by {_DELIMITER_NAMES[delim]}): {what}."
    )


def _ragged_line(data: bytes, delim: str) -> tuple[int, int, int] | None:
    """(line number, fields, header fields) of the first line whose field count differs from the header's.

    The parser would pad short lines with missing values without a word, so every record is checked. Quoted
    values are removed by one regular expression and the delimiters counted per record (fast); only when a record
    looks ragged does the ``csv`` module re-read the file to confirm it and name the physical line.
    """
    if b'"' not in data:
        return _ragged_record(data, delim)
    if _ragged_record(_QUOTED.sub(b"q", data), delim) is None:  # a placeholder keeps quoted-only lines non-blank
        return None
    return _ragged_line_quoted(data, delim)


_QUOTED = re.compile(rb'"[^"]*"')


def _ragged_record(data: bytes, delim: str) -> tuple[int, int, int] | None:
    """The fast check of :func:`_ragged_line` on text without quotes: blank lines are skipped and one extra
    empty field (a trailing delimiter) is allowed, as the parser drops it."""
    sep = delim.encode()
    lines = data.split(b"\n")  # line breaks are normalised by _read_text
    counts = np.fromiter((ln.count(sep) for ln in lines), dtype=np.int64, count=len(lines))
    first = next((i for i, line in enumerate(lines) if counts[i] or line.strip()), 0)  # the header
    expected = int(counts[first]) + 1
    for i in np.flatnonzero(counts != expected - 1):
        if i < first or (counts[i] == 0 and not lines[i].strip()):
            continue
        fields = int(counts[i]) + 1
        if fields == expected + 1 and lines[i].endswith(sep):
            continue
        return int(i) + 1, fields, expected
    return None


def _ragged_line_quoted(data: bytes, delim: str) -> tuple[int, int, int] | None:
    text = data.decode("utf-8")
    for strict in (True, False):  # lenient like the parser when quotes are used loosely, e.g. "a"b
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=strict)
        expected = None
        try:
            for row in reader:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if expected is None:
                    expected = len(row)
                elif len(row) != expected and not (len(row) == expected + 1 and row[-1] == ""):
                    return reader.line_num, len(row), expected
            return None
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                return None  # an unclosed quote: the parser names the line where it starts
    return None
