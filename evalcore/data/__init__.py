"""The edges of a log: reading files into frames (:mod:`.reading`, :mod:`.compression`, :mod:`.parquet_bounds`,
within :mod:`.limits`, in the bounded worker of :mod:`.sandbox`), mapping columns onto roles (:mod:`.mapping`,
:mod:`.schema`), validation into the canonical log (:mod:`.validation`), repeated samples (:mod:`.repeats`), and
what leaves the package safely: CSV exports (:mod:`.export`) and names shown literally (:mod:`.display`).
"""

from .validation import (EvalDataError, LoadedTable, ValidationReport, labeled, load_eval_log, load_eval_logs, read_and_validate, read_table, report_of, suggest_mapping, validate, validate_raw_log)

__all__ = ['EvalDataError', 'LoadedTable', 'ValidationReport', 'labeled', 'load_eval_log', 'load_eval_logs', 'read_and_validate', 'read_table', 'report_of', 'suggest_mapping', 'validate', 'validate_raw_log']
