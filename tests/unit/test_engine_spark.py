"""evalcore.engine on a real local Spark session (``local[2]``) through Ibis: the same code path as DuckDB, with
results equal to DuckDB's on the same data (the hashed Poisson bootstrap is portable, so even the intervals are)."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from evalcore.leaderboard import bootstrap as aggregate
from evalcore.calibration import estimators as calibration
from evalcore.ppi import means as ppi
from evalcore.stats import summaries
from evalcore.engine import scan
from evalcore.errors import EvalDataError
from test_engine import generated

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("no Java runtime: the Spark tests need Java 17")
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("evalcore-tests")
               .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "4")
               .config("spark.driver.memory", "1g").getOrCreate())
    yield session
    session.stop()


@pytest.fixture(scope="module")
def logs(spark, tmp_path_factory):
    """(Spark LazyLog, DuckDB LazyLog) of the same Parquet file, the Spark one read as a table of the session."""
    import ibis

    path = tmp_path_factory.mktemp("spark") / "log.parquet"
    generated(n_models=3, n_examples=500, seed=2).to_parquet(path)
    spark.read.parquet(str(path)).createOrReplaceTempView("evals")
    con = ibis.pyspark.connect(session=spark)
    return scan(con.table("evals")), scan(path)


def test_spark_and_duckdb_give_the_same_leaderboard(logs):
    on_spark, on_duckdb = logs
    assert on_spark.n_rows == on_duckdb.n_rows == 1500
    a = aggregate.leaderboard(on_spark, level=0.9, n_boot=300, seed=3)
    b = aggregate.leaderboard(on_duckdb, level=0.9, n_boot=300, seed=3)
    pd.testing.assert_frame_equal(a, b, rtol=0, atol=1e-12)


def test_spark_and_duckdb_give_the_same_means_calibration_and_ppi(logs):
    on_spark, on_duckdb = logs
    pd.testing.assert_frame_equal(summaries.mean_table(on_spark, ["model", "task"], "correct"),
                                  summaries.mean_table(on_duckdb, ["model", "task"], "correct"), atol=1e-12)
    pd.testing.assert_frame_equal(calibration.calibration_by_model(on_spark, n_bins=10, n_boot=200, seed=1),
                                  calibration.calibration_by_model(on_duckdb, n_bins=10, n_boot=200, seed=1),
                                  atol=1e-12)
    pd.testing.assert_frame_equal(ppi.ppi_mean_by_model(on_spark, "proxy"), ppi.ppi_mean_by_model(on_duckdb, "proxy"),
                                  atol=1e-12)


def test_spark_validation_gives_the_same_messages(spark):
    import ibis

    bad = pd.DataFrame({"model": ["a", "a", "b"], "example_id": ["1", "2", "1"], "correct": [1.0, 3.0, np.nan]})
    spark.createDataFrame(bad.to_dict("records")).createOrReplaceTempView("bad_evals")
    con = ibis.pyspark.connect(session=spark)
    with pytest.raises(EvalDataError, match="Column 'correct' must be 0 or 1.*1 row holds other values"):
        scan(con.table("bad_evals"))
