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
import threading

import ibis
import ibis.expr.types as ir
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
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


def bucket_sums(table: ir.Table, by: list[str], values: dict[str, ir.Value], seed: int, run,
                buckets: int = BUCKETS) -> pd.DataFrame:
    """Per (``by``, bucket): ``rows`` and the sum of each named value expression of ``table`` (one pass). ``run``
    is :meth:`evalcore.engine.scan.LazyLog.run`; the result (cells x buckets rows, hundreds of thousands for a large
    log) comes back as Arrow, its text columns as pandas categoricals (codes, each distinct text converted once)."""
    keyed = table.select(*by, bucket=example_bucket(table, seed, buckets), **values)
    sums = keyed.group_by([*by, "bucket"]).aggregate(rows=keyed.count(),
                                                     **{name: keyed[name].sum() for name in values})
    result = run(sums, arrow=True)
    return pa.table([pc.dictionary_encode(column) if pa.types.is_string(column.type)
                     or pa.types.is_large_string(column.type) else column for column in result.columns],
                    names=result.column_names).to_pandas()


#: occupied buckets per block of weights
BLOCK = 512
#: the largest block of bucket sums (BLOCK x cells numbers) multiplied as a dense matrix; sparse above
DENSE_CELLS = 2**22
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
#: the weight of the smallest uniform of each of the 2^16 ranges of its top 16 bits: a look-up that is the weight
#: itself unless a threshold falls inside the range (:func:`_poisson_of` then steps up)
_START = np.searchsorted(_THRESHOLDS, np.arange(2**16, dtype=np.uint64) << np.uint64(16), side="right") \
    .astype(np.uint8)


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
    the bucket and the replicate, computed for the buckets asked for."""

    def __init__(self, n_boot: int, seed: int):
        self.n_boot, self.seed = int(n_boot), int(seed)
        self._key = _mix(np.array([self.seed & (2**64 - 1)], dtype=np.uint64))[0]

    def columns(self, buckets: np.ndarray) -> np.ndarray:
        """(n_boot, len(buckets)) weights of ``buckets``, as floats."""
        counter = (np.asarray(buckets, dtype=np.uint64)[None, :] << np.uint64(32)) \
            | np.arange(self.n_boot, dtype=np.uint64)[:, None]
        u = _mix(self._key + (counter + np.uint64(1)) * _GOLDEN) >> np.uint64(32)
        return _poisson_of(u.ravel()).astype(float).reshape(counter.shape)


def _poisson_of(u: np.ndarray) -> np.ndarray:
    """The Poisson(1) counts of uniforms ``u`` in [0, 2^32) (uint64): the number of thresholds <= u — a binary
    search, done as a look-up on u's top 16 bits and a step up where a threshold lies between the range's start and
    u (three times faster)."""
    w = _START[u >> np.uint64(16)]
    w += u >= _THRESHOLDS[w]
    rest = np.flatnonzero(u >= _THRESHOLDS[w])  # ranges holding several thresholds (W >= 9: one in 10^6)
    while rest.size:
        w[rest] += 1
        rest = rest[u[rest] >= _THRESHOLDS[w[rest]]]
    return w


def bucket_weights(n_boot: int, seed: int) -> BucketWeights:
    """The weights :math:`W_{bh}` of ``n_boot`` replicates (computed when :func:`replicate_totals` needs them)."""
    return BucketWeights(n_boot, seed)


def replicate_totals(sums: pd.DataFrame, cells: pd.MultiIndex | pd.Index, by: list[str], columns: list[str],
                     weights: BucketWeights) -> dict[str, np.ndarray]:
    r"""For each column of ``sums`` (from :func:`bucket_sums`), the (n_boot, n_cells) replicated totals
    :math:`\sum_h W_{bh} S_{ch}`, cells in the order of ``cells`` (cells absent from ``sums`` total 0), over the
    occupied buckets, :data:`BLOCK` of them at a time."""
    cell = _cell_positions(sums, cells, by)
    if (cell < 0).any():
        raise ValueError("bucket sums hold a cell that is not in cells")
    bucket = sums["bucket"].to_numpy(dtype=np.int64)
    present = np.bincount(bucket, minlength=BUCKETS) > 0
    occupied = np.flatnonzero(present)
    position = (np.cumsum(present) - 1)[bucket]  # the bucket's place among the occupied ones
    order = np.argsort(position.astype(np.uint16), kind="stable")  # each block's rows together (a radix sort)
    position, cell = position[order], cell[order]
    sums_of = {column: sums[column].to_numpy(dtype=float)[order] for column in columns}
    out = {column: np.zeros((weights.n_boot, len(cells))) for column in columns}
    bounds = np.searchsorted(position, np.arange(0, len(occupied) + BLOCK, BLOCK))
    with _one_blas_thread():
        for k, (start, end) in enumerate(zip(bounds[:-1], bounds[1:])):
            if start == end:
                continue
            w = weights.columns(occupied[k * BLOCK:(k + 1) * BLOCK])
            offset = position[start:end] - k * BLOCK
            for column, values in sums_of.items():
                out[column] += _block_product(w, values[start:end], offset, cell[start:end], len(cells))
    return out


def _cell_positions(sums: pd.DataFrame, cells: pd.MultiIndex | pd.Index, by: list[str]) -> np.ndarray:
    """The position in ``cells`` of each row's ``by`` values (-1 where absent), looked up once per distinct cell:
    each key column's codes (a categorical's own, else factorized), their combination numbered by counting where the
    combinations are few (hashing otherwise), and the index looked up over cells, not over the cells x buckets
    rows."""
    codes, uniques = zip(*(_codes(sums[key]) for key in by))
    sizes = np.array([len(u) for u in uniques], dtype=np.int64)
    combined = np.ravel_multi_index(codes, sizes) if len(by) > 1 else codes[0]
    span = int(np.prod(sizes))
    if span <= 2**24:
        present = np.bincount(combined, minlength=span) > 0
        distinct, inverse = np.flatnonzero(present), (np.cumsum(present) - 1)[combined]
    else:
        inverse, distinct = pd.factorize(combined)
    parts = np.unravel_index(distinct, sizes)
    keys = [pd.Index(unique).take(part) for unique, part in zip(uniques, parts)]
    index = pd.MultiIndex.from_arrays(keys, names=by) if len(by) > 1 else keys[0]
    return cells.get_indexer(index)[inverse]


def _codes(column: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """(codes, values) of a key column: a categorical's own codes (no hashing), else :func:`pandas.factorize`'s;
    a missing value is a value of its own."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.cat.codes.to_numpy(dtype=np.int64)
        if not (codes < 0).any():
            return codes, column.cat.categories
    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    return codes.astype(np.int64), pd.Index(uniques)


def _block_product(w: np.ndarray, values: np.ndarray, offset: np.ndarray, cell: np.ndarray,
                   n_cells: int) -> np.ndarray:
    """The (n_boot, cells) totals of one block of buckets: its weights ``w`` times the block's bucket sums
    (``values`` at bucket ``offset`` within the block and cell ``cell``)."""
    size = w.shape[1]
    if size * n_cells <= DENSE_CELLS:  # a dense (buckets, cells) block: one BLAS product
        return _distinct_product(w, np.bincount(offset * n_cells + cell, values, size * n_cells)
                                 .reshape(size, n_cells))
    block = sparse.csr_matrix((values, (offset, cell)), shape=(size, n_cells))
    return np.asarray((block.T @ w.T).T)


@functools.cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


_BLAS_LOCK = threading.Lock()


@contextlib.contextmanager
def _one_blas_thread():
    """BLAS on one thread while the replicates are multiplied: the products are small (n_boot x BLOCK times BLOCK x
    cells), and they run right after the engine's own threads; a second BLAS thread waiting for a core costs more
    than it brings (several times more on a loaded 2-core machine; the results are the same). The limit is the
    process's, so threads take turns (a lock): each restores the count it found, never another's limit."""
    with _BLAS_LOCK, _blas().limit(limits=1, user_api="blas"):
        yield


def _distinct_product(w: np.ndarray, block: np.ndarray) -> np.ndarray:
    """``w @ block`` with each distinct column of ``block`` multiplied once: cells with the same bucket sums (the
    row counts of models that scored the same examples of a task, the common case) share one product. Columns are
    matched by a random projection, then compared in full (a collision falls back to the whole product)."""
    _, first, inverse = np.unique(_PROJECTION[:len(block)] @ block, return_index=True, return_inverse=True)
    if len(first) > block.shape[1] // 2 or not np.array_equal(block, block[:, first[inverse]]):
        return w @ block
    return (w @ block[:, first])[:, inverse]


#: the projection that matches equal columns of a block of bucket sums (:func:`_distinct_product`)
_PROJECTION = np.random.default_rng(0).random(BLOCK)
