"""Reading evaluation tables from bytes or paths: CSV, TSV, gzip-compressed CSV/TSV, Parquet.

The format is recognised from the content, never from the file name: Parquet by its ``PAR1`` magic,
gzip by ``1f 8b``, text otherwise, with the delimiter sniffed from the first lines. Every failure
becomes an :class:`EvalDataError` whose message says what to fix.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import re
import warnings
import zlib
from pathlib import Path
from typing import BinaryIO, Union

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

Source = Union[str, Path, bytes, bytearray, memoryview, BinaryIO]

_DELIMITERS = (",", "\t", ";", "|")
_DELIMITER_NAMES = {",": "commas", "\t": "tabs", ";": "semicolons", "|": "pipes"}
_SNIFF_BYTES = 64 * 1024


class EvalDataError(ValueError):
    """A problem with the user's data, phrased so that a person can fix it."""


def listed(items, limit: int = 5, fmt=str) -> str:
    """``'a, b, c and 7 more'``: the first ``limit`` of ``items`` (a sized, sliceable sequence), each shown by
    ``fmt``, for an error message."""
    shown = ", ".join(fmt(item) for item in list(items[:limit]))
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def read_bytes(source: Source) -> bytes:
    """The raw bytes of ``source``: a path, bytes, or a binary file object."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    if isinstance(source, (str, Path)):
        path = Path(source)
        try:
            if not path.is_file():
                raise EvalDataError(f"No file at '{path}': check the path.")
            return path.read_bytes()
        except OSError as exc:
            raise EvalDataError(f"Cannot read '{path}' ({exc.strerror or exc}): check the path.") from exc
    if hasattr(source, "read"):
        data = source.read()
        if isinstance(data, str):
            data = data.encode("utf-8")
        return bytes(data)
    raise EvalDataError(
        f"Cannot read a table from a {type(source).__name__}: give a file path, bytes or a binary file."
    )


def read_table(source: Source) -> pd.DataFrame:
    """Read ``source`` into a raw DataFrame (column names and values as in the file)."""
    data = read_bytes(source)
    if not data.strip():
        raise EvalDataError("The file is empty: expected a header row and at least one data row.")
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data)
    if data[:4] == b"PAR1":
        frame = _read_parquet(data)
    else:
        _refuse_binary(data)
        text = _to_utf8(data)
        if not text.strip():
            raise EvalDataError("The file is empty: expected a header row and at least one data row.")
        frame = _read_text(text)
    if frame.shape[1] == 0:
        raise EvalDataError("The file has no columns: expected a header row naming the columns.")
    if len(frame) == 0:
        raise EvalDataError("The file has a header but no data rows.")
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _read_parquet(data: bytes) -> pd.DataFrame:
    try:
        table = pq.read_table(io.BytesIO(data), use_pandas_metadata=True)
        table.validate(full=True)  # damaged bytes can hold invalid UTF-8 that would fail later, inside pandas
        return table.to_pandas()
    except Exception as exc:  # noqa: BLE001 - damaged bytes fail anywhere in pyarrow (e.g. KeyError on metadata)
        raise EvalDataError(f"The file starts like Parquet but could not be read as Parquet ({exc}).") from exc


def _gunzip(data: bytes) -> bytes:
    try:
        out = gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise EvalDataError(f"The file is gzip-compressed but damaged ({exc}): compress it again.") from exc
    if not out.strip():
        raise EvalDataError("The compressed file is empty: expected a header row and data rows inside.")
    return out


def _refuse_binary(data: bytes) -> None:
    head = data[:_SNIFF_BYTES]
    if head[:4] == b"PK\x03\x04":
        raise EvalDataError(
            "This is a zip archive (an Excel workbook?), not a table: save the sheet as CSV and upload that."
        )
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return
    if b"\x00" in head:
        raise EvalDataError(
            "This is not a text table (it contains binary bytes): upload CSV, TSV, gzip-compressed CSV or Parquet."
        )


def _to_utf8(data: bytes) -> bytes:
    """Return UTF-8 bytes; UTF-16 with a byte-order mark is converted, anything else must be UTF-8."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError as exc:
            raise EvalDataError(f"The file claims UTF-16 but is not valid UTF-16 ({exc.reason}).") from exc
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    try:
        codecs.decode(data, "utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise EvalDataError(
            f"The file is not UTF-8 text: byte 0x{data[exc.start]:02x} on line {line} cannot be decoded. "
            "Save the file with UTF-8 encoding (e.g. 'CSV UTF-8' in a spreadsheet program) and upload it again."
        ) from exc
    return data


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
_MARKUP = re.compile(r'\s*(\{|<|\[\s*[\[{"\]\d-])')  # JSON, HTML, XML


def _read_text(data: bytes) -> pd.DataFrame:
    if b"\r" in data:  # one line break for the checks and the parser alike (old Mac files end lines with \r alone)
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    sample = data[:_SNIFF_BYTES].decode("utf-8", errors="ignore")
    if _MARKUP.match(sample):
        raise EvalDataError(
            "This looks like JSON, HTML or XML, not a table: upload CSV, TSV, gzip-compressed CSV or Parquet."
        )
    delim = sniff_delimiter(sample)
    if delim is None:
        header = sample.strip().splitlines()[0][:80] if sample.strip() else ""
        raise EvalDataError(
            f"Only one column was found (header: '{header}'). Expected columns separated by commas (CSV) or tabs "
            "(TSV), e.g. 'model,example_id,correct,confidence'. Check the delimiter."
        )
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
