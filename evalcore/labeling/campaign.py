"""A labeling campaign, stored in a workspace's catalog: its queue, who is labeling what, every label, the estimate.

:meth:`Campaign.create` plans the queue of a saved dataset's model (:func:`.queue.plan_queue`) and stores it with
the campaign in one transaction. Annotators ask :meth:`Campaign.next` for an example: it is claimed for them for
:data:`CLAIM_SECONDS` (two annotators never get the same example at once, unless the campaign asks for ``overlap``
labels per example), in the queue's order. :meth:`Campaign.record` keeps every label as a fact (who, when, value,
note; a skip is a label without a value); re-labeling replaces one's own label and keeps the earlier one, pointing
to the label that replaced it. Each change is one SQLite transaction (``BEGIN IMMEDIATE``, WAL journal), so a label
once acknowledged survives the server being killed, and concurrent annotators never interleave a check with the
write that depends on it. :meth:`Campaign.estimate` is the design's estimate from the current labels
(:func:`.estimate.live_estimate`), read from the catalog alone.

**Claims and conflicts.** A label is accepted from the holder of the example's claim (also once the claim has
expired, until its holder asks for another example) and from an annotator changing their own label; labels from a
file (:meth:`Campaign.import_labels`) need no claim. An expired claim lets a second annotator have the example, so
an example can end with more labels than the campaign's overlap. Labels are never averaged when they disagree
(:func:`settle`): an example whose current labels agree is settled by them; one whose labels disagree waits in the
adjudication queue (:meth:`Campaign.pending`) until its owner or a named adjudicator decides its value
(:meth:`Campaign.adjudicate`; decisions are kept with their history, as labels). The estimate, the labeled
examples and the export use settled values only, and say which examples are pending or skipped.

A campaign over two or more models (``Campaign.create(..., models=[...])``) is a
:class:`.comparison.ComparisonCampaign`: its queue and claims are these, its labels per-model verdicts
(:mod:`.comparison`); :meth:`Campaign.open` and :meth:`Campaign.list` return and list both kinds.

Who may label: the members who may see the campaign (:func:`evalcore.workspace.access.visible`: its owner, or any
signed-in member once it is shared; anyone where it has no owner); only its owner deletes it.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import NamedTuple

import numpy as np
import pandas as pd

from evalcore.data.limits import bounded_name, bounded_note, env_number
from evalcore.data.repeats import per_example
from evalcore.errors import EvalDataError, listed
from evalcore.labeling import agreement
from evalcore.labeling.estimate import MIN_LABELS, LiveEstimate, inclusion_probabilities, live_estimate
from evalcore.labeling.queue import DESIGN_NAMES, DESIGNS, plan_queue
from evalcore.stats.intervals import DEFAULT_LEVEL
from evalcore.workspace import access, catalog
from evalcore.workspace.access import canonical

#: how long an example stays claimed by the annotator it was handed to (``EVALCORE_CLAIM_SECONDS``)
CLAIM_SECONDS = 600
METRICS = ("correct", "score", "pairwise")
#: the words a label may be given in, per metric (numbers are read as numbers)
WORDS = {"correct": {"correct": 1.0, "incorrect": 0.0, "true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0,
                     "right": 1.0, "wrong": 0.0},
         "pairwise": {"a": 0.0, "b": 1.0, "tie": 0.5}}
QUEUE_COLUMNS = ("position", "example_id", "task", "stratum", "weight", "priority", "proxy", "judge")
#: scores agree when they differ by at most this share of the scale's range (1 point on a 1-5 scale)
SCORE_AGREEMENT = 0.25
#: the columns of :meth:`Campaign._labeled`'s frame, the estimator's input
LABELED_COLUMNS = ("example_id", "position", "stratum", "weight", "proxy", "judge", "value", "low", "high", "status")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _claim_seconds() -> int:
    return env_number("EVALCORE_CLAIM_SECONDS", CLAIM_SECONDS)


def examples_of(frame: pd.DataFrame, model: str, metric: str) -> pd.DataFrame:
    """The rows of ``model`` to label (for battles, "model_a vs model_b" or "all"; with repeats, one row per example,
    the first sample's), indexed by the campaign's example id: the example id, ``task/example_id`` where two tasks
    share an id, ``battle-<row>`` for a battle. One rule for the queue (:func:`_pool`) and the Label page's text."""
    if metric == "pairwise":
        rows = frame if model in ("", "all") else frame[(frame["model_a"].astype(str) + " vs " +
                                                         frame["model_b"].astype(str)) == model]
        return rows.set_axis([f"battle-{i}" for i in rows.index])
    if model not in set(frame["model"].astype(str)):
        raise EvalDataError(f"The dataset has no model {model!r}; its models are "
                            f"{listed(sorted(frame['model'].astype(str).unique()))}.")
    rows = frame[frame["model"].astype(str) == model]
    if "repeat" in rows:  # the example is the unit: per_example keys it by its id
        rows = per_example(rows).set_index(rows.drop_duplicates("example_id").index)
        rows = rows.join(frame.loc[rows.index, [c for c in frame.columns if c not in rows.columns]])
    ids = rows["example_id"].astype(str)
    if ids.duplicated().any():
        ids = rows["task"].astype(str) + "/" + ids
    return rows.set_axis(ids.to_numpy())


def _pool(frame: pd.DataFrame, model: str, metric: str) -> pd.DataFrame:
    """The examples to label (:func:`examples_of`) with ``proxy`` (the model's confidence) and ``judge`` (an AI
    annotator's verdict: the log's ``proxy`` role, a battle's ``judge``) where the log has them."""
    rows = examples_of(frame, model, metric)
    pool = pd.DataFrame({"example_id": rows.index.to_numpy()})
    if "task" in rows:
        pool["task"] = rows["task"].astype(str).to_numpy()
    if "confidence" in rows and metric != "pairwise":
        pool["proxy"] = rows["confidence"].to_numpy(float)
    judge = "judge" if metric == "pairwise" else "proxy"
    if judge in rows:
        pool["judge"] = rows[judge].to_numpy(float)
    return pool


def author(name) -> str | None:
    """A name typed where nobody signs in (the Label page of an instance without sign-in, a labels file's annotator
    column): the label's author, never a member's identity. Surrounding blanks stripped; None for a blank one;
    EvalDataError for one that looks like an e-mail address (an ``@``), which would pass for that member's labels
    (members sign in, or import their labels as themselves with ``--by``)."""
    text = bounded_name(str(name).strip() if name is not None else "", "The annotator's name")
    if "@" in text:
        raise EvalDataError(f"The name {text!r} looks like an e-mail address: a name typed where nobody signs in "
                            "is a label's author, never a member's identity. Type a plain name (e.g. alice), or "
                            "sign in on the team's instance to label as yourself.")
    return text or None


def note_text(note, what: str = "The note") -> str | None:
    """A note as stored: None for none, else its text within the bound of notes
    (:func:`evalcore.data.limits.bounded_note`: 10,000 characters)."""
    return None if note is None else bounded_note(str(note), what)


def parse_value(value, metric: str, scale: tuple[float, float]) -> float:
    """A label as a number on the metric's scale: 0/1 (also correct/incorrect, true/false) for ``correct``, a
    number in ``scale`` for ``score``, A / B / tie (0, 1, 0.5: the share model B wins) for ``pairwise``;
    EvalDataError naming the allowed values otherwise."""
    allowed = {"correct": "0 or 1 (correct / incorrect)", "pairwise": "A, B or tie",
               "score": f"a number from {scale[0]:g} to {scale[1]:g}"}[metric]
    if isinstance(value, str) and value.strip().lower() in WORDS.get(metric, {}):
        return WORDS[metric][value.strip().lower()]
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise EvalDataError(f"The label {value!r} is not on this campaign's scale: give {allowed}.") from None
    ok = (number in (0.0, 1.0) if metric == "correct" else number in (0.0, 0.5, 1.0) if metric == "pairwise"
          else math.isfinite(number) and scale[0] <= number <= scale[1])
    if not ok:
        raise EvalDataError(f"The label {value!r} is not on this campaign's scale: give {allowed}.")
    return number


@dataclass(frozen=True)
class CampaignRecord:
    id: str
    dataset_id: str
    name: str
    owner: str | None
    shared: bool
    created: str
    model: str
    design: str
    metric: str
    scale: tuple[float, float]
    target: float | None
    budget: int | None
    level: float
    seed: int
    overlap: int
    planned: int
    pool: dict
    adjudicators: tuple[str, ...] = ()
    #: a comparison campaign's models (the first minus the second is its difference); () for one model
    models: tuple[str, ...] = ()
    decide: bool = False
    margin: float = 0.0
    #: what a comparison's outputs are: "class" (classes or choices: the right answer may be given once) or "text"
    outputs: str = ""
    notes: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """"comparison" for a campaign over several models, "model" for one model's."""
        return "comparison" if self.models else "model"

    @property
    def description(self) -> str:
        """E.g. "stratified, Neyman allocation; ±0.02 at 95%; seed 0" (a comparison with the decide rule: "until
        decided at 95%")."""
        goal = f"±{self.target:g} at {self.level:.0%}" if self.target is not None else \
            f"{self.budget:,} labels, {self.level:.0%} intervals"
        if self.decide:  # the target only plans the queue: the stop is the decision (or the budget)
            margin = f" by more than {self.margin:g}" if self.margin else ""
            goal = (f"until decided{margin} at {self.level:.0%}" +
                    (f" or {self.budget:,} labels" if self.budget is not None else ""))
        if self.models:
            from evalcore.labeling.difference import COMPARISON_DESIGN_NAMES as names
        else:
            names = DESIGN_NAMES
        return f"{names[self.design]}; {goal}; seed {self.seed}"


def _record(row, comparison=None) -> CampaignRecord:
    """A campaign's record from its catalog row and, for a comparison campaign, its ``comparisons`` row (a catalog
    read-only at schema version 3 names no adjudicators; one before version 5 holds no comparison)."""
    more = {} if comparison is None else {
        "models": tuple(json.loads(comparison["models"])), "decide": bool(comparison["decide"]),
        "margin": float(comparison["margin"]), "outputs": comparison["outputs"],
        "notes": tuple(json.loads(comparison["notes"]))}
    return CampaignRecord(row["id"], row["dataset_id"], row["name"], canonical(row["owner"]), bool(row["shared"]),
                          row["created"], row["model"], row["design"], row["metric"],
                          (row["scale_low"], row["scale_high"]), row["target"], row["budget"], row["level"],
                          row["seed"], row["overlap"], row["planned"], json.loads(row["pool"]),
                          tuple(json.loads(row["adjudicators"]) if "adjudicators" in row.keys() else ()), **more)


def _comparisons(db, campaign_id: str | None = None) -> dict:
    """The ``comparisons`` rows by campaign id (all, or ``campaign_id``'s); none in a catalog before version 5."""
    found = catalog.rows(db, "SELECT * FROM comparisons" + ("" if campaign_id is None else " WHERE campaign_id = ?"),
                         () if campaign_id is None else (campaign_id,))
    return {r["campaign_id"]: r for r in found}


def _opened(workspace, record: CampaignRecord):
    """The campaign object of a record: a :class:`.comparison.ComparisonCampaign` for several models."""
    if record.models:
        from evalcore.labeling.comparison import ComparisonCampaign

        return ComparisonCampaign(workspace, record)
    return Campaign(workspace, record)


class Labeled(NamedTuple):
    """:meth:`Campaign._labeled`: the estimator's rows (:data:`LABELED_COLUMNS`), the active design's threshold
    τ, and how many examples are skipped (no label) and pending (labels that disagree)."""

    frame: pd.DataFrame
    tau: float
    skipped: int
    pending: int


@dataclass(frozen=True)
class CampaignAgreement:
    """:meth:`Campaign.agreement`: ``annotators`` (their agreement beyond chance; None before two examples have two
    labels), ``judge`` (the AI judge against the settled labels; None without judge verdicts) and ``quality`` (one
    row per annotator, :func:`.agreement.annotator_quality`)."""

    annotators: agreement.Agreement | None
    judge: agreement.JudgeAgreement | None
    quality: pd.DataFrame


def checked_level(level: float | None) -> float:
    """A campaign's level: :data:`DEFAULT_LEVEL` when not given; EvalDataError outside (0, 1)."""
    level = DEFAULT_LEVEL if level is None else float(level)
    if not 0 < level < 1:
        raise EvalDataError(f"The level must lie between 0 and 1; got {level!r}.")
    return level


def insert_campaign(db, row: dict, order: pd.DataFrame) -> None:
    """Store a campaign's catalog ``row`` and its queue (``order``: a plan's, in queue order) in the transaction
    ``db``."""
    order = order.assign(position=np.arange(len(order)))
    if "task" not in order:
        order["task"] = None
    queue = [(row["id"], *r) for r in order[list(QUEUE_COLUMNS)].astype(object).where(order.notna(), None)
             .itertuples(index=False, name=None)]
    db.execute(f"INSERT INTO campaigns ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values()))
    db.executemany(f"INSERT INTO queue (campaign_id, {', '.join(QUEUE_COLUMNS)}) VALUES "
                   f"(?, {', '.join('?' * len(QUEUE_COLUMNS))})", queue)


def campaign_name(name, default: str) -> str:
    """A new campaign's name: ``name`` as given, within the bound of names
    (:func:`evalcore.data.limits.bounded_name`), else ``default`` (made of the model's names)."""
    return bounded_name(str(name), "The campaign's name") if name else default


def _names(names) -> tuple[str, ...]:
    """Members' names in their canonical form, each once, in the order given (blanks dropped)."""
    return tuple(dict.fromkeys(n for n in map(canonical, [names] if isinstance(names, str) else names) if n))


def settle(labels: pd.DataFrame, adjudicated: pd.Series, metric: str, scale: tuple[float, float]) -> pd.DataFrame:
    """Each example's settled value from its current labels (``labels``: ``example_id``, ``value``; skips left
    out) and the adjudications in force (``adjudicated``: example id -> value), indexed by example id, with
    ``value``, ``low``, ``high``, ``labels`` (how many) and ``status``:

    * ``adjudicated``: the adjudicator's value, whatever the labels say (low = high = value);
    * ``labeled``: the labels agree (one label agrees with itself): 0/1 and A/B/tie labels all equal; scores
      within :data:`SCORE_AGREEMENT` of the scale's range of each other (max - min <= 0.25 (scale[1] - scale[0])),
      settled at their mean (low = high = value);
    * ``pending``: the labels disagree: value NaN, ``low``/``high`` the smallest and largest label; never averaged.
    """
    per = labels.groupby("example_id", sort=False)["value"].agg(["min", "max", "mean", "size"])
    tolerance = SCORE_AGREEMENT * (scale[1] - scale[0]) if metric == "score" else 0.0
    conflict = (per["max"] - per["min"]) > tolerance
    out = pd.DataFrame({"value": per["mean"].where(~conflict), "low": per["min"].where(conflict, per["mean"]),
                        "high": per["max"].where(conflict, per["mean"]), "labels": per["size"],
                        "status": np.where(conflict, "pending", "labeled")}, index=per.index)
    out = out.reindex(out.index.append(adjudicated.index[~adjudicated.index.isin(out.index)]))
    out.loc[adjudicated.index, ["value", "low", "high"]] = np.repeat(adjudicated.to_numpy(float)[:, None], 3, 1)
    out.loc[adjudicated.index, "status"] = "adjudicated"
    out["labels"] = out["labels"].fillna(0).astype(int)
    return out


def sentence(info: CampaignRecord, estimate: LiveEstimate) -> str:
    """The estimate in one plain sentence, as the Label page opens with it, with how many examples await
    adjudication."""
    what = {"correct": "accuracy", "score": "mean score", "pairwise": "share of battles model B wins"}[info.metric]
    pending = (f" {estimate.pending:,} example{' awaits' if estimate.pending == 1 else 's await'} adjudication: "
               "their labels disagree." if estimate.pending else "")
    if estimate.skipped:
        pending += (f" {estimate.skipped:,} skipped example{'' if estimate.skipped == 1 else 's'} "
                    "count at their worst and best values in the interval (skips are not at random) and wait in "
                    "the adjudication queue: settling them narrows it.")
    if estimate.estimate != estimate.estimate:  # NaN: not enough labels yet
        first = "2 labels in every stratum" if len(info.pool["strata"]) > 1 else "2 labels"
        return (f"{info.model}: {estimate.labels:,} labels so far; the first estimate needs {first}, and the stop "
                f"rule at least {MIN_LABELS} labels.{pending}")
    text = (f"{info.model}'s {what} is {estimate.estimate:.3f} ({info.level:.0%} interval {estimate.ci_low:.3f}–"
            f"{estimate.ci_high:.3f}, {estimate.estimator}) from {estimate.labels:,} labels, "
            f"{info.description.split(';')[0]}.")
    if estimate.stop:
        return text + (f" You can stop: the interval is within ±{info.target:g}." if info.target is not None else
                       f" The budget of {info.budget:,} labels is used.") + pending
    return text + f" About {estimate.needed:,} more labels needed" + (
        f" for ±{info.target:g}." if info.target is not None else " for the budget.") + pending


class Claims:
    """What every campaign shares: its members (:meth:`_member`) and the claims that hand its queue out
    (:meth:`next`), counted against the labels of its table :attr:`LABELS` (the queue's ``labeled`` column holds
    each example's labels in force that are not skips)."""

    LABELS = "labels"

    def __init__(self, workspace, record: CampaignRecord) -> None:
        self.workspace = workspace
        self.info = record

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def _db(self):
        return self.workspace.catalog

    def _member(self, annotator) -> str:
        who = canonical(annotator)
        if who is None:
            raise EvalDataError("Every label needs its annotator (a name or the signed-in member's e-mail).")
        bounded_name(who, "The annotator's name")
        if not access.visible(self.info.owner, self.info.shared, who):
            raise PermissionError(f"{who} is not a member of this labeling campaign ({self.id}): only its owner "
                                  f"({self.info.owner}) labels it until it is shared with the team.")
        return who

    def _queue_end(self) -> int:
        """Positions handed out: the budget, or the whole pool for a campaign run to a target."""
        return self.info.budget if self.info.budget is not None else self.info.pool["N"]

    def next(self, annotator: str) -> str | None:
        """The next example for ``annotator`` in the queue's order, claimed for them (the same one again while
        their claim holds), or None when the queue is done for them. Their expired claims are given up here (the
        example may have gone to another annotator since); others' expired claims no longer hold an example, but
        stay until their holders ask again, so that a label given late is kept (and settled by :func:`settle`)."""
        who = self._member(annotator)
        now = time.time()
        with catalog.transaction(self._db) as db:
            db.execute("DELETE FROM claims WHERE campaign_id = ? AND annotator = ? AND until < ?",
                       (self.id, who, now))
            held = db.execute("SELECT example_id FROM claims WHERE campaign_id = ? AND annotator = ?",
                              (self.id, who)).fetchone()
            if held is not None:
                db.execute("UPDATE claims SET until = ? WHERE campaign_id = ? AND annotator = ?",
                           (now + _claim_seconds(), self.id, who))
                return held["example_id"]
            found = db.execute(
                f"""SELECT q.example_id FROM queue q WHERE q.campaign_id = :c AND q.position < :end
                   AND q.labeled + (SELECT COUNT(*) FROM claims k WHERE k.campaign_id = :c
                                    AND k.example_id = q.example_id AND k.until >= :now) < :overlap
                   AND NOT EXISTS (SELECT 1 FROM {self.LABELS} l WHERE l.campaign_id = :c
                                   AND l.example_id = q.example_id AND l.annotator = :who AND l.replaced_by IS NULL)
                   ORDER BY q.position LIMIT 1""",
                {"c": self.id, "end": self._queue_end(), "overlap": self.info.overlap, "who": who, "now": now}
            ).fetchone()
            if found is None:
                return None
            db.execute("INSERT INTO claims VALUES (?, ?, ?, ?)", (self.id, found["example_id"], who,
                                                                 now + _claim_seconds()))
            return found["example_id"]

    def _check_claim(self, db, example_id: str, who: str, need_claim: bool = True) -> None:
        """Refuse a label of ``example_id`` outside the queue or past its budget (:meth:`_queue_end`), or
        (``need_claim``: not from a file) from ``who`` holding neither its claim (live or expired) nor a label of it
        in force."""
        queued = db.execute("SELECT position FROM queue WHERE campaign_id = ? AND example_id = ?",
                            (self.id, example_id)).fetchone()
        if queued is None:
            raise EvalDataError(f"The example {example_id!r} is not in the queue of this campaign ({self.id}): only "
                                "the examples its design drew can be labeled (others would bias the estimate).")
        if queued["position"] >= self._queue_end():
            raise EvalDataError(self._past_budget(example_id, queued["position"]))
        if need_claim and db.execute(
                f"""SELECT 1 FROM claims WHERE campaign_id = :c AND example_id = :e AND annotator = :w UNION ALL
                   SELECT 1 FROM {self.LABELS} WHERE campaign_id = :c AND example_id = :e AND annotator = :w
                   AND replaced_by IS NULL""", {"c": self.id, "e": example_id, "w": who}).fetchone() is None:
            raise EvalDataError(f"{who} holds no claim on the example {example_id!r} of this campaign ({self.id}): "
                                "label the example the campaign hands you (the Label page, or Campaign.next), or "
                                "change one of your own labels.")

    def _past_budget(self, example_id: str, position: int) -> str:
        return (f"The example {example_id!r} is at position {position + 1:,} of the queue, past the campaign's budget "
                f"of {self._queue_end():,} labels: only the first {self._queue_end():,} examples of the queue are "
                "labeled (a label past them would count where the design drew nothing).")

    def _out_of_design(self, db, lines: list[tuple[int, str]]) -> list[str]:
        """What the design refuses of the labels of a file (``lines``: its line number and example id, per label;
        ids outside the queue are refused elsewhere): an example past the budget, and one further on in the queue
        than an example that nobody has been handed (claimed, live or expired) or labeled, and that the file does
        not label either. The design's sample is the start of its queue, in order: labels from its end (of an
        active queue, the examples the model is surest of) would count as a sample the design never drew."""
        position = {r["example_id"]: int(r["position"]) for r in db.execute(
            "SELECT example_id, position FROM queue WHERE campaign_id = ?", (self.id,))}
        handed = {int(r[0]) for r in db.execute(
            f"""SELECT q.position FROM queue q WHERE q.campaign_id = :c AND (
                   EXISTS (SELECT 1 FROM claims k WHERE k.campaign_id = :c AND k.example_id = q.example_id) OR
                   EXISTS (SELECT 1 FROM {self.LABELS} l WHERE l.campaign_id = :c AND l.example_id = q.example_id))""",
            {"c": self.id})}
        end = self._queue_end()
        given = [(line, eid, position[eid]) for line, eid in lines if eid in position]
        covered = handed | {p for _, _, p in given if p < end}
        gap = next(p for p in range(len(covered) + 1) if p not in covered)
        problems = []
        for line, eid, p in given:
            if p >= end:
                problems.append(f"line {line}: {self._past_budget(eid, p)}")
            elif p > gap:
                missing = next(e for e, q in position.items() if q == gap)
                problems.append(f"line {line}: the example {eid!r} is at position {p + 1:,} of the queue, but the "
                                f"example at position {gap + 1:,} ({missing!r}) has been neither handed out nor "
                                "labeled: the design labels its queue in order (labels further on would count as a "
                                "sample it never drew); label the examples in the order `evalcore label export` "
                                "lists them")
        return problems

    def _imported_as(self, name, by: str | None) -> str:
        """Who a labels file's row is recorded as: ``name`` (the row's annotator, or the default) when it is the
        importer's own identity ``by``; on a campaign without an owner, also a plain name (its author,
        :func:`author`). Refused otherwise: no sign-in checks an identity written in a file, so a member's address
        there would pass for that member's labels."""
        who, by = canonical(name), canonical(by)
        if who is not None and who == by:
            return self._member(who)
        if self.info.owner is not None:
            raise PermissionError(f"the file names {who!r} as the annotator: the labels of a campaign with an owner "
                                  f"are imported as the member who imports them ({by or 'nobody: give --by EMAIL'}) "
                                  "only; import each member's labels with their own --by.")
        return self._member(author(who))

    def _release(self, db, example_id: str, who: str) -> None:
        """After ``who``'s label of ``example_id``: their claim given up, the example's count of labels updated."""
        db.execute("DELETE FROM claims WHERE campaign_id = ? AND example_id = ? AND annotator = ?",
                   (self.id, example_id, who))
        db.execute(f"UPDATE queue SET labeled = (SELECT COUNT(*) FROM {self.LABELS} l WHERE l.campaign_id = :c AND "
                   "l.example_id = :e AND l.replaced_by IS NULL AND l.skipped = 0) WHERE campaign_id = :c AND "
                   "example_id = :e", {"c": self.id, "e": example_id})

    def example(self, example_id: str) -> dict:
        """The queue row of one example (its position, stratum, weight, proxy and judge)."""
        found = catalog.rows(self._db, "SELECT * FROM queue WHERE campaign_id = ? AND example_id = ?",
                             (self.id, str(example_id)))
        if not found:
            raise EvalDataError(f"The example {example_id!r} is not in the queue of this campaign ({self.id}).")
        return dict(found[0])

    def may_adjudicate(self, who: str | None) -> bool:
        """Whether ``who`` settles the campaign's disagreements: its owner or a named adjudicator; on a campaign
        without an owner and without named adjudicators, anyone who may label it."""
        who = canonical(who)
        if self.info.owner is None and not self.info.adjudicators:
            return who is not None
        return who is not None and (who == self.info.owner or who in self.info.adjudicators)

    def set_adjudicators(self, names, viewer: str | None = None) -> tuple[str, ...]:
        """Name the members who, besides the owner, settle disagreements (replacing the list); the names kept.
        The owner only (:func:`evalcore.workspace.access.check_change`); a name that is not a member of the
        campaign is refused."""
        access.check_change(self.id, self.info.owner, viewer)
        chosen = tuple(self._member(n) for n in _names(names))
        with catalog.transaction(self._db) as db:
            db.execute("UPDATE campaigns SET adjudicators = ? WHERE id = ?", (json.dumps(chosen), self.id))
        self.info = replace(self.info, adjudicators=chosen)
        return chosen

    def _adjudicator(self, adjudicator) -> str:
        """``adjudicator`` as a member who may settle the campaign's disagreements (:meth:`may_adjudicate`);
        PermissionError naming who may."""
        who = self._member(adjudicator)
        if not self.may_adjudicate(who):
            named = listed(list(self.info.adjudicators)) if self.info.adjudicators else "none named"
            raise PermissionError(f"{who} may not adjudicate the campaign '{self.info.name}' ({self.id}): its owner "
                                  f"({self.info.owner}) and its adjudicators ({named}) settle disagreements; ask the "
                                  "owner to name you an adjudicator.")
        return who


class Campaign(Claims):
    """A labeling campaign of a workspace (see the module docstring)."""

    # ------------------------------------------------------------------------------------------- making one
    @staticmethod
    def next_seed(workspace) -> int:
        """A new campaign's default seed: one more than the largest seed of the workspace's campaigns (0 for the
        first), so that each campaign on a pool draws its own queue."""
        found = catalog.rows(workspace.catalog, "SELECT MAX(seed) AS seed FROM campaigns")
        return 0 if not found or found[0]["seed"] is None else int(found[0]["seed"]) + 1

    @classmethod
    def create(cls, workspace, dataset_id: str, model: str | None = None, design: str | None = None,
               target: float | None = None, budget: int | None = None, level: float | None = None,
               seed: int | None = None, owner: str | None = None, overlap: int = 1, metric: str | None = None,
               scale: tuple[float, float] | None = None, name: str | None = None, shared: bool = False,
               models: list[str] | None = None, decide: bool = False, margin: float = 0.0):
        """Plan and store a campaign on a saved dataset ``owner`` may see: the ``model``'s examples (for battles,
        "model_a vs model_b" or "all"), labeled by ``design`` (one of :data:`.queue.DESIGNS`, by default "srs")
        until ±``target`` (a half-width on the metric's scale) or for ``budget`` labels (default: ±2% of the
        scale), at ``level``. ``metric``: "correct" (0/1), "score" (on ``scale``) or "pairwise" (A/B/tie), by
        default from the log. ``seed`` orders the queue; by default :meth:`next_seed`, so that no two campaigns
        share a queue. With ``models`` (two or more) instead of ``model``, a comparison campaign of their outputs
        (:meth:`.comparison.ComparisonCampaign.create`, with its ``decide`` rule and ``margin``)."""
        if models is not None:
            if model is not None or metric not in (None, "correct") or scale is not None:
                raise EvalDataError("A comparison campaign (models=[...]) labels each model's output right or wrong "
                                    "(0/1): give the models, not a model, metric or scale.")
            from evalcore.labeling.comparison import ComparisonCampaign

            return ComparisonCampaign.create(workspace, dataset_id, models, design, target=target, budget=budget,
                                             level=level, seed=seed, owner=owner, overlap=overlap, name=name,
                                             shared=shared, decide=decide, margin=margin)
        if model is None:
            raise EvalDataError("Name the model whose outputs to label (model=...), or two or more models to "
                                "compare (models=[...]).")
        if decide or margin:
            raise EvalDataError("decide and margin are stop rules of a comparison campaign: give models=[...] to "
                                "compare two or more models.")
        seed = cls.next_seed(workspace) if seed is None else seed
        design = "srs" if design is None else design
        if design not in DESIGNS:
            raise EvalDataError(f"The design must be one of {', '.join(DESIGNS)}; got {design!r}.")
        if target is not None and budget is not None:
            raise EvalDataError("Give a target half-width or a label budget, not both.")
        if int(overlap) < 1:
            raise EvalDataError(f"overlap is the number of labels per example, at least 1; got {overlap!r}.")
        owner = canonical(owner)
        record = workspace.dataset_record(dataset_id, owner)  # PermissionError / LookupError as for any dataset
        frame = workspace.dataset(dataset_id, owner)
        metric = metric or ("pairwise" if record.kind == "battles" else
                            "correct" if "correct" in frame and frame["correct"].notna().any() or
                            "score" not in frame else "score")
        if metric not in METRICS:
            raise EvalDataError(f"The metric must be one of {', '.join(METRICS)}; got {metric!r}.")
        scale = tuple(map(float, scale)) if scale is not None else (0.0, 1.0)
        if not scale[0] < scale[1]:
            raise EvalDataError(f"The score's scale must go from a lower to a higher number; got {scale}.")
        if target is None and budget is None:
            target = 0.02 * (scale[1] - scale[0])
        if target is not None and not 0 < float(target) < scale[1] - scale[0]:
            raise EvalDataError(f"The target half-width must be above 0 and below the scale's range; got {target}.")
        level = checked_level(level)
        plan = plan_queue(_pool(frame, str(model), metric), design, target=target, budget=budget, level=level,
                          seed=int(seed), scale=scale)
        row = {"id": access.new_id(), "dataset_id": dataset_id,
               "name": campaign_name(name, f"{model} · {design}"), "owner": owner, "shared": int(bool(shared)),
               "created": _now(), "model": str(model), "design": design, "metric": metric, "scale_low": scale[0],
               "scale_high": scale[1], "target": None if target is None else float(target),
               "budget": None if budget is None else int(budget), "level": level, "seed": int(seed),
               "overlap": int(overlap), "planned": int(plan.planned), "pool": json.dumps(plan.pool),
               "adjudicators": "[]"}
        with catalog.transaction(workspace.catalog) as db:
            insert_campaign(db, row, plan.order)
        return cls(workspace, _record(row))

    @classmethod
    def open(cls, workspace, campaign_id: str, viewer: str | None = None) -> "Campaign":
        """The campaign ``campaign_id`` as ``viewer`` may see it (LookupError if there is none; PermissionError if
        ``viewer`` may not see it, :func:`evalcore.workspace.access.visible`). ``viewer`` None is nobody signed in
        (an instance without sign-in, the command line without ``--by``): it opens the campaigns without an owner
        only, as it sees only the datasets without one."""
        found = catalog.rows(workspace.catalog, "SELECT * FROM campaigns WHERE id = ?", (str(campaign_id),))
        if not found:
            raise LookupError(f"No labeling campaign with id {campaign_id!r} in this workspace.")
        record = _record(found[0], _comparisons(workspace.catalog, str(campaign_id)).get(str(campaign_id)))
        if viewer is None and record.owner is not None:
            raise PermissionError(f"This labeling campaign ({record.id}) belongs to an owner, and nobody is signed "
                                  "in here: where nobody signs in (an instance without sign-in, the command line "
                                  "without --by) only the campaigns without an owner open. Sign in on the team's "
                                  "instance, or give your e-mail with --by on the command line.")
        access.check("labeling campaign", record.id, record.owner, record.shared, viewer)
        return _opened(workspace, record)

    @staticmethod
    def list(workspace, viewer: str | None = None) -> list[CampaignRecord]:
        """The campaigns ``viewer`` may see, newest first (one model's and comparisons: :attr:`CampaignRecord.kind`)."""
        found = catalog.rows(workspace.catalog, "SELECT * FROM campaigns ORDER BY created DESC, rowid DESC")
        comparisons = _comparisons(workspace.catalog)
        return [_record(r, comparisons.get(r["id"])) for r in found
                if access.visible(r["owner"], bool(r["shared"]), viewer)]

    def delete(self, viewer: str | None = None) -> None:
        """Delete the campaign with its queue, claims, labels and adjudications: its owner only."""
        access.check_change(self.id, self.info.owner, viewer)
        with catalog.transaction(self._db) as db:
            for table in ("claims", "adjudications", "labels", "queue"):
                db.execute(f"DELETE FROM {table} WHERE campaign_id = ?", (self.id,))
            db.execute("DELETE FROM campaigns WHERE id = ?", (self.id,))

    # ------------------------------------------------------------------------------------------- labeling
    def record(self, example_id: str, annotator: str, value=None, note: str | None = None,
               skipped: bool = False) -> int:
        """Keep a label (or a skip) of ``example_id`` by ``annotator``; its id. Refused with a clear message for an
        example outside the queue, a value off the metric's scale, an annotator who is not a member, or one who
        neither holds the example's claim (live or expired) nor replaces their own label."""
        who = self._member(annotator)
        number = None if skipped else parse_value(value, self.info.metric, self.info.scale)
        with catalog.transaction(self._db) as db:
            return self._record_in(db, str(example_id), who, number, note, skipped, need_claim=True)

    def _record_in(self, db, example_id: str, who: str, number, note, skipped: bool, need_claim: bool) -> int:
        self._check_claim(db, example_id, who, need_claim)
        cursor = db.execute("INSERT INTO labels (campaign_id, example_id, annotator, value, note, skipped, created) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (self.id, example_id, who, number, note_text(note), int(skipped),
                             _now()))
        db.execute("UPDATE labels SET replaced_by = ? WHERE campaign_id = ? AND example_id = ? AND annotator = ? "
                   "AND replaced_by IS NULL AND id <> ?", (cursor.lastrowid, self.id, example_id, who,
                                                           cursor.lastrowid))
        self._release(db, example_id, who)
        return int(cursor.lastrowid)

    # ------------------------------------------------------------------------------------------- reading
    def history(self) -> pd.DataFrame:
        """Every label ever given (replaced ones too), oldest first."""
        rows = catalog.rows(self._db, "SELECT id, example_id, annotator, value, note, skipped, created, replaced_by "
                                      "FROM labels WHERE campaign_id = ? ORDER BY id", (self.id,))
        return pd.DataFrame([dict(r) for r in rows], columns=["id", "example_id", "annotator", "value", "note",
                                                              "skipped", "created", "replaced_by"])

    def current_labels(self) -> pd.DataFrame:
        """The labels in force (one per example and annotator, skips left out) with each example's queue row."""
        rows = catalog.rows(self._db, f"""SELECT l.example_id, l.annotator, l.value, l.note, l.created,
            {', '.join('q.' + c for c in QUEUE_COLUMNS if c != 'example_id')} FROM labels l JOIN queue q
            ON q.campaign_id = l.campaign_id AND q.example_id = l.example_id
            WHERE l.campaign_id = ? AND l.replaced_by IS NULL AND l.skipped = 0 ORDER BY q.position, l.annotator""",
                            (self.id,))
        return pd.DataFrame([dict(r) for r in rows], columns=["example_id", "annotator", "value", "note", "created",
                                                              *[c for c in QUEUE_COLUMNS if c != "example_id"]])

    def _adjudicated(self) -> pd.DataFrame:
        """The adjudications in force, indexed by example id: ``value`` and ``adjudicator``."""
        rows = catalog.rows(self._db, "SELECT example_id, value, adjudicator FROM adjudications WHERE campaign_id = ? "
                                      "AND replaced_by IS NULL", (self.id,))
        return pd.DataFrame([tuple(r) for r in rows], columns=["example_id", "value", "adjudicator"]).astype(
            {"value": float}).set_index("example_id")

    def _labeled(self) -> Labeled:
        """The estimator's input (:func:`.estimate.live_estimate`): one row per example of the drawn sample with a
        label or a skip in force, in queue order, with its queue row (``position``, ``stratum``, ``weight``,
        ``proxy``, ``judge``), ``value``, ``low``, ``high`` and ``status`` (:func:`settle`): a settled example
        (``labeled`` or ``adjudicated``) has value = low = high = its settled value; a ``pending`` one value NaN,
        low and high its smallest and largest label; a ``skipped`` one (skips, no label) value NaN, low and high
        the scale's ends. With the active design's threshold τ (the priority just past the sample's furthest
        position) and how many examples are skipped and pending."""
        rows = catalog.rows(self._db, """SELECT l.example_id, l.value, l.skipped, q.position, q.stratum, q.weight,
            q.proxy, q.judge FROM labels l JOIN queue q ON q.campaign_id = l.campaign_id AND q.example_id = l.example_id
            WHERE l.campaign_id = ? AND l.replaced_by IS NULL ORDER BY q.position""", (self.id,))
        current = pd.DataFrame([tuple(r) for r in rows], columns=["example_id", "value", "skipped", "position",
                                                                  "stratum", "weight", "proxy", "judge"]).astype(
            {"value": float, "weight": float, "proxy": float, "judge": float})
        settled = settle(current[current["skipped"] == 0], self._adjudicated()["value"], self.info.metric,
                         self.info.scale)
        frame = current.drop_duplicates("example_id").drop(columns=["value", "skipped"]).join(
            settled[["value", "low", "high", "status"]], on="example_id")
        skipped = frame["status"].isna().to_numpy()
        frame.loc[skipped, "low"], frame.loc[skipped, "high"] = self.info.scale
        frame.loc[skipped, "status"] = "skipped"
        tau = 0.0
        if len(frame) and self.info.design == "active":
            after = catalog.rows(self._db, "SELECT priority FROM queue WHERE campaign_id = ? AND position = ?",
                                 (self.id, int(frame["position"].max()) + 1))
            tau = float(after[0]["priority"]) if after else 0.0
        return Labeled(frame[list(LABELED_COLUMNS)].reset_index(drop=True), tau, int(skipped.sum()),
                       int((frame["status"] == "pending").sum()))

    def estimate(self, labeled: Labeled | None = None) -> LiveEstimate:
        """The design's estimate from the settled labels, the pending and the skipped examples
        (:meth:`_labeled`, read here unless given; :func:`.estimate.live_estimate`)."""
        labeled = labeled or self._labeled()
        r = self.info
        return live_estimate(labeled.frame, r.design, r.pool, r.planned, r.target, r.level, tau=labeled.tau,
                             skipped=labeled.skipped, pending=labeled.pending, scale=r.scale)

    def skip_profile(self, labeled: Labeled | None = None) -> pd.DataFrame:
        """Who the skipped examples are, beside the settled ones (skips are rarely at random: the hard examples):
        one row per group ("skipped", "settled", and "pending" where any) with ``examples``, ``share`` of the drawn
        examples, and the mean ``proxy`` (the model's confidence) and ``judge`` (the AI judge's verdict) where the
        pool has them. Empty before the first skip (``labeled``: :meth:`_labeled`, read here unless given)."""
        frame = (labeled or self._labeled()).frame
        if not (frame["status"] == "skipped").any():
            return pd.DataFrame(columns=["group", "examples", "share", "proxy", "judge"])
        group = frame["status"].map({"skipped": "skipped", "pending": "pending"}).fillna("settled")
        table = frame.assign(group=group).groupby("group", sort=False).agg(
            examples=("example_id", "size"), proxy=("proxy", "mean"), judge=("judge", "mean"))
        table.insert(1, "share", table["examples"] / len(frame))
        order = [g for g in ("skipped", "settled", "pending") if g in table.index]
        return table.loc[order].reset_index()

    def page_state(self) -> tuple[LiveEstimate, pd.DataFrame, pd.DataFrame]:
        """What the Label page opens with, from one read of the labels: the estimate, the adjudication queue
        (:meth:`pending`) and who the skipped examples are (:meth:`skip_profile`)."""
        labeled = self._labeled()
        return self.estimate(labeled), self.pending(labeled), self.skip_profile(labeled)

    def version(self) -> tuple[int, int]:
        """What changes with every label, skip and adjudication: the largest label id and adjudication id of the
        campaign (the key of the Label page's cached statistics)."""
        found = catalog.rows(self._db, """SELECT (SELECT COALESCE(MAX(id), 0) FROM labels WHERE campaign_id = :c),
            (SELECT COALESCE(MAX(id), 0) FROM adjudications WHERE campaign_id = :c)""", {"c": self.id})
        return (int(found[0][0]), int(found[0][1])) if found else (0, 0)

    def labeled_examples(self) -> pd.DataFrame:
        """One row per example of the drawn sample with a label or a skip in force: ``example_id``, ``correct`` (or
        ``score``/``outcome``: its settled value, :func:`settle`; empty while its labels disagree and where it was
        only skipped), ``status`` (labeled, adjudicated, pending or skipped), ``inclusion_probability`` (from the
        examples of the sample, as the design drew them) and ``stratum``. Where no example is pending or skipped,
        ``sum correct / inclusion_probability / N`` is the Horvitz-Thompson estimate for the stratified and simple
        designs."""
        return self._labeled_examples(self._labeled())

    def _labeled_examples(self, labeled: Labeled) -> pd.DataFrame:
        frame = labeled.frame
        pi = inclusion_probabilities(frame, self.info.design, self.info.pool, labeled.tau) if len(frame) else []
        metric = {"correct": "correct", "score": "score", "pairwise": "outcome"}[self.info.metric]
        return pd.DataFrame({"example_id": frame["example_id"], metric: frame["value"], "status": frame["status"],
                             "inclusion_probability": pi, "stratum": frame["stratum"]})

    # ------------------------------------------------------------------------------------------- adjudication
    def pending(self, labeled: Labeled | None = None) -> pd.DataFrame:
        """The adjudication queue, in queue order: every label in force of each example whose labels disagree, and
        the skip of each example only skipped (the hard examples: value NaN), that no adjudication settles
        (:func:`settle`): ``example_id``, ``position``, ``stratum``, ``annotator``, ``value``, ``note``,
        ``created`` and ``reason`` ("labels disagree" or "skipped"); ``labeled``: :meth:`_labeled`, read here
        unless given."""
        frame = (labeled or self._labeled()).frame
        columns = ["example_id", "position", "stratum", "annotator", "value", "note", "created"]
        labels = self.current_labels()
        disputed = labels.loc[labels["example_id"].isin(frame.loc[frame["status"] == "pending", "example_id"]),
                              columns].assign(reason="labels disagree")
        skipped = frame.loc[frame["status"] == "skipped", ["example_id", "position", "stratum"]]
        rows = catalog.rows(self._db, "SELECT example_id, annotator, note, created FROM labels WHERE campaign_id = ? "
                                      "AND skipped = 1 AND replaced_by IS NULL", (self.id,))
        skips = skipped.merge(pd.DataFrame([dict(r) for r in rows], columns=["example_id", "annotator", "note",
                                                                             "created"]), on="example_id")
        skips = skips.assign(value=np.nan, reason="skipped")[[*columns, "reason"]]
        both = pd.concat([disputed, skips]) if len(skips) else disputed
        return both.sort_values("position", kind="stable").reset_index(drop=True)

    def adjudicate(self, example_id: str, value, adjudicator: str, note: str | None = None) -> int:
        """Settle ``example_id``, whose labels disagree, at ``value`` (on the metric's scale, :func:`parse_value`),
        decided by ``adjudicator`` (:meth:`may_adjudicate`) with an optional ``note``; the decision's id. A
        decision is a fact kept like a label: deciding again replaces the earlier one, which stays, ``replaced_by``
        naming the new one. Refused with PermissionError for anyone but the owner and the named adjudicators, and
        with EvalDataError for an example outside the queue or whose labels do not disagree."""
        who = self._adjudicator(adjudicator)
        number = parse_value(value, self.info.metric, self.info.scale)
        example_id = str(example_id)
        with catalog.transaction(self._db) as db:
            if db.execute("SELECT 1 FROM queue WHERE campaign_id = ? AND example_id = ?",
                          (self.id, example_id)).fetchone() is None:
                raise EvalDataError(f"The example {example_id!r} is not in the queue of this campaign ({self.id}).")
            decided = db.execute("SELECT 1 FROM adjudications WHERE campaign_id = ? AND example_id = ? AND "
                                 "replaced_by IS NULL", (self.id, example_id)).fetchone() is not None
            values = [r[0] for r in db.execute("SELECT value FROM labels WHERE campaign_id = ? AND example_id = ? "
                                               "AND replaced_by IS NULL AND skipped = 0", (self.id, example_id))]
            skipped = not values and db.execute("SELECT 1 FROM labels WHERE campaign_id = ? AND example_id = ? AND "
                                                "replaced_by IS NULL AND skipped = 1",
                                                (self.id, example_id)).fetchone() is not None
            state = settle(pd.DataFrame({"example_id": example_id, "value": values}, dtype=object).astype(
                {"value": float}), pd.Series(dtype=float), self.info.metric, self.info.scale)
            if not decided and not skipped and (not values or state["status"].iloc[0] != "pending"):
                why = (f"has {'no label' if not values else 'one label'} yet" if len(values) < 2 else
                       f"has {len(values)} labels that agree (settled at {state['value'].iloc[0]:g})")
                raise EvalDataError(f"The example {example_id!r} {why}: only examples whose labels disagree, or that "
                                    "were skipped, are adjudicated (the adjudication queue, Campaign.pending(), "
                                    "lists them).")
            cursor = db.execute("INSERT INTO adjudications (campaign_id, example_id, value, adjudicator, note, "
                                "created) VALUES (?, ?, ?, ?, ?, ?)",
                                (self.id, example_id, number, who, note_text(note), _now()))
            db.execute("UPDATE adjudications SET replaced_by = ? WHERE campaign_id = ? AND example_id = ? AND "
                       "replaced_by IS NULL AND id <> ?", (cursor.lastrowid, self.id, example_id, cursor.lastrowid))
            return int(cursor.lastrowid)

    def adjudications(self) -> pd.DataFrame:
        """Every adjudication ever made (replaced ones too), oldest first."""
        rows = catalog.rows(self._db, "SELECT id, example_id, value, adjudicator, note, created, replaced_by FROM "
                                      "adjudications WHERE campaign_id = ? ORDER BY id", (self.id,))
        return pd.DataFrame([tuple(r) for r in rows], columns=["id", "example_id", "value", "adjudicator", "note",
                                                               "created", "replaced_by"])

    def annotator_quality(self) -> pd.DataFrame:
        """Each annotator's agreement with the settled labels and with the other annotators
        (:func:`.agreement.annotator_quality`), over the examples labeled twice or more or adjudicated: a single
        label settles its example by itself and says nothing of its annotator."""
        return self._quality(self.current_labels(), self._labeled().frame)

    def _quality(self, labels: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.set_index("example_id")
        counts = labels.groupby("example_id").size().reindex(frame.index, fill_value=0)
        checked = frame["status"].eq("adjudicated") | (frame["status"].eq("labeled") & (counts >= 2))
        return agreement.annotator_quality(labels[["example_id", "annotator", "value"]], frame.loc[checked, "value"],
                                           self.info.metric, self.info.level, scale=self.info.scale)

    def agreement(self) -> CampaignAgreement:
        """How far the labels can be trusted: the annotators' agreement on the labels in force
        (:func:`.agreement.annotator_agreement`), the AI judge against the settled labels (pending and skipped
        examples left out, :func:`.agreement.judge_agreement`) and each annotator's quality
        (:meth:`annotator_quality`)."""
        info = self.info
        labels = self.current_labels()
        frame = self._labeled().frame
        settled = frame[frame["status"].isin(("labeled", "adjudicated"))]
        return CampaignAgreement(agreement.annotator_agreement(labels, info.metric, info.level, info.seed),
                                 agreement.judge_agreement(settled, info.metric, info.level, info.seed),
                                 self._quality(labels, frame))

    def design_sentence(self, estimate: LiveEstimate | None = None) -> str:
        """E.g. "m: estimated from 312 labels, stratified, Neyman allocation (stratified Horvitz-Thompson), in the
        labeling campaign 'm · neyman'; its interval is the design's"."""
        estimate = estimate or self.estimate()
        return (f"{self.info.model}: estimated from {estimate.labels:,} labels, {DESIGN_NAMES[self.info.design]} "
                f"({estimate.estimator}), in the labeling campaign '{self.info.name}'; its interval is the design's.")

    def summary(self) -> pd.DataFrame:
        """The campaign's result as a leaderboard summary (one row: ``model``, ``task`` "all", ``n`` labels,
        ``accuracy`` the design's estimate, ``se`` its standard error), validated, with the design said in its
        report (:attr:`evalcore.data.validation.ValidationReport.design`): every page, the report and the
        command line read a summary's ``se`` as the interval's, so they show the design's estimate and interval.
        EvalDataError before the first estimate, or for a score not on [0, 1]."""
        from evalcore.data.schema import SUMMARY
        from evalcore.data.validation import validate

        estimate = self.estimate()
        if estimate.estimate != estimate.estimate:
            raise EvalDataError(f"The campaign '{self.info.name}' has no estimate yet ({estimate.labels} labels): "
                                "label until the Label page shows one.")
        if self.info.scale != (0.0, 1.0):
            raise EvalDataError(f"A summary holds proportions; this campaign's scores run from {self.info.scale[0]:g}"
                                f" to {self.info.scale[1]:g}: read its estimate with `evalcore label status`.")
        table = pd.DataFrame({"model": [self.info.model], "task": ["all"], "n": [estimate.labels],
                              "accuracy": [estimate.estimate], "se": [estimate.se]})
        frame = validate(table, kind=SUMMARY)
        frame.attrs["report"]["design"] = self.design_sentence(estimate)
        frame.attrs["report"]["design_interval"] = (self.info.level, estimate.ci_low, estimate.ci_high)
        return frame

    # ------------------------------------------------------------------------------------------- files
    def export(self) -> pd.DataFrame:
        """One row per queued example (the budget's, or the planned part of a target's queue and every labeled
        one): ``position``, ``example_id``, ``task``, ``stratum``, ``inclusion_probability`` (of an example of the
        sample, as the estimate counts it; of the others, if the planned queue were labeled), ``label`` (its
        settled value, :func:`settle`: empty while its labels disagree, where it was only skipped, and before any
        label), ``status`` (labeled, adjudicated, pending, skipped or unlabeled), ``annotator`` (who labeled it)
        and ``adjudicator`` (who settled it, where someone did)."""
        labeled = self._labeled()
        end = self._queue_end() if self.info.budget is not None else max(
            self.info.planned, int(labeled.frame["position"].max()) + 1 if len(labeled.frame) else 0)
        rows = catalog.rows(self._db, "SELECT * FROM queue WHERE campaign_id = ? AND position < ? ORDER BY position",
                            (self.id, end))
        queue = pd.DataFrame([dict(r) for r in rows])
        done = self._labeled_examples(labeled).set_index("example_id")
        tail = catalog.rows(self._db, "SELECT priority FROM queue WHERE campaign_id = ? AND position = ?",
                            (self.id, end))
        planned = inclusion_probabilities(queue, self.info.design, self.info.pool,
                                          float(tail[0]["priority"]) if tail else 0.0)
        settled = queue["example_id"].map(done.iloc[:, 0]) if len(done) else pd.Series(np.nan, index=queue.index)
        who = self.current_labels().groupby("example_id")["annotator"].agg(lambda a: ", ".join(sorted(a)))
        return pd.DataFrame({
            "position": queue["position"], "example_id": queue["example_id"], "task": queue["task"],
            "stratum": queue["stratum"],
            "inclusion_probability": queue["example_id"].map(done["inclusion_probability"]).fillna(
                pd.Series(planned, index=queue.index)) if len(done) else planned,
            "label": settled, "status": queue["example_id"].map(done["status"]).astype(object).fillna("unlabeled"),
            "annotator": queue["example_id"].map(who),
            "adjudicator": queue["example_id"].map(self._adjudicated()["adjudicator"])})

    def import_labels(self, table: pd.DataFrame, annotator: str | None = None, by: str | None = None) -> int:
        """Record the labels of an exported table that came back filled in (``example_id`` and ``label``, and
        ``annotator`` where given; empty labels are not labels yet), imported by ``by`` (the importer's identity;
        None: nobody signed in), in one transaction: all or none. A row without an annotator is ``annotator``'s,
        by default the importer's (``"import"`` where nobody signs in). Refused, naming the rows, for ids outside
        the queue, values off the scale, labels the design did not draw (:meth:`_out_of_design`) and annotators
        who are not the importer (:meth:`_imported_as`). Returns how many were recorded."""
        columns = {str(c).strip().lower(): c for c in table.columns}
        label_col = next((columns[c] for c in ("label", "correct", "value", "score", "outcome") if c in columns),
                         None)
        if "example_id" not in columns or label_col is None:
            raise EvalDataError("The labels file needs an 'example_id' and a 'label' column (as `evalcore label "
                                f"export` writes them); it has {listed([str(c) for c in table.columns])}.")
        ids = table[columns["example_id"]].astype(str).str.strip()
        raw = table[label_col]
        given = raw.notna() & (raw.astype(str).str.strip() != "")
        annotator = annotator or canonical(by) or "import"
        names = table[columns["annotator"]] if "annotator" in columns else pd.Series(annotator, index=table.index)
        problems, rows, lines = [], [], []
        for line, (eid, value, who) in zip(given.index[given] + 2, zip(ids[given], raw[given], names[given])):
            lines.append((int(line), eid))
            try:
                rows.append((eid, self._imported_as(who if isinstance(who, str) and who.strip() else annotator, by),
                             parse_value(value, self.info.metric, self.info.scale)))
            except (EvalDataError, PermissionError) as exc:
                problems.append(f"line {int(line)}: {exc}")
        with catalog.transaction(self._db) as db:
            queued = {r["example_id"] for r in db.execute("SELECT example_id FROM queue WHERE campaign_id = ?",
                                                          (self.id,))}
            outside = sorted({eid for _, eid in lines} - queued)
            if outside:
                problems.insert(0, f"{len(outside)} example id(s) are not in the campaign's queue: {listed(outside)}")
            problems += self._out_of_design(db, lines)
            if problems:
                raise EvalDataError("The labels file was not imported (nothing was recorded): " +
                                    "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more problems"
                                                               if len(problems) > 5 else ""))
            for eid, who, number in rows:
                self._record_in(db, eid, who, number, None, False, need_claim=False)
        return len(rows)
