"""A log where it is stored: :func:`scan` opens a Parquet or CSV path (a file, a folder or a glob), a table of a DuckDB
database or an Ibis table expression (so PySpark, BigQuery, Snowflake and the other engines Ibis supports) as a
:class:`LazyLog`: an Ibis expression whose columns are named after the roles, checked in the engine.

Nothing is loaded into memory: validation is a few aggregate queries (value ranges, missing identities, the
number of distinct models, tasks and groups within :class:`~evalcore.data.limits.ReadLimits`, duplicated (model, task,
example) rows), and the methods later run their reductions on the same expression
(:mod:`.reductions`, :mod:`.poisson`). Per-example logs (``model``, ``example_id`` and a ``correct`` or ``score``
metric; optional ``task``, ``category``, ``group``, ``confidence``, ``proxy``, other numeric columns as features)
and pairwise battles. A ``repeat`` role numbers repeated samples of one example: they are averaged per example (the
example is the unit, as :func:`evalcore.data.repeats.per_example` does in memory).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from pathlib import Path

import ibis
import ibis.expr.types as ir
import pandas as pd

from evalcore.errors import EvalDataError, listed
from evalcore.data.limits import ReadLimits
from evalcore.engine.connection import duckdb_connection, execute, lock_of
from evalcore.data.mapping import check_mapping, detect_kind, with_overrides
from evalcore.data.repeats import N_REPEATS
from evalcore.data.routing import belongs_in_engine, files_of, kind_of  # noqa: F401 - belongs_in_engine: re-exported
from evalcore.data.schema import BATTLES, EXAMPLE_TEXT_ROLES, LOG, LOG_DEFAULT_LABELS, LOG_ROLES, SUMMARY

#: roles a lazy log carries (in this order); text identities are cast to strings, values to float64
TEXT_ROLES = ("model", "example_id", "task", "category", "group")
VALUE_ROLES = ("correct", "score", "confidence", "proxy")
#: an example's text (roles input, target, output, explanation) is cut at this many characters, as in memory at
#: 4 KB (:mod:`evalcore.data.text`; an engine's substring counts characters, not bytes)
TEXT_CHARACTERS = 4096
#: probabilities may leave [0, 1] by this much (floating-point rounding) and are then clipped, as in memory
UNIT_TOLERANCE = 1e-6
DATABASE = (".duckdb", ".ddb", ".db")


@dataclass(frozen=True)
class LazyLog:
    """A per-example log in an engine. ``table`` has the role-named columns of :data:`TEXT_ROLES` (all of them;
    missing labels filled as in memory) and the value roles present; ``source`` names what was scanned;
    ``mapping`` is {role: source column}; ``notes`` what validation found; ``n_rows`` the table's rows."""

    table: ir.Table
    source: str
    mapping: dict
    n_rows: int
    notes: tuple[str, ...] = ()
    kind: str = LOG
    #: the validated frame a log in memory wraps (:func:`evalcore.engine.frames.from_frame`); None in an engine
    frame: pd.DataFrame | None = field(default=None, compare=False, repr=False)
    #: the restriction applied by :meth:`restrict`: ((role, values), ...)
    selected: tuple = ()
    #: the role-named rows before the samples of an example are averaged (with their ``repeat`` and text): what a
    #: workspace stores, so that the stored log validates again; None where it is ``table`` itself
    rows: ir.Table | None = field(default=None, compare=False, repr=False)
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def has(self, role: str) -> bool:
        return role in self.table.columns

    def __contains__(self, role: str) -> bool:
        return self.has(role)

    def count(self, role: str) -> int:
        """Rows with a value of ``role`` (cached)."""
        if ("count", role) not in self._cache:
            t = self.table
            self._cache[("count", role)] = int(self.run(t.aggregate(n=t[role].count()))["n"].iloc[0])
        return self._cache[("count", role)]

    def restrict(self, **values) -> "LazyLog":
        """The rows of this log whose role ``r`` holds one of ``values[r]`` for every role named, e.g. a selection
        ``restrict(model=("a", "b"), task=("t1",))``; an empty sequence leaves the role unrestricted."""
        chosen = tuple((role, tuple(map(str, v))) for role, v in values.items() if len(v))
        if not chosen:
            return self
        if ("restrict", chosen) not in self._cache:  # kept: a page asks for the same selection on every rerun
            condition = ibis.and_(*(self.table[role].isin(list(v)) for role, v in chosen))
            table = self.table.filter(condition)
            n_rows = int(self.run(table.aggregate(n=table.count()))["n"].iloc[0])
            self._cache[("restrict", chosen)] = replace(self, table=table, n_rows=n_rows,
                                                        selected=self.selected + chosen, _cache={})
        return self._cache[("restrict", chosen)]

    def require(self, *roles: str, method: str) -> None:
        """EvalDataError naming the roles ``method`` needs that this log lacks."""
        missing = [role for role in roles if role not in self]
        if missing:
            raise EvalDataError(f"{self.source}: {method} needs the column(s) {', '.join(map(repr, missing))}; the "
                                f"log has {', '.join(self.table.columns)}. Name them in the mapping (column=role).")

    def models(self) -> list[str]:
        """The sorted models (of either side, for battles)."""
        if self.kind == BATTLES:
            return sorted(set(self.distinct("model_a")) | set(self.distinct("model_b")))
        return self.distinct("model")

    def distinct(self, role: str, where=None) -> list[str]:
        """The sorted distinct values of a text role (where ``where`` holds; cached without a condition)."""
        if where is None and ("distinct", role) in self._cache:
            return self._cache[("distinct", role)]
        t = self.table if where is None else self.table.filter(where)
        values = sorted(self.run(t.select(role).distinct())[role].astype(str))
        if where is None:
            self._cache[("distinct", role)] = values
        return values

    def run(self, expr: ir.Expr, arrow: bool = False) -> pd.DataFrame:
        """Execute ``expr`` (built on :attr:`table`) in the engine; a small pandas frame comes back (``arrow``: an
        Arrow table, :func:`evalcore.engine.connection.execute`)."""
        try:
            return execute(expr, arrow)
        except Exception as exc:  # the engine's own error types differ (duckdb, py4j, google.api_core, ...)
            raise EvalDataError(f"{self.source}: the engine failed: {_first_line(exc)}") from exc


def is_lazy(data: object) -> bool:
    """Whether ``data`` is a :class:`LazyLog` (the public functions accept one wherever they accept a frame)."""
    return isinstance(data, LazyLog)


def scan(source, mapping: dict[str, str | None] | None = None, table: str | None = None,
         connection=None) -> LazyLog:
    """A :class:`LazyLog` of ``source``: a Parquet or CSV file, a folder of them, a glob (``"runs/*.parquet"``), a
    list of such paths, a DuckDB database file with ``table``, or an Ibis table expression (any backend).
    ``mapping`` ({column: role}, ``None`` leaves a column out) is applied on top of the roles suggested from the
    column names, as on the Data page. ``connection`` is the Ibis backend to read files with (default: :func:`duckdb_connection`).
    Raises :class:`EvalDataError` naming the source for a missing path, an unreadable file, a wrong schema or
    values out of range."""
    if isinstance(source, ir.Table):
        name, raw = "the table expression", source
    elif isinstance(source, (list, tuple)):
        name = listed([str(s) for s in source])
        raw = _read_files([f for s in source for f in files_of(Path(s))], name, connection)
    else:
        name, raw = str(source), _read(source, table, connection)
    return _validated(raw, name, mapping)


def _read(source, table: str | None, connection) -> ir.Table:
    path = Path(source)
    if path.suffix.lower() in DATABASE:
        return _database_table(path, table)
    return _read_files(files_of(path), source, connection)


def _read_files(files: list[Path], source, connection) -> ir.Table:
    con = connection or duckdb_connection()
    kinds = {kind_of(f) for f in files}
    if len(kinds) > 1 or None in kinds:
        odd = [f.name for f in files if kind_of(f) is None]
        raise EvalDataError(f"{source}: expected Parquet or CSV files of one kind, found "
                            f"{listed(odd) if odd else 'both Parquet and CSV'}.")
    try:
        if kinds == {"parquet"}:
            return con.read_parquet([str(f) for f in files])
        return con.read_csv([str(f) for f in files])
    except Exception as exc:
        raise EvalDataError(f"{source}: cannot be read as {kinds.pop()}: {_first_line(exc)}") from exc


#: numbers the views of the logs opened in DuckDB (:func:`_named`): unique within the process
_VIEW_NUMBERS = itertools.count()


def _named(table: ir.Table) -> ir.Table:
    """The validated ``table`` as a temporary view of its DuckDB connection, so that the many queries on a log
    compile against one name instead of the whole validated expression (casts, missing labels, clipping: a third
    less time in Ibis per query); DuckDB inlines the view as it plans a query, so the plan is the same. Other
    engines keep the expression (a view there would outlive the session or need rights to create one)."""
    backend = ibis.get_backend(table)
    if backend.name != "duckdb":
        return table
    name = f"evalcore_log_{next(_VIEW_NUMBERS)}"
    with lock_of(backend):
        backend.raw_sql(f'CREATE TEMPORARY VIEW "{name}" AS {backend.compile(table)}')
        return backend.table(name)


def _database_table(path: Path, table: str | None) -> ir.Table:
    if not path.is_file():
        raise EvalDataError(f"{path}: no such file or folder.")
    try:
        con = ibis.duckdb.connect(str(path), read_only=True)
        tables = con.list_tables()
    except Exception as exc:
        raise EvalDataError(f"{path}: cannot be opened as a DuckDB database: {_first_line(exc)}") from exc
    if table not in tables:
        raise EvalDataError(f"{path}: name the table of the log (table=...); the database holds "
                            f"{listed(tables) if tables else 'no table'}.")
    return con.table(table)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


# ------------------------------------------------------------------------------------------------ validation


def _validated(raw: ir.Table, name: str, overrides: dict[str, str | None] | None) -> LazyLog:
    columns = list(raw.columns)
    if not columns:
        raise EvalDataError(f"{name}: the table has no columns: expected a header row naming the columns.")
    unknown = [c for c in (overrides or {}) if c not in columns]
    if unknown:
        raise EvalDataError(f"{name}: the mapping names a column '{unknown[0]}' that is not in the table; its "
                            f"columns are: {', '.join(columns)}.")
    suggested = with_overrides(columns, overrides)
    kind = detect_kind(r for r in suggested.values() if r is not None)
    if kind == SUMMARY:
        raise EvalDataError(f"{name}: a leaderboard summary (model, task, n, n_correct) is small: it is read in "
                            "memory, not by the engine (leave out --engine always).")
    if kind == LOG:
        suggested = with_overrides(columns, overrides, LOG)
    mapping = {c: r for c, r in suggested.items() if r is not None}
    try:
        check_mapping(mapping, columns, kind)
    except EvalDataError as exc:
        raise EvalDataError(f"{name}: {exc}") from None
    roles = {role: column for column, role in mapping.items()}
    if kind == BATTLES:
        return _validated_battles(raw, name, roles)
    missing = [r for r in ("model", "example_id") if r not in roles]
    if missing or not {"correct", "score"} & set(roles):
        need = missing + ([] if {"correct", "score"} & set(roles) else ["correct (or score)"])
        raise EvalDataError(f"{name}: no column for the role(s) {', '.join(need)}; the table's columns are: "
                            f"{', '.join(columns)}. Name them in the mapping (column=role).")
    notes: list[str] = []
    if "task" not in roles and "category" in roles:
        notes.append(f"No task column: each category ('{roles['category']}') is treated as one task.")
    n_rows = _check_values(_role_table(raw, roles), roles, name, notes)
    rows = _role_table(raw, roles, clipped=True)
    table, n_rows = _per_example(rows, roles, name, notes, n_rows)
    return LazyLog(_named(table), name, roles, n_rows, tuple(notes), rows=None if table is rows else rows)


def _validated_battles(raw: ir.Table, name: str, roles: dict[str, str]) -> LazyLog:
    """Pairwise battles: model_a and model_b (text, never empty), outcome (1 model_b wins, 0 model_a, 0.5 a tie;
    missing = no human vote) and the judge's probability that model_b wins, both in [0, 1]."""
    if not {"model_a", "model_b"} <= set(roles):
        raise EvalDataError(f"{name}: battles need both a model_a and a model_b column; the mapping has "
                            f"{', '.join(sorted(roles))}.")
    out = {role: raw[roles[role]].cast("string") for role in ("model_a", "model_b")}
    out |= {role: missing_nan(raw[roles[role]].cast("float64")) for role in ("outcome", "judge") if role in roles}
    table = raw.select(**out)
    checks = {"rows": table.count(),
              "no_model": (table.model_a.isnull() | table.model_b.isnull()).cast("int64").sum(),
              **{f"{role}_names": table[role].approx_nunique() for role in ("model_a", "model_b")}}
    for role in ("outcome", "judge"):
        if role in roles:
            v = table[role]
            bad = (v < 0) | (v > 1)
            checks |= {f"{role}_out": bad.cast("int64").sum(), f"{role}_min": v.min(where=bad),
                       f"{role}_max": v.max(where=bad)}
    found = execute(table.aggregate(**checks)).iloc[0]
    if not found["rows"]:
        raise EvalDataError(f"{name}: the table has a header but no data rows.")
    problems = [f"{int(found['no_model']):,} battles lack model_a or model_b."] if found["no_model"] else []
    estimates = [int(found["model_a_names"]), int(found["model_b_names"])]
    problems += _many_names(table, {roles[r]: r for r in ("model_a", "model_b")}, "models", max(estimates),
                            sum(estimates))
    for role in ("outcome", "judge"):
        if role in roles and found[f"{role}_out"]:
            problems.append(f"{_where(roles[role], role)} must lie in [0, 1] (1 if model_b wins, 0 if model_a "
                            f"wins, 0.5 a tie); {_rows(found[f'{role}_out'])} values from "
                            f"{found[f'{role}_min']:.10g} to {found[f'{role}_max']:.10g}.")
    if problems:
        raise EvalDataError(f"{name}: " + " ".join(problems))
    return LazyLog(_named(table), name, roles, int(found["rows"]), (), BATTLES)


def _role_table(raw: ir.Table, roles: dict[str, str], clipped: bool = False) -> ir.Table:
    """The role-named columns; a missing task is the category (else "all"), a missing category or group "all"; a
    ``repeat`` column as it is stored (it only tells the samples of an example apart, :func:`_per_example`). With
    ``clipped`` the probabilities validation checks (:func:`_unit_roles`) are clipped to [0, 1] (:func:`_clipped`)."""
    out: dict[str, ir.Value] = {}
    for role in ("model", "example_id", "task", "category", "group"):
        if role in roles:
            out[role] = raw[roles[role]].cast("string")
    if "task" not in out:
        out["task"] = out.get("category", ibis.literal(LOG_DEFAULT_LABELS["task"]))
    for role in ("category", "group"):
        out.setdefault(role, ibis.literal(LOG_DEFAULT_LABELS[role]))
    for role in VALUE_ROLES:
        if role in roles:
            values = raw[roles[role]].cast("float64")
            out[role] = _clipped(values) if clipped and role in _unit_roles(roles) else missing_nan(values)
    if "repeat" in roles:
        out["repeat"] = raw[roles["repeat"]]
    for role in EXAMPLE_TEXT_ROLES:  # shown to people, never reduced: cut as in memory, in characters here
        if role in roles:
            out[role] = raw[roles[role]].cast("string").substr(0, TEXT_CHARACTERS)
    return raw.select(**out, **_features(raw, roles, out))


def _features(raw: ir.Table, roles: dict[str, str], taken) -> dict[str, ir.Value]:
    """The other numeric columns, as float64 (NaN missing): the feature columns a user may choose on the Subgroups
    page, kept under their names (unless a name is a role's or already taken)."""
    used = set(roles.values())
    return {c: missing_nan(raw[c].cast("float64")) for c in raw.columns
            if c not in used and c not in taken and c not in (*LOG_ROLES, N_REPEATS)
            and raw[c].type().is_numeric() and not raw[c].type().is_boolean()}


def _unit_roles(roles: dict[str, str]) -> list[str]:
    """The probabilities that must lie in [0, 1], as in memory: confidence, and proxy where there is a label."""
    return [role for role in ("confidence", "proxy") if role in roles and (role == "confidence" or "correct" in roles)]


def _clipped(values: ir.FloatingColumn) -> ir.FloatingColumn:
    """v ↦ null where v is NaN, else min(max(v, 0), 1), as one CASE on the stored value (Ibis' clip wraps each bound
    in a null test around the NaN test, which DuckDB evaluates on every row of every pass that reads the column)."""
    return ibis.cases((values.isnan(), ibis.null("float64")), (values < 0.0, 0.0), (values > 1.0, 1.0), else_=values)


def missing_nan(values: ir.FloatingColumn) -> ir.FloatingColumn:
    """NaN as a missing value (null), as pandas reads it in memory: writers from numpy arrays store NaN in Parquet
    where pandas' writer stores null."""
    return values.isnan().ifelse(ibis.null("float64"), values)


def _check_values(table: ir.Table, roles: dict[str, str], name: str, notes: list[str]) -> int:
    """One aggregate query over the rows as stored (every sample, before :func:`_per_example` averages them, so a
    fractional mean never hides a bad 0/1 label): row count, missing identities and repeat numbers, 0/1 and [0, 1]
    ranges; the rows, or EvalDataError listing every problem (the columns, how many rows, example values, what to
    do)."""
    checks = {"rows": table.count(), "no_model": table.model.isnull().sum(),
              "no_id": table.example_id.isnull().sum(),
              **{f"{role}_names": table[role].approx_nunique() for role in _NAME_LIMITS}}
    if "repeat" in roles:
        checks["no_repeat"] = table.repeat.isnull().sum()
    for metric in ("correct", "score"):
        if metric in roles:
            checks[f"unlabeled_{metric}"] = table[metric].isnull().sum()
    if "correct" in roles:
        c = table.correct
        bad = (c != 0.0) & (c != 1.0)  # null where c is missing: not counted
        checks |= {"bad_correct": bad.sum(), "bad_correct_low": c.min(where=bad), "bad_correct_high": c.max(where=bad),
                   "probability_like": ((c > 0) & (c < 1)).sum()}
    for role in _unit_roles(roles):
        v = table[role]
        out = (v < -UNIT_TOLERANCE) | (v > 1 + UNIT_TOLERANCE)
        checks |= {f"{role}_out": out.sum(), f"{role}_min": v.min(where=out), f"{role}_max": v.max(where=out)}
    try:
        found = execute(table.aggregate(**checks)).iloc[0]
    except Exception as exc:
        raise EvalDataError(f"{name}: the values cannot be read as their roles need "
                            f"({_first_line(exc)}); check the column mapping.") from exc
    rows = int(found["rows"])
    if rows == 0:
        raise EvalDataError(f"{name}: the table has a header but no data rows.")
    problems = []
    for role, key in (("model", "no_model"), ("example_id", "no_id"), ("repeat", "no_repeat")):
        if found.get(key):
            problems.append(f"{_where(roles[role], role)} is empty in {int(found[key]):,} rows: every row needs one.")
    for role, what in _NAME_LIMITS.items():
        estimate = int(found[f"{role}_names"])
        problems += _many_names(table, {roles.get(role, role): role}, what, estimate, estimate)
    if "correct" in roles and found["bad_correct"]:
        hint = (" These look like probabilities: map this column to 'confidence' or 'score' instead."
                if found["probability_like"] == found["bad_correct"] else "")
        problems.append(f"{_where(roles['correct'], 'correct')} must be 0 or 1 (or true/false); "
                        f"{_rows(found['bad_correct'])} other values (from {found['bad_correct_low']:.10g} to "
                        f"{found['bad_correct_high']:.10g}).{hint}")
    for role in _unit_roles(roles):
        if found[f"{role}_out"]:
            high = found[f"{role}_max"]
            hint = " They look like percentages: divide the column by 100." if 2 <= high <= 100 else ""
            problems.append(f"{_where(roles[role], role)} must lie in [0, 1]; {_rows(found[f'{role}_out'])} "
                            f"values from {found[f'{role}_min']:.10g} to {high:.10g}.{hint}")
    if problems:
        raise EvalDataError(f"{name}: " + " ".join(problems))
    for metric in ("correct", "score"):
        unlabeled = int(found.get(f"unlabeled_{metric}", 0) or 0)
        if unlabeled == rows:
            notes.append(f"No row has a '{metric}' label: only views that work without labels can use it.")
        elif unlabeled:
            notes.append(f"{unlabeled:,} of {rows:,} rows have no '{metric}' label (unlabeled): they are kept for "
                         "label-free uses and left out of methods that need the label.")
    return rows


#: the text roles whose distinct values are bounded, and the name of their limit (ReadLimits.max_<name>)
_NAME_LIMITS = {"model": "models", "task": "tasks", "group": "groups"}


def _many_names(table: ir.Table, columns: dict[str, str], what: str, low: int, high: int) -> list[str]:
    """The problem (none or one) of more distinct values in ``columns`` ({column: role}) together than the limit
    ``max_<what>`` allows. ``low`` and ``high`` bound the engine's estimate (HyperLogLog, a few percent off; one
    pass of the aggregate query): far from the limit it decides, near it the values are counted exactly (a hash
    of at most twice the limit's values)."""
    limits = ReadLimits.from_env()
    limit = getattr(limits, f"max_{what}")
    if high <= limit // 2:
        return []
    count, about = low, "about "
    if low <= 2 * limit:
        names = [table.select(name=table[role]) for role in columns.values()]
        union = names[0] if len(names) == 1 else names[0].union(names[1])
        count, about = int(execute(union.distinct().count())), ""
    if count <= limit:
        return []
    several = len(columns) > 1
    return [f"Column{'s' if several else ''} {' and '.join(map(repr, columns))} hold{'' if several else 's'} "
            f"{about}{count:,} distinct {what}; evalcore handles at most {limit:,} (limit max_{what}): the cost of "
            f"every method grows with them. Check that {'they name' if several else 'it names'} the {what} (not "
            f"the examples), or scan a subset. {limits.raise_hint(what)}"]


#: the roles that name one example of one model: the unit of every method
EXAMPLE_KEYS = ("model", "task", "example_id")


def _per_example(table: ir.Table, roles: dict[str, str], name: str, notes: list[str],
                 n_rows: int) -> tuple[ir.Table, int]:
    """The log with one row per (model, task, example) and its number of rows (of the table returned).

    Without a ``repeat`` role a repeated (model, task, example) is refused; with one, a repeated (model, task,
    example, repeat), and the samples of each example are averaged (:func:`_averaged`), with a note; the rows are
    then the examples, counted on the averaged table."""
    if "repeat" not in roles:
        _refuse_duplicates(table, EXAMPLE_KEYS, roles, name,
                           " If they are repeated samples of one example (epochs, attempts, re-judged answers), map "
                           "the column that numbers them to the role 'repeat' (column=repeat in the mapping).")
        return table, n_rows
    _refuse_duplicates(table, (*EXAMPLE_KEYS, "repeat"), roles, name)
    averaged = _averaged(table, roles)
    found = _first_row(averaged.aggregate(examples=averaged.count(), several=(averaged.n_repeats > 1).sum(),
                                          most=averaged.n_repeats.max()), name)
    if found["several"]:
        notes.append(f"{int(found['several']):,} of {int(found['examples']):,} (model, task, example) have several "
                     f"samples (column '{roles['repeat']}', up to {int(found['most'])} each). The example is the "
                     "unit: each example's samples are averaged first (n_repeats counts them), so means get "
                     "cluster-robust intervals, bootstraps resample examples with all their samples, and methods that "
                     "need one value per example use the per-example mean.")
    return averaged, int(found["examples"])


def _averaged(table: ir.Table, roles: dict[str, str]) -> ir.Table:
    """One row per (model, task, example), as :func:`evalcore.data.repeats.per_example` makes in memory: category
    and group the example's (the least, should its samples disagree), each value role the mean Σ_s v_s / m over the
    m samples s that have a value (null if none), feature columns likewise, and ``n_repeats`` (float) the number of
    samples averaged."""
    values = [role for role in VALUE_ROLES if role in roles]
    values += [c for c in table.columns
               if c not in (*TEXT_ROLES, *EXAMPLE_TEXT_ROLES, *values, "repeat")]  # feature columns
    averaged = table.group_by(list(EXAMPLE_KEYS)).aggregate(
        category=table.category.min(), group=table.group.min(), **{role: table[role].mean() for role in values},
        n_repeats=table.count().cast("float64"))
    return averaged.select(*TEXT_ROLES, *values, "n_repeats")


def _refuse_duplicates(table: ir.Table, keys: tuple[str, ...], roles: dict[str, str], name: str,
                       hint: str = "") -> None:
    """EvalDataError when a combination of ``keys`` appears in more than one row, naming the columns, how many
    combinations repeat and one of them.

    One pass groups every row by a hash of its keys (DuckDB: 64 bits, a small hash table that spills to the
    ``temp_directory`` beyond the ``memory_limit``, so time and memory grow linearly with the rows); only when some
    hash is shared (a duplicate, or among n distinct keys a collision, with probability about n²/2⁶⁵) does a second
    pass group the rows of the shared hashes by the keys themselves."""
    hashed = table.mutate(key_hash=ibis.struct({k: table[k] for k in keys}).hash())
    counted = hashed.group_by("key_hash").aggregate(copies=hashed.count())
    shared = counted.filter(counted.copies > 1)
    if not int(_first_row(shared.aggregate(n=shared.count()), name)["n"]):
        return
    rows = hashed.semi_join(shared, "key_hash")
    repeated = rows.group_by(list(keys)).aggregate(copies=rows.count()).filter(lambda t: t.copies > 1)
    found = _first_row(repeated.aggregate(pairs=repeated.count(), model=repeated.model.min()), name)
    if not found["pairs"]:
        return
    first = repeated.filter(repeated.model == found["model"])
    first = _first_row(first.select(**{k: first[k].cast("string") for k in keys}).limit(1), name)
    what = ", ".join("example" if k == "example_id" else k for k in keys)
    example = ", ".join(f"{k}={first[k]!r}" for k in keys)
    cols = ", ".join(f"'{roles.get(k, k)}'" for k in keys if k in roles)
    raise EvalDataError(f"{name}: each ({what}) must appear once, but {int(found['pairs']):,} repeat ({cols}), "
                        f"e.g. {example}. Remove the duplicates or check the column mapping.{hint}")


def _first_row(expr: ir.Table, name: str) -> pd.Series:
    """The first row of ``expr``'s result (an aggregate's only row); EvalDataError naming the source on failure."""
    try:
        return execute(expr).iloc[0]
    except Exception as exc:  # the engine's own error types differ (duckdb, py4j, google.api_core, ...)
        raise EvalDataError(f"{name}: the engine failed: {_first_line(exc)}") from exc


def _rows(count) -> str:
    """'1 row holds' / '12 rows hold'."""
    count = int(count)
    return f"{count:,} row holds" if count == 1 else f"{count:,} rows hold"


def _where(column: str, role: str) -> str:
    return f"Column '{column}'" + (f" (role '{role}')" if column != role else "")
