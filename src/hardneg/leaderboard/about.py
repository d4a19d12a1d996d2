"""The board's About page, written from the declarations (metrics, chance, tie rules): nothing here names a
benchmark, so a new declaration appears on the page with its own text."""

from __future__ import annotations

from hardneg import benchmarks, vocabulary
from hardneg.benchmarks import CHANCE_CONSTANT_SCORER, Metric
from hardneg.leaderboard.overall import overall_metric
from hardneg.leaderboard.recompute import TIES

CHANCE_TEXT = {
    CHANCE_CONSTANT_SCORER: "what a scorer that gives every candidate the same score gets, computed exactly by the "
                            "ranking core (the board's *random (exact chance)* row)",
}


def _unit(m: Metric) -> str:
    if vocabulary.unit(m.key) == vocabulary.FRACTION:
        return "fraction (shown as percent, 1 decimal)"
    return "rank (2 decimals)"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def data_license(decl) -> str:
    """The benchmark data's license as its declaration states it (a non-commercial license shows here)."""
    return f"Data license: {', '.join(f'`{x}`' for x in decl.licenses)}. {_cell(decl.license_note)}"


def release_line(decl) -> str:
    """Which release commit the benchmark's numbers are computed on: the one its declaration pins (`hardneg fetch`
    and the built Hub dataset use those files, each checked against its sha256)."""
    src = decl.source
    if src is None:
        return "Release: no pinned release (`hardneg fetch` has nothing to download for it)."
    return (f"Release: numbers computed on `{_cell(src.repo)}` at commit `{src.commit}` ({len(src.fetched_files)} file(s), "
            f"sha256-checked; `hardneg fetch {decl.name} --dry-run` lists them).")


def metric_rows(decl) -> list[str]:
    rows = []
    for m in decl.metrics:
        for x in (m, m.baseline) if m.baseline is not None else (m,):
            over = f"; unweighted mean over `{x.over}` groups" if x.over else ""
            entry = vocabulary.entry(x.key)
            chance = CHANCE_TEXT.get(x.chance, x.chance)
            rows.append(f"| `{x.key}` | {_cell(x.description)}{over} ({_cell(entry.definition)}) | {_unit(x)} | "
                        f"{'higher' if entry.higher_better else 'lower'} | {_cell(entry.chance)}; "
                        f"{_cell(chance)} |")
    return rows


def about_markdown(names: list[str], upload_mb: float | None = None, configs: dict | None = None) -> str:
    """The About tab: how each metric is computed, the tie policy, chance, Overall, how to submit, identity.
    `configs`: benchmark -> the configs this board scores (to say which its one number is made from)."""

    def configs_of(b: str):
        return None if configs is None or b not in configs else list(configs[b])

    out = ["## How every number is computed",
           "Every score is **recomputed here from the submitted predictions** by the project's one results engine "
           "(`hardneg.results`), the same one `hardneg evaluate` and the `evaluate` modules use. Machine outputs "
           "(the CSV and Parquet downloads) hold fractions in [0, 1]; the pages show percent with one decimal, and "
           "a header says so with \"(%)\". Ranks (mean rank) are shown as they are, lower is better.",
           "",
           f"**Ties.** The board uses the core's exact expected tie rule (`ties=\"{TIES}\"`): a positive tied with k "
           "negatives gets the expected value of a random order among them, so a constant scorer gets exactly "
           "chance. The papers' own tie rules are listed per benchmark below; results under them are available "
           "with `hardneg evaluate --ties <rule>` (e.g. the rule named below).",
           "",
           "**Intervals.** Every recomputed cell carries a 95% cluster-bootstrap interval: whole videos are "
           "resampled, so a video's positive and its negatives move together. Rows whose interval overlaps the "
           "leader's are marked *tied with leader*; *p vs #1* is a paired randomization test on the same items "
           "(computed for the top of the ranking).",
           "",
           "**Overall.** One number per benchmark, defined once in its declaration and computed once by the results "
           "engine: its metric on its overall config, or the unweighted mean over its disjoint configs (each "
           "benchmark says which, below). It is the number `hardneg run` prints and `results.json` holds under the "
           "benchmark's name, and the first column of the benchmark's tab. Every model is listed with its coverage "
           "(benchmarks, and the configs their numbers need); the average "
           "is taken **only for models that cover every benchmark**, over values in one unit (fractions, shown as "
           "percent). The interval of a mean is the normal approximation from the parts' bootstrap intervals "
           "(different items, so independent errors). The papers' reported numbers are not recomputed and are "
           "not averaged.",
           ""]
    for b in names:
        decl = benchmarks.get(b)
        om = overall_metric(b)
        out += [f"### {decl.title}", _cell(decl.description), "",
                "| metric | what it computes | unit | better | chance |", "|---|---|---|---|---|", *metric_rows(decl), "",
                (f"Its one number (Overall): `{om.key}` "
                 f"{decl.overall_rule(configs_of(b) or list(decl.config_descriptions)).describe(configs_of(b))}."
                 if om else "Not in Overall (no fraction headline metric)."),
                f"The paper's tie rule: `{decl.original_ties}`" + (f" ({_cell(decl.original_ties_note)})."
                                                                   if decl.original_ties_note else "."),
                f"Data: `{decl.hub_id}`; paper: [{_cell(decl.paper_title)}]({decl.paper_url}).",
                release_line(decl), data_license(decl), ""]
    limit = f" (at most {upload_mb:.0f} MB)" if upload_mb else ""
    out += ["## How to submit",
            "1. Score your model: `hardneg run --model <model> --model-id <you>/<name> --out runs/mine` (or "
            "`hardneg score` for one config).",
            f"2. Submit the run folder or one predictions file{limit}: `hardneg submit runs/mine --space <this Space>` "
            "(a Space: your Hub token; a local board, `--space DIR`: no token), or upload a file on the **Submit** tab "
            "(a Space asks you to sign in first).",
            "3. The board checks the file (ids, one score per candidate, finite numbers, the data revision), "
            "recomputes every metric and stores a new version; the same file twice is stored once. Nothing is "
            "overwritten: older versions stay in the model's history.",
            "",
            "## Who can submit what (identity)",
            "- On a Hugging Face Space, a submitter is the account signed in with *Sign in with Hugging Face* (or, "
            "from the API, the Hub token passed as `oauth_token`), and a model name must be in that user's namespace "
            "or one of their organizations'.",
            "- Run locally (`hardneg leaderboard serve --as NAME`), the board stores submissions under the local "
            "name and shows them as *local*; that mode refuses to start on a Space.",
            "- Anywhere sign-in cannot be verified, the board is read-only and says so at start-up.",
            "",
            "## Downloads",
            "- **CSV** under every table: the rows as filtered, fractions with their intervals.",
            "- **Per-item details** (Details tab): every stored submission's per-item scores as Parquet, one row per "
            "(submission, item): `scores`, `positive`, `positive_rank`, and `value:<metric>` (the per-item values "
            "whose mean is the metric).",
            ]
    return "\n".join(out)


__all__ = ["about_markdown"]
