"""MCMC convergence diagnostics: rank-normalized split R-hat and bulk / tail effective sample sizes.

Method: Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021), "Rank-normalization, folding, and localization: an
improved R-hat for assessing convergence of MCMC", Bayesian Analysis 16(2). Draws are shaped (chains, draws, ...);
every function returns one value per trailing index (shape ``x.shape[2:]``).

* :func:`split_rhat`, :func:`effective_sample_size`: the classic split-R-hat (BDA3 11.4) and multi-chain ESS
  with Geyer's initial monotone sequence (BDA3 11.5 / Stan), the building blocks.
* Rank normalization: all ``S = chains x draws`` draws of a quantity are ranked together (ties averaged) and
  mapped to ``z = Phi^-1((r - 3/8) / (S + 1/4))``; folding: the same of ``|x - median(x)|``.
* :func:`rank_rhat` = ``max(split-R-hat of z, split-R-hat of the folded z)`` (the paper's R-hat; sensitive to
  chains differing in location *or* in scale, and defined for heavy tails).
* :func:`ess_bulk` = ESS of the rank-normalized draws on split chains (the paper's bulk-ESS).
* :func:`ess_tail` = the smaller ESS of the indicators ``x <= q_0.05`` and ``x <= q_0.95`` on split chains.

The paper's thresholds (Section 4): trust the draws when R-hat < 1.01 and bulk- and tail-ESS > 400
(``RHAT_MAX``, ``ESS_MIN``, :func:`convergence_problems`). These are the formulas of ArviZ's
``rhat(method="rank")``, ``ess(method="bulk")`` and ``ess(method="tail")`` (ArviZ is not a dependency).

Public API
----------
``split_rhat(x)``, ``effective_sample_size(x)``, ``rank_rhat(x)``, ``ess_bulk(x)``, ``ess_tail(x)``,
``diagnose(x) -> (rhat, ess_bulk, ess_tail)`` (all three, ranking once);
``convergence_problems(rhat, ess_bulk, ess_tail) -> list[str]`` sentences for the values that fail the thresholds.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

__all__ = ["RHAT_MAX", "ESS_MIN", "split_rhat", "effective_sample_size", "rank_rhat", "ess_bulk", "ess_tail",
           "diagnose", "convergence_problems"]

#: the paper's recommended limits: R-hat below 1.01, bulk- and tail-ESS above 400
RHAT_MAX = 1.01
ESS_MIN = 400


def split_rhat(x: np.ndarray) -> np.ndarray:
    """Split-R-hat (BDA3 11.4) of draws shaped (chains, draws, ...); returns shape ``x.shape[2:]``.

    Each chain is cut in two halves; R-hat = sqrt(var+ / W), var+ = (n - 1)/n W + B/n. Constant draws give 1.
    """
    x = np.asarray(x, dtype=float)
    half = x.shape[1] // 2
    if half < 2:
        raise ValueError("split_rhat needs at least 4 draws per chain.")
    z = np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)
    n = half
    w = z.var(axis=1, ddof=1).mean(axis=0)
    b_over_n = z.mean(axis=1).var(axis=0, ddof=1) if z.shape[0] > 1 else np.zeros_like(w)
    var_plus = (n - 1) / n * w + b_over_n
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(var_plus / w)
    return np.where(w > 0, r, 1.0)


def effective_sample_size(x: np.ndarray) -> np.ndarray:
    """Multi-chain effective sample size (BDA3 11.5; Geyer's initial monotone sequence) of (chains, draws, ...).

    rho_t = 1 - (W - mean_c acov_c(t)) / var+; the sum of consecutive pairs rho_{2k} + rho_{2k+1} is truncated at
    its first negative value and made monotone; ESS = C * n / (-1 + 2 * sum_k P_k). Constant draws give C * n.
    """
    x = np.asarray(x, dtype=float)
    c, n = x.shape[:2]
    rest = x.shape[2:]
    z = x.reshape(c, n, -1)
    zc = z - z.mean(axis=1, keepdims=True)
    size = 1 << int(np.ceil(np.log2(2 * n)))
    f = np.fft.rfft(zc, n=size, axis=1)
    acov = np.fft.irfft(f * np.conj(f), n=size, axis=1)[:, :n] / n  # (c, n, p), biased autocovariance
    w = z.var(axis=1, ddof=1).mean(axis=0)  # (p,)
    var_plus = (n - 1) / n * w
    if c > 1:
        var_plus = var_plus + z.mean(axis=1).var(axis=0, ddof=1)
    safe = np.where(var_plus > 0, var_plus, 1.0)
    rho = 1.0 - (w - acov.mean(axis=0)) / safe  # (n, p)
    rho[0] = 1.0
    m = n // 2
    pairs = rho[: 2 * m : 2] + rho[1 : 2 * m : 2]  # (m, p)
    positive = pairs > 0
    # initial positive sequence: keep pairs up to the first non-positive one
    first_bad = np.where(positive.all(axis=0), m, np.argmin(positive, axis=0))
    keep = np.arange(m)[:, None] < first_bad[None, :]
    mono = np.minimum.accumulate(np.where(keep, pairs, np.inf), axis=0)  # initial monotone sequence
    tau = -1.0 + 2.0 * np.where(keep, mono, 0.0).sum(axis=0)
    tau = np.maximum(tau, 1.0 / np.log10(max(c * n, 10)))  # Stan's cap on antithetic chains
    ess = c * n / tau
    ess = np.where(var_plus > 0, ess, c * n)
    return ess.reshape(rest)


def _split(x: np.ndarray) -> np.ndarray:
    """(chains, draws, ...) -> (2 chains, draws // 2, ...): each chain cut into its first and last half."""
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)


def _average_ranks(flat: np.ndarray) -> np.ndarray:
    """Ranks 1..S along axis 0 of an (S, P) array, ties given their average rank (as ``scipy.stats.rankdata``,
    vectorised over columns: one argsort instead of a per-column loop)."""
    size = flat.shape[0]
    order = np.argsort(flat, axis=0, kind="stable")
    ordered = np.take_along_axis(flat, order, axis=0)
    idx = np.broadcast_to(np.arange(size)[:, None], flat.shape)
    differs = ordered[1:] != ordered[:-1]
    first = np.vstack([np.ones((1, flat.shape[1]), dtype=bool), differs])  # first of a run of ties
    last = np.vstack([differs, np.ones((1, flat.shape[1]), dtype=bool)])  # last of a run of ties
    start = np.maximum.accumulate(np.where(first, idx, 0), axis=0)
    end = np.minimum.accumulate(np.where(last, idx, size - 1)[::-1], axis=0)[::-1]
    ranks = np.empty(flat.shape)
    np.put_along_axis(ranks, order, (start + end) / 2.0 + 1.0, axis=0)
    return ranks


def _rank_normalize(x: np.ndarray) -> np.ndarray:
    """``Phi^-1((r - 3/8) / (S + 1/4))`` of the ranks ``r`` (ties averaged) of all S draws of each quantity."""
    c, n = x.shape[:2]
    r = _average_ranks(x.reshape(c * n, -1))
    return ndtri((r - 0.375) / (c * n + 0.25)).reshape(x.shape)


def _draws(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim < 2 or x.shape[1] < 4:
        raise ValueError("Diagnostics need draws shaped (chains, draws, ...) with at least 4 draws per chain.")
    return x


def diagnose(x) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rank_rhat(x), ess_bulk(x), ess_tail(x))``, ranking the draws once for both R-hat and bulk-ESS."""
    x = _draws(x)
    z = _rank_normalize(x)
    return _rhat_from(x, z), effective_sample_size(_split(z)), ess_tail(x)


def _rhat_from(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    folded = split_rhat(_rank_normalize(np.abs(x - np.median(x, axis=(0, 1)))))
    return np.maximum(split_rhat(z), folded)


def rank_rhat(x) -> np.ndarray:
    """Rank-normalized split R-hat (Vehtari et al. 2021, Eq. 4-5): max of the bulk and folded (tail) R-hat."""
    x = _draws(x)
    return _rhat_from(x, _rank_normalize(x))


def ess_bulk(x) -> np.ndarray:
    """Bulk effective sample size: the ESS of the rank-normalized draws on split chains (Vehtari et al. 2021)."""
    x = _draws(x)
    return effective_sample_size(_split(_rank_normalize(x)))


def ess_tail(x) -> np.ndarray:
    """Tail effective sample size: min of the ESS of ``x <= q_0.05`` and ``x <= q_0.95`` on split chains."""
    x = _draws(x)
    split = _split(x)
    q = np.quantile(x, [0.05, 0.95], axis=(0, 1))
    return np.minimum(effective_sample_size((split <= q[0]).astype(float)),
                      effective_sample_size((split <= q[1]).astype(float)))


def convergence_problems(rhat, bulk, tail) -> list[str]:
    """Sentences naming what fails the paper's thresholds (largest R-hat > 1.01, smallest ESS < 400); [] if none."""
    out = []
    worst_rhat, low_bulk, low_tail = float(np.max(rhat)), float(np.min(bulk)), float(np.min(tail))
    if not worst_rhat <= RHAT_MAX:
        out.append(f"largest R-hat {worst_rhat:.3f} > {RHAT_MAX}: the chains disagree")
    if not low_bulk >= ESS_MIN:
        out.append(f"smallest bulk effective sample size {low_bulk:,.0f} < {ESS_MIN}")
    if not low_tail >= ESS_MIN:
        out.append(f"smallest tail effective sample size {low_tail:,.0f} < {ESS_MIN}: interval ends are unreliable")
    return out
