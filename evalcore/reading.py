"""Reading evaluation tables from bytes or paths: CSV, TSV, gzip-compressed CSV/TSV, Parquet.

The format is recognised from the content, never from the file name: Parquet by its ``PAR1`` magic,
gzip by ``1f 8b``, text otherwise, with the delimiter sniffed from the first lines. Every failure
becomes an :class:`EvalDataError` whose message says what to fix.
"""

from __future__ import annotations

import codecs
import gzip
import io
import re
import zlib
from pathlib import Path
from typing import BinaryIO, Union

import pandas as pd
import pyarrow

Source = Union[str, Path, bytes, bytearray, memoryview, BinaryIO]

_DELIMITERS = (",", "\t", ";", "|")
_DELIMITER_NAMES = {",": "commas", "\t": "tabs", ";": "semicolons", "|": "pipes"}
_SNIFF_BYTES = 64 * 1024


class EvalDataError(ValueError):
    """A problem with the user's data, phrased so that a person can fix it."""


def read_bytes(source: Source) -> bytes:
    """The raw bytes of ``source``: a path, bytes, or a binary file object."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise EvalDataError(f"No file at '{path}': check the path.")
        return path.read_bytes()
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
    if data[:4] == b"PAR1":
        frame = _read_parquet(data)
    else:
        if data[:2] == b"\x1f\x8b":
            data = _gunzip(data)
        _refuse_binary(data)
        frame = _read_text(_to_utf8(data))
    if frame.shape[1] == 0:
        raise EvalDataError("The file has no columns: expected a header row naming the columns.")
    if len(frame) == 0:
        raise EvalDataError("The file has a header but no data rows.")
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _read_parquet(data: bytes) -> pd.DataFrame:
    try:
        return pd.read_parquet(io.BytesIO(data))
    except (OSError, ValueError, pyarrow.ArrowException) as exc:
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

    Fields are counted outside double quotes. Among consistent candidates the one giving most fields wins;
    ``None`` when no candidate appears in the header.
    """
    lines = [ln for ln in text.splitlines()[:50] if ln.strip()]
    if not lines:
        return None
    if len(lines) > 1 and len(text) >= _SNIFF_BYTES:
        lines = lines[:-1]  # the last line of a truncated sample may be cut
    best, best_fields = None, 1
    for delim in _DELIMITERS:
        counts = [_count_outside_quotes(ln, delim) for ln in lines]
        header = counts[0]
        if header == 0:
            continue
        consistent = sum(c == header for c in counts) / len(counts)
        if consistent >= 0.8 and header + 1 > best_fields:
            best, best_fields = delim, header + 1
    return best


def _count_outside_quotes(line: str, delim: str) -> int:
    return len(delim.join(re.split(r'"[^"]*"', line)).split(delim)) - 1 if '"' in line else line.count(delim)


_PARSER_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _read_text(data: bytes) -> pd.DataFrame:
    sample = data[:_SNIFF_BYTES].decode("utf-8", errors="ignore")
    delim = sniff_delimiter(sample)
    if delim is None:
        header = sample.splitlines()[0][:80] if sample.strip() else ""
        if header.lstrip().startswith(("{", "[", "<")):
            raise EvalDataError(
                "This looks like JSON, HTML or XML, not a table: upload CSV, TSV, gzip-compressed CSV or Parquet."
            )
        raise EvalDataError(
            f"Only one column was found (header: '{header}'). Expected columns separated by commas (CSV) or tabs "
            "(TSV), e.g. 'model,example_id,correct,confidence'. Check the delimiter."
        )
    try:
        return pd.read_csv(io.BytesIO(data), sep=delim, engine="c", low_memory=False, encoding="utf-8")
    except pd.errors.EmptyDataError as exc:
        raise EvalDataError("The file is empty: expected a header row and at least one data row.") from exc
    except pd.errors.ParserError as exc:
        match = _PARSER_FIELDS.search(str(exc))
        if match:
            expected, line, saw = match.groups()
            raise EvalDataError(
                f"Line {line} has {saw} fields but the header has {expected} (the file is separated by "
                f"{_DELIMITER_NAMES[delim]}): check the delimiter and the quoting of values that contain "
                f"'{delim}'."
            ) from exc
        raise EvalDataError(f"The file could not be parsed as a table ({exc}).") from exc
    except (ValueError, UnicodeError, OverflowError) as exc:
        raise EvalDataError(f"The file could not be parsed as a table ({exc}).") from exc
