"""Logs beyond one machine's memory: the methods' reductions run in the engine where the log is stored.

:mod:`.scan` opens a log (Parquet or CSV paths, a DuckDB table, an Ibis table expression on any backend) as a
:class:`LazyLog`, validated in the engine; :mod:`.reductions` computes the small sufficient statistics the methods
need; :mod:`.poisson` is the paired Poisson bootstrap with hashed weights. The public functions of evalcore accept a
``LazyLog`` wherever they accept a canonical frame (``aggregate.leaderboard``, ``summaries.mean_table``,
``calibration.calibration_by_model``, ``ppi.ppi_mean_by_model``).
"""

from evalcore.engine.scan import LazyLog, belongs_in_engine, duckdb_connection, is_lazy, scan

__all__ = ["LazyLog", "belongs_in_engine", "duckdb_connection", "is_lazy", "scan"]
