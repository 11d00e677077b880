"""Every log's reductions: a log stored in an engine and a frame in memory take one path.

:mod:`.connection` makes the in-process DuckDB and runs every query (:func:`execute`, one at a time per connection);
:mod:`.scan` opens a log (Parquet or CSV paths, a DuckDB table, an Ibis table expression on any backend) as a
:class:`LazyLog`, validated in the engine; :mod:`.frames` wraps a validated frame in memory as a LazyLog that DuckDB
reads in place; :mod:`.reductions` computes the small sufficient statistics the methods need; :mod:`.poisson` is the
paired Poisson bootstrap with hashed weights; :mod:`.examples` hands the per-example columns a view needs to memory
within a bound. The public functions of evalcore accept a ``LazyLog`` wherever they accept a canonical frame.
"""

from evalcore.engine.examples import ExamplesTooLarge, fetch, fetch_bound_mb
from evalcore.engine.frames import as_log, from_frame
from evalcore.engine.connection import duckdb_connection, execute
from evalcore.engine.scan import LazyLog, belongs_in_engine, is_lazy, scan

__all__ = ["ExamplesTooLarge", "LazyLog", "as_log", "belongs_in_engine", "duckdb_connection", "execute", "fetch",
           "fetch_bound_mb", "from_frame", "is_lazy", "scan"]
