"""Every input under 1 GB at its peak (issue 51, item 7), measured as the peak resident memory of the process that
reads it (``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` of a wrapper whose only child it is): JSON just inside
the value limit (6.5 million two-letter strings: one value per 32 bytes of the byte limit; 12.8 million, inside the
old limit of one per 16 bytes, peaked at 1.2-1.4 GB) and a 10-row Parquet file with a 3-million-entry dictionary
(refused before it is read: it peaked at 850 MB in validate, and twice that in pandas)."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evalcore.data.limits import MB, ReadLimits
from evalcore.data.parquet_bounds import UNUSED_DICTIONARY_ENTRIES, read_parquet
from evalcore.errors import EvalDataError

ROOT = Path(__file__).resolve().parents[2]
BOUND_MB = 1024
WRAPPER = ("import resource, subprocess, sys\n"
           "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
           "print(done.returncode)\nprint(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)\n"
           "print(done.stdout + done.stderr)")
LOAD = ("import sys; from evalcore.data import load_eval_log\n"
        "try:\n    load_eval_log(sys.argv[1])\nexcept ValueError as exc:\n    print(exc)\n    sys.exit(1)")


def _peak(*command: str) -> tuple[int, int, str]:
    """(exit status, peak resident MB, output) of ``command`` run as the only child of a wrapper process."""
    out = subprocess.run([sys.executable, "-c", WRAPPER, *command], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    status, peak, said = out.stdout.split("\n", 2)
    return int(status), int(peak), said


def _ways(path: Path) -> dict[str, tuple[str, ...]]:
    return {"cli": (sys.executable, "-m", "evalcore", "validate", str(path)), "api": (sys.executable, "-c", LOAD,
                                                                                      str(path))}


def test_json_near_the_value_limit_stays_under_1_gb(tmp_path):
    limit = ReadLimits().max_json_values
    assert limit == 200 * MB // 32 == 6_553_600
    inside, issue = tmp_path / "inside.json.gz", tmp_path / "issue.json.gz"
    inside.write_bytes(gzip.compress(b"[" + b",".join([b'"ab"'] * (limit - 10)) + b"]", 9))
    issue.write_bytes(gzip.compress(b"[" + b",".join([b'"ab"'] * 12_800_000) + b"]", 9))  # 93 KB
    assert issue.stat().st_size < 100_000
    for way, command in _ways(inside).items():
        status, peak, said = _peak(*command)
        assert status == 1 and "flat records" in said and peak < BOUND_MB, (way, peak, said[-500:])
    for way, command in _ways(issue).items():
        status, peak, said = _peak(*command)
        assert status == 1 and "holds 12,800,000 JSON values" in said and "6,553,600" in said, said[-500:]
        assert peak < BOUND_MB, (way, peak)


def _dictionary_file(entries: int, rows: int = 10) -> bytes:
    dictionary = pa.array([f"{i:07d}" for i in range(entries)])
    note = pa.DictionaryArray.from_arrays(pa.array(np.arange(rows, dtype=np.int32)), dictionary)
    table = pa.table({"model": ["m"] * rows, "example_id": [f"q{i}" for i in range(rows)], "correct": [1] * rows,
                      "note": note})
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()


def test_a_parquet_dictionary_of_unused_values_is_refused_under_1_gb(tmp_path):
    path = tmp_path / "dictionary.parquet"
    path.write_bytes(_dictionary_file(3_000_000))
    assert path.stat().st_size < 1.5 * MB
    for way, command in _ways(path).items():
        status, peak, said = _peak(*command)
        assert status == 1 and peak < BOUND_MB, (way, peak, said[-500:])
        assert "Column 'note' of the Parquet file (row group 1) stores a dictionary of 3,000,000 distinct values " \
               "for its 10 values" in said and "remove_unused_categories" in said, said[-500:]


def test_a_parquet_categorical_within_the_bound_reads_as_its_values():
    frame = read_parquet(_dictionary_file(UNUSED_DICTIONARY_ENTRIES + 10), ReadLimits())
    assert frame["note"].tolist() == [f"{i:07d}" for i in range(10)] and not isinstance(frame["note"].dtype, pd.CategoricalDtype)
    with pytest.raises(EvalDataError, match="stores a dictionary of 100,011 distinct values for its 10 values"):
        read_parquet(_dictionary_file(UNUSED_DICTIONARY_ENTRIES + 11), ReadLimits())
    categorical = pd.DataFrame({"model": pd.Categorical(["a", "b"] * 5, categories=["a", "b", "c"]),
                                "correct": [1, 0] * 5})
    read = read_parquet(categorical.to_parquet(), ReadLimits())
    assert read["model"].tolist() == ["a", "b"] * 5 and not isinstance(read["model"].dtype, pd.CategoricalDtype)
