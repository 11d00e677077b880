r"""The paired Poisson bootstrap of a log in an engine, with examples hashed into random buckets.

Each example :math:`e` (a task and an ``example_id``) is hashed into one of :math:`H` buckets,
:math:`h(e) = \text{MD5}(\text{seed} \,\|\, \text{task} \,\|\, \text{example\_id}) \bmod H` (the first four
hexadecimal digits, read with portable string arithmetic, so every engine computes the same bucket), and in replicate
:math:`b` every example of bucket :math:`h` gets the weight :math:`W_{bh} \sim \text{Poisson}(1)`, a function of
(seed, :math:`h`, :math:`b`) alone: the :math:`c`-th output of SplitMix64 (Steele, Lea & Flood 2014, "Fast
splittable pseudorandom number generators", the generator Java's ``SplittableRandom`` uses; it passes BigCrush)
seeded with the seed, at the counter :math:`c = 2^{32} h + b`, its top 32 bits read as a uniform :math:`U` and turned
into a count by the inverse of the Poisson(1) distribution function (:math:`W = k` where
:math:`F(k - 1) \le U < F(k)`, :math:`F` rounded to multiples of :math:`2^{-32}`). Only the buckets a log occupies
are computed (a log of 200 examples needs 200 columns of weights, not 8,192), :data:`BLOCK` of them at a time (memory
stays at n_boot x B numbers), and a bucket's weights do not depend on which other buckets are occupied. A
replicate's weighted sums are then

.. math:: \sum_e W_{b\,h(e)}\, v_e = \sum_h W_{bh}\, S_h, \qquad S_h = \sum_{e : h(e) = h} v_e ,

so the engine computes only the bucket sums :math:`S_h` per cell (one ``GROUP BY`` pass, however many replicates)
and the replicates are a small matrix product here. The weight depends on the example, the replicate and the seed
only: every model of an example gets the same weight (the bootstrap stays paired), and the result does not depend
on how the data is split into files or partitions, nor on the engine.

Poisson(1) weights approximate the multinomial counts of resampling with replacement (Hanley & MacGibbon 2006;
Chamandy et al. 2012, "Estimating uncertainty for massive data streams", who also hash units into buckets). With
:math:`H` = :data:`BUCKETS` buckets each bucket is a random block of examples; because blocks are formed at random,
resampling them estimates the same sampling variance as resampling examples (the within-block cross products have
mean zero), with a relative error of about :math:`\sqrt{2/H}` (1.6 %) on the variance, well below the Monte Carlo
error of 200 replicates. With fewer examples than buckets it is the example-level Poisson bootstrap.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import ibis
import ibis.expr.types as ir
import numpy as np
import pandas as pd
import scipy.sparse as sparse
from threadpoolctl import ThreadpoolController

#: buckets of examples (2^13): the blocks the bootstrap resamples
BUCKETS = 8192
HEX = "0123456789abcdef"


def example_bucket(table: ir.Table, seed: int, buckets: int = BUCKETS) -> ir.IntegerValue:
    """:math:`h(e)` in [0, ``buckets``): the first four hex digits of MD5(seed ‖ task ‖ example_id) mod buckets.
    DuckDB reads the four digits with one cast of '0x....' (a third faster); other engines, whose casts do not read
    hexadecimal, with portable string arithmetic — the same number either way."""
    digest = ibis.literal(f"{int(seed)}\x1f").concat(table.task, "\x1f", table.example_id).hexdigest("md5")
    if _backend(table) == "duckdb":
        return ibis.literal("0x").concat(digest.substr(0, 4)).cast("int64") % buckets
    digits = ibis.literal(HEX)
    value = ibis.literal(0, "int64")
    for i in range(4):
        value = value * 16 + digits.find(digest.substr(i, 1)).cast("int64")
    return value % buckets


def _backend(table: ir.Table) -> str | None:
    try:
        return table.get_backend().name
    except Exception:  # an unbound expression: no backend to ask
        return None


def bucket_sums(table: ir.Table, cells: pd.DataFrame, values: dict[str, ir.Value], seed: int, run,
                buckets: int = BUCKETS) -> list[dict[str, np.ndarray]]:
    """Per (cell, bucket) of ``table``'s rows: ``rows`` and the sum of each named value expression (one pass), as
    arrays ``cell`` (the row's position in ``cells``, a frame of key columns with one row per cell), ``bucket``,
    ``rows`` and the values, in the parts the engine returned them in (its Arrow batches, read without a copy). The
    cell number is joined in the engine (null keys match null keys), so the result (cells x buckets rows, hundreds
    of thousands for a large log) comes back as numbers, no text to convert. ``run`` is
    :meth:`evalcore.engine.scan.LazyLog.run`. Raises ValueError where a row's keys are not among ``cells``."""
    keys = ibis.memtable(cells.assign(cell=np.arange(len(cells), dtype=np.int64)))
    rows = table.select(*cells.columns, bucket=example_bucket(table, seed, buckets), **values)
    joined = rows.left_join(keys, [rows[key].identical_to(keys[key]) for key in cells.columns])
    keyed = joined.select(keys.cell, rows.bucket, *(rows[name] for name in values))  # columns: Ibis builds it faster
    sums = keyed.group_by(["cell", "bucket"]).aggregate(rows=keyed.count(),
                                                        **{name: keyed[name].sum() for name in values})
    result = run(sums, arrow=True)
    if result["cell"].null_count:
        raise ValueError("the table holds rows whose keys are not in cells")
    return [{name: batch[name].to_numpy(zero_copy_only=False) for name in batch.schema.names}
            for batch in result.to_batches()]


#: occupied buckets per block of weights
BLOCK = 512
#: the largest matrix of bucket sums (occupied buckets x cells numbers, 16 MB) laid out dense; sparse above
DENSE_CELLS = 2**21
#: the smallest matrix of bucket sums whose equal columns are looked for (smaller ones: not worth the look)
SHARED_CELLS = 2**17
#: equal columns are looked for where at most 1 / SHARED_FILL of the matrix holds sums: the look costs per sum, the
#: products it saves per number of the matrix (a fuller matrix, e.g. a log of a million rows: slower with the look)
SHARED_FILL = 4
#: the most weights (bytes) a :class:`BucketWeights` keeps: n_boot up to 2,048 of all buckets (16 MB)
KEPT_WEIGHTS = 2**24
#: SplitMix64's increment (the golden ratio's 64 bits) and its finalizer's multipliers
_GOLDEN, _MIX1, _MIX2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _poisson_thresholds(largest: int = 20) -> np.ndarray:
    """:math:`2^{32} F(k)` for k = 0 ... ``largest``, F the Poisson(1) distribution function (the last is
    :math:`2^{32}`: a weight never exceeds ``largest``; P(W > 20) is 4e-20)."""
    terms = [math.exp(-1.0)]
    for k in range(1, largest + 1):
        terms.append(terms[-1] / k)
    cdf = np.minimum(np.cumsum(terms), 1.0)
    cdf[-1] = 1.0
    return np.round(cdf * 2.0**32).astype(np.uint64)


_THRESHOLDS = _poisson_thresholds()
#: the largest weight :func:`_poisson_of` gives
MAX_WEIGHT = len(_THRESHOLDS) - 1
#: a weight :class:`BucketWeights` has not drawn yet (no weight is that large)
_UNKNOWN = 255
#: the weight of the smallest uniform of each of the 2^16 ranges of its top 16 bits: the weight of every uniform of
#: the range, unless a threshold lies inside it (:data:`_SPLIT`)
_START = np.searchsorted(_THRESHOLDS, np.arange(2**16, dtype=np.uint64) << np.uint64(16), side="right") \
    .astype(np.uint8)
#: the ranges with a threshold inside (8 of the 65,536): only there does the weight depend on the lower 16 bits
_SPLIT = np.searchsorted(_THRESHOLDS, (np.arange(2**16, dtype=np.uint64) + np.uint64(1)) << np.uint64(16),
                         side="left") > _START


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finalizer (in place on a uint64 array, wrapping as the algorithm does)."""
    z ^= z >> np.uint64(30)
    z *= _MIX1
    z ^= z >> np.uint64(27)
    z *= _MIX2
    z ^= z >> np.uint64(31)
    return z


class BucketWeights:
    """The (n_boot, buckets) Poisson(1) weights :math:`W_{bh}` of the module's docstring: a function of the seed,
    the bucket and the replicate, computed for the buckets and replicates asked for and kept (one byte each, up to
    :data:`KEPT_WEIGHTS` of them), so that a second pass with the same seed (the leaderboard, then calibration)
    does not draw them again. Threads may ask at once (no lock): a weight not yet kept reads as :data:`_UNKNOWN`,
    and a thread that finds one draws the weights itself, writing the same values as any other."""

    def __init__(self, n_boot: int, seed: int):
        self.n_boot, self.seed = int(n_boot), int(seed)
        self._key = _mix(np.array([self.seed & (2**64 - 1)], dtype=np.uint64))[0]
        kept = self.n_boot * BUCKETS <= KEPT_WEIGHTS  # by bucket: a bucket's replicates side by side
        self._kept = np.full((BUCKETS, self.n_boot), _UNKNOWN, dtype=np.uint8) if kept else None

    def columns(self, buckets: np.ndarray, replicates: slice = slice(None)) -> np.ndarray:
        """(n_boot, len(buckets)) weights of ``buckets`` (whole numbers, uint8); the rows of ``replicates`` only
        where given."""
        buckets = np.asarray(buckets, dtype=np.int64)
        rows = np.arange(self.n_boot)[replicates]
        if self._kept is None:
            return self._draw(buckets, rows)
        kept = self._kept[buckets][:, replicates]
        unknown = (kept == _UNKNOWN).any(axis=1)
        if unknown.any():
            drawn = self._draw(buckets[unknown], rows).T
            self._kept[buckets[unknown][:, None], rows[None, :]] = drawn
            kept[unknown] = drawn
        return kept.T

    def _draw(self, buckets: np.ndarray, replicates: np.ndarray) -> np.ndarray:
        """The (len(replicates), len(buckets)) weights from their counters (uint8)."""
        z = (buckets.astype(np.uint64)[None, :] << np.uint64(32)) | replicates.astype(np.uint64)[:, None]
        z += np.uint64(1)  # the state after c + 1 steps: key + (c + 1) x golden (in place: no temporaries)
        z *= _GOLDEN
        z += self._key
        u = _mix(z)
        u >>= np.uint64(32)
        return _poisson_of(u.ravel()).reshape(z.shape)


def _poisson_of(u: np.ndarray) -> np.ndarray:
    """The Poisson(1) counts of uniforms ``u`` in [0, 2^32) (uint64): the number of thresholds <= u — a binary
    search, done as a look-up on u's top 16 bits, searched only in the few ranges a threshold splits (one uniform
    in 8,000; two to three times faster than the search alone)."""
    high = (u >> np.uint64(16)).view(np.int64)  # below 2^16: indices as they are, no conversion
    w = _START.take(high)
    split = np.flatnonzero(_SPLIT.take(high))
    w[split] = np.searchsorted(_THRESHOLDS, u[split], side="right")
    return w


@functools.lru_cache(maxsize=2)
def bucket_weights(n_boot: int, seed: int) -> BucketWeights:
    """The weights :math:`W_{bh}` of ``n_boot`` replicates (computed when :func:`replicate_totals` needs them; the
    last two (n_boot, seed) kept, at most 2 x :data:`KEPT_WEIGHTS` bytes)."""
    return BucketWeights(n_boot, seed)


def replicate_totals(sums: list[dict[str, np.ndarray]], n_cells: int, columns: list[str], weights: BucketWeights,
                     groups: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    r"""For each of ``columns`` of ``sums`` (the parts of :func:`bucket_sums`), the (n_boot, n_cells) replicated
    totals :math:`\sum_h W_{bh} S_{ch}` (cells absent from ``sums`` total 0); a column named in ``groups`` is
    totalled per group of cells instead (``groups[column][c]``: cell c's group, numbered from 0), e.g. a model's
    rows over its bins. Over the occupied buckets: each column's (occupied buckets x distinct cells) matrix
    :math:`S` is laid out once (:func:`_laid_out`), and multiplied :data:`BLOCK` rows at a time by the weights of
    those buckets (the two halves of the replicates on two threads, :func:`_one_blas_thread`)."""
    groups = groups or {}
    cell = [np.asarray(part["cell"], dtype=np.int64) for part in sums]
    bucket = [np.asarray(part["bucket"], dtype=np.int64) for part in sums]
    present = np.zeros(BUCKETS, dtype=bool)
    for b in bucket:
        present[b] = True
    occupied = np.flatnonzero(present)
    # the bucket's place among the occupied ones: the bucket itself where all are occupied (a large log)
    place = None if len(occupied) == BUCKETS else np.cumsum(present) - 1
    position = bucket if place is None else [place[b] for b in bucket]
    by_cell = _Places(position, cell, len(occupied), n_cells)
    laid = {}
    for column in columns:
        group = groups.get(column)
        places = by_cell if group is None else _Places(  # several cells of a group share a bucket: summed
            position, [group[c] for c in cell], len(occupied), int(group.max()) + 1 if len(group) else 0, False)
        laid[column] = _laid_out([np.asarray(part[column]) for part in sums], places)

    def totals(replicates: slice) -> dict[str, np.ndarray]:
        out = {column: np.zeros((len(range(weights.n_boot)[replicates]), part.matrix.shape[1]))
               for column, part in laid.items()}
        for start in range(0, len(occupied), BLOCK):
            counts = weights.columns(occupied[start:start + BLOCK], replicates)
            w = {dtype: counts.astype(dtype) for dtype in {part.matrix.dtype for part in laid.values()}}
            for column, part in laid.items():
                block, weight = part.matrix[start:start + BLOCK], w[part.matrix.dtype]
                out[column] += (block.T @ weight.T).T if sparse.issparse(block) else weight @ block
        return out

    with _one_blas_thread():
        if _HELPER is None:
            halves = [totals(slice(None))]
        else:  # the second half of the replicates on the helper thread, the first here
            half = weights.n_boot // 2
            second = _HELPER.submit(totals, slice(half, None))
            halves = [totals(slice(0, half)), second.result()]
    return {column: np.concatenate([out[column] for out in halves]).take(laid[column].inverse, axis=1)
            for column in laid}


@dataclass(frozen=True)
class _Laid:
    """One column's bucket sums, laid out for the products: ``matrix`` (occupied buckets x distinct cells, in the
    precision it is multiplied in); ``inverse``: each cell's column in it."""

    matrix: np.ndarray | sparse.csr_matrix
    inverse: np.ndarray


@dataclass
class _Places:
    """Where bucket sums go in an (occupied buckets x ``width``) matrix: per part of the sums, each sum's bucket
    (``position`` among the ``n_occupied``) and column (``cell``); ``distinct``: each place holds one sum (else
    several, summed: cells totalled per group). What the columns of one call share is computed once."""

    position: list[np.ndarray]
    cell: list[np.ndarray]
    n_occupied: int
    width: int
    distinct: bool = True

    @functools.cached_property
    def counts(self) -> np.ndarray:
        """The number of sums of each column."""
        return _per_cell(self.cell, self.width)

    @functools.cached_property
    def flat(self) -> list[np.ndarray]:
        """Each sum's place in the dense matrix, flat: position x width + cell."""
        flat = [p * self.width for p in self.position]
        for f, c in zip(flat, self.cell):
            f += c
        return flat


def _laid_out(values: list[np.ndarray], places: _Places) -> _Laid:
    """The matrix of bucket sums ``values`` (a list of parts) at their ``places``, dense up to :data:`DENSE_CELLS`
    numbers, else compressed rows (:func:`_bucket_matrix`).

    Whole numbers whose replicated totals stay below :math:`2^{24}` (each column's Σ|S| times the largest weight,
    :data:`MAX_WEIGHT`, at most its number of sums times the largest |S|: row counts, sums of 0/1 labels) are laid
    out and multiplied in single precision (twice as fast, exactly the same numbers), and cells with equal columns
    share one (in a matrix of at least :data:`SHARED_CELLS` numbers, at most a :data:`SHARED_FILL`-th filled): the
    row counts of models that scored the same examples of a task, the common case. Equal columns are found by an
    exact fingerprint, Σ k_h S_ch with random integer keys k_h < 2^32 (whole numbers: the sums stay below 2^53, so
    the order of summation does not matter), then checked entry by entry (a fingerprint shared by unequal columns
    keeps every cell): a cell's sums equal its column's at the same buckets, and they are as many."""
    exact = all(v.dtype.kind in "biu" or np.array_equal(v, np.trunc(v)) for v in values) \
        and _below_single_precision(values, places)
    dtype = np.float32 if exact else np.float64
    size = places.n_occupied * places.width
    shared = SHARED_CELLS <= size <= DENSE_CELLS and sum(map(len, values)) * SHARED_FILL <= size
    if exact and places.distinct and shared:
        position, cell = places.position, places.cell
        fingerprint = _per_cell(cell, places.width, [_KEYS[p] * v for p, v in zip(position, values)])
        _, first, inverse = np.unique(fingerprint, return_index=True, return_inverse=True)
        if len(first) < places.width:
            kept = np.zeros(places.width, dtype=bool)
            kept[first] = True
            rows = [kept[c] for c in cell]
            kept_places = _Places([p[r] for p, r in zip(position, rows)],
                                  [inverse[c[r]] for c, r in zip(cell, rows)], places.n_occupied, len(first))
            matrix = _bucket_matrix([v[r] for v, r in zip(values, rows)], kept_places, dtype)
            every = _Places(position, [inverse[c] for c in cell], places.n_occupied, len(first))  # all sums, shared
            if all(np.array_equal(matrix.ravel()[f], v) for f, v in zip(every.flat, values)) \
                    and np.array_equal(places.counts, places.counts[first][inverse]):
                return _Laid(matrix, inverse)
    return _Laid(_bucket_matrix(values, places, dtype), np.arange(places.width))


def _below_single_precision(values: list[np.ndarray], places: _Places) -> bool:
    """Whether every column's Σ|S| x :data:`MAX_WEIGHT` stays below 2^24: bounded first by its number of sums times
    the largest |S| (no pass over the sums), summed where the bound does not tell."""
    largest = max((max(abs(float(v.max())), abs(float(v.min()))) for v in values if len(v)), default=0.0)
    if places.counts.max(initial=0) * largest * MAX_WEIGHT < 2**24:
        return True
    return _per_cell(places.cell, places.width, [np.abs(v) for v in values]).max(initial=0) * MAX_WEIGHT < 2**24


def _per_cell(cell: list[np.ndarray], n_cells: int, values: list[np.ndarray] | None = None) -> np.ndarray:
    """Σ of ``values`` per cell over the parts (without values: the number of sums of each cell)."""
    total = np.zeros(n_cells)
    for i, c in enumerate(cell):
        total += np.bincount(c, None if values is None else values[i], n_cells)
    return total


def _bucket_matrix(values: list[np.ndarray], places: _Places, dtype: type) -> np.ndarray | sparse.csr_matrix:
    """``values`` (a list of parts) at their ``places`` in a matrix of ``dtype``: dense where it holds at most
    :data:`DENSE_CELLS` numbers (placed where each place holds one sum, else summed with :func:`numpy.bincount`),
    else compressed rows (summed)."""
    shape = (places.n_occupied, places.width)
    size = shape[0] * shape[1]
    if size > DENSE_CELLS:
        return sparse.csr_matrix((np.concatenate(values), (np.concatenate(places.position),
                                                           np.concatenate(places.cell))), shape=shape, dtype=dtype)
    if not places.distinct:
        return _per_cell(places.flat, size, values).reshape(shape).astype(dtype, copy=False)
    matrix = np.zeros(size, dtype=dtype)
    for f, v in zip(places.flat, values):
        matrix[f] = v
    return matrix.reshape(shape)


#: the random integer keys of the occupied buckets' places that fingerprint a column of bucket sums (:func:`_laid_out`)
_KEYS = np.random.default_rng(0).integers(1, 2**32, BUCKETS).astype(float)
#: the process's BLAS libraries, found once when the module loads (inspecting the loaded libraries takes 5-10 ms)
_BLAS = ThreadpoolController()


def _start_helpers() -> None:
    """The lock :func:`_one_blas_thread` takes and the thread that multiplies the second half of the replicates
    (:func:`replicate_totals`), where there is a core for it; made anew in a forked child (a fork copies neither
    the thread nor, usefully, a lock another thread held)."""
    global _BLAS_LOCK, _HELPER
    _BLAS_LOCK = threading.Lock()
    _HELPER = ThreadPoolExecutor(1, thread_name_prefix="evalcore-replicates") if (os.cpu_count() or 1) > 1 else None


_start_helpers()
os.register_at_fork(after_in_child=_start_helpers)


@contextlib.contextmanager
def _one_blas_thread():
    """BLAS on one thread per caller while the replicates are multiplied: the products are small (n_boot x BLOCK
    times BLOCK x cells), and they run right after the engine's own threads; BLAS' own second thread, waiting for a
    core, costs more than it brings (several times more on a loaded 2-core machine), while two halves of the
    replicates on two threads of ours (:data:`_HELPER`) take turns on a busy core at no loss and halve the time on
    an idle machine (the same numbers: each replicate's row is the same product). The limit is the process's, so
    callers take turns (a lock): each restores the count it found, never another's limit."""
    with _BLAS_LOCK, _BLAS.limit(limits=1, user_api="blas"):
        yield
