"""A comparison campaign, stored in a workspace's catalog: two or more models' outputs on one pool, judged by people,
until the difference between the first two is known to ±target, decided, or the budget is used.

:meth:`ComparisonCampaign.create` (reached through ``Campaign.create(..., models=[...])``) takes the models' shared
examples (:func:`.difference.comparison_pool`: fewer than 20 shared examples are refused naming how many are shared;
an example where a model has no output is left out, with a note naming how many and which model), plans the queue
(:func:`.difference.plan_comparison`: ``srs``, a random paired sample; ``disagreement``, only the examples whose
outputs differ) and stores the campaign, its queue and each queued example's outputs (JSON, literally: hostile text
comes back as it went in) in one transaction (catalog version 5, :data:`evalcore.workspace.catalog.COMPARISONS`).

Claims are those of one-model campaigns (:class:`.campaign.Claims`): :meth:`next` hands each annotator the next
example of the queue, and two annotators never hold the same one at once; every change is one SQLite transaction,
so an acknowledged label survives the server being killed.

**A label** (:meth:`ComparisonCampaign.record`) is a verdict per model, 1 (right) or 0 (wrong), kept per (example,
annotator) with its history (re-labeling replaces one's own label; the earlier one stays, ``replaced_by`` naming
the new one). Identical outputs share their verdict (DESIGN.md, "Campaigns over several models": a label belongs to
an (example, output) pair): outputs are identical when equal after stripping surrounding whitespace (the rule of the
pool's agreement patterns), and a verdict given for one model applies to every model with the same output; an
output left without a verdict is refused, naming its models. Where the outputs are classes or choices (the pool's
``kind`` "class") the annotator may give the right answer once instead: each model is right iff its output equals
the answer after stripping whitespace, compared without case for single letters ("b" is the choice "B").

**Disagreements and skips are adjudicated, never averaged**: where the labels in force on an example differ (two
annotators after an expired claim, or with ``overlap`` above 1), or an example was only skipped (a hard one), it is
unknown (NaN) in the estimate, which bounds it at its worst and best case (:func:`.difference.comparison_estimate`),
and it waits in the adjudication queue (:meth:`ComparisonCampaign.pending`) until the campaign's owner or a named
adjudicator decides its verdicts (:meth:`ComparisonCampaign.adjudicate`; kept with their history, as labels, in
catalog version 7, :data:`evalcore.workspace.catalog.COMPARISON_ADJUDICATIONS`). Each example's status
(:meth:`ComparisonCampaign.verdicts`): labeled (its labels agree), adjudicated, disputed or skipped.
"""

from __future__ import annotations

import json
import numpy as np
import pandas as pd

from evalcore.errors import EvalDataError, listed
from evalcore.labeling.campaign import (WORDS, Claims, _now, _record, campaign_name, checked_level, insert_campaign,
                                       note_text)
from evalcore.labeling.difference import (ALL_AGREE, COMPARISON_DESIGNS, MIN_LABELS, ComparisonEstimate,
                                          comparison_estimate, comparison_pool, plan_comparison)
from evalcore.workspace import access, catalog
from evalcore.workspace.access import canonical

#: a comparison's default goal when neither a target nor a budget is given: ±2 points on the difference
DEFAULT_TARGET = 0.02


def same_output(output: str) -> str:
    """The form in which two outputs are identical (they share a verdict): surrounding whitespace stripped."""
    return str(output).strip()


def is_answer(output: str, answer: str) -> bool:
    """Whether ``output`` is the right ``answer``: equal after stripping whitespace, without case for a single
    letter (a choice "b" is "B")."""
    out, right = str(output).strip(), str(answer).strip()
    if len(out) == 1 and len(right) == 1 and out.isalpha() and right.isalpha():
        return out.casefold() == right.casefold()
    return out == right


def _verdict(value) -> int:
    """A verdict as 1 (right) or 0 (wrong): 1/0, True/False or the words of a 0/1 label (correct, wrong, ...);
    EvalDataError otherwise."""
    if isinstance(value, str):
        word = value.strip().lower()
        if word in WORDS["correct"] or word in ("0", "1"):
            return int(WORDS["correct"].get(word, word == "1"))
    if isinstance(value, (bool, np.bool_)) or value in (0, 1):
        return int(value)
    raise EvalDataError(f"The verdict {value!r} is not 1 (right) or 0 (wrong).")


def verdicts(outputs: dict[str, str], value, kind: str) -> dict[str, int]:
    """Every model's verdict on one example (``outputs``: model -> output) from a label ``value``: a mapping model ->
    1/0 (a verdict given for one model applies to every model with the same output, :func:`same_output`), or, for
    ``kind`` "class", the right answer (a string, or an integer for classes numbered, :func:`is_answer`). EvalDataError naming the model for a verdict of
    a model not compared, verdicts that differ on one output, or an output without a verdict."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        value = str(value)
    if isinstance(value, str):
        if kind != "class":
            raise EvalDataError("These outputs are free text, not classes or choices: give a verdict per distinct "
                                "output, e.g. {model: 1 or 0}.")
        if not value.strip():
            raise EvalDataError("The right answer is empty: give the class or choice that is right.")
        return {m: int(is_answer(o, value)) for m, o in outputs.items()}
    if not isinstance(value, dict):
        raise EvalDataError(f"A comparison label is {{model: 1 or 0}} per distinct output"
                            f"{' or the right answer' if kind == 'class' else ''}; got {value!r}.")
    unknown = [str(m) for m in value if str(m) not in outputs]
    if unknown:
        raise EvalDataError(f"Verdicts for {listed(unknown)}, which this campaign does not compare; its models are "
                            f"{listed(list(outputs))}.")
    groups: dict[str, list[str]] = {}
    for model, output in outputs.items():
        groups.setdefault(same_output(output), []).append(model)
    result = {}
    for members in groups.values():
        given = {_verdict(value[m]) for m in members if m in value}
        if len(given) > 1:
            raise EvalDataError(f"{listed(members)} gave the same output, so they share one verdict; got both 1 and 0.")
        if not given:
            shared = f" (the same output as {listed(members[1:])})" if len(members) > 1 else ""
            raise EvalDataError(f"No verdict for the output of {members[0]!r}{shared}: give 1 (right) or 0 (wrong) "
                                "for every distinct output, or skip the example.")
        result.update(dict.fromkeys(members, given.pop()))
    return {m: result[m] for m in outputs}


class ComparisonCampaign(Claims):
    """A comparison campaign of a workspace (see the module docstring); ``info.models`` its models, the first minus
    the second the difference it estimates."""

    LABELS = "comparison_labels"

    @classmethod
    def create(cls, workspace, dataset_id: str, models: list[str], design: str | None = None,
               target: float | None = None, budget: int | None = None, level: float | None = None,
               seed: int | None = None, owner: str | None = None, overlap: int = 1, name: str | None = None,
               shared: bool = False, decide: bool = False, margin: float = 0.0) -> "ComparisonCampaign":
        """Plan and store a comparison of ``models`` (two or more, by name) on a saved dataset ``owner`` may see,
        labeled by ``design`` (:data:`.difference.COMPARISON_DESIGNS`, by default "disagreement") until the first
        two models' difference is within ±``target`` (default ±0.02 when no budget is given) or for ``budget``
        labels; with ``decide``, also until the confidence sequence excludes 0 (or ±``margin``). ``seed`` orders
        the queue (by default :meth:`.campaign.Campaign.next_seed`)."""
        from evalcore.labeling.campaign import Campaign

        design = "disagreement" if design is None else design
        if design not in COMPARISON_DESIGNS:
            raise EvalDataError(f"A comparison's design must be one of {', '.join(COMPARISON_DESIGNS)}; got "
                                f"{design!r}.")
        if isinstance(models, str) or len(models) < 2:
            raise EvalDataError(f"A comparison needs two or more models; got {models!r}.")
        if target is not None and budget is not None:
            raise EvalDataError("Give a target half-width or a label budget, not both.")
        if target is None and budget is None:
            target = DEFAULT_TARGET
        if target is not None and not 0 < float(target) < 1:
            raise EvalDataError(f"The target half-width of the difference must be above 0 and below 1; got {target}.")
        if not 0 <= float(margin) < 1:
            raise EvalDataError(f"The margin is a difference in accuracy from 0 up to 1 (0.01 is 1 point); got "
                                f"{margin!r}.")
        if decide and design == "neyman":
            raise EvalDataError("The decided rule reads a confidence sequence, which needs every prefix of the queue "
                                "to be a simple random sample: choose the 'disagreement' design (or 'srs'), or stop "
                                "the Neyman design by a target or a budget.")
        if int(overlap) < 1:
            raise EvalDataError(f"overlap is the number of labels per example, at least 1; got {overlap!r}.")
        level = checked_level(level)
        seed = Campaign.next_seed(workspace) if seed is None else int(seed)
        models = [str(m) for m in models]
        owner = canonical(owner)
        workspace.dataset_record(dataset_id, owner)  # PermissionError / LookupError as for any dataset
        pool = comparison_pool(workspace.dataset(dataset_id, owner), models)
        plan = plan_comparison(pool, design, seed, target=None if target is None else float(target),
                               budget=None if budget is None else int(budget), level=level)
        row = {"id": access.new_id(), "dataset_id": dataset_id,
               "name": campaign_name(name, f"{' vs '.join(models)} · {design}"),
               "owner": owner, "shared": int(bool(shared)), "created": _now(), "model": " vs ".join(models),
               "design": design, "metric": "correct", "scale_low": 0.0, "scale_high": 1.0,
               "target": None if target is None else float(target), "budget": None if budget is None else int(budget),
               "level": level, "seed": seed, "overlap": int(overlap), "planned": int(plan.planned),
               "pool": json.dumps(plan.pool), "adjudicators": "[]"}
        comparison = {"campaign_id": row["id"], "models": json.dumps(models), "decide": int(bool(decide)),
                      "margin": float(margin), "outputs": pool.kind, "notes": json.dumps(list(pool.notes))}
        queued = plan.order["example_id"].to_numpy()
        examples = [(row["id"], eid, str(pool.patterns.at[eid]),
                     json.dumps({m: str(o) for m, o in zip(models, pool.outputs.loc[eid, models])}))
                    for eid in queued]
        with catalog.transaction(workspace.catalog) as db:
            insert_campaign(db, row, plan.order)
            db.execute(f"INSERT INTO comparisons ({', '.join(comparison)}) VALUES ({', '.join('?' * len(comparison))})",
                       tuple(comparison.values()))
            db.executemany("INSERT INTO comparison_examples (campaign_id, example_id, pattern, outputs) VALUES "
                           "(?, ?, ?, ?)", examples)
        return cls(workspace, _record(row, comparison))

    def delete(self, viewer: str | None = None) -> None:
        """Delete the campaign with its queue, claims, outputs, labels and adjudications: its owner only."""
        access.check_change(self.id, self.info.owner, viewer)
        with catalog.transaction(self._db) as db:
            for table in ("claims", "comparison_adjudications", "comparison_labels", "comparison_examples", "queue",
                          "comparisons"):
                db.execute(f"DELETE FROM {table} WHERE campaign_id = ?", (self.id,))
            db.execute("DELETE FROM campaigns WHERE id = ?", (self.id,))

    # ------------------------------------------------------------------------------------------- labeling
    def _outputs_in(self, db, example_id: str) -> dict[str, str]:
        found = db.execute("SELECT outputs FROM comparison_examples WHERE campaign_id = ? AND example_id = ?",
                           (self.id, example_id)).fetchone()
        if found is None:
            raise EvalDataError(f"The example {example_id!r} is not in the queue of this campaign ({self.id}).")
        return json.loads(found["outputs"])

    def outputs(self, example_id: str) -> dict[str, str]:
        """Each model's output on ``example_id``, as the log gave it ({model: output}, in the campaign's order)."""
        found = catalog.rows(self._db, "SELECT outputs FROM comparison_examples WHERE campaign_id = ? AND "
                                       "example_id = ?", (self.id, str(example_id)))
        if not found:
            raise EvalDataError(f"The example {example_id!r} is not in the queue of this campaign ({self.id}).")
        return json.loads(found[0]["outputs"])

    def pattern(self, example_id: str) -> str:
        """The example's agreement pattern ("all agree", or the models grouped by identical output, "A ≠ B")."""
        found = catalog.rows(self._db, "SELECT pattern FROM comparison_examples WHERE campaign_id = ? AND "
                                       "example_id = ?", (self.id, str(example_id)))
        if not found:
            raise EvalDataError(f"The example {example_id!r} is not in the queue of this campaign ({self.id}).")
        return found[0]["pattern"]

    def record(self, example_id: str, annotator: str, value=None, note: str | None = None,
               skipped: bool = False) -> int:
        """Keep ``annotator``'s label of ``example_id`` (``value``: {model: 1 or 0}, or the right answer for class
        outputs, :func:`verdicts`) or a skip (``skipped=True``); its id. Refused with a clear message for an
        example outside the queue, a verdict missing or off the scale, and an annotator who is not a member or
        holds neither the example's claim nor a label of it. Verdicts that differ from another annotator's make the
        example disputed until it is adjudicated (module docstring)."""
        who = self._member(annotator)
        with catalog.transaction(self._db) as db:
            return self._record_in(db, str(example_id), who, value, note, skipped)

    def _record_in(self, db, example_id: str, who: str, value, note, skipped: bool, need_claim: bool = True) -> int:
        """:meth:`record` inside the transaction ``db`` (``need_claim`` False: a label from a file)."""
        self._check_claim(db, example_id, who, need_claim)
        given = None if skipped else verdicts(self._outputs_in(db, example_id), value, self.info.outputs)
        answer = note_text(value.strip(), "The answer typed") if isinstance(value, str) and not skipped else None
        cursor = db.execute(
            "INSERT INTO comparison_labels (campaign_id, example_id, annotator, verdicts, answer, note, skipped, "
            "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (self.id, example_id, who, None if given is None else json.dumps(given), answer,
             note_text(note), int(bool(skipped)), _now()))
        db.execute("UPDATE comparison_labels SET replaced_by = ? WHERE campaign_id = ? AND example_id = ? AND "
                   "annotator = ? AND replaced_by IS NULL AND id <> ?",
                   (cursor.lastrowid, self.id, example_id, who, cursor.lastrowid))
        self._release(db, example_id, who)
        return int(cursor.lastrowid)

    def import_labels(self, table: pd.DataFrame, annotator: str | None = None, by: str | None = None) -> int:
        """Record the labels of an exported table (:meth:`export`) that came back filled in, in one transaction:
        all or none. A row's label is its ``correct <model>`` cells (1 or 0; identical outputs may be judged once)
        or, where they are all empty and the outputs are classes or choices, its ``answer`` (the right one); rows
        with neither are not labeled yet, and a row equal to its annotator's label in force (an exported label read
        back) is not recorded again; ``annotator`` where the row names none (by default the importer ``by``, or
        ``"import"`` where nobody signs in). Refused, naming the lines (line 1 the header), for ids outside the
        queue, verdicts off the scale or missing, labels the design did not draw and annotators who are not the
        importer (as :meth:`.campaign.Campaign.import_labels`). Returns how
        many were recorded."""
        columns = {str(c).strip(): c for c in table.columns}
        judged = {m: columns[f"correct {m}"] for m in self.info.models if f"correct {m}" in columns}
        answers = columns.get("answer") if self.info.outputs == "class" else None
        if "example_id" not in columns or not (judged or answers):
            wanted = listed([f"correct {m}" for m in self.info.models]) + (
                " or 'answer' (the right class or choice)" if self.info.outputs == "class" else "")
            has = listed([str(c) for c in table.columns])
            raise EvalDataError(f"The labels file needs an 'example_id' column and the verdicts, {wanted}, as "
                                f"`evalcore label export` writes them; it has {has}.")

        def filled(column) -> pd.Series:
            return table[column].notna() & (table[column].astype(str).str.strip() != "")

        cells = table.astype(object)  # Python numbers, as a person typed them (not numpy scalars)
        given = {m: filled(c) for m, c in judged.items()}
        said = filled(answers) if answers is not None else pd.Series(False, index=table.index)
        annotator = annotator or canonical(by) or "import"
        names = table[columns["annotator"]] if "annotator" in columns else pd.Series(annotator, index=table.index)
        labeled = pd.concat([*given.values(), said], axis=1).any(axis=1)
        problems, done = [], 0
        with catalog.transaction(self._db) as db:
            problems += self._out_of_design(db, [(line, str(cells.at[i, columns["example_id"]]).strip())
                                                 for line, i in enumerate(table.index, start=2) if labeled[i]])
            # where the design refuses the file, its lines are not read further (each said once, nothing kept)
            for line, i in ([] if problems else enumerate(table.index, start=2)):
                value = {m: cells.at[i, c] for m, c in judged.items() if given[m][i]} or (
                    str(cells.at[i, answers]) if said[i] else None)
                if value is None:
                    continue
                who = names[i] if isinstance(names[i], str) and names[i].strip() else annotator
                example_id = str(cells.at[i, columns["example_id"]]).strip()
                try:
                    who = self._imported_as(who, by)
                    mine = db.execute("SELECT verdicts FROM comparison_labels WHERE campaign_id = ? AND example_id = ? "
                                      "AND annotator = ? AND replaced_by IS NULL AND skipped = 0",
                                      (self.id, example_id, who)).fetchone()
                    if mine is not None and json.loads(mine[0]) == verdicts(self._outputs_in(db, example_id), value,
                                                                            self.info.outputs):
                        continue  # the annotator's label in force, exported and read back: kept as it is
                    self._record_in(db, example_id, who, value, None, False, need_claim=False)
                    done += 1
                except (EvalDataError, PermissionError) as exc:
                    problems.append(f"line {line}: {exc}")
            if problems:  # raised inside the transaction: nothing is kept
                raise EvalDataError("The labels file was not imported (nothing was recorded): "
                                    + "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more lines"
                                                                if len(problems) > 5 else ""))
        return done

    # ------------------------------------------------------------------------------------------- reading
    def history(self) -> pd.DataFrame:
        """Every label ever given (replaced ones and skips too), oldest first; ``verdicts`` as {model: 0/1}."""
        rows = catalog.rows(self._db, "SELECT id, example_id, annotator, verdicts, answer, note, skipped, created, "
                                      "replaced_by FROM comparison_labels WHERE campaign_id = ? ORDER BY id",
                            (self.id,))
        frame = pd.DataFrame([dict(r) for r in rows], columns=["id", "example_id", "annotator", "verdicts", "answer",
                                                               "note", "skipped", "created", "replaced_by"])
        # a skip's verdicts are None (NaN once pandas stores the column as str)
        frame["verdicts"] = frame["verdicts"].map(lambda v: json.loads(v) if isinstance(v, str) else None)
        return frame

    def verdicts(self) -> pd.DataFrame:
        """The estimator's input: one row per example of the drawn sample with a label or a skip in force, in
        queue order, indexed by example id, with ``position``, ``stratum`` (the design's sampling stratum),
        ``pattern`` (the agreement pattern), a 0/1 column per model (NaN where the example is unknown) and
        ``status``: "adjudicated" (an adjudication in force decides it), "labeled" (its labels agree), "disputed"
        (they differ) or "skipped" (skips only)."""
        models = list(self.info.models)
        rows = catalog.rows(self._db, """SELECT l.example_id, l.verdicts, l.skipped, q.position, q.stratum, e.pattern
            FROM comparison_labels l JOIN queue q ON q.campaign_id = l.campaign_id AND q.example_id = l.example_id
            JOIN comparison_examples e ON e.campaign_id = l.campaign_id AND e.example_id = l.example_id
            WHERE l.campaign_id = ? AND l.replaced_by IS NULL ORDER BY q.position, l.id""", (self.id,))
        decided = {r["example_id"]: json.loads(r["verdicts"]) for r in catalog.rows(
            self._db, "SELECT example_id, verdicts FROM comparison_adjudications WHERE campaign_id = ? AND "
                      "replaced_by IS NULL", (self.id,))}
        found: dict[str, dict] = {}
        for r in rows:
            row = found.setdefault(r["example_id"], {"example_id": r["example_id"], "position": r["position"],
                                                     "stratum": r["stratum"], "pattern": r["pattern"], "given": []})
            if r["verdicts"]:
                row["given"].append(json.loads(r["verdicts"]))
        out = []
        for example_id, row in found.items():
            value, status = settled(row.pop("given"), decided.get(example_id))
            out.append({**row, **{m: (value or {}).get(m, np.nan) for m in models}, "status": status})
        frame = pd.DataFrame(out, columns=["example_id", "position", "stratum", "pattern", *models, "status"])
        return frame.set_index("example_id").astype({m: float for m in models})

    def pending(self, drawn: pd.DataFrame | None = None) -> pd.DataFrame:
        """The adjudication queue, in queue order: every label and skip in force of each example that is disputed
        (its labels differ) or only skipped and that no adjudication settles: ``example_id``, ``position``,
        ``annotator``, ``verdicts`` ({model: 0/1}; None for a skip), ``answer``, ``note`` and ``reason``
        ("labels disagree" or "skipped"); ``drawn``: :meth:`verdicts`, read here unless given."""
        drawn = self.verdicts() if drawn is None else drawn
        open_ = drawn[drawn["status"].isin(["disputed", "skipped"])]
        columns = ["example_id", "position", "annotator", "verdicts", "answer", "note", "reason"]
        if open_.empty:
            return pd.DataFrame(columns=columns)
        labels = self.history()
        labels = labels[labels["replaced_by"].isna() & labels["example_id"].isin(open_.index)]
        reason = open_["status"].map({"disputed": "labels disagree", "skipped": "skipped"})
        table = labels.assign(position=labels["example_id"].map(open_["position"]),
                              reason=labels["example_id"].map(reason))
        return table.sort_values(["position", "id"], kind="stable")[columns].reset_index(drop=True)

    def adjudicate(self, example_id: str, value, adjudicator: str, note: str | None = None) -> int:
        """Settle ``example_id``, disputed or only skipped, at ``value`` (as :meth:`record` takes it: {model: 1 or
        0}, or the right answer for class outputs), decided by ``adjudicator`` (the owner or a named adjudicator,
        :meth:`.campaign.Claims.may_adjudicate`) with an optional ``note``; the decision's id. Deciding again
        replaces the earlier decision, which stays, ``replaced_by`` naming the new one. PermissionError for anyone
        else; EvalDataError for an example outside the queue, or whose labels agree (nothing to settle)."""
        who = self._adjudicator(adjudicator)
        example_id = str(example_id)
        with catalog.transaction(self._db) as db:
            given = verdicts(self._outputs_in(db, example_id), value, self.info.outputs)
            decided = db.execute("SELECT verdicts FROM comparison_adjudications WHERE campaign_id = ? AND "
                                 "example_id = ? AND replaced_by IS NULL", (self.id, example_id)).fetchone()
            in_force = db.execute("SELECT verdicts FROM comparison_labels WHERE campaign_id = ? AND example_id = ? AND "
                                  "replaced_by IS NULL", (self.id, example_id)).fetchall()
            labels = [json.loads(r[0]) for r in in_force if r[0]]
            if not in_force or settled(labels, decided and json.loads(decided[0]))[1] == "labeled":
                why = "has no label yet" if not in_force else f"has {len(labels)} label(s) that agree"
                raise EvalDataError(f"The example {example_id!r} {why}: only examples whose labels disagree, or that "
                                    "were skipped, are adjudicated (the adjudication queue lists them).")
            answer = note_text(value.strip(), "The answer typed") if isinstance(value, str) else None
            cursor = db.execute(
                "INSERT INTO comparison_adjudications (campaign_id, example_id, adjudicator, verdicts, answer, note, "
                "created) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (self.id, example_id, who, json.dumps(given), answer, note_text(note), _now()))
            db.execute("UPDATE comparison_adjudications SET replaced_by = ? WHERE campaign_id = ? AND example_id = ? "
                       "AND replaced_by IS NULL AND id <> ?", (cursor.lastrowid, self.id, example_id, cursor.lastrowid))
            return int(cursor.lastrowid)

    def adjudications(self) -> pd.DataFrame:
        """Every adjudication ever made (replaced ones too), oldest first; ``verdicts`` as {model: 0/1}."""
        rows = catalog.rows(self._db, "SELECT id, example_id, adjudicator, verdicts, answer, note, created, "
                                      "replaced_by FROM comparison_adjudications WHERE campaign_id = ? ORDER BY id",
                            (self.id,))
        frame = pd.DataFrame([dict(r) for r in rows], columns=["id", "example_id", "adjudicator", "verdicts", "answer",
                                                               "note", "created", "replaced_by"])
        frame["verdicts"] = frame["verdicts"].map(json.loads)
        return frame

    def estimate(self, drawn: pd.DataFrame | None = None) -> ComparisonEstimate:
        """The difference of the first two models (and every pair), its interval, the stop rule and the decision,
        from the labels in force (:func:`.difference.comparison_estimate`); ``drawn``: :meth:`verdicts`, read here
        unless given."""
        r = self.info
        return comparison_estimate(self.verdicts() if drawn is None else drawn, list(r.models), r.design, r.pool,
                                   r.target, r.budget, r.decide, r.margin, r.level)

    def page_state(self) -> tuple[ComparisonEstimate, pd.DataFrame]:
        """(:meth:`estimate`, :meth:`pending`) from one read of the labels, as the Label page opens the campaign."""
        drawn = self.verdicts()
        return self.estimate(drawn), self.pending(drawn)

    def export(self) -> pd.DataFrame:
        """One row per queued example (the budget's, or the planned part of a target's queue and every drawn one):
        ``position``, ``example_id``, ``pattern``, ``inclusion_probability`` (n/M for an example drawn, labeled or
        skipped, n the examples drawn and M those the design draws from, or n_h / N_h within the Neyman design's
        stratum; for the others, the planned queue's size over M (n_h / N_h), as if it were labeled; the all-agree
        examples, whose difference is known 0, are not queued under the disagreement design: their inclusion
        probability is 0), ``status`` (labeled, adjudicated, disputed, skipped or unlabeled), ``output <model>``
        (each model's output, literally), ``correct <model>`` (each model's verdict in force, 1 or 0; empty while
        disputed), ``answer`` (the right answer, where one was given and is in force), ``annotator`` (who labeled
        or skipped it) and ``adjudicator`` (who settled it)."""
        info = self.info
        drawn = self.verdicts()
        end = info.budget if info.budget is not None else max(
            info.planned, int(drawn["position"].max()) + 1 if len(drawn) else 0)
        queue = catalog.rows(self._db, """SELECT q.position, q.example_id, q.stratum, e.pattern, e.outputs FROM queue q
            JOIN comparison_examples e ON e.campaign_id = q.campaign_id AND e.example_id = q.example_id
            WHERE q.campaign_id = ? AND q.position < ? ORDER BY q.position""", (self.id, end))
        labels = pd.DataFrame([dict(r) for r in catalog.rows(
            self._db, "SELECT example_id, annotator, answer FROM comparison_labels WHERE campaign_id = ? AND "
                      "replaced_by IS NULL ORDER BY id", (self.id,))], columns=["example_id", "annotator", "answer"])
        who = labels.groupby("example_id")["annotator"].agg(lambda a: ", ".join(sorted(set(a))))
        decisions = self.adjudications()
        decisions = decisions[decisions["replaced_by"].isna()].set_index("example_id")
        agreed = labels[labels["example_id"].map(drawn["status"]) == "labeled"]
        answers = pd.concat([agreed.dropna(subset=["answer"]).groupby("example_id")["answer"].first(),
                             decisions["answer"].dropna()])
        ids = [r["example_id"] for r in queue]
        # n_h / N_h in each sampling stratum (one of M examples but for the Neyman design): the drawn examples'
        # from the draws, the others' as if the planned queue were labeled
        strata = np.array([r["stratum"] if info.design == "neyman" else 0 for r in queue], dtype=np.int64)
        sizes = np.asarray(info.pool.get("strata", [info.pool["M"]]), dtype=float)
        is_drawn = np.array([e in drawn.index for e in ids], dtype=bool)
        n_drawn = np.bincount(strata[is_drawn], minlength=sizes.size)
        n_planned = np.bincount(strata, minlength=sizes.size)
        table = pd.DataFrame({
            "position": [r["position"] for r in queue], "example_id": ids, "pattern": [r["pattern"] for r in queue],
            "inclusion_probability": np.where(is_drawn, n_drawn[strata], n_planned[strata]) / sizes[strata],
            "status": ["unlabeled" if e not in drawn.index else drawn.at[e, "status"] for e in ids]})
        outputs = [json.loads(r["outputs"]) for r in queue]
        for model in info.models:
            table[f"output {model}"] = [o[model] for o in outputs]
        for model in info.models:
            table[f"correct {model}"] = pd.Series(ids).map(drawn[model]).to_numpy()
        table["answer"] = pd.Series(ids).map(answers).to_numpy()
        table["annotator"] = pd.Series(ids).map(who).to_numpy()
        table["adjudicator"] = pd.Series(ids).map(decisions["adjudicator"]).to_numpy()
        return table

    def version(self) -> tuple[int, int]:
        """What changes with every label, skip and adjudication: the campaign's largest label id and largest
        adjudication id, the key of cached statistics as for one-model campaigns."""
        found = catalog.rows(self._db, "SELECT (SELECT COALESCE(MAX(id), 0) FROM comparison_labels WHERE campaign_id "
                                       "= :c), (SELECT COALESCE(MAX(id), 0) FROM comparison_adjudications WHERE "
                                       "campaign_id = :c)", {"c": self.id})
        return (int(found[0][0]), int(found[0][1])) if found else (0, 0)



def settled(given: list[dict], decided: dict | None) -> tuple[dict | None, str]:
    """An example's verdicts in force and its status from the verdicts of its labels in force (``given``; its skips
    give none) and the adjudication in force (``decided``): ("adjudicated" whatever the labels say), "labeled" (its
    labels agree), "disputed" (they differ: None) or "skipped" (skips only: None). Never an average."""
    if decided:
        return decided, "adjudicated"
    if not given:
        return None, "skipped"
    return (given[0], "labeled") if all(g == given[0] for g in given) else (None, "disputed")


def _points(value: float) -> str:
    """A difference in accuracy in points (0.013 -> "1.3")."""
    return f"{100 * value:.1f}"


def _span(low: float, high: float) -> str:
    """An interval in points: "0.4–2.2", signed where it crosses or lies below zero ("-0.6 to +1.2")."""
    return f"{_points(low)}–{_points(high)}" if low >= 0 else f"{100 * low:+.1f} to {100 * high:+.1f}"


def _goal(value: float) -> str:
    """A target or margin in points: 0.01 -> "1 point", 0.015 -> "1.5 points"."""
    points = round(100 * value, 6)
    return f"{points:g} point{'' if points == 1 else 's'}"


def comparison_sentence(info, estimate: ComparisonEstimate) -> str:
    """A comparison campaign's answer in one plain sentence, the words the Label page, the Compare page, the report
    and ``evalcore label status`` share, e.g. "ViT is better than DINO by 1.3 points (95% confidence sequence
    0.4–2.2) — decided after 412 labels; a random paired sample would have needed about 1,900." ``info``: the
    campaign's :class:`.campaign.CampaignRecord`; ``estimate``: its :meth:`ComparisonCampaign.estimate`."""
    models = list(estimate.models)
    a, b = models[0], models[1]
    level = f"{estimate.level:.0%} {estimate.interval}"
    skipped = (f" {estimate.skipped:,} example{' was' if estimate.skipped == 1 else 's were'} skipped or judged "
               "differently (awaiting adjudication): the interval counts each at its worst and at its best."
               if estimate.skipped else "")
    if estimate.difference != estimate.difference:  # NaN: fewer than two examples with every verdict
        labels = f"{estimate.labels:,} label{'' if estimate.labels == 1 else 's'}"
        first = (f"2 labels in each of the design's {len(info.pool['strata'])} strata" if estimate.design == "neyman"
                 else "2 labels")
        return (f"{' vs '.join(models)}: {labels} so far; the first estimate of the difference needs {first}, and "
                f"the stop rule at least {MIN_LABELS}.{skipped}")
    random = (f"; a random paired sample would have needed about {estimate.random_labels:,.0f}"
              if estimate.design != "srs" and estimate.random_labels == estimate.random_labels else "")
    after = f"decided after {estimate.labels:,} labels{random}.{skipped}"
    shown = _span(estimate.ci_low, estimate.ci_high)
    signed = f"{a} − {b}: {100 * estimate.difference:+.1f} points ({level} {shown})"
    if estimate.equivalent:
        return (f"{a} and {b} are within ±{_goal(estimate.margin)} of each other: {a} − {b} = "
                f"{100 * estimate.difference:+.1f} points ({level} {shown}) — {after}")
    if estimate.decided is not None and len(models) > 2:
        claim = ("is better than" if estimate.margin == 0 else
                 f"is not worse by more than {_goal(estimate.margin)} than")
        others = listed([m for m in models if m != estimate.decided])
        return (f"{estimate.decided} {claim} every other model ({others}; each pair's {level}, all at once) — "
                f"decided after {estimate.labels:,} labels.{skipped}")  # random_labels is of the first pair only
    flip = estimate.decided == b or (estimate.decided is None and estimate.difference < 0)
    win, lose = (b, a) if flip else (a, b)
    diff, low, high = ((-estimate.difference, -estimate.ci_high, -estimate.ci_low) if flip else
                       (estimate.difference, estimate.ci_low, estimate.ci_high))
    better = f"{win} is better than {lose} by {_points(diff)} points ({level} {_span(low, high)})"
    if estimate.decided is not None:
        if low > 0:
            return f"{better} — {after}"
        return (f"{win} is not worse than {lose} by more than {_goal(estimate.margin)}: {_points(diff)} points ahead "
                f"({level} {_span(low, high)}) — {after}")
    answer = (better if low > 0 else signed + (": not decided yet" if info.decide else ": the interval includes 0"))
    answer += f", from {estimate.labels:,} labels{random}."
    if estimate.stop:
        end = (f" The budget of {info.budget:,} labels is used." if info.budget is not None else
               " Every example the design can draw is labeled." if estimate.labels + estimate.skipped >= info.pool["M"]
               else f" You can stop: the interval is within ±{_goal(info.target)}.")
        return answer + end + skipped
    if info.decide:
        what = ("excludes 0" if estimate.margin == 0 else
                f"lies wholly above −{_goal(estimate.margin)} or wholly below +{_goal(estimate.margin)}")
        budget = f" (or at the budget of {info.budget:,} labels)" if info.budget is not None else ""
        return answer + f" Label on: the campaign stops the moment the {estimate.interval} {what}{budget}." + skipped
    goal = " for the budget" if info.budget is not None else f" for ±{_goal(info.target)}"
    return answer + f" About {estimate.needed:,} more labels needed{goal}.{skipped}"


def pairs_table(estimate: ComparisonEstimate) -> pd.DataFrame:
    """Every pair of models, as the Compare page and the report show it: ``model_a``, ``model_b``, ``difference``
    (a's accuracy minus b's) with its interval ``ci_low``–``ci_high`` (the fixed-n interval) and, for a "decided"
    campaign, the confidence sequence ``sequence_low``–``sequence_high`` (simultaneous over the pairs)."""
    columns = {"model_a": "model_a", "model_b": "model_b", "difference": "difference", "ci_low": "ci_low",
               "ci_high": "ci_high", "cs_low": "sequence_low", "cs_high": "sequence_high"}
    table = estimate.pairs[[c for c in columns if c in estimate.pairs]].rename(columns=columns)
    if estimate.interval != "confidence sequence":
        table = table.drop(columns=["sequence_low", "sequence_high"])
    return table.reset_index(drop=True)


def pattern_table(info, estimate: ComparisonEstimate) -> pd.DataFrame:
    """The labels per agreement pattern: ``pattern``, ``examples`` (of the shared pool), ``sampled`` (whether the
    design draws from it: the disagreement design never draws the all-agree examples, whose difference is known 0)
    and ``labels`` (examples drawn: labeled or skipped)."""
    names, sizes = info.pool["patterns"], info.pool["pattern_sizes"]
    return pd.DataFrame({"pattern": names, "examples": sizes,
                         "sampled": [info.design == "srs" or name != ALL_AGREE for name in names],
                         "labels": [estimate.per_pattern.get(name, 0) for name in names]})
