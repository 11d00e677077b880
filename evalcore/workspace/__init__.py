"""Team workspace: saved datasets and analyses with owners and sharing (no Streamlit here).

:mod:`.catalog` (SQLite), :mod:`.storage` (Parquet by digest, atomic writes), :mod:`.access` (who sees what),
:mod:`.workspace` (the :class:`Workspace` API), :mod:`.folder` (where the workspace is: :func:`default_root`).
"""

from evalcore.workspace.folder import default_root
from evalcore.workspace.workspace import AnalysisRecord, DatasetRecord, Workspace

__all__ = ["AnalysisRecord", "DatasetRecord", "Workspace", "default_root"]
