"""Reading a Parquet file within :class:`~evalcore.data.limits.ReadLimits`, checked before pyarrow allocates.

A Parquet file states its sizes in several places and pyarrow allocates by each of them, so a few kilobytes can
claim, or really hold, gigabytes. :func:`read_parquet` checks, before reading any value:

* the footer: every row group's row count (each and their sum within ``max_rows``, their sum equal to the file's
  count), and the row groups' and column chunks' uncompressed sizes within ``max_bytes``;
* every page header (Thrift compact structs, parsed here: pyarrow does not expose them): pyarrow allocates a page's
  buffer at the uncompressed size its header states before it decompresses the page (measured with pyarrow 26: a
  header claiming 1.5 GB for a page of 100 bytes reserves 1.5 GB), so the stated sizes of all pages together must
  fit ``max_bytes``;
* the size of the values once decoded: fixed-width columns take rows x width, known from the schema; text is read
  as dictionaries (indices and distinct values, no larger than the pages) and its decoded length summed before it
  is decoded, because a dictionary-encoded column expands without bound (one 1 KB value repeated for 3 million
  rows is 15 MB of file and 3 GB of text);
* the entries of every dictionary page (its header's ``num_values``): at most the values of its column chunk plus
  :data:`UNUSED_DICTIONARY_ENTRIES` (a pandas categorical's unused categories). Reading a dictionary costs about
  110 bytes of memory an entry whatever the rows that use it: a 1.4 MB file of 10 rows with a 3-million-entry
  dictionary took 330 MB to read, and as many again once a categorical in pandas.

Text comes back decoded (plain strings), never as a categorical of a dictionary the file stores.

Nested columns (lists, structs, maps) are refused, as nested JSON values are: a table holds one value per cell.
"""

from __future__ import annotations

import io

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from evalcore.errors import EvalDataError
from evalcore.data.limits import ReadLimits, refuse_rows, size_text

#: Thrift compact types (parquet.thrift's structs are written in the compact protocol)
_I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = 4, 5, 6, 7, 8, 9, 10, 11, 12
#: PageHeader's field ids of the page's type, its uncompressed and compressed sizes and its dictionary page header;
#: DictionaryPageHeader's field id of its number of entries; the page type of a dictionary page
_TYPE, _UNCOMPRESSED, _COMPRESSED, _DICTIONARY_HEADER, _ENTRIES, _DICTIONARY_PAGE = 1, 2, 3, 7, 1, 2
#: dictionary entries a column chunk may hold beyond its values (unused categories of a pandas categorical)
UNUSED_DICTIONARY_ENTRIES = 100_000
_MAX_NESTING = 16
#: bytes a dictionary index takes while text is read as dictionaries
_INDEX_BYTES = 4


class _Damaged(Exception):
    """The bytes contradict themselves (a size that is negative or points outside the file)."""


def read_parquet(data: bytes, limits: ReadLimits) -> pd.DataFrame:
    """The Parquet file ``data`` as a raw DataFrame, every bound of ``limits`` checked before values are read."""
    try:
        parquet = pq.ParquetFile(io.BytesIO(data))
        meta, schema = parquet.metadata, parquet.schema_arrow
    except Exception as exc:  # noqa: BLE001 - damaged bytes fail anywhere in pyarrow
        raise damaged() from exc
    if meta.num_columns > limits.max_columns:
        raise EvalDataError(
            f"The Parquet file has {meta.num_columns:,} columns; evalcore reads at most {limits.max_columns:,}. "
            f"Keep the columns you need. {limits.raise_hint('columns')}")
    try:
        _check_rows(meta, limits)
        _check_stated_sizes(meta, limits)
        _check_pages(data, meta, limits)
    except _Damaged as exc:
        raise damaged() from exc
    _refuse_nested(schema)
    repeated = sorted({n for n in schema.names if schema.names.count(n) > 1})
    if repeated:
        raise EvalDataError(f"Column names must be unique; repeated: {', '.join(repeated)}. Rename them.")
    text = [f.name for f in schema if _is_text(f.type)]
    fixed = _fixed_bytes(schema, meta.num_rows, text)
    _refuse_decoded(fixed, limits)
    try:
        table = pq.ParquetFile(io.BytesIO(data), metadata=meta, read_dictionary=text).read(use_pandas_metadata=True)
        _refuse_decoded(fixed + _text_bytes(table), limits)
        table = table.cast(_decoded(schema))  # the text read as dictionaries decoded, now that its size is known
        table.validate(full=True)  # damaged bytes can hold invalid UTF-8 that would fail later, inside pandas
        frame = table.to_pandas()
    except EvalDataError:
        raise
    except Exception as exc:  # noqa: BLE001 - damaged bytes fail anywhere in pyarrow (e.g. KeyError on metadata)
        raise damaged() from exc
    if isinstance(frame.columns, pd.MultiIndex) or frame.columns.duplicated().any():
        raise damaged()
    return frame


def damaged() -> EvalDataError:
    """The error for a Parquet file pyarrow cannot read, or whose metadata contradicts itself."""
    return EvalDataError(
        "The file starts like Parquet but could not be read as Parquet: it is damaged or truncated (or its metadata "
        "contradicts itself), or written in a way pyarrow cannot read back. Write it again (e.g. pandas' "
        "DataFrame.to_parquet) or upload it as CSV.")


def _check_rows(meta: pq.FileMetaData, limits: ReadLimits) -> None:
    """Bound the row counts pyarrow sizes its arrays by: the file's, each row group's and their sum."""
    counts = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    if meta.num_rows < 0 or any(n < 0 for n in counts):
        raise _Damaged("a negative row count")
    for number, count in enumerate(counts, 1):
        refuse_rows(count, limits, f"Row group {number} of the Parquet file states")
    refuse_rows(meta.num_rows, limits)
    refuse_rows(sum(counts), limits, "The Parquet file's row groups state")
    if sum(counts) != meta.num_rows:
        raise _Damaged(f"the row groups hold {sum(counts):,} rows, the file says {meta.num_rows:,}")


def _check_stated_sizes(meta: pq.FileMetaData, limits: ReadLimits) -> None:
    """Bound the uncompressed sizes the footer states for every row group and column chunk."""
    groups = [meta.row_group(i) for i in range(meta.num_row_groups)]
    chunks = [g.column(j).total_uncompressed_size for g in groups for j in range(g.num_columns)]
    for what, sizes in (("row groups", [g.total_byte_size for g in groups]), ("column chunks", chunks)):
        if any(size < 0 for size in sizes):
            raise _Damaged(f"a negative size of {what}")
        _refuse_size(sum(sizes), f"its {what} state", limits)


def _check_pages(data: bytes, meta: pq.FileMetaData, limits: ReadLimits) -> None:
    """Bound the uncompressed sizes every page header states (pyarrow allocates each page's buffer by it): all
    pages together within ``limits.max_bytes``. The pages of a row group without rows are never read."""
    total = 0
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        for j in range(group.num_columns if group.num_rows else 0):
            chunk = group.column(j)
            start = chunk.data_page_offset
            if chunk.has_dictionary_page and 0 < chunk.dictionary_page_offset < start:
                start = chunk.dictionary_page_offset
            end = start + chunk.total_compressed_size
            if start < 0 or end > len(data):
                raise _Damaged("a column chunk outside the file")
            while start < end:
                uncompressed, compressed, entries, start = _page_sizes(data, start)
                if uncompressed < 0 or compressed < 0:
                    raise _Damaged("a negative page size")
                total += uncompressed
                _refuse_size(total, "its page headers state", limits)
                _refuse_dictionary(entries, chunk, i)
                start += compressed


def _refuse_dictionary(entries: int, chunk, group: int) -> None:
    """Refuse a dictionary page of more entries than its column chunk's values allow (see the module docstring)."""
    if entries > chunk.num_values + UNUSED_DICTIONARY_ENTRIES:
        raise EvalDataError(
            f"Column '{chunk.path_in_schema}' of the Parquet file (row group {group + 1}) stores a dictionary of "
            f"{entries:,} distinct values for its {chunk.num_values:,} values: reading it would take about "
            f"{size_text(110 * entries)} of memory for values no row uses. Write the file again without the unused "
            "values (pandas: df[column] = df[column].cat.remove_unused_categories(), or save the column as plain "
            "text), or upload it as CSV.")


def _refuse_size(size: int, stated: str, limits: ReadLimits) -> None:
    if size > limits.max_bytes:
        raise EvalDataError(
            f"The Parquet file holds {size_text(size)} of data uncompressed ({stated} so), more than the "
            f"{size_text(limits.max_bytes)} evalcore reads into memory. Upload a sample, or read it in the engine "
            f"(evalcore.engine.scan, or --engine always). {limits.raise_hint('bytes')}")


def _refuse_decoded(size: int, limits: ReadLimits) -> None:
    if size > limits.max_bytes:
        raise EvalDataError(
            f"The Parquet file's values take {size_text(size)} once decoded (repeated values are stored once in "
            f"the file), more than the {size_text(limits.max_bytes)} evalcore reads into memory. Upload a sample, "
            f"or read it in the engine (evalcore.engine.scan, or --engine always). {limits.raise_hint('bytes')}")


def _refuse_nested(schema: pa.Schema) -> None:
    nested = [f.name for f in schema if pa.types.is_nested(f.type)]
    if nested:
        raise EvalDataError(
            f"Column '{nested[0]}' of the Parquet file holds nested values (lists, structs or maps): evalcore reads "
            "tables with one value per cell. Drop the column or write its values as text.")


def _decoded(schema: pa.Schema) -> pa.Schema:
    """``schema`` with each dictionary type (the file's stored Arrow schema keeps pandas' categoricals) as its values'
    type: the frame holds the values, not a categorical carrying the file's whole dictionary."""
    return pa.schema([f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f for f in schema],
                     metadata=schema.metadata)


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) or \
        pa.types.is_large_binary(kind)


def _fixed_bytes(schema: pa.Schema, n_rows: int, text: list[str]) -> int:
    """Bytes the columns take before text is decoded: rows x width for fixed-width values, rows x the width of an
    index for text read as dictionaries and for dictionary columns."""
    total = 0
    for field in schema:
        kind = field.type
        if field.name in text or pa.types.is_dictionary(kind):
            total += n_rows * _INDEX_BYTES
            kind = kind.value_type if pa.types.is_dictionary(kind) else None
        if kind is not None and not _is_text(kind):
            total += -(-n_rows * _bit_width(kind) // 8)
    return total


def _bit_width(kind: pa.DataType) -> int:
    """Bits one value of the flat type ``kind`` takes (0 for the null type)."""
    try:
        return kind.bit_width
    except ValueError:
        return 0


def _text_bytes(table: pa.Table) -> int:
    """The bytes of every text value of ``table`` once decoded, summed through the dictionaries (not decoded)."""
    total = 0
    for column in table.columns:
        for chunk in column.chunks:
            if pa.types.is_dictionary(chunk.type) and _is_text(chunk.type.value_type):
                lengths = pc.binary_length(chunk.dictionary)
                total += pc.sum(pc.take(lengths, chunk.indices)).as_py() or 0
            elif _is_text(chunk.type):
                total += pc.sum(pc.binary_length(chunk)).as_py() or 0
    return total


# ------------------------------------------------------------------------------------------- Thrift compact


def _page_sizes(data: bytes, at: int) -> tuple[int, int, int, int]:
    """(uncompressed size, compressed size, dictionary entries (0 for another page), end) of the page header at
    ``at``."""
    fields, end = _struct(data, at, 0)
    if not isinstance(fields.get(_UNCOMPRESSED), int) or not isinstance(fields.get(_COMPRESSED), int):
        raise _Damaged("a page header without its sizes")
    entries = 0
    if fields.get(_TYPE) == _DICTIONARY_PAGE:
        header = fields.get(_DICTIONARY_HEADER)
        entries = header.get(_ENTRIES) if isinstance(header, dict) else None
        if not isinstance(entries, int) or entries < 0:
            raise _Damaged("a dictionary page without its number of entries")
    return fields[_UNCOMPRESSED], fields[_COMPRESSED], entries, end


def _struct(data: bytes, at: int, depth: int) -> tuple[dict[int, int | dict], int]:
    """The integer and struct fields of the Thrift compact struct at ``at`` ({field id: value, a struct's as its
    own dict}; other fields skipped) and where it ends."""
    if depth > _MAX_NESTING:
        raise _Damaged("structs nested too deeply")
    fields, last = {}, 0
    while True:
        head = _byte(data, at)
        at += 1
        if head == 0:
            return fields, at
        kind, delta = head & 0x0F, head >> 4
        if delta:
            last += delta
        else:
            raw, at = _varint(data, at)
            last = _zigzag(raw)
        if kind in (_I16, _I32, _I64):
            raw, at = _varint(data, at)
            fields[last] = _zigzag(raw)
        elif kind == _STRUCT:
            fields[last], at = _struct(data, at, depth + 1)
        else:
            at = _skip(data, at, kind, depth)


def _skip(data: bytes, at: int, kind: int, depth: int) -> int:
    """Where the value of Thrift type ``kind`` at ``at`` ends."""
    if kind in (1, 2):  # booleans live in the field header
        return at
    if kind == 3:
        return at + 1
    if kind in (_I16, _I32, _I64):
        return _varint(data, at)[1]
    if kind == _DOUBLE:
        return at + 8
    if kind == _BINARY:
        size, at = _varint(data, at)
        return at + size
    if kind in (_LIST, _SET):
        head = _byte(data, at)
        size, element, at = head >> 4, head & 0x0F, at + 1
        if size == 15:
            size, at = _varint(data, at)
        for _ in range(size):
            at = _skip_element(data, at, element, depth)
        return at
    if kind == _MAP:
        size, at = _varint(data, at)
        if size:
            types, at = _byte(data, at), at + 1
            for _ in range(size):
                at = _skip_element(data, _skip_element(data, at, types >> 4, depth), types & 0x0F, depth)
        return at
    if kind == _STRUCT:
        return _struct(data, at, depth + 1)[1]
    raise _Damaged(f"an unknown Thrift type {kind}")


def _skip_element(data: bytes, at: int, kind: int, depth: int) -> int:
    """Where an element of a list or map ends (a boolean takes a byte there); every element takes at least one
    byte, so a stated size larger than the file fails at its end instead of looping."""
    at = at + 1 if kind in (1, 2) else _skip(data, at, kind, depth + 1)
    if at > len(data):
        raise _Damaged("a page header runs past the end of the file")
    return at


def _byte(data: bytes, at: int) -> int:
    if at >= len(data):
        raise _Damaged("a page header runs past the end of the file")
    return data[at]


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = 0
    for shift in range(0, 70, 7):
        byte = _byte(data, at)
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
    raise _Damaged("a varint longer than 10 bytes")


def _zigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)
