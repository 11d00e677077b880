r"""The paired Poisson bootstrap of a log in an engine, with examples hashed into random buckets.

Each example :math:`e` (a task and an ``example_id``) is hashed into one of :math:`H` buckets,
:math:`h(e) = \text{MD5}(\text{seed} \,\|\, \text{task} \,\|\, \text{example\_id}) \bmod H` (the first four
hexadecimal digits, read with portable string arithmetic, so every engine computes the same bucket), and in replicate
:math:`b` every example of bucket :math:`h` gets the weight :math:`W_{bh} \sim \text{Poisson}(1)`, drawn a block of
:data:`BLOCK` buckets at a time: block :math:`k` (buckets :math:`kB` to :math:`kB + B - 1`) from
``numpy.random.default_rng([seed, 2, k])`` (so only the blocks a log occupies are drawn, memory stays at n_boot x B
numbers, and a bucket's weights do not depend on which other buckets are occupied). A replicate's weighted sums are
then

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

import ibis
import ibis.expr.types as ir
import numpy as np
import pandas as pd
import scipy.sparse as sparse

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
    """Per (``by``, bucket): ``rows`` and the sum of each named value expression of ``table`` (one pass)."""
    keyed = table.select(*by, bucket=example_bucket(table, seed, buckets), **values)
    sums = keyed.group_by([*by, "bucket"]).aggregate(rows=keyed.count(),
                                                     **{name: keyed[name].sum() for name in values})
    return run(sums)


#: buckets per block of weights
BLOCK = 512
#: the largest block of bucket sums (BLOCK x cells numbers) multiplied as a dense matrix; sparse above
DENSE_CELLS = 2**22


class BucketWeights:
    """The (n_boot, buckets) Poisson(1) weights :math:`W_{bh}`, drawn a block of :data:`BLOCK` buckets at a time
    (module docstring)."""

    def __init__(self, n_boot: int, seed: int):
        self.n_boot, self.seed = int(n_boot), int(seed)

    def block(self, k: int) -> np.ndarray:
        """(n_boot, BLOCK) weights of buckets k·BLOCK ... k·BLOCK + BLOCK - 1."""
        return np.random.default_rng([self.seed, 2, int(k)]).poisson(1.0, size=(self.n_boot, BLOCK)).astype(float)


def bucket_weights(n_boot: int, seed: int) -> BucketWeights:
    """The weights :math:`W_{bh}` of ``n_boot`` replicates (drawn when :func:`replicate_totals` needs them)."""
    return BucketWeights(n_boot, seed)


def replicate_totals(sums: pd.DataFrame, cells: pd.MultiIndex | pd.Index, by: list[str], columns: list[str],
                     weights: BucketWeights) -> dict[str, np.ndarray]:
    r"""For each column of ``sums`` (from :func:`bucket_sums`), the (n_boot, n_cells) replicated totals
    :math:`\sum_h W_{bh} S_{ch}`, cells in the order of ``cells`` (cells absent from ``sums`` total 0), one block
    of buckets at a time."""
    keys = pd.MultiIndex.from_frame(sums[by]) if len(by) > 1 else pd.Index(sums[by[0]])
    cell = cells.get_indexer(keys)
    if (cell < 0).any():
        raise ValueError("bucket sums hold a cell that is not in cells")
    bucket = sums["bucket"].to_numpy(dtype=np.int64)
    blocks, offset = np.divmod(bucket, BLOCK)
    out = {column: np.zeros((weights.n_boot, len(cells))) for column in columns}
    for k in np.unique(blocks):
        rows = blocks == k
        w = weights.block(k)
        for column in columns:
            values = sums[column].to_numpy(dtype=float)[rows]
            if BLOCK * len(cells) <= DENSE_CELLS:  # a dense (BLOCK, cells) block: one BLAS product
                flat = offset[rows] * len(cells) + cell[rows]
                out[column] += w @ np.bincount(flat, values, BLOCK * len(cells)).reshape(BLOCK, len(cells))
            else:
                block = sparse.csr_matrix((values, (offset[rows], cell[rows])), shape=(BLOCK, len(cells)))
                out[column] += np.asarray((block.T @ w.T).T)
    return out
