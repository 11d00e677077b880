"""Crafted hostile files for the tests (built in memory; nothing large is written or committed).

* Parquet files whose metadata lies: the footer and the page headers are Thrift compact structs, decoded here into
  ``{field id: (type, value)}`` trees, patched and encoded again (:func:`patch_parquet`), the pages moved so that
  every offset stays right.
* Zip archives (Inspect AI ``.eval`` logs) whose members expand a lot, or whose directory lies about a size.
* A memory watchdog for a child process (:func:`run_watched`).
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import sysconfig
import threading
import time
import venv
import zipfile
import zlib
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq

# ---------------------------------------------------------------------------------------------------------------
# Thrift compact protocol: enough of it for Parquet's footer and page headers

STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)
#: FileMetaData / RowGroup / ColumnChunk / ColumnMetaData / PageHeader field ids (parquet.thrift)
FILE_NUM_ROWS, FILE_ROW_GROUPS = 3, 4
GROUP_COLUMNS, GROUP_TOTAL_BYTE_SIZE, GROUP_NUM_ROWS, GROUP_FILE_OFFSET, GROUP_COMPRESSED = 1, 2, 3, 5, 6
CHUNK_FILE_OFFSET, CHUNK_META = 2, 3
META_NUM_VALUES, META_UNCOMPRESSED, META_COMPRESSED, META_DATA_PAGE, META_DICT_PAGE = 5, 6, 7, 9, 11
PAGE_UNCOMPRESSED, PAGE_COMPRESSED, PAGE_DATA_HEADER, PAGE_DICT_HEADER = 2, 3, 5, 7
PAGE_HEADER_NUM_VALUES = 1  # in DataPageHeader and DictionaryPageHeader alike


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _zigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def _value(data: bytes, at: int, kind: int):
    if kind in (TRUE, FALSE):
        return kind == TRUE, at
    if kind == BYTE:
        return data[at], at + 1
    if kind in (I16, I32, I64):
        raw, at = _varint(data, at)
        return _zigzag(raw), at
    if kind == DOUBLE:
        return data[at:at + 8], at + 8
    if kind == BINARY:
        size, at = _varint(data, at)
        return data[at:at + size], at + size
    if kind in (LIST, SET):
        head = data[at]
        at += 1
        size, element = head >> 4, head & 0x0F
        if size == 15:
            size, at = _varint(data, at)
        items = []
        for _ in range(size):
            if element in (TRUE, FALSE):
                items.append(data[at] == 1)
                at += 1
            else:
                item, at = _value(data, at, element)
                items.append(item)
        return (element, items), at
    if kind == STRUCT:
        return decode_struct(data, at)
    raise ValueError(f"Thrift type {kind} is not used by Parquet")


def decode_struct(data: bytes, at: int = 0) -> tuple[dict, int]:
    """The struct at ``at`` as ``{field id: (type, value)}`` (lists as ``(element type, items)``), and its end."""
    fields, last = {}, 0
    while True:
        head = data[at]
        at += 1
        if head == STOP:
            return fields, at
        kind, delta = head & 0x0F, head >> 4
        if delta:
            fid = last + delta
        else:
            raw, at = _varint(data, at)
            fid = _zigzag(raw)
        fields[fid], at = _value(data, at, kind)
        fields[fid] = (kind, fields[fid])
        last = fid


def _put_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        if value < 0x80:
            out.append(value)
            return bytes(out)
        out.append(value & 0x7F | 0x80)
        value >>= 7


def _put_value(kind: int, value) -> bytes:
    if kind in (TRUE, FALSE):
        return b""
    if kind == BYTE:
        return bytes([value])
    if kind in (I16, I32, I64):
        return _put_varint((value << 1) ^ (value >> 63))
    if kind == DOUBLE:
        return value
    if kind == BINARY:
        return _put_varint(len(value)) + value
    if kind in (LIST, SET):
        element, items = value
        head = bytes([len(items) << 4 | element]) if len(items) < 15 else bytes([0xF0 | element]) + _put_varint(
            len(items))
        if element in (TRUE, FALSE):
            return head + bytes(1 if item else 2 for item in items)
        return head + b"".join(_put_value(element, item) for item in items)
    if kind == STRUCT:
        return encode_struct(value)
    raise ValueError(f"Thrift type {kind} is not used by Parquet")


def encode_struct(fields: dict) -> bytes:
    """The Thrift compact bytes of ``fields`` (as :func:`decode_struct` gives them)."""
    out, last = bytearray(), 0
    for fid in sorted(fields):
        kind, value = fields[fid]
        if kind in (TRUE, FALSE):
            kind = TRUE if value else FALSE
        if 0 < fid - last <= 15:
            out.append((fid - last) << 4 | kind)
        else:
            out.append(kind)
            out += _put_varint((fid << 1) ^ (fid >> 15))
        out += _put_value(kind, value)
        last = fid
    return bytes(out + b"\x00")


# ---------------------------------------------------------------------------------------------------------------
# Parquet files that lie


def parquet_bytes(table: pa.Table, **options) -> bytes:
    """``table`` written by pyarrow (no page index, no statistics: offsets only in the footer and page headers)."""
    buffer = io.BytesIO()
    pq.write_table(table, buffer, write_statistics=False, **options)
    return buffer.getvalue()


def small_log(rows: int = 777) -> pa.Table:
    """A valid log of two models (``rows`` rows)."""
    return pa.table({"model": [f"m{i % 2}" for i in range(rows)], "example_id": [f"q{i // 2}" for i in range(rows)],
                     "correct": [i % 3 == 0 for i in range(rows)]})


def patch_parquet(data: bytes, footer: Callable[[dict], None] | None = None,
                  page: Callable[[dict], None] | None = None) -> bytes:
    """``data`` with its footer (FileMetaData) changed by ``footer`` and every page header by ``page`` (both edit
    the decoded struct in place); the pages are laid out again so that every offset and size in the footer stays
    consistent with the bytes, as a careful attacker would write them."""
    size = struct.unpack("<I", data[-8:-4])[0]
    meta, _ = decode_struct(data[-8 - size:-8])
    out = bytearray(b"PAR1")
    for group in meta[FILE_ROW_GROUPS][1][1]:
        group_start, group_compressed = len(out), 0
        for chunk in group[GROUP_COLUMNS][1][1]:
            column = chunk[CHUNK_META][1]
            start = column[META_DICT_PAGE][1] if META_DICT_PAGE in column else column[META_DATA_PAGE][1]
            end = start + column[META_COMPRESSED][1]
            chunk_start, at, first_data = len(out), start, None
            while at < end:
                header, body = decode_struct(data, at)
                length = header[PAGE_COMPRESSED][1]
                if PAGE_DATA_HEADER in header and first_data is None:
                    first_data = len(out)
                if page is not None:
                    page(header)
                out += encode_struct(header) + data[body:body + length]
                at = body + length
            if META_DICT_PAGE in column:
                column[META_DICT_PAGE] = (I64, chunk_start)
            column[META_DATA_PAGE] = (I64, first_data)
            column[META_COMPRESSED] = (I64, len(out) - chunk_start)
            chunk[CHUNK_FILE_OFFSET] = (I64, chunk_start)
            group_compressed += len(out) - chunk_start
        group[GROUP_FILE_OFFSET] = (I64, group_start)
        group[GROUP_COMPRESSED] = (I32 if group[GROUP_COMPRESSED][0] == I32 else I64, group_compressed)
    if footer is not None:
        footer(meta)
    tail = encode_struct(meta)
    return bytes(out + tail + struct.pack("<I", len(tail)) + b"PAR1")


def row_groups(meta: dict) -> list[dict]:
    """The RowGroup structs of a decoded footer."""
    return meta[FILE_ROW_GROUPS][1][1]


def column_metas(meta: dict) -> list[dict]:
    """The ColumnMetaData structs of every column chunk of a decoded footer."""
    return [chunk[CHUNK_META][1] for group in row_groups(meta) for chunk in group[GROUP_COLUMNS][1][1]]


def set_field(fields: dict, fid: int, value: int) -> None:
    """Set the integer field ``fid`` (keeping its Thrift type)."""
    fields[fid] = (fields[fid][0], value)


def lying_row_group(rows: int = 10**12) -> bytes:
    """The reported attack: the file says 777 rows, its row group says ``rows``."""
    return patch_parquet(parquet_bytes(small_log(777)),
                         footer=lambda meta: set_field(row_groups(meta)[0], GROUP_NUM_ROWS, rows))


def lying_pages(field: str, value: int = 2**31 - 1, compression: str = "snappy") -> bytes:
    """A valid small log whose data pages claim ``value`` for ``field``: ``"uncompressed_page_size"`` or
    ``"num_values"``."""
    def page(header: dict) -> None:
        if PAGE_DATA_HEADER not in header:
            return
        if field == "uncompressed_page_size":
            set_field(header, PAGE_UNCOMPRESSED, value)
        else:
            set_field(header[PAGE_DATA_HEADER][1], PAGE_HEADER_NUM_VALUES, value)

    return patch_parquet(parquet_bytes(small_log(777), compression=compression), page=page)


# ---------------------------------------------------------------------------------------------------------------
# zip archives


def inspect_eval(samples: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """An Inspect AI ``.eval`` zip with a header and the ``samples/...`` members given (name -> content)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        archive.writestr("header.json", b'{"version": 2, "status": "success", "eval": {"model": "m", "task": "t"}}')
        for name, content in samples.items():
            archive.writestr(f"samples/{name}", content)
    return buffer.getvalue()


def deflated_member(size: int, byte: bytes = b" ") -> tuple[bytes, int]:
    """Raw deflate of ``size`` copies of ``byte`` (streamed, never held whole) and its CRC-32."""
    compressor, crc, out = zlib.compressobj(9, zlib.DEFLATED, -15), 0, []
    block = byte * (1 << 20)
    for start in range(0, size, len(block)):
        piece = block[:min(len(block), size - start)]
        crc = zlib.crc32(piece, crc)
        out.append(compressor.compress(piece))
    return b"".join(out) + compressor.flush(), crc


def raw_zip(members: list[tuple[str, bytes, int, int]], method: int = 8) -> bytes:
    """A zip written by hand: ``(name, compressed bytes, declared size, crc)`` per member, so that the declared
    (uncompressed) size may lie; ``method`` is the members' compression (8: deflate, 93: Zstandard)."""
    out, directory = bytearray(), bytearray()
    for name, deflated, declared, crc in members:
        encoded = name.encode()
        offset = len(out)
        fields = struct.pack("<HHHHHIII", 20, 0, method, 0, 0, crc, len(deflated), declared)
        out += b"PK\x03\x04" + fields + struct.pack("<HH", len(encoded), 0) + encoded + deflated
        directory += (b"PK\x01\x02" + struct.pack("<H", 20) + fields + struct.pack("<HHHHHII", len(encoded), 0, 0, 0,
                                                                                    0, 0, offset) + encoded)
    end = struct.pack("<HHHHIIH", 0, 0, len(members), len(members), len(directory), len(out), 0)
    return bytes(out + directory + b"PK\x05\x06" + end)


# ---------------------------------------------------------------------------------------------------------------
# a memory watchdog


def tree_rss(pid: int) -> int:
    """Resident memory in bytes of ``pid`` and all its descendants (a bounded worker is a child process)."""
    total = 0
    try:
        with open(f"/proc/{pid}/status") as status:
            total += next((int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:")), 0)
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as children:
                total += sum(tree_rss(int(child)) for child in children.read().split())
    except OSError:  # the process ended meanwhile
        pass
    return total


def run_watched(command: list[str], kill_above: int, timeout: float = 120, **kwargs) -> tuple[
        subprocess.CompletedProcess, int, float]:
    """Run ``command`` while a thread polls its resident memory (with its child processes') every 10 ms and kills
    it above ``kill_above`` bytes; the completed process, its peak resident memory and the seconds it took."""
    start = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)
    peak = [0]

    def watch() -> None:
        while child.poll() is None:
            peak[0] = max(peak[0], tree_rss(child.pid))
            if peak[0] > kill_above:
                child.kill()
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
    watcher.join()
    return subprocess.CompletedProcess(command, child.returncode, out, err), peak[0], time.monotonic() - start




def gzip_of(size: int, prefix: bytes = b"", byte: bytes = b"a", suffix: bytes = b"") -> bytes:
    """gzip of ``prefix + byte * size + suffix``, streamed (the expanded bytes are never held)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = byte * (1 << 20)
    parts = [compressor.compress(prefix)]
    parts += [compressor.compress(block[:min(len(block), size - start)]) for start in range(0, size, len(block))]
    return b"".join(parts) + compressor.compress(suffix) + compressor.flush()


def inspect_sample_bomb(members: int, size: int) -> bytes:
    """An Inspect ``.eval`` zip of ``members`` samples, each a gzip file expanding to a ``size``-byte sample."""
    sample = gzip_of(size, b'{"id": 1, "epoch": 1, "scores": {"s": {"value": 1}}, "pad": "', b"a", b'"}')
    return inspect_eval({f"{i}_epoch_1.json": sample for i in range(members)})


def mutated(doc, rng):
    """``doc`` (parsed JSON) with one value, chosen by ``rng`` (a ``random.Random``), replaced by a value of another
    type, or its key removed: the damaged logs an importer must refuse with a message, never a traceback."""
    def paths(obj, prefix=()):
        if prefix:
            yield prefix
        items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
        for key, value in items:
            yield from paths(value, (*prefix, key))
    path = rng.choice(list(paths(doc)))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if isinstance(parent, dict) and rng.random() < 0.2:
        del parent[path[-1]]
    else:
        parent[path[-1]] = json.loads(rng.choice(['null', '[]', '{}', '"x"', '1.5', 'true', '-1', '"Infinity"',
                                                  '[1, "a"]', '{"a": null}']))
    return doc


def zstd_zip(members: dict[str, bytes]) -> bytes:
    """A zip whose members are Zstandard-compressed (method 93), as Inspect AI writes its ``.eval`` logs since
    version 0.3.206 (Python 3.11's zipfile cannot write one)."""
    import zstandard

    return raw_zip([(name, zstandard.ZstdCompressor().compress(data), len(data), zlib.crc32(data))
                    for name, data in members.items()], method=93)



ROOT = Path(__file__).resolve().parents[1]


def evalcore(*args: str, cwd: Path | None = None, timeout: float = 300, **env_vars: str) -> subprocess.CompletedProcess:
    """``python -m evalcore ARGS`` from another folder (the package found through PYTHONPATH, as when installed;
    ``make test`` does not install it)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **env_vars}
    return subprocess.run([sys.executable, "-m", "evalcore", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=timeout)


def series_runs(n_runs: int = 4, n: int = 1200, flip: float = 0.04, loss_run: int = 3, keep: float = 0.8,
                seed: int = 1) -> list:
    """``n_runs`` runs of model "bot" on the same ``n`` examples (task math: ids 0-399, chat: the rest), each the
    same truth (75% right) with a share ``flip`` of answers flipped at random; run ``loss_run`` keeps only ``keep`` of
    its right answers on math (a planted regression). Frames with model, example_id, task, correct (0/1 floats)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.75
    task = np.where(np.arange(n) < 400, "math", "chat")
    runs = []
    for i in range(n_runs):
        right = truth.copy()
        flipped = rng.random(n) < flip
        right[flipped] = ~right[flipped]
        if i == loss_run:
            right[:400] &= rng.random(400) < keep
        runs.append(pd.DataFrame({"model": "bot", "example_id": np.arange(n), "task": task,
                                  "correct": right.astype(float)}))
    return runs


def write_series_runs(folder) -> list:
    """:func:`series_runs`' defaults written as run0.csv ... run3.csv in ``folder`` (a series as CI saves it)."""
    paths = []
    for i, frame in enumerate(series_runs()):
        path = Path(folder) / f"run{i}.csv"
        frame.to_csv(path, index=False)
        paths.append(path)
    return paths


def fresh_venv(folder: Path) -> Path:
    """A fresh virtual environment at ``folder`` (its bin folder) whose interpreter also sees the packages installed
    for the tests (a ``.pth`` line naming their site-packages, read after its own): ``pip install`` there still
    resolves every requirement and installs the project itself into the new environment, but finds the pinned
    dependencies already satisfied instead of unpacking 600 MB of wheels (1.5 minutes of the suite each time)."""
    venv.create(folder, with_pip=True)
    site = next(Path(folder).glob("lib/python*/site-packages"))
    paths = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    (site / "zz_test_dependencies.pth").write_text("".join(f"{path}\n" for path in paths), encoding="utf-8")
    return Path(folder) / "bin"
