"""A corpus of hostile files, generated here (nothing large is committed), read through the bounded worker.

Every file must end in one of two ways within the worker's memory and time bounds: a canonical frame, or an
EvalDataError whose message names the problem (and, for a limit, the limit and how to raise it). A worker that
runs out of memory or time is a failure of the reader's own limits, so the bounds here are tight.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import lzma
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import crafted
from crafted import column_metas, patch_parquet, row_groups, set_field
from evalcore.data.validation import EvalDataError, load_eval_log, read_and_validate, report_of, validate
from evalcore.importers.archive import zip_members
from evalcore.data.limits import MB, Budget, ReadLimits
from evalcore.data.reading import read_table
from evalcore.data.sandbox import WorkLimits, run_bounded

BZIP2_BOMB = Path(__file__).resolve().parents[1] / "data" / "bzip2-bomb-240MB.csv.bz2"
GOOD = b"model,example_id,correct,confidence\na,q1,1,0.9\na,q2,0,0.4\nb,q1,1,0.8\nb,q2,1,0.7\n"
BOUNDS = WorkLimits(memory_bytes=1536 * MB, seconds=90, workers=2)


def gzip_stream(line: bytes, repeats: int, chunk: int = 1 << 16) -> bytes:
    """gzip of ``line * repeats`` without holding the expanded bytes."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = line * (chunk // len(line))
    out = [compressor.compress(block) for _ in range(repeats * len(line) // len(block))]
    return b"".join(out) + compressor.flush()


def parquet(frame: pd.DataFrame | pa.Table, **kwargs) -> bytes:
    buffer = io.BytesIO()
    table = frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
    pq.write_table(table, buffer, **kwargs)
    return buffer.getvalue()


def many_columns(n: int) -> bytes:
    return (",".join(f"c{i}" for i in range(n)) + "\n" + ",".join("1" for _ in range(n)) + "\n").encode()


REFUSED = {
    # name: (bytes factory, fragments of the message)
    "gzip-bomb-60M-rows": (lambda: gzip_stream(b"a,1\n", 60_000_000),
                           ["expands beyond 200 MB", "EVALCORE_MAX_FILE_MB"]),
    "gzip-52M-short-rows": (lambda: gzip_stream(b"a,1\n", 52_000_000),
                            ["rows; evalcore reads at most 10,000,000", "EVALCORE_MAX_ROWS"]),
    # bz2.compress(b"a,1\n" * 60_000_000): one 12 KB bzip2 stream of 240 MB, kept as a file because compressing it
    # took half a minute of every run (test_bzip2_bomb_file_is_one_stream checks what it holds)
    "bzip2-bomb": (lambda: BZIP2_BOMB.read_bytes(), ["bzip2", "expands beyond 200 MB"]),
    "xz-bomb": (lambda: lzma.compress(b"a,1\n" * 60_000_000), ["xz", "expands beyond 200 MB"]),
    "gzip-in-gzip-bomb": (lambda: gzip.compress(gzip_stream(b"a,1\n", 60_000_000)), ["expands beyond 200 MB"]),
    "five-layers-of-gzip": (lambda: _layers(GOOD, 5), ["compressed more than 3 times"]),
    "zstd": (lambda: b"\x28\xb5\x2f\xfd" + b"\x00" * 64, ["zstd", "gzip instead"]),
    "100k-columns": (lambda: many_columns(100_000), ["100,000 columns", "at most 2,000", "EVALCORE_MAX_COLUMNS"]),
    "5MB-line-of-commas": (lambda: b"model,correct\n" + b"," * (5 * MB) + b"\n", ["Line 2", "bytes long",
                                                                                  "EVALCORE_MAX_LINE_KB"]),
    "5MB-header-of-commas": (lambda: b"," * (5 * MB) + b"\na,1\n", ["Line 1", "bytes long"]),
    "2MB-quoted-value-over-lines": (lambda: b'model,correct\n"' + b"x\n" * MB + b'",1\n',
                                    ["quoted value starting on line 2", "bytes long"]),
    "duplicate-header": (lambda: b"model,model,correct\na,b,1\n", ["unique", "'model'"]),
    "duplicate-header-after-trimming": (lambda: b"model, model ,correct\na,b,1\n", ["unique", "'model'"]),
    "nul-in-a-value": (lambda: b"model,correct\na\x00b,1\nc,0\n", ["Line 2", "NUL byte"]),
    "truncated-gzip": (lambda: gzip.compress(GOOD * 50)[:60], ["truncated"]),
    "gzip-with-trailing-garbage": (lambda: gzip.compress(GOOD) + b"garbage", ["other data after its end"]),
    "parquet-3000-columns": (lambda: parquet(pd.DataFrame({f"c{i}": [1] for i in range(3000)})),
                             ["3,000 columns", "at most 2,000"]),
    "parquet-duplicate-names": (lambda: parquet(pa.table([pa.array(["a"]), pa.array(["b"]), pa.array([1])],
                                                         names=["model", "model", "correct"])),
                                ["unique", "model"]),
    "damaged-parquet": (lambda: _damaged_parquet(), ["could not be read as Parquet", "damaged"]),
    "random-bytes": (lambda: np.random.default_rng(0).bytes(100_000), ["binary"]),
    "html": (lambda: b"<html><body>" + b"<p>x</p>" * 1000 + b"</body></html>", ["HTML"]),
    # Parquet metadata that lies (issue 23): refused from the footer and page headers, before pyarrow allocates
    "parquet-row-group-claims-1e12-rows": (lambda: crafted.lying_row_group(10**12),
                                           ["Row group 1 of the Parquet file states 1,000,000,000,000 rows",
                                            "at most 10,000,000", "EVALCORE_MAX_ROWS"]),
    "parquet-row-group-claims-11M-rows": (lambda: crafted.lying_row_group(11_000_000),
                                          ["Row group 1", "11,000,000 rows", "EVALCORE_MAX_ROWS"]),
    "parquet-row-groups-disagree-with-the-file": (lambda: crafted.lying_row_group(500),
                                                  ["could not be read as Parquet", "contradicts itself"]),
    "parquet-negative-row-count": (lambda: crafted.lying_row_group(-5), ["could not be read as Parquet"]),
    "parquet-column-chunk-claims-1TB": (lambda: _lying_footer(lambda meta: [
        set_field(c, crafted.META_UNCOMPRESSED, 2**40) for c in column_metas(meta)]),
        ["column chunks state", "more than the 200 MB", "EVALCORE_MAX_FILE_MB"]),
    "parquet-row-group-claims-1TB": (lambda: _lying_footer(lambda meta: set_field(
        row_groups(meta)[0], crafted.GROUP_TOTAL_BYTE_SIZE, 2**40)), ["row groups state", "EVALCORE_MAX_FILE_MB"]),
    "parquet-page-claims-2GiB": (lambda: crafted.lying_pages("uncompressed_page_size"),
                                 ["2,048 MB", "page headers state", "EVALCORE_MAX_FILE_MB"]),
    "parquet-pages-claim-300MB-together": (lambda: crafted.lying_pages("uncompressed_page_size", 100 * MB),
                                           ["page headers state", "EVALCORE_MAX_FILE_MB"]),
    "parquet-page-claims-2G-values": (lambda: crafted.lying_pages("num_values"), ["could not be read as Parquet"]),
    "parquet-dictionary-expands-to-300MB": (lambda: _dictionary_bomb(300_000, 1024),
                                            ["once decoded", "more than the 200 MB", "EVALCORE_MAX_FILE_MB"]),
    "parquet-nested-column": (lambda: parquet(pa.table({"model": ["a", "b"], "correct": [1, 0],
                                                         "tags": [["x"], ["y", "z"]]})),
                              ["Column 'tags'", "nested values"]),
    # JSON Lines: the line limit applies as to CSV
    "json-lines-2MB-line": (lambda: b'{"model": "a", "correct": 1}\n{"model": "b", "correct": 0, "note": "'
                            + b"x" * (2 * MB) + b'"}\n', ["Line 2 is 2,097,", "bytes long", "EVALCORE_MAX_LINE_KB"]),
}


def _lying_footer(change) -> bytes:
    return patch_parquet(crafted.parquet_bytes(crafted.small_log()), footer=change)


def _dictionary_bomb(rows: int, width: int) -> bytes:
    """An honest Parquet file of ``rows`` rows whose 'note' repeats one ``width``-byte value: the dictionary
    stores it once (a few KB of file), the decoded column holds it ``rows`` times."""
    note = pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, np.int32)), pa.array(["v" * width]))
    table = pa.table({"model": pa.DictionaryArray.from_arrays(pa.array(np.arange(rows, dtype=np.int32) % 2),
                                                              pa.array(["a", "b"])),
                      "correct": pa.array(np.arange(rows) % 2), "note": note})
    return parquet(table, store_schema=False)  # without the stored schema pyarrow decodes text in full


def _layers(data: bytes, n: int) -> bytes:
    for _ in range(n):
        data = gzip.compress(data)
    return data


def _damaged_parquet() -> bytes:
    data = bytearray(parquet(pd.DataFrame({"model": ["a", "b"] * 50, "correct": [1, 0] * 50})))
    data[200:260] = b"\xff" * 60
    return bytes(data)


def test_bzip2_bomb_file_is_one_stream():
    """The committed bzip2 bomb is what REFUSED says: one bzip2 stream of b"a,1\\n" * 60,000,000 (240 MB)."""
    data = BZIP2_BOMB.read_bytes()
    assert len(data) < 20_000
    decompressor, expanded, line = bz2.BZ2Decompressor(), 0, b"a,1\n" * (2**20 // 4)
    while not decompressor.eof:
        piece = decompressor.decompress(data if expanded == 0 else b"", 2**20)
        assert piece and piece == line[:len(piece)]
        expanded += len(piece)
    assert expanded == 240_000_000 and decompressor.unused_data == b""


@pytest.mark.parametrize("name", list(REFUSED))
def test_hostile_file_is_refused_with_a_clear_message_within_bounds(name):
    make, fragments = REFUSED[name]
    with pytest.raises(EvalDataError) as caught:
        run_bounded(read_and_validate, make(), limits=BOUNDS)
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    for internal in ("Traceback", "__fragment_index", "pyarrow.lib", "ArrowInvalid", "needed more than",
                     "took longer than"):
        assert internal not in message, message


ACCEPTED = {
    "double-gzip": lambda: gzip.compress(gzip.compress(GOOD)),
    "gzip-members-concatenated": lambda: gzip.compress(GOOD) + gzip.compress(GOOD[GOOD.index(b"\n") + 1:]
                                                                             .replace(b"q", b"r")),
    "bzip2": lambda: bz2.compress(GOOD),
    "xz": lambda: lzma.compress(GOOD),
    "gzip-of-bzip2": lambda: gzip.compress(bz2.compress(GOOD)),
    "utf16-le-without-bom": lambda: GOOD.decode().encode("utf-16-le"),
    "utf16-be-without-bom": lambda: GOOD.decode().encode("utf-16-be"),
    "utf16-with-bom": lambda: GOOD.decode().encode("utf-16"),
    "1999-columns": lambda: GOOD.replace(b"\n", b"," + b",".join(b"%d" % i for i in range(1995)) + b"\n", 1)
    .replace(b"0.9\n", b"0.9" + b",1" * 1995 + b"\n").replace(b"0.4\n", b"0.4" + b",1" * 1995 + b"\n")
    .replace(b"0.8\n", b"0.8" + b",1" * 1995 + b"\n").replace(b"0.7\n", b"0.7" + b",1" * 1995 + b"\n"),
}


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_unusual_but_valid_files_are_read(name):
    table = run_bounded(read_and_validate, ACCEPTED[name](), limits=BOUNDS)
    assert table.problem is None, table.problem
    frame = table.frame
    assert sorted(frame["model"].unique()) == ["a", "b"]
    assert frame["correct"].notna().all()


def test_concatenated_members_are_one_table():
    frame = read_table(ACCEPTED["gzip-members-concatenated"]())
    assert list(frame["example_id"]) == ["q1", "q2", "q1", "q2", "r1", "r2", "r1", "r2"]


def test_utf16_without_bom_gives_the_same_table_as_utf8():
    expected = read_table(GOOD)
    for name in ("utf16-le-without-bom", "utf16-be-without-bom"):
        pd.testing.assert_frame_equal(read_table(ACCEPTED[name]()), expected)


# ---------------------------------------------------------------------------------------------------------------
# limits are configurable, and every refusal says how


def test_limits_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("EVALCORE_MAX_COLUMNS", "3")
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "1")
    monkeypatch.setenv("EVALCORE_MAX_LINE_KB", "2")
    monkeypatch.setenv("EVALCORE_MAX_ROWS", "5")
    assert ReadLimits.from_env() == ReadLimits(max_bytes=MB, max_rows=5, max_columns=3, max_line_bytes=2048)
    with pytest.raises(EvalDataError, match="6 rows; evalcore reads at most 5"):
        read_table(b"a,b\n" + b"1,2\n" * 6)
    with pytest.raises(EvalDataError, match="4 columns; evalcore reads at most 3"):
        read_table(b"a,b,c,d\n1,2,3,4\n")
    with pytest.raises(EvalDataError, match="larger than 1 MB"):
        read_table(b"a,b\n" + b"1,2\n" * 300_000)
    with pytest.raises(EvalDataError, match="Line 2 is 3,002 bytes long"):
        read_table(b"a,b\n" + b"x" * 3000 + b",1\n")


def test_bad_environment_values_fall_back_to_the_defaults(monkeypatch):
    monkeypatch.setenv("EVALCORE_MAX_COLUMNS", "lots")
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "-5")
    assert ReadLimits.from_env() == ReadLimits()


def test_explicit_limits_can_raise_the_bound():
    data = many_columns(2500)
    with pytest.raises(EvalDataError, match="2,500 columns"):
        read_table(data)
    assert read_table(data, ReadLimits(max_columns=3000)).shape == (1, 2500)


def test_a_line_exactly_at_the_limit_is_read():
    limits = ReadLimits(max_line_bytes=100)
    line = b"a," + b"x" * 98  # 100 bytes
    assert read_table(b"m,v\n" + line + b"\n", limits).shape == (1, 2)
    with pytest.raises(EvalDataError, match="101 bytes long"):
        read_table(b"m,v\n" + line + b"y\n", limits)


def test_parquet_with_more_rows_than_the_limit_allows_is_refused_before_reading():
    bomb = parquet(pa.table({"model": pa.array(["a"] * 600_000), "correct": pa.array([1] * 600_000)}))
    assert len(bomb) < 100_000  # run-length encoded: a few KB
    with pytest.raises(EvalDataError, match="600,000 rows; evalcore reads at most 1,000"):
        read_table(bomb, ReadLimits(max_rows=1000))


def test_file_objects_are_read_only_up_to_the_limit():
    class Endless(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, buffer):
            buffer[:] = b"1" * len(buffer)
            return len(buffer)

    with pytest.raises(EvalDataError, match="larger than 1 MB"):
        read_table(io.BufferedReader(Endless()), ReadLimits(max_bytes=MB))


def test_paths_larger_than_the_limit_are_refused_without_reading(tmp_path):
    path = tmp_path / "big.csv"
    with open(path, "wb") as handle:
        handle.truncate(2 * MB)  # sparse: nothing is written
    with pytest.raises(EvalDataError, match="larger than 1 MB"):
        read_table(path, ReadLimits(max_bytes=MB))


# ---------------------------------------------------------------------------------------------------------------
# the fast parser and the diagnosed one agree


CASES = [
    b"model,correct,confidence\na,1,0.5\nb,,0.25\n",
    b"model,task,correct\na,2024-01-01,1\nb,2024-01-02,0\n",           # dates stay text
    b"model,when,correct\na,2024-01-01T10:00:00,1\nb,10:00,0\n",
    b"model,correct,note\na,1,NA\nb,0,null\nc,1,N/A\n",                  # pandas' missing markers
    b"model,correct,x\na,1,\nb,0,\n",                                     # an empty column is numeric NaN
    b'model,correct,note\na,1,"x, y"\nb,0,"say ""hi"""\n',
    b"model,correct,flag\na,1,true\nb,0,False\n",
    b"model,correct,id\n" + b"".join(b"m,1,%d\n" % i for i in range(70_000)) + b"m,1,text\n",  # text far down
]


@pytest.mark.parametrize("data", CASES, ids=range(len(CASES)))
def test_fast_parse_equals_the_diagnosed_parse(data):
    from evalcore.data import reading

    limits = ReadLimits()
    names = reading._header(data, ",", limits)
    fast = reading._parse_fast(data, ",", names)
    assert fast is not None
    slow = reading._parse_diagnosed(data, ",", limits)
    pd.testing.assert_frame_equal(fast.astype(object).where(fast.notna(), None),
                                  slow.astype(object).where(slow.notna(), None), check_dtype=False)


def test_ragged_files_fall_back_to_the_diagnosis_and_name_the_line():
    with pytest.raises(EvalDataError, match="Line 3 has 1 field but the header has 2"):
        read_table(b"a,b\n1,2\n3\n4,5\n")


# ---------------------------------------------------------------------------------------------------------------
# validation: messages that were wrong or missing


def test_all_independent_problems_are_reported_together():
    data = (b"model,example_id,correct,confidence,weight\n"
            b"a,q1,2,1.5,1\n"
            b"a,q2,1,0.5,-1\n"
            b"b,q1,1,0.5,1\n")
    with pytest.raises(EvalDataError) as caught:
        load_eval_log(data)
    message = str(caught.value)
    assert message.startswith("3 problems with this table")
    for fragment in ("'correct' must be 0 or 1", "'confidence' must lie in [0, 1]", "'weight' must be positive"):
        assert fragment in message


def test_a_probability_a_rounding_error_above_one_is_clipped_and_noted():
    frame = load_eval_log(b"model,correct,confidence\na,1,1.0000001\nb,0,0.3\n")
    assert frame["confidence"].tolist() == [1.0, 0.3]
    assert any("clipped to [0, 1]" in n and "1e-07" in n for n in report_of(frame).notes)


def test_a_probability_clearly_above_one_is_refused_without_the_percentage_hint():
    with pytest.raises(EvalDataError) as caught:
        load_eval_log(b"model,correct,confidence\na,1,1.01\nb,0,0.3\n")
    assert "1.01" in str(caught.value) and "percentages" not in str(caught.value)
    with pytest.raises(EvalDataError, match="percentages"):
        load_eval_log(b"model,correct,confidence\na,1,91\nb,0,30\n")


def test_the_mapping_can_leave_out_a_column_named_after_a_role():
    data = b"model,example_id,category,correct\na,q1,x,1\nb,q1,y,0\n"
    frame = load_eval_log(data, mapping={"category": None})
    assert set(frame["category"]) == {"all"} and "category" not in report_of(frame).mapping
    assert any("left out by the column mapping: 'category'" in n for n in report_of(frame).notes)
    with pytest.raises(EvalDataError, match="leaves out a column 'nope'"):
        load_eval_log(data, mapping={"nope": None})


def test_names_differing_only_by_invisible_characters_are_flagged():
    data = "model,example_id,correct\ngpt-4,q1,1\ngpt-4 ,q2,0\ngpt\u200b-4,q3,1\nclaude,q1,1\n\u00a0,q2,1\n"
    frame = load_eval_log(data.encode())
    warnings = report_of(frame).warnings
    assert any("differ only by surrounding whitespace or invisible characters" in w and "'gpt-4 '" in w
               for w in warnings), warnings
    assert any("blank names" in w for w in warnings), warnings
    assert report_of(load_eval_log(GOOD)).warnings == ()


def test_nul_in_a_name_from_parquet_is_refused():
    data = parquet(pd.DataFrame({"model": ["a\x00b", "c"], "correct": [1, 0]}))
    with pytest.raises(EvalDataError, match="'model' contains a NUL byte.*row 1"):
        load_eval_log(data)


def test_utf16_bom_detection_does_not_misfire_on_binary():
    with pytest.raises(EvalDataError, match="binary"):
        read_table(codecs.BOM_UTF8 + bytes(range(256)) * 8)


# ---------------------------------------------------------------------------------------------------------------
# Parquet: the metadata's claims are checked, honest files read as before


@pytest.mark.parametrize("options", [{}, {"compression": "zstd", "data_page_size": 64, "write_statistics": True},
                                     {"use_dictionary": False, "compression": "gzip", "row_group_size": 100}],
                         ids=["default", "small-pages-with-statistics", "plain-many-row-groups"])
def test_honest_parquet_files_read_as_pyarrow_reads_them(options):
    table = crafted.small_log(777)
    buffer = io.BytesIO()
    pq.write_table(table, buffer, **options)
    pd.testing.assert_frame_equal(read_table(buffer.getvalue()), table.to_pandas())


def test_page_headers_rewritten_unchanged_still_read():
    data = crafted.parquet_bytes(crafted.small_log(777), data_page_size=64)
    assert read_table(patch_parquet(data)).shape == (777, 3)


def test_row_groups_are_added_up_against_the_row_limit():
    data = crafted.parquet_bytes(crafted.small_log(1200), row_group_size=600)
    assert len(row_groups(crafted.decode_struct(data[-8 - int.from_bytes(data[-8:-4], "little"):-8])[0])) == 2
    lying = patch_parquet(data, footer=lambda meta: set_field(meta, crafted.FILE_NUM_ROWS, 600))
    with pytest.raises(EvalDataError, match="row groups state 1,200 rows; evalcore reads at most 1,000"):
        read_table(lying, ReadLimits(max_rows=1000))
    assert read_table(data, ReadLimits(max_rows=1200)).shape == (1200, 3)


def test_a_dictionary_is_measured_decoded_before_it_is_decoded():
    data = _dictionary_bomb(2000, 1000)
    assert len(data) < 20_000
    # text once decoded (2,000 x 1,000 bytes of 'note', 2,000 x 1 of 'model'), two indices and an int64 a row
    decoded = 2000 * 1000 + 2000 * 1 + 2000 * (4 + 4 + 8)
    with pytest.raises(EvalDataError, match=r"values take 1\.9 MB once decoded"):
        read_table(data, ReadLimits(max_bytes=decoded - 1))
    assert read_table(data, ReadLimits(max_bytes=decoded))["note"].str.len().sum() == 2_000_000


def test_a_lying_page_header_costs_no_allocation():
    import tracemalloc

    data = crafted.lying_pages("uncompressed_page_size", 1_500_000_000)
    tracemalloc.start()
    with pytest.raises(EvalDataError, match="page headers state"):
        read_table(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 10 * MB


# ---------------------------------------------------------------------------------------------------------------
# archives and several files: one budget for everything a load expands to


def test_an_eval_log_of_gzipped_members_is_bounded_in_total():
    data = crafted.inspect_sample_bomb(12, 5 * MB)  # 60 MB in all, 5 MB a member
    assert len(data) < 100_000
    with pytest.raises(EvalDataError) as caught:
        run_bounded(read_and_validate, ("run.eval", data), None, None, ReadLimits(max_bytes=20 * MB), limits=BOUNDS)
    message = str(caught.value)
    for fragment in ("run.eval/samples/", "expands beyond", "what is left of the 20 MB", "EVALCORE_MAX_FILE_MB",
                     "max_bytes"):
        assert fragment in message, message


def test_several_files_and_a_folder_share_one_budget(tmp_path):
    log = b"model,example_id,correct\n" + b"".join(b"m%d,q%d,1\n" % (i % 2, i) for i in range(400_000))
    assert 4 * MB < len(log) < 6 * MB
    files = [(f"part{i}.csv.gz", gzip.compress(log, 1)) for i in range(3)]
    limits = ReadLimits(max_bytes=12 * MB)
    assert read_table(files[0][1], limits).shape == (400_000, 3)  # each file alone fits
    with pytest.raises(EvalDataError, match=r"part2\.csv\.gz: The gzip-compressed file expands beyond .* what is "
                                            r"left of the 12 MB"):
        read_and_validate(files, limits=limits)
    (tmp_path / "run").mkdir()
    for name, data in files:
        (tmp_path / "run" / name).write_bytes(data)
    with pytest.raises(EvalDataError, match=r"run/part2\.csv\.gz: .*expands beyond"):
        read_and_validate(tmp_path / "run", limits=limits)


def test_a_zip_member_inflating_past_its_stated_size_is_read_in_bounded_chunks():
    import tracemalloc

    deflated, crc = crafted.deflated_member(300 * MB, b"a")
    data = crafted.raw_zip([("run.csv", deflated, 100, crc)])  # states 100 bytes, inflates to 300 MB
    tracemalloc.start()
    with pytest.raises(EvalDataError, match="member 'run.csv' cannot be read.*does not match the size and checksum"):
        zip_members(data, "run.zip", Budget(ReadLimits()))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 32 * MB  # ZipFile.read would hold 300 MB before cutting it to 100 bytes


def test_a_zstandard_zip_member_is_read_in_bounded_chunks_and_checked():
    import tracemalloc

    import zstandard

    compressor = zstandard.ZstdCompressor().compressobj()
    block = b"a" * MB
    bomb = b"".join(compressor.compress(block) for _ in range(300)) + compressor.flush()  # 300 MB expanded
    data = crafted.raw_zip([("run.csv", bomb, 100, zlib.crc32(b"a" * 100))], method=93)  # states 100 bytes
    tracemalloc.start()
    with pytest.raises(EvalDataError, match=r"member 'run\.csv' cannot be read.*101 bytes.*where the zip states "
                                            r"100 bytes"):
        zip_members(data, "run.zip", Budget(ReadLimits()))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 32 * MB
    good = crafted.zstd_zip({"run.csv": GOOD})
    assert zip_members(good, "run.zip", Budget(ReadLimits()))[0].data == GOOD
    wrong_crc = crafted.raw_zip([("run.csv", zstandard.ZstdCompressor().compress(GOOD), len(GOOD), 7)], method=93)
    with pytest.raises(EvalDataError, match=r"member 'run\.csv' cannot be read.*where the zip states .* 00000007"):
        zip_members(wrong_crc, "run.zip", Budget(ReadLimits()))
    damaged = bytearray(good)
    damaged[40:48] = b"\xff" * 8  # inside the member's compressed frame
    with pytest.raises(EvalDataError, match=r"member 'run\.csv' cannot be read"):
        zip_members(bytes(damaged), "run.zip", Budget(ReadLimits()))


def test_a_zip_member_stating_more_than_the_budget_is_refused_before_reading():
    deflated, crc = crafted.deflated_member(1000, b"a")
    data = crafted.raw_zip([("run.csv", deflated, 2**31, crc)])
    with pytest.raises(EvalDataError, match="run.zip: expands beyond 200 MB"):
        zip_members(data, "run.zip", Budget(ReadLimits()))


def test_a_zip_member_stops_where_the_members_before_it_left_the_budget():
    gzipped = crafted.gzip_of(8 * MB)  # a few KB in the zip, 8 MB once expanded
    deflated, crc = crafted.deflated_member(5 * MB, b"a")
    raw_deflate = zlib.compress(gzipped)[2:-4]  # without zlib's header and checksum
    data = crafted.raw_zip([("a.csv.gz", raw_deflate, len(gzipped), zlib.crc32(gzipped)),
                            ("b.csv", deflated, 5 * MB, crc)])
    budget = Budget(ReadLimits(max_bytes=10 * MB))
    with pytest.raises(EvalDataError, match=r"^run\.zip/b\.csv: expands beyond 10 MB after decompression \(with the "
                                            r"8 MB read before it\)"):
        zip_members(data, "run.zip", budget)
    assert budget.used == 8 * MB


def test_bzip2_members_of_a_zip_are_refused():
    buffer = io.BytesIO()
    with __import__("zipfile").ZipFile(buffer, "w", __import__("zipfile").ZIP_BZIP2) as archive:
        archive.writestr("run.csv", GOOD)
    with pytest.raises(EvalDataError, match="member 'run.csv' is compressed with bzip2 or LZMA"):
        zip_members(buffer.getvalue(), "run.zip", Budget(ReadLimits()))


# ---------------------------------------------------------------------------------------------------------------
# JSON Lines: the line limit in the reader and in every importer


@pytest.mark.parametrize("name", ["lm_eval/samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl",
                                  "openai_evals/230417220821DPM75QNS_auto_gpt_completion_fn_test-match.jsonl",
                                  "mt_bench/gpt-4_single-origin.jsonl"])
def test_tools_json_lines_obey_the_line_limit(shared_file, name):
    path = shared_file(f"ecosystem/{name}")
    lengths = [len(line) for line in path.read_bytes().split(b"\n")]
    longest = max(lengths)
    assert len(load_eval_log(path, limits=ReadLimits(max_line_bytes=longest))) > 0
    with pytest.raises(EvalDataError) as caught:
        load_eval_log(path, limits=ReadLimits(max_line_bytes=longest - 1))
    assert str(caught.value).startswith(f"{path.name}: Line {lengths.index(longest) + 1} is {longest:,} bytes long")
    assert "EVALCORE_MAX_LINE_KB" in str(caught.value)


def test_promptfoo_json_lines_obey_the_line_limit():
    import json

    results = [{"provider": {"id": "m"}, "testIdx": i, "promptIdx": 0, "success": True, "score": 1} for i in range(3)]
    results[1]["output"] = "x" * 5000
    data = b"\n".join(json.dumps(r).encode() for r in results) + b"\n"
    assert len(load_eval_log(("results.jsonl", data), limits=ReadLimits(max_line_bytes=6000))) == 3
    with pytest.raises(EvalDataError, match=r"^results\.jsonl: Line 2 is 5,09\d bytes long"):
        load_eval_log(("results.jsonl", data), limits=ReadLimits(max_line_bytes=4000))


# ---------------------------------------------------------------------------------------------------------------
# distinct models, tasks and groups


LOG = pd.DataFrame({"model": ["a", "b", "c", "a"], "example_id": ["1", "1", "1", "2"], "task": ["t", "u", "v", "t"],
                    "group": ["g", "h", "i", "g"], "correct": [1, 0, 1, 0]})


@pytest.mark.parametrize("field, role, what", [("max_models", "model", "models"), ("max_tasks", "task", "tasks"),
                                               ("max_groups", "group", "groups")])
def test_distinct_names_are_bounded_in_validation(field, role, what):
    assert len(validate(LOG, limits=ReadLimits(**{field: 3}))) == 4
    with pytest.raises(EvalDataError) as caught:
        validate(LOG, limits=ReadLimits(**{field: 2}))
    message = str(caught.value)
    assert message.startswith(f"Column '{role}' holds 3 distinct {what}; evalcore handles at most 2 ({field.replace('max_', 'limit max_')})")
    assert f"EVALCORE_MAX_{what.upper()}" in message and f"ReadLimits({field}=" in message


def test_a_million_models_are_refused_in_the_worker_before_any_view():
    data = b"model,example_id,correct\n" + b"".join(b"m%d,q,%d\n" % (i, i % 2) for i in range(1_000_000))
    table = run_bounded(read_and_validate, data, limits=BOUNDS)
    assert table.frame is None and table.n_rows == 1_000_000
    for fragment in ("Column 'model' holds 1,000,000 distinct models", "at most 1,000", "EVALCORE_MAX_MODELS"):
        assert fragment in table.problem, table.problem


def test_battles_count_the_models_of_both_sides_together():
    battles = pd.DataFrame({"model_a": ["a", "b", "c"], "model_b": ["b", "c", "d"], "outcome": [1, 0, 1]})
    assert len(validate(battles, limits=ReadLimits(max_models=4))) == 3
    with pytest.raises(EvalDataError, match="Columns 'model_a' and 'model_b' hold 4 distinct models"):
        validate(battles, limits=ReadLimits(max_models=3))


def test_summaries_bound_models_and_tasks():
    summary = pd.DataFrame({"model": ["a", "b"], "task": ["t", "u"], "n": [10, 10], "n_correct": [3, 4]})
    with pytest.raises(EvalDataError, match="Column 'task' holds 2 distinct tasks"):
        validate(summary, limits=ReadLimits(max_tasks=1))


def test_name_limits_come_from_the_environment(monkeypatch, tmp_path):
    from evalcore.engine import scan

    monkeypatch.setenv("EVALCORE_MAX_MODELS", "2")
    monkeypatch.setenv("EVALCORE_MAX_TASKS", "7")
    monkeypatch.setenv("EVALCORE_MAX_GROUPS", "8")
    assert ReadLimits.from_env() == ReadLimits(max_models=2, max_tasks=7, max_groups=8)
    with pytest.raises(EvalDataError, match="'model' holds 3 distinct models; evalcore handles at most 2"):
        load_eval_log(LOG.to_csv(index=False).encode())
    path = tmp_path / "log.csv"
    LOG.to_csv(path, index=False)
    with pytest.raises(EvalDataError, match=r"log\.csv: Column 'model' holds 3 distinct models.*EVALCORE_MAX_MODELS"):
        scan(path)
    monkeypatch.setenv("EVALCORE_MAX_MODELS", "3")
    assert scan(path).n_rows == 4


def test_the_engine_estimates_far_from_the_limit_and_counts_near_it(monkeypatch, tmp_path):
    from evalcore.engine import scan

    monkeypatch.setenv("EVALCORE_MAX_MODELS", "1000")
    path = tmp_path / "log.csv"
    for n_models, refused in ((1000, None), (1001, "holds 1,001 distinct"), (50_000, "holds about ")):
        pd.DataFrame({"model": [f"m{i}" for i in range(n_models)], "example_id": "q", "correct": 1}).to_csv(
            path, index=False)
        if refused is None:
            assert scan(path).n_rows == n_models
        else:
            with pytest.raises(EvalDataError, match=refused):
                scan(path)
