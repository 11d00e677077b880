"""Team workspace: saved datasets and analyses with owners and sharing (no Streamlit here).

:mod:`.catalog` (SQLite), :mod:`.storage` (Parquet by digest, atomic writes), :mod:`.access` (who sees what),
:mod:`.workspace` (the :class:`Workspace` API).
"""

from evalcore.workspace.workspace import AnalysisRecord, DatasetRecord, Workspace

__all__ = ["AnalysisRecord", "DatasetRecord", "Workspace"]
