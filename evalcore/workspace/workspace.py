"""``Workspace(root)``: saved datasets (canonical frames) and saved analyses, with owners and sharing.

The folder holds ``catalog.sqlite`` (:mod:`.catalog`), ``data/<digest>.parquet`` (:mod:`.storage`) and a dataset's
zip of images, ``media/<dataset id>.zip`` (:meth:`Workspace.add_media`). A dataset is
an upload validated once and kept as its canonical frame; an analysis is a page with its settings and selection on
a dataset, reachable by an unguessable id (192 random bits, :func:`evalcore.workspace.access.new_id`). Back up the workspace by
copying the folder while no one writes, or with SQLite's online backup of ``catalog.sqlite`` plus a copy of
``data/`` and ``media/`` (data files are never changed once written).

Every owner and viewer passes through :func:`.access.canonical` here, at the API's boundary. Every change is one
catalog transaction: a refused one (no permission, a full or read-only disk) changes nothing. A data file is written
before its dataset's row, outside the catalog's write lock, so a long write never holds other writers up. A
workspace whose folder cannot be written still opens and reads; :meth:`Workspace.write_problem` says why it cannot
be written.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from evalcore.data import media
from evalcore.data.limits import bounded_name, bounded_note
from evalcore.data.validation import load_eval_log, report_of
from evalcore.engine import LazyLog, scan
from evalcore.errors import EvalDataError
from evalcore.workspace import access, catalog, storage
from evalcore.workspace.access import canonical, new_id



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


#: how far past the clock a run time may be (clocks of CI machines drift; a run is never stamped days ahead)
FUTURE_SLACK = timedelta(days=1)


def _run_time(text: str, now: datetime | None = None) -> tuple[str | None, str]:
    """(``text`` as ISO 8601 in UTC, "") or (None, why it cannot be a run's time: not ISO 8601, outside years 1-9999
    once in UTC, or more than :data:`FUTURE_SLACK` after ``now``)."""
    try:
        when = datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
    except ValueError:
        return None, "is not a date and time in ISO 8601"
    when = when if when.tzinfo else when.replace(tzinfo=timezone.utc)
    try:
        when = when.astimezone(timezone.utc)
    except OverflowError:
        return None, "is outside the times that can be kept (years 1 to 9999 in UTC)"
    now = now or datetime.now(timezone.utc)
    if when > now + FUTURE_SLACK:
        return None, (f"is more than a day in the future (now {now.isoformat(timespec='seconds')}; a run stamped "
                      "ahead would stay the series' latest run, and its baseline, for good)")
    return when.isoformat(timespec="seconds"), ""


def iso_time(text: str) -> str:
    """A run time given by a person as ISO 8601 in UTC (a time without a zone is taken as UTC); EvalDataError saying
    why it cannot be a run's time (:func:`_run_time`: not ISO 8601, more than a day in the future, outside years 1
    to 9999 in UTC, e.g. ``0001-01-01T00:00:00+14:00``) and what to give."""
    when, why = _run_time(text)
    if when is None:
        raise EvalDataError(f"The run time {text!r} {why}: give when the run ran, e.g. 2026-11-28T09:30:00Z.")
    return when


def logged_time(report: dict) -> tuple[str | None, str]:
    """When the log's run ran, where its tool recorded it (the validation ``report``'s ``when``: Inspect's
    ``eval.created``, lm-evaluation-harness's file-name stamp 2026-01-21T03-44-18.458309), in UTC, with a note: a
    recorded time that cannot be a run's (:func:`_run_time`) is not used, and the note says why. (None, "") when
    the log records no time."""
    recorded = report.get("when")
    if not recorded:
        return None, ""
    text = re.sub(r"T(\d\d)-(\d\d)-(\d\d)", r"T\1:\2:\3", str(recorded))  # lm-eval writes the time with dashes
    when, why = _run_time(text)
    if when is None:
        return None, f"The log's own run time {str(recorded)[:64]!r} {why}; the run is stamped with when it was saved."
    return when, ""


#: what a series' gate or a member decided of a run (:meth:`Workspace.record_verdict`); a run never gated has ""
VERDICT_STATUSES = ("passed", "failed", "accepted")


@dataclass(frozen=True)
class SeriesRun:
    """A run of a series: the dataset, its name, when it ran, its metadata and the summary kept for the trend; its
    ``status`` (:data:`VERDICT_STATUSES`: "accepted" once a member accepted it, whatever the gate said; else the
    gate's latest verdict; "" never gated) with who decided it and when (``decided_by`` None: the gate, or a member
    where nobody signs in), and the content ``digest`` of its dataset. ``note``: what :meth:`Workspace.add_to_series`
    said of the run's time (a time its log records that could not be used), not kept."""
    series: str
    dataset_id: str
    name: str
    run_time: str
    meta: dict
    summary: dict
    status: str = ""
    decided_by: str | None = None
    decided_at: str | None = None
    digest: str = ""
    note: str = ""

    @property
    def accepted(self) -> bool:
        """Whether the run may be a baseline: it passed the gate, a member accepted it, or it was never gated (a run
        saved without a gate is trusted as saved: the first run of a series, or a series without a gate)."""
        return self.status != "failed"

    @cached_property
    def stamped_ahead(self) -> bool:
        """Whether the run's time is more than :data:`FUTURE_SLACK` in the future (kept before such times were
        refused): it is never chosen as a baseline or reference (:mod:`evalcore.history.gate`), and pages flag it.
        Read once per run (the History page asks it of every earlier run, for every run)."""
        return _run_time(self.run_time)[0] is None


@dataclass(frozen=True)
class DatasetUse:
    """The saved analyses that use a dataset: ``own``, how many of its owner's (deleted with it, after a warning),
    and ``others``, (name, owner) of each of other people's, which keep it from being deleted."""
    own: int
    others: tuple[tuple[str, str | None], ...]

    def refusal(self) -> str | None:
        """Why the dataset cannot be deleted, naming the other people's analyses and their owners (None: it can)."""
        if not self.others:
            return None
        named = ", ".join(f"“{name}” ({owner or 'no owner'})" for name, owner in self.others)
        return (f"This dataset cannot be deleted: other people's saved analyses use it: {named}. They must delete "
                "those analyses first.")


def _dataset(row) -> DatasetRecord:
    return DatasetRecord(row["id"], row["name"], canonical(row["owner"]), bool(row["shared"]), row["created"],
                         row["rows"], row["models"], row["kind"])


def _analysis(row) -> AnalysisRecord:
    return AnalysisRecord(row["id"], row["dataset_id"], row["page"], json.loads(row["settings"]),
                          json.loads(row["selection"]), row["name"], canonical(row["owner"]), bool(row["shared"]),
                          row["created"])


def series_fields(series: str, meta: dict | None) -> tuple[str, dict[str, str]]:
    """A series' name (stripped, not empty) and a run's metadata (text keys and values), within the bounds of what a
    person types (:mod:`evalcore.data.limits`): a name of at most :data:`~evalcore.data.limits.MAX_NAME_CHARS`
    characters, each key too, and the metadata's keys and values together at most
    :data:`~evalcore.data.limits.MAX_NOTE_CHARS`; EvalDataError naming the bound otherwise (nothing is saved)."""
    name = bounded_name(str(series).strip(), "The series' name")
    if not name:
        raise EvalDataError("A series needs a name, e.g. 'support-bot / nightly'.")
    meta = {str(k): str(v) for k, v in (meta or {}).items()}
    for key in meta:
        bounded_name(key, f"The metadata key {key[:40]!r}…" if len(key) > 40 else f"The metadata key {key!r}")
    bounded_note("".join(f"{k}{v}" for k, v in meta.items()), "The run's metadata (keys and values together)")
    return name, meta


class Workspace:
    """A workspace folder (created when missing and writable)."""

    def __init__(self, root: str | Path) -> None:
        """Open the workspace, creating or upgrading its catalog and sweeping what killed writers left
        (:meth:`sweep`) where the folder can be written; a folder that cannot be written opens for reading."""
        self.root = Path(root)
        self.catalog = self.root / "catalog.sqlite"
        try:
            self.sweep()
        except EvalDataError:
            pass  # read-only or full: reading still works, and every write says what stands in the way

    def write_problem(self) -> str | None:
        """Why nothing can be saved or changed in this workspace now (a sentence naming the folder and the cause:
        a full disk, a read-only file system, no permission), or None when a probe write succeeds."""
        for folder in (self.root, self.root / "data"):
            if folder.is_dir():
                cause = storage.probe(folder)
                if cause is not None:
                    return storage.storage_problem(folder, cause)
        try:
            catalog.connect(self.catalog).close()
        except EvalDataError as exc:
            return str(exc)
        return None

    def sweep(self, older_than: float = storage.GRACE_S) -> None:
        """Remove temporary files and data files that no dataset refers to, once ``older_than`` seconds old
        (:func:`.storage.sweep`), holding the catalog's write lock so that no writer saves a row for a file as it
        goes."""
        with catalog.transaction(self.catalog) as db:
            keep = {row["digest"] for row in db.execute("SELECT DISTINCT digest FROM datasets")}
            storage.sweep(self.root, keep, older_than)

    # ------------------------------------------------------------------------------------------- datasets
    def add_dataset(self, data: bytes | pd.DataFrame, name: str, mapping: dict | None = None,
                    owner: str | None = None, shared: bool = False) -> DatasetRecord:
        """Validate ``data`` (an upload's bytes, or a validated frame) and save it; its frame is stored once."""
        name = bounded_name(str(name), "The dataset's name")  # before the log is read: a refusal costs nothing
        frame = data if isinstance(data, pd.DataFrame) else load_eval_log(bytes(data), mapping=mapping)
        report = report_of(frame)
        record = DatasetRecord(new_id(), name, canonical(owner), shared, _now(),
                               len(frame), report.n_models, report.kind)
        return self._insert_dataset(record, mapping, lambda: storage.store(self.root, frame))

    def add_log(self, source, name: str, mapping: dict | None = None, owner: str | None = None,
                shared: bool = False) -> DatasetRecord:
        """Save a log too large for memory: ``source`` as :func:`evalcore.engine.scan` takes it (Parquet or CSV
        paths, a glob, an Ibis table), validated in the engine; its role-named columns are written by the engine
        straight to Parquet (streamed, never in memory), stored once by the digest of that file. The catalog's
        write lock is taken only for the dataset's row, after the file is written."""
        name = bounded_name(str(name), "The dataset's name")
        log = scan(source, mapping=mapping)
        record = DatasetRecord(new_id(), name, canonical(owner), shared, _now(),
                               log.n_rows, len(log.models()), log.kind)
        stored = log.table if log.rows is None else log.rows  # every sample, so that the file validates again
        return self._insert_dataset(record, mapping, lambda: storage.store_table(self.root, stored))

    def _insert_dataset(self, record: DatasetRecord, mapping: dict | None, write) -> DatasetRecord:
        """Write the data file (``write()``: digest, size) without the write lock, then insert its row under it.
        A delete or a sweep removes files only under that lock, so the file is checked there and written again in
        the rare case one of them removed it meanwhile (another dataset with the same content going)."""
        key, size = write()
        with catalog.transaction(self.catalog) as db:
            if not storage.path_of(self.root, key).exists():
                key, size = write()
            db.execute("INSERT INTO datasets VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       (record.id, record.name, record.owner, int(record.shared), record.created, record.rows,
                        record.models, record.kind, key, size, json.dumps(mapping)))
        return record

    def lazy_dataset(self, dataset_id: str, viewer: str | None = None) -> LazyLog:
        """A dataset as a log in the engine (:func:`evalcore.engine.scan` of its stored Parquet file), for datasets
        too large to load: the methods run their reductions in DuckDB."""
        row = self._row("datasets", "dataset", dataset_id, viewer)
        return scan(storage.path_of(self.root, row["digest"]))

    def add_media(self, dataset_id: str, data: bytes, viewer: str | None = None) -> media.ArchiveSummary:
        """Save ``data``, a zip of the images a dataset's ``image`` column names, with a dataset ``viewer`` may change
        (its owner), replacing an earlier one: checked first (:func:`evalcore.data.media.check_archive`: members,
        sizes, zip-slip names), so a refused zip writes nothing. Kept as ``media/<dataset id>.zip``, read member by
        member, never unpacked (:meth:`media_archive`)."""
        row = self._row("datasets", "dataset", dataset_id, viewer)
        access.check_change(dataset_id, row["owner"], viewer)
        summary = media.check_archive(bytes(data), media.MediaLimits.from_env())
        storage.write_atomic(self._media_path(dataset_id), bytes(data))
        return summary

    def media_archive(self, dataset_id: str, viewer: str | None = None) -> Path | None:
        """The zip of images saved with a dataset ``viewer`` may see (:meth:`add_media`); None when it has none."""
        self._row("datasets", "dataset", dataset_id, viewer)
        path = self._media_path(dataset_id)
        return path if path.is_file() else None

    def _media_path(self, dataset_id: str) -> Path:
        if not re.fullmatch(r"[A-Za-z0-9_-]+", str(dataset_id)):  # an id of access.new_id: a file name as it is
            raise LookupError(f"No dataset with id {dataset_id!r} in this workspace.")
        return self.root / "media" / f"{dataset_id}.zip"

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

    def find_dataset(self, frame: pd.DataFrame, viewer: str | None = None) -> DatasetRecord | None:
        """The newest dataset ``viewer`` may see that stores exactly ``frame`` (the same content digest as
        :meth:`add_dataset` would store it under), ``viewer``'s own first; None when there is none."""
        key = storage.digest(storage.frame_bytes(frame))
        found = [r for r in catalog.rows(self.catalog, "SELECT * FROM datasets WHERE digest = ? ORDER BY created "
                                                       "DESC, rowid DESC", (key,))
                 if access.visible(r["owner"], bool(r["shared"]), viewer)]
        found.sort(key=lambda r: canonical(r["owner"]) != canonical(viewer))  # stable: newest first within each
        return _dataset(found[0]) if found else None

    def rename(self, item_id: str, name: str, viewer: str | None = None) -> None:
        """Rename a dataset or an analysis that ``viewer`` may change (:func:`.access.may_change`); the name within
        the bound of names (:func:`evalcore.data.limits.bounded_name`)."""
        name = bounded_name(str(name), "The new name")
        with catalog.transaction(self.catalog) as db:
            table, _ = self._owned(db, item_id, viewer)
            db.execute(f"UPDATE {table} SET name = ? WHERE id = ?", (str(name), item_id))

    def share(self, item_id: str, shared: bool = True, viewer: str | None = None) -> None:
        """Share an item with the team (or make it private again), in one transaction. Sharing an analysis makes
        its dataset visible to the team too, so that the team can open the analysis's link: a dataset that is
        visible already is left alone, the viewer's own is shared with it, and another owner's private dataset
        refuses the whole share (:class:`PermissionError`, nothing changed): its owner must share it first.
        Making an analysis private again leaves its dataset shared."""
        with catalog.transaction(self.catalog) as db:
            table, row = self._owned(db, item_id, viewer)
            if shared and table == "analyses":
                dataset = db.execute("SELECT * FROM datasets WHERE id = ?", (row["dataset_id"],)).fetchone()
                self._share_for_analysis(db, dataset, viewer)
            db.execute(f"UPDATE {table} SET shared = ? WHERE id = ?", (int(shared), item_id))

    @staticmethod
    def _share_for_analysis(db, dataset, viewer: str | None) -> None:
        """Make ``dataset`` visible to the team for a shared analysis of ``viewer``'s (see :meth:`share`)."""
        if canonical(dataset["owner"]) is None or dataset["shared"]:
            return
        if not access.may_change(dataset["owner"], viewer):
            owner = canonical(dataset["owner"])
            raise PermissionError(f"This analysis uses the dataset “{dataset['name']}” of {owner}, which is private: "
                                  f"{owner} must share that dataset before the analysis can be shared. Nothing "
                                  "was changed.")
        db.execute("UPDATE datasets SET shared = 1 WHERE id = ?", (dataset["id"],))

    def dataset_use(self, dataset_id: str, viewer: str | None = None) -> DatasetUse:
        """The saved analyses that use a dataset ``viewer`` may see (the Workspace page says so before deleting):
        its owner's count, and the names and owners of everyone else's, private ones included, since they keep
        the dataset from being deleted."""
        row = self._row("datasets", "dataset", dataset_id, viewer)
        used = catalog.rows(self.catalog, "SELECT name, owner FROM analyses WHERE dataset_id = ? "
                                          "ORDER BY created, rowid", (dataset_id,))
        return self._use(row, used)

    @staticmethod
    def _use(dataset, analyses) -> DatasetUse:
        owner = canonical(dataset["owner"])
        others = tuple((a["name"], canonical(a["owner"])) for a in analyses if canonical(a["owner"]) != owner)
        return DatasetUse(len(analyses) - len(others), others)

    def delete(self, item_id: str, viewer: str | None = None, with_analyses: bool = False) -> int:
        """Delete a dataset or an analysis that ``viewer`` may change, in one transaction. A dataset that other
        people's analyses use is never deleted (:class:`PermissionError` naming them and their owners); one that
        its owner's analyses use is deleted with them when ``with_analyses`` and refused otherwise (the UI asks
        first). Returns how many analyses went with it; the stored frame goes when no other dataset refers to it."""
        with catalog.transaction(self.catalog) as db:
            table, row = self._owned(db, item_id, viewer)
            if table == "analyses":
                db.execute("DELETE FROM analyses WHERE id = ?", (item_id,))
                return 0
            use = self._use(row, db.execute("SELECT name, owner FROM analyses WHERE dataset_id = ? "
                                            "ORDER BY created, rowid", (item_id,)).fetchall())
            if use.others:
                raise PermissionError(use.refusal())
            campaigns = db.execute("SELECT id, name, owner FROM campaigns WHERE dataset_id = ? ORDER BY created, "
                                   "rowid", (item_id,)).fetchall()
            if campaigns:
                named = "; ".join(f"“{c['name']}” ({c['id']}, " + (f"owner {canonical(c['owner'])})" if c["owner"]
                                                                      else "no owner)") for c in campaigns)
                raise EvalDataError(f"This dataset cannot be deleted: {len(campaigns)} labeling campaign(s) use it: "
                                    f"{named}. Their owners delete them first (the Label page, or `evalcore label "
                                    "delete CAMPAIGN_ID --by OWNER`): their labels would lose the examples they "
                                    "describe.")
            if use.own and not with_analyses:
                raise EvalDataError(f"{use.own} saved analyses of its owner use this dataset: delete them too "
                                    "(with_analyses=True) or keep the dataset.")
            db.execute("DELETE FROM analyses WHERE dataset_id = ?", (item_id,))
            db.execute("DELETE FROM series_runs WHERE dataset_id = ?", (item_id,))  # the run leaves its series
            db.execute("UPDATE series SET baseline = NULL WHERE baseline = ?", (item_id,))
            db.execute("DELETE FROM datasets WHERE id = ?", (item_id,))
            try:
                self._media_path(item_id).unlink(missing_ok=True)  # its zip of images goes with it
            except OSError as exc:
                raise EvalDataError(storage.storage_problem(self.root / "media", exc)) from exc
            if not db.execute("SELECT 1 FROM datasets WHERE digest = ?", (row["digest"],)).fetchone():
                storage.remove(self.root, row["digest"])
        return use.own

    # ------------------------------------------------------------------------------------------- analyses
    def save_analysis(self, dataset_id: str, page: str, settings: dict[str, Any] | None = None,
                      selection: dict[str, Any] | None = None, name: str | None = None,
                      owner: str | None = None, shared: bool = False) -> AnalysisRecord:
        """Save a page's settings and selection on a dataset ``owner`` may see, in one transaction; ``shared``
        makes the dataset visible to the team too, as :meth:`share` does (refused, nothing saved, when it is
        another owner's private dataset)."""
        owner = canonical(owner)
        record = AnalysisRecord(new_id(), dataset_id, str(page), dict(settings or {}), dict(selection or {}),
                                bounded_name(str(name or page), "The analysis' name"), owner, shared, _now())
        with catalog.transaction(self.catalog) as db:
            dataset = db.execute("SELECT * FROM datasets WHERE id = ?", (str(dataset_id),)).fetchone()
            if dataset is None:
                raise LookupError(f"No dataset with id {dataset_id!r} in this workspace.")
            access.check("dataset", dataset_id, dataset["owner"], bool(dataset["shared"]), owner)
            if shared:
                self._share_for_analysis(db, dataset, owner)
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

    # ------------------------------------------------------------------------------------------- series
    def add_to_series(self, dataset_id: str, series: str, run_time: str | None = None, meta: dict | None = None,
                      viewer: str | None = None) -> SeriesRun:
        """Add a dataset ``viewer`` may see, a per-example log, to the series named ``series`` (created with ``viewer``
        as its owner when new) as a run of ``run_time`` (ISO 8601, refused more than a day ahead or outside years
        1-9999, :func:`iso_time`; default the time the log records, :func:`logged_time`, else the save time, with
        the run's ``note`` saying why a recorded time was not used) with free ``meta`` (commit, config, note). The
        name and the metadata are bounded (:func:`series_fields`). The run's summary for the trend is computed now,
        once (:func:`evalcore.history.run_summary`)."""
        from evalcore.history import run_summary

        name, meta = series_fields(series, meta)
        row = self._row("datasets", "dataset", dataset_id, viewer)
        record = _dataset(row)
        if record.kind != "log":
            raise EvalDataError(f"A series follows per-example logs; the dataset “{record.name}” is a {record.kind} "
                                f"table: it is not added to the series {name!r}.")
        if run_time:
            when, note = iso_time(run_time), ""
        else:
            when, note = logged_time(storage.stored_report(self.root, row["digest"]))
            when = when or record.created
        summary = run_summary(self.lazy_dataset(dataset_id, viewer))  # reduced in the engine: never loaded whole
        with catalog.transaction(self.catalog) as db:
            db.execute("INSERT OR IGNORE INTO series (name, owner, created) VALUES (?,?,?)",
                       (name, canonical(viewer), _now()))
            db.execute("INSERT OR REPLACE INTO series_runs VALUES (?,?,?,?,?)",
                       (name, dataset_id, when, json.dumps(meta), json.dumps(summary)))
        return SeriesRun(name, dataset_id, record.name, when, meta, summary, note=note)

    def save_run(self, save: Callable[[], DatasetRecord], series: str, run_time: str | None = None,
                 meta: dict | None = None) -> tuple[DatasetRecord, SeriesRun]:
        """Save a dataset (``save()``: :meth:`add_dataset` or :meth:`add_log`) and add it to ``series``
        (:meth:`add_to_series`, as the dataset's owner) as one step: the series' name, the metadata and a given
        ``run_time`` are checked before anything is saved, and a dataset that cannot be added afterwards is deleted
        again, so nothing is ever saved but silently left out of its series."""
        series_fields(series, meta)
        if run_time:
            iso_time(run_time)
        record = save()
        try:
            return record, self.add_to_series(record.id, series, run_time, meta, record.owner)
        except BaseException as exc:
            try:
                self.delete(record.id, viewer=record.owner)
            except Exception as undo:
                raise EvalDataError(f"The dataset “{record.name}” ({record.id}) was saved but not added to the series "
                                    f"{str(series)!r} ({exc}), and could not be deleted again ({undo}): delete it "
                                    "(the Workspace page) and add it again.") from exc
            if isinstance(exc, EvalDataError):
                raise EvalDataError(f"{exc} Nothing was saved.") from exc
            raise

    def series(self, viewer: str | None = None) -> list[tuple[str, int, str]]:
        """(name, runs, latest run time) of every series with a run ``viewer`` may see, most recent first."""
        out = {}
        for run in self._series_rows(None, viewer):
            n, latest = out.get(run["series"], (0, ""))
            out[run["series"]] = (n + 1, max(latest, run["run_time"]))
        return sorted(((k, n, t) for k, (n, t) in out.items()), key=lambda x: x[2], reverse=True)

    def series_hidden(self, series: str, viewer: str | None = None) -> list[str]:
        """The owners (sorted) of the runs of ``series`` that ``viewer`` may not see: empty when ``viewer`` sees every
        run or the series has none, so that "no such series" is said only of a series that does not exist."""
        found = catalog.rows(self.catalog, "SELECT DISTINCT d.owner AS owner, d.shared AS shared FROM series_runs r "
                                           "JOIN datasets d ON d.id = r.dataset_id WHERE r.series = ?",
                             (str(series),))
        return sorted({canonical(r["owner"]) for r in found
                       if not access.visible(r["owner"], bool(r["shared"]), viewer)})

    def series_runs(self, series: str, viewer: str | None = None) -> list[SeriesRun]:
        """The runs of ``series`` that ``viewer`` may see, oldest first (by run time, then when saved)."""
        decided = self.series_decisions(series)
        out = []
        for r in self._series_rows(series, viewer):
            mine = [d for d in decided if d["digest"] == r["digest"]]
            last = next((d for d in reversed(mine) if d["status"] == "accepted"), mine[-1] if mine else None)
            out.append(SeriesRun(r["series"], r["dataset_id"], r["name"], r["run_time"], json.loads(r["meta"]),
                                 json.loads(r["summary"]), last["status"] if last else "",
                                 last["who"] if last else None, last["created"] if last else None, r["digest"]))
        return out

    def series_decisions(self, series: str) -> list[dict]:
        """Every verdict of the gate and every acceptance in ``series``, oldest first: digest, status, who, created
        (when), baseline and reference (dataset ids the gate compared with)."""
        return [dict(r) for r in catalog.rows(self.catalog, "SELECT digest, status, who, created, baseline, reference "
                                                            "FROM series_verdicts WHERE series = ? ORDER BY id",
                                              (str(series),))]

    def record_verdict(self, series: str, digest: str, status: str, baseline: str | None = None,
                       reference: str | None = None) -> None:
        """Keep the gate's verdict ("passed" or "failed") on the run whose content digest is ``digest``
        (:meth:`content_digest`), with the datasets it was compared with."""
        if status not in VERDICT_STATUSES[:2]:
            raise ValueError(f"a gate's verdict is 'passed' or 'failed', not {status!r}")
        with catalog.transaction(self.catalog) as db:
            db.execute("INSERT INTO series_verdicts (series, digest, status, who, created, baseline, reference) "
                       "VALUES (?,?,?,?,?,?,?)", (str(series), digest, status, None, _now(), baseline, reference))

    def accept_run(self, series: str, dataset_id: str, viewer: str | None = None) -> SeriesRun:
        """Accept a run of ``series`` as a baseline (one the gate failed, or any), as ``viewer``, kept with who and
        when; refused (PermissionError naming the owner) unless :func:`.access.may_decide` allows ``viewer``."""
        self._check_decide(series, dataset_id, viewer)
        run = next((r for r in self.series_runs(series, viewer) if r.dataset_id == dataset_id), None)
        if run is None:
            raise LookupError(f"No run {dataset_id!r} in the series {series!r}.")
        with catalog.transaction(self.catalog) as db:
            db.execute("INSERT INTO series_verdicts (series, digest, status, who, created) VALUES (?,?,?,?,?)",
                       (str(series), run.digest, "accepted", canonical(viewer), _now()))
        return next(r for r in self.series_runs(series, viewer) if r.dataset_id == dataset_id)

    def _check_decide(self, series: str, dataset_id: str | None, viewer: str | None) -> None:
        """Refuse ``viewer`` a decision on a run of ``series`` (accepting it, pinning it) unless
        :func:`.access.may_decide` allows it; LookupError for an unknown series."""
        found = catalog.rows(self.catalog, "SELECT owner FROM series WHERE name = ?", (str(series),))
        if not found:
            raise LookupError(f"No series named {series!r}.")
        shared = False
        if dataset_id is not None:
            row = self._row("datasets", "dataset", dataset_id, viewer)
            shared = bool(row["shared"])
        access.check_decide(series, found[0]["owner"], shared, viewer)

    @staticmethod
    def content_digest(frame: pd.DataFrame) -> str:
        """The digest a validated ``frame`` is (or would be) stored under: a run's key in the gate's verdicts."""
        return storage.digest(storage.frame_bytes(frame))

    def series_baseline(self, series: str) -> str | None:
        """The dataset id of the series' pinned baseline run, None when none is pinned."""
        found = catalog.rows(self.catalog, "SELECT baseline FROM series WHERE name = ?", (str(series),))
        return found[0]["baseline"] if found else None

    def pin_baseline(self, series: str, dataset_id: str | None, viewer: str | None = None) -> None:
        """Pin a run of the series as its baseline and reference (None: unpin; the latest accepted run is then the
        baseline, :mod:`evalcore.history.gate`); refused as :meth:`accept_run` is."""
        self._check_decide(series, dataset_id if dataset_id is not None else self.series_baseline(series), viewer)
        with catalog.transaction(self.catalog) as db:
            if dataset_id is not None and not db.execute(
                    "SELECT 1 FROM series_runs WHERE series = ? AND dataset_id = ?", (series, dataset_id)).fetchone():
                raise LookupError(f"No run {dataset_id!r} in the series {series!r}.")
            db.execute("UPDATE series SET baseline = ? WHERE name = ?", (dataset_id, series))

    def _series_rows(self, series: str | None, viewer: str | None) -> list:
        where, params = ("WHERE r.series = ?", (str(series),)) if series is not None else ("", ())
        found = catalog.rows(self.catalog, "SELECT r.*, d.name AS name, d.owner AS owner, d.shared AS shared, "
                                           "d.digest AS digest "
                                           "FROM series_runs r JOIN datasets d ON d.id = r.dataset_id "
                                           f"{where} ORDER BY r.run_time, d.created, d.rowid", params)
        return [r for r in found if access.visible(r["owner"], bool(r["shared"]), viewer)]

    # ------------------------------------------------------------------------------------------- helpers
    def _row(self, table: str, kind: str, item_id: str, viewer: str | None):
        found = catalog.rows(self.catalog, f"SELECT * FROM {table} WHERE id = ?", (str(item_id),))
        if not found:
            raise LookupError(f"No {kind} with id {item_id!r} in this workspace.")
        access.check(kind, item_id, found[0]["owner"], bool(found[0]["shared"]), viewer)
        return found[0]

    @staticmethod
    def _owned(db, item_id: str, viewer: str | None):
        """(table, row) of the item, inside a transaction; refused unless ``viewer`` may change it."""
        for table, kind in (("datasets", "dataset"), ("analyses", "analysis")):
            row = db.execute(f"SELECT * FROM {table} WHERE id = ?", (str(item_id),)).fetchone()
            if row is not None:
                access.check(kind, item_id, row["owner"], bool(row["shared"]), viewer)
                access.check_change(item_id, row["owner"], viewer)
                return table, row
        raise LookupError(f"No dataset or analysis with id {item_id!r} in this workspace.")
