"""Bounded JSON (issue 38): a few kilobytes of compressed JSON cannot become gigabytes of objects.

The hostile files are the issue's: an 18 KB Inspect ``.eval`` whose one Zstandard member holds 190 MB of
``[{},{},...]`` (5 GB through ``load_eval_log`` before), a ``.json.gz`` of the same, and a ``.jsonl.gz`` of lines
of ``[[],[],...]`` each under 1 MB. They are built streaming (small on disk and in the test's memory) and read in
a child whose resident memory is watched (:func:`crafted.run_watched`): through the command line (the bounded
worker) and through the Python API in-process, each refused under 1 GB with a message naming the file, the limit
and ``EVALCORE_MAX_JSON_VALUES``.
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from pathlib import Path

import pytest

from evalcore.data import bounded_json
from evalcore.data.limits import MB, Budget, ReadLimits
from evalcore.data.validation import load_eval_log, load_eval_logs
from evalcore.errors import EvalDataError
import crafted

ROOT = Path(__file__).resolve().parents[2]
ECOSYSTEM = ROOT / "tests" / "data" / "ecosystem27"
HOSTILE_BYTES = 190 * MB
#: what reading a hostile file may take at its peak, the interpreter and evalcore's imports included
MEMORY_BOUND = 1024 * MB
HEADER = json.dumps({"version": 2, "status": "success",
                     "eval": {"task": "t", "model": "m/x", "scorers": [{"name": "match"}]},
                     "results": {"total_samples": 1, "completed_samples": 1, "scores": []}}).encode()


def _pieces(unit: bytes, size: int, first: bytes, last: bytes):
    """``first + unit * n + last`` of about ``size`` bytes, in 3 MB pieces."""
    block = unit * (3 * MB // len(unit))
    yield first
    for _ in range(size // len(block)):
        yield block
    yield last


def eval_bomb() -> bytes:
    """An Inspect ``.eval`` zip whose one sample member is 190 MB of ``[{},{},...]``, Zstandard-compressed."""
    import zstandard

    compressor, crc, size, parts = zstandard.ZstdCompressor().compressobj(), 0, 0, []
    for piece in _pieces(b"{},", HOSTILE_BYTES, b"[", b"{}]"):
        crc, size = zlib.crc32(piece, crc), size + len(piece)
        parts.append(compressor.compress(piece))
    parts.append(compressor.flush())
    header = zstandard.ZstdCompressor().compress(HEADER)
    return crafted.raw_zip([("header.json", header, len(HEADER), zlib.crc32(HEADER)),
                            ("samples/1_epoch_1.json", b"".join(parts), size, crc)], method=93)


def gzip_pieces(pieces) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join(compressor.compress(piece) for piece in pieces) + compressor.flush()


def json_gz_bomb() -> bytes:
    """A ``.json.gz``: 190 MB of ``[{},{},...]``."""
    return gzip_pieces(_pieces(b"{},", HOSTILE_BYTES, b"[", b"{}]"))


def jsonl_gz_bomb() -> bytes:
    """A ``.jsonl.gz``: 190 MB of records ``{"model": "a", "x": [[],[],...]}`` (read as a table, every line parsed
    before the nested values are refused), each line about 900 KB (under the 1 MB line limit)."""
    line = b'{"model": "a", "x": [' + b"[]," * (300_000 - 1) + b"[]]}\n"
    return gzip_pieces(line for _ in range(HOSTILE_BYTES // len(line)))


HOSTILE = {"run.eval": eval_bomb, "run.json.gz": json_gz_bomb, "run.jsonl.gz": jsonl_gz_bomb}
NAMED = {"run.eval": "run.eval/samples/1_epoch_1.json", "run.json.gz": "run.json", "run.jsonl.gz": "run.jsonl"}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("hostile")
    paths = {}
    for name, make in HOSTILE.items():
        paths[name] = folder / name
        paths[name].write_bytes(make())
    return paths


def test_the_hostile_files_are_small_on_disk(hostile):
    assert max(path.stat().st_size for path in hostile.values()) < 300_000
    assert hostile["run.eval"].stat().st_size < 30_000


@pytest.mark.parametrize("name", list(HOSTILE))
@pytest.mark.parametrize("way", ["cli", "api"])
def test_hostile_json_is_refused_within_bounded_memory(hostile, name, way):
    path = hostile[name]
    if way == "cli":
        command = [sys.executable, "-m", "evalcore", "validate", str(path)]
    else:
        command = [sys.executable, "-c", "import sys; from evalcore.data import load_eval_log\n"
                   "try:\n    load_eval_log(sys.argv[1])\nexcept ValueError as exc:\n    print(exc)\n    sys.exit(1)",
                   str(path)]
    out, peak, seconds = crafted.run_watched(command, MEMORY_BOUND, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 1, (out.returncode, out.stdout[-2000:], out.stderr[-2000:], peak)
    assert f"{NAMED[name]} holds " in out.stdout, out.stdout
    assert "more than the 6,553,600 evalcore parses for one load" in out.stdout, out.stdout
    assert "EVALCORE_MAX_JSON_VALUES" in out.stdout and "Traceback" not in out.stdout + out.stderr
    assert peak < MEMORY_BOUND and seconds < 60, (peak, seconds)


def test_the_count_is_exact_outside_strings_and_an_upper_bound_within():
    document = b'{"a": [1, 2, {}], "b": "x,y:{[", "c\\",": ["\\\\", []]}'
    assert bounded_json.count_values(document, at_most=0) == 13  # { : [ , , { , : , : [ , [ outside strings
    assert bounded_json.count_values(document, at_most=100) == 13 + 5  # with the string's , : { [ and the key's ,
    assert bounded_json.count_values('["é,", {}]', at_most=0) == 3
    assert bounded_json.count_values('["é,", {}]'.encode("utf-16"), at_most=0) == 3
    # an unclosed string, or backslashes to the end, cannot make the expression backtrack
    assert bounded_json.count_values(b'["' + b'\\"' * 100_000, at_most=0) == 1


def test_the_limit_is_one_value_per_32_bytes_and_the_environment_raises_it(monkeypatch):
    assert ReadLimits().max_json_values == 200 * MB // 32
    assert ReadLimits(max_bytes=32 * MB).max_json_values == MB
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "64")
    assert ReadLimits.from_env().max_json_values == 2 * MB
    monkeypatch.setenv("EVALCORE_MAX_JSON_VALUES", "5")
    assert ReadLimits.from_env().max_json_values == 5


def test_the_values_of_all_the_files_of_a_load_count_together():
    limits = ReadLimits(max_json_values=60)
    rows = [{"model": m, "example_id": f"q{i}", "correct": 1} for m in "ab" for i in range(2)]
    one = "\n".join(json.dumps(row) for row in rows).encode()  # 4 lines of { : , : , : : 24 values
    assert len(load_eval_logs([("one.jsonl", one), ("two.jsonl", one)], limits=limits)) == 4
    with pytest.raises(EvalDataError, match=r"three\.jsonl holds 24 JSON values .*with the 48 of the "
                                            r"files before it.*more than the 60 .*EVALCORE_MAX_JSON_VALUES"):
        load_eval_logs([("one.jsonl", one), ("two.jsonl", one), ("three.jsonl", one)], limits=limits, strict=True)
    budget = Budget(limits)
    assert bounded_json.loads(b"[{}, {}]", "x.json", budget) == [{}, {}] and budget.json_values == 4


def test_ecosystem_logs_still_load_and_stay_far_below_the_limit():
    """Real logs of the tools evalcore reads (in the repository): they load, and hold one value per 10 bytes or
    more, so a log of the densest of them is within the default limit's 32 bytes per value up to 65 MB: the limit
    is about the objects, and the environment raises it."""
    for path in [ECOSYSTEM / "helm", ECOSYSTEM / "mt_bench" / "gpt-4_pair.jsonl",
                 ECOSYSTEM / "openai_evals_api" / "output_items.jsonl"]:
        if path.exists():
            assert len(load_eval_log(path)) > 0
    densest = min(path.stat().st_size / bounded_json.count_values(path.read_bytes(), at_most=0)
                  for path in ECOSYSTEM.rglob("*.json*") if path.stat().st_size > 2000 and path.suffix != ".gz")
    assert densest >= 9.5


def test_blank_lines_cost_no_memory_per_line(tmp_path):
    """190 MB of line breaks between two records of a ``.jsonl.gz`` (185 KB on disk): read, the two records kept,
    under the same bound (listing the lines took 1.8 GB before: a Python object per blank line)."""
    record = b'{"model": "a", "example_id": "%d", "correct": %d}\n'
    path = tmp_path / "blank.jsonl.gz"
    path.write_bytes(gzip_pieces(_pieces(b"\n", HOSTILE_BYTES, record % (1, 1), record % (2, 0))))
    command = [sys.executable, "-c", "import sys; from evalcore.data import load_eval_log\n"
               "print(load_eval_log(sys.argv[1])[['example_id', 'correct']].values.tolist())", str(path)]
    out, peak, seconds = crafted.run_watched(command, MEMORY_BOUND, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, (out.stdout[-2000:], out.stderr[-2000:], peak)
    assert out.stdout.strip() == "[['1', 1.0], ['2', 0.0]]"
    assert peak < MEMORY_BOUND and seconds < 60, (peak, seconds)


def test_nonblank_lines_are_numbered_as_in_the_file():
    from evalcore.data.reading import nonblank_lines

    assert list(nonblank_lines(b'{"a": 1}\r\n\n  \n\t{"b": 2}\n   x')) == [
        (1, b'{"a": 1}\r'), (4, b'\t{"b": 2}'), (5, b"   x")]
    assert list(nonblank_lines(b" " * 100_000 + b"\n\n")) == []
