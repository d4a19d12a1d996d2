"""The training experiment's statistics, in one module that every design imports (no design imports another).

Why one module: issue 43 found an import cycle (the time-budget script and issue 34's design imported
each other for Holm and the item rule) and two formulas for the detectable effect. Here:

* `positive_wins`: the item rule of every evaluation (candidate 0 strictly above every other);
* `holm`: Holm's step-down adjusted p-values;
* `paired_seed_test`: the seed-level paired t test and the exact sign-flip test (the latter is kept
  as a secondary column only: with n seeds its smallest p is 2 / 2^n, which cannot pass Holm over
  m contrasts when 2 / 2^n > 0.05 / m -- 6 seeds and 5 contrasts give 0.031 > 0.01);
* `two_level_bootstrap`: a paired bootstrap over seeds AND test scenes (seeds and scenes resampled
  independently, each resample recomputing the metric), so an interval holds both sources of noise;
* `two_level_test`: the primary test: t = mean difference / the two-level bootstrap SE, referred to
  the t distribution with n_seeds - 1 degrees of freedom (continuous p, so it can pass Holm);
* `detectable` and `seeds_needed`: the power formula on the t distribution, solved exactly on the
  noncentral t (80% power; the shortcut (t_{1-alpha/(2m)} + t_{power}) * SE gives 76% at 6 seeds).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

ALPHA, POWER = 0.05, 0.8


def _t():
    from scipy import stats

    return stats.t


def positive_wins(v, emb, uniq: np.ndarray, cand: np.ndarray, scene: np.ndarray) -> np.ndarray:
    """Per item: 1 where candidate 0 (the positive) scores strictly above every other candidate (a tie is a
    loss). v: normalised video embeddings per scene; emb: normalised text embeddings of the text ids `uniq`;
    cand: text ids per item (-1 pads); scene: each item's scene. Shared by every design's evaluation."""
    import torch

    where = np.full(int(cand.max()) + 1, -1, np.int64)
    where[uniq] = np.arange(len(uniq))
    local = torch.from_numpy(np.where(cand >= 0, where[np.clip(cand, 0, None)], 0)).to(v.device)
    s = torch.einsum("id,icd->ic", v[torch.from_numpy(scene).to(v.device)], emb[local])
    s = s.masked_fill(torch.from_numpy(cand < 0).to(v.device), float("-inf"))
    return (s[:, 0] > s[:, 1:].max(dim=1).values).cpu().numpy().astype(np.int8)


def holm(pvalues: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (same order as given)."""
    m = len(pvalues)
    order = np.argsort(pvalues, kind="stable")
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adj[i] = running
    return adj.tolist()


def paired_seed_test(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Seed-level paired comparison of two rows (one number per seed each): the mean difference, its
    95% t interval, the paired t test's two-sided p, and the exact sign-flip permutation p (all 2^n
    sign patterns of the per-seed differences; the mean's absolute value as the statistic)."""
    d = np.asarray(a, float) - np.asarray(b, float)
    n = len(d)
    mean = float(d.mean()) if n else float("nan")
    sd = float(d.std(ddof=1)) if n > 1 else float("nan")
    se = sd / math.sqrt(n) if n > 1 else float("nan")
    t = _t()
    if n > 1 and se > 0:
        stat = mean / se
        p_t = float(2 * t.sf(abs(stat), n - 1))
        half = float(t.ppf(0.975, n - 1) * se)
    else:
        stat, p_t, half = float("nan"), (1.0 if n > 1 and mean == 0 else float("nan")), float("nan")
    if 0 < n <= 20:
        signs = np.array(np.meshgrid(*[[1.0, -1.0]] * n)).reshape(n, -1).T
        flips = np.abs((signs * d).mean(1))
        p_perm = float(np.mean(flips >= abs(mean) - 1e-12))
    else:  # 2^n patterns are too many: a seeded Monte Carlo of 2^16 of them
        rng = np.random.default_rng(0)
        signs = rng.choice([-1.0, 1.0], size=(1 << 16, n))
        p_perm = float((1 + np.sum(np.abs((signs * d).mean(1)) >= abs(mean) - 1e-12)) / (1 + (1 << 16))) if n else float("nan")
    return {"difference": mean, "low": mean - half, "high": mean + half, "sd": sd, "n": n, "t": stat,
            "p_t": p_t, "p_signflip": p_perm}


def smallest_signflip_p(n: int) -> float:
    """The smallest p the exact two-sided sign-flip test can give with n seeds: 2 / 2^n."""
    return 2.0 / 2 ** n


def two_level_bootstrap(x: np.ndarray, groups: np.ndarray | None = None, resamples: int = 2000,
                        seed: int = 0) -> np.ndarray:
    """A two-level bootstrap of the mean of `x` (seeds x test scenes: one value per seed and scene, e.g. the
    paired difference of two rows): in each resample the seeds are drawn with replacement and,
    independently, the test scenes; the statistic is the mean over the drawn seeds and scenes, or, with
    `groups` (a group per scene, e.g. its item category), the mean over groups of the groups' means (the
    macro accuracy). Paired contrasts pass the difference matrix, so both rows share every draw.
    Returns the `resamples` statistics."""
    x = np.asarray(x, float)
    n, N = x.shape
    rng = np.random.default_rng(seed)
    ws = np.zeros((resamples, n))
    np.add.at(ws, (np.repeat(np.arange(resamples), n), rng.integers(0, n, resamples * n)), 1.0)
    wc = np.zeros((resamples, N))
    np.add.at(wc, (np.repeat(np.arange(resamples), N), rng.integers(0, N, resamples * N)), 1.0)
    per_scene = ws @ x / n  # (resamples, scenes): the drawn seeds' mean at each scene
    if groups is None:
        return (per_scene * wc).sum(1) / N
    out = np.zeros(resamples)
    gs = np.unique(groups)
    for g in gs:
        k = groups == g
        out += (per_scene[:, k] * wc[:, k]).sum(1) / np.maximum(wc[:, k].sum(1), 1)
    return out / len(gs)


def grouped_mean(x: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """Per seed (row of `x`): the mean over scenes, or the mean over groups of the groups' means."""
    x = np.asarray(x, float)
    if groups is None:
        return x.mean(1)
    return np.mean([x[:, groups == g].mean(1) for g in np.unique(groups)], axis=0)


def two_level_test(estimate: float, boot: np.ndarray, n_seeds: int, m: int) -> dict[str, float]:
    """The primary test from a two-level bootstrap: SE = the resamples' SD; t = estimate / SE on n_seeds - 1
    degrees of freedom (two-sided p); the 95% interval estimate +- t_{0.975} SE (and the percentile interval);
    the detectable effect at Holm's strictest step over m contrasts, power 0.8."""
    t = _t()
    se = float(np.std(boot, ddof=1))
    df = max(n_seeds - 1, 1)
    stat = estimate / se if se > 0 else float("nan")
    p = float(2 * t.sf(abs(stat), df)) if se > 0 else float("nan")
    half = float(t.ppf(0.975, df) * se)
    return {"difference": float(estimate), "se": se, "t": stat, "df": df, "p": p, "low": estimate - half,
            "high": estimate + half, "pct_low": float(np.percentile(boot, 2.5)),
            "pct_high": float(np.percentile(boot, 97.5)), "mde": detectable_from_se(se, n_seeds, m)}


def detectable_from_se(se: float, n: int, m: int) -> float:
    """The smallest true difference that a two-sided t test on n - 1 degrees of freedom at alpha / m (Holm's
    strictest step) detects with probability `POWER`, for a standard error `se`: solved exactly on the
    noncentral t distribution (`power_of`). The textbook shortcut (t_{1-alpha/(2m)} + t_{power}) * SE gives
    76% power, not 80%, at 6 seeds and 5 contrasts (issue 43)."""
    from scipy import optimize, stats

    if n < 2 or not np.isfinite(se) or se <= 0:
        return float("nan")
    df = n - 1
    crit = stats.t.ppf(1 - ALPHA / (2 * m), df)

    def short(nc):
        return float(np.nan_to_num(stats.nct.sf(crit, df, nc)) + np.nan_to_num(stats.nct.cdf(-crit, df, nc))) - POWER

    hi = crit + stats.t.ppf(POWER, df)
    for _ in range(20):
        if short(hi) >= 0:
            return float(optimize.brentq(short, 0.0, hi, xtol=1e-10)) * se
        hi *= 2
    return float("inf")  # the noncentral t cannot be evaluated this far out (1 degree of freedom, tiny alpha)


def detectable(sd: float, n: int, m: int) -> float:
    """The minimum detectable effect of a paired t test over n seeds with per-seed SD `sd`, at alpha
    0.05 two-sided after Holm's strictest step (alpha / m) and power 0.8 (`detectable_from_se` of
    sd / sqrt(n))."""
    if n < 2 or not np.isfinite(sd) or sd == 0:  # no seed spread measured: no statement
        return float("nan")
    return detectable_from_se(sd / math.sqrt(n), n, m)


def seeds_needed(sd: float, target: float, m: int, most: int = 1000) -> int:
    """The smallest n >= 2 whose detectable effect (`detectable`) is at most `target`; `most` + 1 when none
    up to `most` is (the target is out of reach)."""
    if not np.isfinite(sd) or sd <= 0:
        return 2
    for n in range(2, most + 1):
        if detectable(sd, n, m) <= target:
            return n
    return most + 1


def power_of(effect: float, sd: float, n: int, m: int) -> float:
    """The exact power of the two-sided paired t test at alpha / m for a true difference `effect`
    (noncentral t): used by the tests to check that `detectable` gives 80%."""
    from scipy import stats

    df = n - 1
    crit = stats.t.ppf(1 - ALPHA / (2 * m), df)
    nc = effect / (sd / math.sqrt(n))
    return float(np.nan_to_num(stats.nct.sf(crit, df, nc)) + np.nan_to_num(stats.nct.cdf(-crit, df, nc)))


# ----------------------------------------------------------------- crossed random effects (issue 50)


#: the largest df used (scipy's noncentral t gives NaN far out; t on 1,000 df is the normal within 0.1%)
DF_CAP = 1000.0


def crossed_components(x: np.ndarray) -> dict[str, np.ndarray]:
    """Two-way ANOVA of a seeds x scenes matrix (one value per seed and scene, e.g. a paired difference), or of a
    stack of them (..., seeds, scenes): the mean squares of seeds (MS_A, n - 1 df), scenes (MS_B, N - 1 df) and
    their interaction (MS_E, (n - 1)(N - 1) df; with one value per cell the interaction is the residual)."""
    x = np.asarray(x, float)
    n, N = x.shape[-2:]
    grand = x.mean((-2, -1), keepdims=True)
    rows = x.mean(-1, keepdims=True)
    cols = x.mean(-2, keepdims=True)
    ms_a = N * ((rows - grand) ** 2).sum((-2, -1)) / (n - 1)
    ms_b = n * ((cols - grand) ** 2).sum((-2, -1)) / (N - 1)
    ms_e = ((x - rows - cols + grand) ** 2).sum((-2, -1)) / ((n - 1) * (N - 1))
    return {"ms_a": ms_a, "ms_b": ms_b, "ms_e": ms_e, "n": n, "N": N}


def crossed_se(x: np.ndarray, weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The standard error of a weighted grand mean sum_j w_j mean_i x_ij (w: one weight per scene summing to 1;
    uniform when None, the macro mean over categories when w_j = 1 / (categories * scenes of j's category)) under
    the crossed random-effects model x_ij = mu + a_i + b_j + e_ij (seed, scene, seed x scene):

        Var = s2_a / n + s2_b * sum w^2 + s2_e * sum w^2 / n,

    with the components from the mean squares (`crossed_components`): s2_a = (MS_A - MS_E) / N,
    s2_b = (MS_B - MS_E) / n, s2_e = MS_E, so that Var = MS_A / (nN) + MS_B * sum w^2 / n - MS_E / (nN), unbiased
    (the components are NOT truncated at 0 inside it: truncating the seed term when seed noise is small makes the
    test conservative, size 0.03 in the simulation; only a negative total falls back to the truncated sum).
    Unlike the two-level bootstrap, which resamples seeds and scenes independently and so counts the seed x scene
    term in each level (and once more in their product), each component enters once. Degrees of freedom:
    Satterthwaite's over the three mean squares (capped at `DF_CAP`). Vectorised over leading axes (the simulation
    in tests/training runs thousands at once). The returned components are truncated at 0 for display."""
    c = crossed_components(x)
    n, N = c["n"], c["N"]
    w2 = 1.0 / N if weights is None else float(np.sum(np.asarray(weights, float) ** 2))
    ka, kb = 1.0 / (N * n), w2 / n
    ke = w2 / n - ka - kb
    var = ka * c["ms_a"] + kb * c["ms_b"] + ke * c["ms_e"]
    den = ((ka * c["ms_a"]) ** 2 / (n - 1) + (kb * c["ms_b"]) ** 2 / (N - 1)
           + (ke * c["ms_e"]) ** 2 / ((n - 1) * (N - 1)))
    s2a = np.maximum((c["ms_a"] - c["ms_e"]) / N, 0.0)
    s2b = np.maximum((c["ms_b"] - c["ms_e"]) / n, 0.0)
    s2e = c["ms_e"]
    bad = var <= 0
    var = np.where(bad, s2a / n + s2b * w2 + s2e * w2 / n, var)
    df = np.where(bad | (den <= 0), n - 1.0, var ** 2 / np.where(den > 0, den, 1.0))
    return {"se": np.sqrt(var), "df": np.clip(df, 1.0, DF_CAP), "s2_seed": s2a, "s2_scene": s2b, "s2_seed_scene": s2e}


def crossed_test(x: np.ndarray, m: int, weights: np.ndarray | None = None) -> dict[str, float]:
    """The primary test with the crossed random-effects SE: t = estimate / SE on Satterthwaite's df, two-sided;
    the 95% interval; the detectable effect at Holm's strictest step over m contrasts with 80% power."""
    x = np.asarray(x, float)
    w = np.full(x.shape[1], 1.0 / x.shape[1]) if weights is None else np.asarray(weights, float)
    est = float(x.mean(0) @ w)
    c = crossed_se(x, w)
    se, df = float(c["se"]), float(c["df"])
    t = _t()
    stat = est / se if se > 0 else float("nan")
    p = float(2 * t.sf(abs(stat), df)) if se > 0 else float("nan")
    half = float(t.ppf(0.975, df) * se)
    return {"difference": est, "se": se, "df": df, "t": stat, "p": p, "low": est - half, "high": est + half,
            "mde": detectable_from_se(se, df + 1, m), "s2_seed": float(c["s2_seed"]), "s2_scene": float(c["s2_scene"]),
            "s2_seed_scene": float(c["s2_seed_scene"])}


def group_weights(groups: np.ndarray | None, n_scenes: int) -> np.ndarray:
    """Per scene: its weight in the metric's mean (uniform; or macro over groups: 1 / (groups * the group's size))."""
    if groups is None:
        return np.full(n_scenes, 1.0 / n_scenes)
    g = np.asarray(groups)
    u, inv, cnt = np.unique(g, return_inverse=True, return_counts=True)
    return 1.0 / (len(u) * cnt[inv])


def crossed_seeds_needed(c: dict, w2: float, target: float, m: int, most: int = 1000) -> int:
    """The smallest seed count n >= 2 at which the crossed SE, s2_seed / n + s2_scene * w2 + s2_seed_scene * w2 / n
    (components `c` from `crossed_test`, w2 = the sum of squared scene weights), gives a detectable effect at most
    `target` (80% power, alpha / m, on n - 1 df: conservative where scene terms add df). `most` + 1 when none
    up to `most` does (e.g. the scene term alone is too large: more test scenes, not seeds, would help)."""
    for n in range(2, most + 1):
        se = math.sqrt(c["s2_seed"] / n + c["s2_scene"] * w2 + c["s2_seed_scene"] * w2 / n)
        if detectable_from_se(se, n, m) <= target:
            return n
    return most + 1
