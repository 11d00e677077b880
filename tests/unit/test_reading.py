"""Reading tables from bytes, paths and file objects: formats, encodings, and files that are not tables."""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import json
import zipfile

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalcore.data.validation import EvalDataError, load_eval_log, read_table, report_of
from evalcore.data import reading
from evalcore.data.reading import sniff_delimiter

# A small log with everything a reader can get wrong: a quoted delimiter, a non-ASCII character, an empty value.
ROWS = [
    ["model", "example_id", "task", "category", "correct", "confidence", "note"],
    ["resnet", "img-1", "cifar", "natural", "1", "0.91", "café"],
    ["resnet", "img-2", "cifar", "natural", "0", "0.4", "b, c; d|e"],
    ["vit", "img-1", "cifar", "natural", "1", "0.85", "plain"],
    ["vit", "img-2", "cifar", "natural", "", "0.77", "x"],
]


def delimited(delimiter: str = ",", eol: str = "\n") -> str:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator=eol).writerows(ROWS)
    return buffer.getvalue()


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    return buffer.getvalue()


CSV = delimited().encode("utf-8")
RAW = pd.read_csv(io.BytesIO(CSV))

FORMATS = {
    "csv": CSV,
    "tsv": delimited("\t").encode(),
    "semicolon": delimited(";").encode(),
    "pipe": delimited("|").encode(),
    "csv-crlf": delimited(",", "\r\n").encode(),
    "utf8-bom": codecs.BOM_UTF8 + CSV,
    "utf16-le-bom": delimited().encode("utf-16"),  # Python writes the BOM of the machine's byte order
    "utf16-be-bom": codecs.BOM_UTF16_BE + delimited().encode("utf-16-be"),
    "gzip-csv": gzip.compress(CSV),
    "gzip-tsv": gzip.compress(delimited("\t").encode()),
    "parquet": parquet_bytes(RAW),
    "gzip-parquet": gzip.compress(parquet_bytes(RAW)),
}


@pytest.fixture(scope="module")
def reference() -> pd.DataFrame:
    frame = load_eval_log(CSV)
    # the reference itself must be right, or every format would agree on a wrong frame
    assert list(frame["model"]) == ["resnet", "resnet", "vit", "vit"]
    assert list(frame["example_id"]) == ["img-1", "img-2", "img-1", "img-2"]
    assert frame["correct"].tolist()[:3] == [1.0, 0.0, 1.0] and pd.isna(frame["correct"].iloc[3])
    assert frame["confidence"].tolist() == [0.91, 0.4, 0.85, 0.77]
    return frame


@pytest.mark.parametrize("name", list(FORMATS))
def test_every_format_gives_the_same_canonical_frame(name, reference):
    frame = load_eval_log(FORMATS[name])
    pd.testing.assert_frame_equal(frame, reference)
    assert report_of(frame) == report_of(reference)


@pytest.mark.parametrize("name", ["csv", "tsv", "semicolon", "utf8-bom", "utf16-le-bom", "gzip-csv", "parquet"])
def test_raw_table_keeps_values_and_clean_column_names(name):
    raw = read_table(FORMATS[name])
    assert list(raw.columns) == ROWS[0]  # no BOM glued to 'model', no stray whitespace
    assert raw["note"].tolist()[:3] == ["café", "b, c; d|e", "plain"]


@pytest.mark.parametrize(
    "wrap",
    [
        pytest.param(lambda data, tmp_path: data, id="bytes"),
        pytest.param(lambda data, tmp_path: bytearray(data), id="bytearray"),
        pytest.param(lambda data, tmp_path: memoryview(data), id="memoryview"),
        pytest.param(lambda data, tmp_path: io.BytesIO(data), id="binary-file-object"),
        pytest.param(lambda data, tmp_path: _write(tmp_path / "log.csv.gz", data), id="path"),
        pytest.param(lambda data, tmp_path: str(_write(tmp_path / "log.data", data)), id="str-path"),
        pytest.param(lambda data, tmp_path: _write(tmp_path / "log.csv.gz", data).open("rb"), id="open-file"),
    ],
)
@pytest.mark.parametrize("name", ["gzip-csv", "parquet"])
def test_every_kind_of_source_is_read(wrap, name, tmp_path, reference):
    source = wrap(FORMATS[name], tmp_path)
    try:
        pd.testing.assert_frame_equal(load_eval_log(source), reference)
    finally:
        if hasattr(source, "close"):
            source.close()


def _write(path, data):
    path.write_bytes(data)
    return path


def test_format_is_recognised_from_content_not_from_file_name(tmp_path, reference):
    path = _write(tmp_path / "results.parquet", FORMATS["gzip-tsv"])  # the name lies
    pd.testing.assert_frame_equal(load_eval_log(path), reference)


def test_text_file_object_is_accepted():
    frame = read_table(io.StringIO(delimited()))
    assert frame.shape == (4, 7)


# ---------------------------------------------------------------------------------------------------------------
# empty files


@pytest.mark.parametrize(
    "data, fragment",
    [
        pytest.param(b"", "The file is empty", id="zero-bytes"),
        pytest.param(b"  \n\t\r\n  ", "The file is empty", id="whitespace"),
        pytest.param(codecs.BOM_UTF8, "The file is empty", id="utf8-bom-only"),
        pytest.param(codecs.BOM_UTF16_LE + "\n \n".encode("utf-16-le"), "The file is empty", id="utf16-blank"),
        pytest.param(gzip.compress(b""), "compressed file is empty", id="gzip-of-nothing"),
        pytest.param(b"model,example_id,correct\n", "header but no data rows", id="header-only"),
        pytest.param(b"model,example_id,correct\r\n\r\n\r\n", "header but no data rows", id="header-blank-lines"),
        pytest.param(gzip.compress(b"model\tcorrect\n"), "header but no data rows", id="gzip-header-only"),
        pytest.param(parquet_bytes(RAW.iloc[:0]), "header but no data rows", id="parquet-no-rows"),
    ],
)
def test_empty_files_are_refused(data, fragment):
    with pytest.raises(EvalDataError, match=fragment):
        read_table(data)


# ---------------------------------------------------------------------------------------------------------------
# delimiter, encoding, ragged rows


def test_single_column_header_asks_to_check_the_delimiter():
    with pytest.raises(EvalDataError) as err:
        read_table(b"model example_id correct\nresnet 1 1\nvit 1 0\n")
    message = str(err.value)
    assert "Only one column" in message
    assert "'model example_id correct'" in message  # shows the header it saw
    assert "commas" in message and "tabs" in message and "delimiter" in message


def test_latin1_file_names_the_line_and_asks_for_utf8():
    data = "model,example_id,correct\nresnet,1,1\nresnet,caf\xe9,0\n".encode("latin-1")
    with pytest.raises(EvalDataError) as err:
        read_table(data)
    message = str(err.value)
    assert "not UTF-8" in message and "line 3" in message and "0xe9" in message
    assert "UTF-8 encoding" in message


def test_latin1_inside_gzip_is_refused_alike():
    with pytest.raises(EvalDataError, match="not UTF-8.*line 2"):
        read_table(gzip.compress("model,task\ncaf\xe9,x\n".encode("latin-1")))


@pytest.mark.parametrize(
    "data, fragments",
    [
        pytest.param(b"model,example_id,correct\nA,1,1\nA,2,1,5,6\nA,3,0\n",
                     ["Line 3 has 5 fields but the header has 3", "commas", "quoting"], id="extra-fields"),
        pytest.param(b"model,example_id,correct\nA,1,1\nB,2\nC,3,0\n",
                     ["Line 3 has 2 fields but the header has 3", "one value per column"], id="missing-field"),
        pytest.param(b"model\texample_id\tcorrect\nA\t1\t1\nB\t2\t1\t0\n",
                     ["Line 3 has 4 fields but the header has 3", "tabs"], id="tsv"),
        pytest.param(b'model,note,correct\nA,"x, y",1\nB,"z"\n',
                     ["Line 3 has 2 fields but the header has 3"], id="quoted-values"),
        pytest.param(b"model,example_id,correct\nA,1,1,x\nB,2,0,y\n",
                     ["Line 2 has 4 fields but the header has 3"], id="every-row-one-extra"),
        pytest.param(b"model,example_id,correct\r\nA,1,1\r\nB,2,0\r\nC,3\r\n",
                     ["Line 4 has 2 fields but the header has 3"], id="crlf"),
    ],
)
def test_ragged_rows_name_the_line_and_field_counts(data, fragments):
    with pytest.raises(EvalDataError) as err:
        read_table(data)
    for fragment in fragments:
        assert fragment in str(err.value)


def test_ragged_row_far_beyond_the_sniffed_sample_is_found():
    lines = ["model,example_id,correct"] + [f"m,{i},1" for i in range(3000)] + ["m,3000"]
    with pytest.raises(EvalDataError, match="Line 3002 has 2 fields but the header has 3"):
        read_table("\n".join(lines).encode())


def test_first_data_row_with_an_extra_value_does_not_shift_the_columns():
    # pandas alone would silently make the first column the index and shift every value one column left
    with pytest.raises(EvalDataError, match="Line 2 has 4 fields"):
        load_eval_log(b"model,example_id,correct\nA,1,1,0.3\nB,1,0,0.2\n")


def test_quoted_values_with_delimiters_and_line_breaks_are_one_field():
    data = b'model,note,correct\n"A","x, y",1\n"B","two\nlines, here",0\n'
    frame = read_table(data)
    assert frame["note"].tolist() == ["x, y", "two\nlines, here"]


def test_quoted_header_with_a_line_break_is_still_the_header():
    # found by hypothesis: a header that is one quoted field spanning two lines, then a row with two fields
    with pytest.raises(EvalDataError, match="has 2 fields but the header has 1"):
        read_table(b'",\n"\n,\x01')


def test_short_quoted_row_is_named_by_its_physical_line():
    # the quoted line break makes record 3 start on line 4
    data = b'model,note,correct\n"A","x, y",1\n"B","two\nlines",0\n"C","z"\n'
    with pytest.raises(EvalDataError, match="Line 5 has 2 fields but the header has 3"):
        read_table(data)


def test_trailing_delimiters_are_tolerated_without_shifting_columns():
    frame = read_table(b"model,example_id,correct\nA,1,1,\nB,2,0,\n")
    assert frame.to_dict("list") == {"model": ["A", "B"], "example_id": [1, 2], "correct": [1, 0]}


def test_unclosed_quote_names_its_line():
    with pytest.raises(EvalDataError, match="quoted value starting on line 2 is never closed"):
        read_table(b'model,correct\n"A,1\nB,0\n')


def test_blank_lines_are_skipped():
    frame = read_table(b"\nmodel,correct\n\nA,1\n   \nB,0\n\n")
    assert frame.to_dict("list") == {"model": ["A", "B"], "correct": [1, 0]}


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a,b,c\n1,2,3\n", ","),
        ("a\tb\tc\n1\t2\t3\n", "\t"),
        ("model;confidence\nA;0,5\nB;0,7\n", ";"),  # decimal commas do not fool it
        ("a|b\n1|2\n", "|"),
        ('model\tnote\tcorrect\nA\t"x, y, z"\t1\nB\t"p, q"\t0\n', "\t"),  # commas inside quotes do not count
        ('a,b\n"x ""quoted"" y",1\n', ","),
        ("a,b,c\n1,2\n1,2,3,4\n1\n", ","),  # ragged: the header's delimiter, so that the parser names the line
        ("model example_id\nA 1\n", None),
    ],
)
def test_sniff_delimiter(text, expected):
    assert sniff_delimiter(text) == expected


# ---------------------------------------------------------------------------------------------------------------
# files that are not tables


def _xlsx_bytes() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
    return buffer.getvalue()


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00\x1f\xf3\xffa"


@pytest.mark.parametrize(
    "data, fragment",
    [
        pytest.param(bytes(range(256)) * 4, "not a text table", id="random-binary"),
        pytest.param(PNG, "not a text table", id="png"),
        pytest.param(_xlsx_bytes(), "zip archive", id="xlsx"),
        pytest.param(b'[{"model": "A", "scores": {"acc": 1}}]', "nested values", id="json-nested"),
        pytest.param(b'{"model": "A", "choices": [1, 2]}\n{"model": "B", "choices": [3]}\n', "nested values",
                     id="json-lines-nested"),
        pytest.param(b'{"model": "A", "correct": 1}\n{"model": "B", "correct": \n', "Line 2 is not valid JSON",
                     id="json-lines-broken"),
        pytest.param(b'[1, 2, 3]', "looks like JSON", id="json-numbers"),
        pytest.param(b'[{"model": "A"}, 3]', "item 2 is a int", id="json-mixed"),
        pytest.param(b"<html><body><table><tr><td>a</td></tr></table></body></html>", "HTML", id="html"),
        pytest.param(gzip.compress(CSV)[:40], "gzip-compressed file is truncated", id="truncated-gzip"),
        pytest.param(FORMATS["parquet"][: len(FORMATS["parquet"]) // 2], "could not be read as Parquet",
                     id="truncated-parquet"),
        pytest.param(b"PAR1", "could not be read as Parquet", id="parquet-magic-only"),
    ],
)
def test_files_that_are_not_tables_are_refused(data, fragment):
    with pytest.raises(EvalDataError, match=fragment):
        read_table(data)


def test_xlsx_message_suggests_saving_as_csv():
    with pytest.raises(EvalDataError, match="Excel workbook.*save the sheet as CSV"):
        load_eval_log(_xlsx_bytes())


def test_parquet_with_invalid_utf8_strings_is_refused():
    # found by hypothesis: damaged string data used to fail later, deep inside pandas, with a UnicodeDecodeError
    frame = pd.DataFrame({"model": ["ZZZZ", "ZZZZ"], "example_id": [1, 2], "correct": [1, 0]})
    buffer = io.BytesIO()
    frame.to_parquet(buffer, compression=None, use_dictionary=False, write_statistics=False)
    data = buffer.getvalue().replace(b"ZZZZ", b"\xff\xfe\xfd\xfc")
    with pytest.raises(EvalDataError, match="could not be read as Parquet"):
        load_eval_log(data)


def test_parquet_with_damaged_pandas_metadata_is_refused_cleanly():
    # found by hypothesis: a damaged key in the pandas metadata raised a KeyError inside pyarrow
    table = pa.Table.from_pandas(pd.DataFrame({"model": ["A", "B"], "example_id": [1, 2], "correct": [1, 0]}))
    metadata = json.loads(table.schema.metadata[b"pandas"])
    for column in metadata["columns"]:
        del column["name"]
    buffer = io.BytesIO()
    pq.write_table(table.replace_schema_metadata({b"pandas": json.dumps(metadata).encode()}), buffer)
    with pytest.raises(EvalDataError, match="could not be read as Parquet"):
        load_eval_log(buffer.getvalue())


# ---------------------------------------------------------------------------------------------------------------
# sources that cannot be read


def test_missing_path_is_named(tmp_path):
    with pytest.raises(EvalDataError, match="No file at .*nowhere.csv.*check the path"):
        read_table(tmp_path / "nowhere.csv")


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(EvalDataError, match="No file at"):
        read_table(tmp_path)


def test_path_too_long_for_the_system_is_refused_cleanly():
    # an OSError (file name too long) used to escape
    with pytest.raises(EvalDataError, match="check the path"):
        read_table("x" * 5000 + ".csv")


def test_unsupported_source_type():
    with pytest.raises(EvalDataError, match="Cannot read a table from a int"):
        read_table(42)


def test_eval_data_error_is_a_value_error():
    assert issubclass(EvalDataError, ValueError)


def test_lone_carriage_returns_are_line_breaks():
    # found by hypothesis: old-Mac line endings; the parser and the ragged-row check must see the same lines
    frame = read_table(b"model,correct\rA,1\rB,0\r")
    assert frame.to_dict("list") == {"model": ["A", "B"], "correct": [1, 0]}
    read_table(b"\r,\x01\r,\x01")  # a blank first line, then a header and a row of two fields: no warning, no error


def test_values_beyond_the_header_are_an_error_not_a_silent_loss():
    # found by hypothesis: pandas would warn and drop the values past the header's columns
    with pytest.raises(EvalDataError, match="more values than the header has columns"):
        read_table(b'\x01""",\n,,\x01"')


def test_json_records_are_read_like_a_table(reference):
    records = [dict(zip(ROWS[0], row)) for row in ROWS[1:]]
    for record in records:
        record["correct"] = int(record["correct"]) if record["correct"] else None
        record["confidence"] = float(record["confidence"])
    lines = "\n".join(json.dumps(r) for r in records).encode()
    for data in (lines, json.dumps(records).encode(), gzip.compress(lines)):
        frame = load_eval_log(data)
        pd.testing.assert_frame_equal(frame.reset_index(drop=True), reference.reset_index(drop=True),
                                      check_dtype=False)
