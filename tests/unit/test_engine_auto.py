"""``--engine auto`` counts a Parquet log by what it decodes to, not by its compressed size on disk."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalcore.data.routing import DECODED_ROW_BYTES, belongs_in_engine


def test_a_small_file_of_many_rows_goes_to_the_engine_and_a_small_log_stays_in_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALCORE_ENGINE_MB", "1")  # 1 MB: 26,215 rows at 40 bytes a row
    rows = 2**20 // DECODED_ROW_BYTES + 1_000
    log = pd.DataFrame({"model": np.repeat(["a", "b"], rows // 2), "example_id": np.tile(np.arange(rows // 2), 2),
                        "correct": np.zeros(rows // 2 * 2)})
    log.to_parquet(tmp_path / "many.parquet")
    log.iloc[:1000].to_parquet(tmp_path / "few.parquet")
    assert (tmp_path / "many.parquet").stat().st_size < 2**20  # compressed: under the bound on disk
    assert belongs_in_engine([tmp_path / "many.parquet"])
    assert not belongs_in_engine([tmp_path / "few.parquet"])
    assert not belongs_in_engine([tmp_path / "many.parquet"], "never")
