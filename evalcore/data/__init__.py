"""The edges of a log: reading files into frames (:mod:`.reading`, :mod:`.compression`, :mod:`.parquet_bounds`,
within :mod:`.limits`, in the bounded worker of :mod:`.sandbox`), mapping columns onto roles (:mod:`.mapping`,
:mod:`.schema`), validation into the canonical log (:mod:`.validation`), repeated samples (:mod:`.repeats`), and
what leaves the package safely: CSV exports (:mod:`.export`) and names shown literally (:mod:`.display`).
"""

from importlib import import_module

__all__ = ['EvalDataError', 'LoadedTable', 'ValidationReport', 'labeled', 'load_eval_log', 'load_eval_logs', 'read_and_validate', 'read_table', 'report_of', 'suggest_mapping', 'validate', 'validate_raw_log']


def __getattr__(name: str):
    """The public names of :mod:`.validation`, imported on first use: the importers use this package's limits and
    readers, and validation uses the importers, so importing either first works (PEP 562)."""
    if name in __all__:
        return getattr(import_module(f"{__name__}.validation"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
