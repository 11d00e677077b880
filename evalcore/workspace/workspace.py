"""``Workspace(root)``: saved datasets (canonical frames) and saved analyses, with owners and sharing.

The folder holds ``catalog.sqlite`` (:mod:`.catalog`) and ``data/<digest>.parquet`` (:mod:`.storage`). A dataset is
an upload validated once and kept as its canonical frame; an analysis is a page with its settings and selection on
a dataset, reachable by an unguessable id (192 random bits, :func:`secrets.token_urlsafe`). Back up the workspace by
copying the folder while no one writes, or with SQLite's online backup of ``catalog.sqlite`` plus a copy of
``data/`` (data files are never changed once written).
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from ..data import load_eval_log, report_of
from ..engine import LazyLog, scan
from ..errors import EvalDataError
from . import access, catalog, storage

ID_BYTES = 24  # 192 bits


@dataclass(frozen=True)
class DatasetRecord:
    id: str
    name: str
    owner: str | None
    shared: bool
    created: str
    rows: int
    models: int
    kind: str


@dataclass(frozen=True)
class AnalysisRecord:
    id: str
    dataset_id: str
    page: str
    settings: dict
    selection: dict
    name: str
    owner: str | None
    shared: bool
    created: str


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _dataset(row) -> DatasetRecord:
    return DatasetRecord(row["id"], row["name"], row["owner"], bool(row["shared"]), row["created"], row["rows"],
                         row["models"], row["kind"])


def _analysis(row) -> AnalysisRecord:
    return AnalysisRecord(row["id"], row["dataset_id"], row["page"], json.loads(row["settings"]),
                          json.loads(row["selection"]), row["name"], row["owner"], bool(row["shared"]),
                          row["created"])


class Workspace:
    """A workspace folder (created when missing)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.catalog = self.root / "catalog.sqlite"
        catalog.connect(self.catalog).close()
        storage.sweep(self.root)

    # ------------------------------------------------------------------------------------------- datasets
    def add_dataset(self, data: bytes | pd.DataFrame, name: str, mapping: dict | None = None,
                    owner: str | None = None, shared: bool = False) -> DatasetRecord:
        """Validate ``data`` (an upload's bytes, or a validated frame) and save it; its frame is stored once."""
        frame = data if isinstance(data, pd.DataFrame) else load_eval_log(bytes(data), mapping=mapping)
        report = report_of(frame)
        record = DatasetRecord(secrets.token_urlsafe(ID_BYTES), str(name), owner, shared, _now(), len(frame),
                               report.n_models, report.kind)
        with catalog.transaction(self.catalog) as db:  # the file and its row together (delete cannot interleave)
            key, size = storage.store(self.root, frame)
            db.execute("INSERT INTO datasets VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       (record.id, record.name, owner, int(shared), record.created, record.rows, record.models,
                        record.kind, key, size, json.dumps(mapping)))
        return record

    def add_log(self, source, name: str, mapping: dict | None = None, owner: str | None = None,
                shared: bool = False) -> DatasetRecord:
        """Save a log too large for memory: ``source`` as :func:`evalcore.engine.scan` takes it (Parquet or CSV
        paths, a glob, an Ibis table), validated in the engine; its role-named columns are written by the engine
        straight to Parquet (streamed, never in memory), stored once by the digest of that file."""
        log = scan(source, mapping=mapping)
        record = DatasetRecord(secrets.token_urlsafe(ID_BYTES), str(name), owner, shared, _now(), log.n_rows,
                               len(log.models()), log.kind)
        with catalog.transaction(self.catalog) as db:
            key, size = storage.store_table(self.root, log.table)
            db.execute("INSERT INTO datasets VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       (record.id, record.name, owner, int(shared), record.created, record.rows, record.models,
                        record.kind, key, size, json.dumps(mapping)))
        return record

    def lazy_dataset(self, dataset_id: str, viewer: str | None = None) -> LazyLog:
        """A dataset as a log in the engine (:func:`evalcore.engine.scan` of its stored Parquet file), for datasets
        too large to load: the methods run their reductions in DuckDB."""
        row = self._row("datasets", "dataset", dataset_id, viewer)
        return scan(storage.path_of(self.root, row["digest"]))

    def datasets(self, viewer: str | None = None) -> list[DatasetRecord]:
        """The datasets ``viewer`` may see, newest first."""
        found = catalog.rows(self.catalog, "SELECT * FROM datasets ORDER BY created DESC, rowid DESC")
        return [_dataset(r) for r in found if access.visible(r["owner"], bool(r["shared"]), viewer)]

    def dataset_record(self, dataset_id: str, viewer: str | None = None) -> DatasetRecord:
        return _dataset(self._row("datasets", "dataset", dataset_id, viewer))

    def dataset(self, dataset_id: str, viewer: str | None = None) -> pd.DataFrame:
        """The canonical frame of a dataset (with its validation report in ``attrs``)."""
        row = self._row("datasets", "dataset", dataset_id, viewer)
        return storage.load(self.root, row["digest"])

    def rename(self, item_id: str, name: str, viewer: str | None = None) -> None:
        """Rename a dataset or an analysis that ``viewer`` owns (or, without owners, anyone)."""
        self._set(item_id, "name", str(name), viewer)

    def share(self, item_id: str, shared: bool = True, viewer: str | None = None) -> None:
        """Share an item with the team (or make it private again). Sharing an analysis shares its dataset too, so
        that the team can open the analysis's link; making it private again leaves the dataset shared."""
        self._set(item_id, "shared", int(shared), viewer)
        if shared and self._table_of(item_id) == "analyses":
            self._set(self.analysis(item_id, viewer).dataset_id, "shared", 1, viewer)

    def analyses_of(self, dataset_id: str) -> int:
        """How many saved analyses use a dataset (the UI asks before deleting it)."""
        return catalog.rows(self.catalog, "SELECT COUNT(*) AS n FROM analyses WHERE dataset_id = ?",
                            (dataset_id,))[0]["n"]

    def delete(self, item_id: str, viewer: str | None = None, with_analyses: bool = False) -> int:
        """Delete a dataset or an analysis that ``viewer`` owns. A dataset that saved analyses use is deleted with
        them when ``with_analyses`` and refused otherwise (the UI asks first). Returns how many analyses went with
        it; the stored frame goes when no other dataset refers to it."""
        if self._table_of(item_id) == "analyses":
            self._delete_analysis(item_id, viewer)
            return 0
        return self._delete_dataset(item_id, viewer, with_analyses)

    def _delete_dataset(self, dataset_id: str, viewer: str | None, with_analyses: bool) -> int:
        with catalog.transaction(self.catalog) as db:
            row = self._owned(db, "datasets", dataset_id, viewer)
            used = db.execute("SELECT COUNT(*) FROM analyses WHERE dataset_id = ?", (dataset_id,)).fetchone()[0]
            if used and not with_analyses:
                raise EvalDataError(f"{used} saved analyses use this dataset: delete them too (with_analyses=True) "
                                    "or keep the dataset.")
            db.execute("DELETE FROM analyses WHERE dataset_id = ?", (dataset_id,))
            db.execute("DELETE FROM datasets WHERE id = ?", (dataset_id,))
            if not db.execute("SELECT 1 FROM datasets WHERE digest = ?", (row["digest"],)).fetchone():
                storage.remove(self.root, row["digest"])
        return used

    # ------------------------------------------------------------------------------------------- analyses
    def save_analysis(self, dataset_id: str, page: str, settings: dict[str, Any] | None = None,
                      selection: dict[str, Any] | None = None, name: str | None = None,
                      owner: str | None = None, shared: bool = False) -> AnalysisRecord:
        """Save a page's settings and selection on a dataset ``owner`` may see; ``shared`` shares the dataset too
        (see :meth:`share`)."""
        dataset = self._row("datasets", "dataset", dataset_id, owner)
        if shared and dataset["owner"] is not None and not dataset["shared"]:
            self.share(dataset_id, True, viewer=owner)
        record = AnalysisRecord(secrets.token_urlsafe(ID_BYTES), dataset_id, str(page), dict(settings or {}),
                                dict(selection or {}), str(name or page), owner, shared, _now())
        with catalog.transaction(self.catalog) as db:
            db.execute("INSERT INTO analyses VALUES (?,?,?,?,?,?,?,?,?)",
                       (record.id, dataset_id, record.page, json.dumps(record.settings, default=list),
                        json.dumps(record.selection, default=list), record.name, owner, int(shared),
                        record.created))
        return record

    def analyses(self, viewer: str | None = None) -> list[AnalysisRecord]:
        found = catalog.rows(self.catalog, "SELECT * FROM analyses ORDER BY created DESC, rowid DESC")
        return [_analysis(r) for r in found if access.visible(r["owner"], bool(r["shared"]), viewer)]

    def analysis(self, analysis_id: str, viewer: str | None = None) -> AnalysisRecord:
        return _analysis(self._row("analyses", "analysis", analysis_id, viewer))

    def _delete_analysis(self, analysis_id: str, viewer: str | None) -> None:
        with catalog.transaction(self.catalog) as db:
            self._owned(db, "analyses", analysis_id, viewer)
            db.execute("DELETE FROM analyses WHERE id = ?", (analysis_id,))

    # ------------------------------------------------------------------------------------------- helpers
    def _row(self, table: str, kind: str, item_id: str, viewer: str | None):
        found = catalog.rows(self.catalog, f"SELECT * FROM {table} WHERE id = ?", (str(item_id),))
        if not found:
            raise LookupError(f"No {kind} with id {item_id!r} in this workspace.")
        access.check(kind, item_id, found[0]["owner"], bool(found[0]["shared"]), viewer)
        return found[0]

    def _set(self, item_id: str, column: str, value: Any, viewer: str | None) -> None:
        """Change one column of an item ``viewer`` owns, in one transaction."""
        table = self._table_of(item_id)
        with catalog.transaction(self.catalog) as db:
            self._owned(db, table, item_id, viewer)
            db.execute(f"UPDATE {table} SET {column} = ? WHERE id = ?", (value, item_id))

    def _table_of(self, item_id: str) -> str:
        for table in ("datasets", "analyses"):
            if catalog.rows(self.catalog, f"SELECT 1 FROM {table} WHERE id = ?", (item_id,)):
                return table
        raise LookupError(f"No dataset or analysis with id {item_id!r} in this workspace.")

    @staticmethod
    def _owned(db, table: str, item_id: str, viewer: str | None):
        row = db.execute(f"SELECT * FROM {table} WHERE id = ?", (item_id,)).fetchone()
        if row is None:
            raise LookupError(f"No item with id {item_id!r} in this workspace.")
        if row["owner"] is not None and row["owner"] != viewer:
            raise PermissionError(f"Only its owner can change or delete this item ({item_id}).")
        return row
