"""What `hardneg run` scores when no --data is given: the fetched release where the named benchmarks have one.

Never downloads unasked: without `fetch=True` (`hardneg run --fetch`), a benchmark not fetched is scored on its
built-in sample as before, and the exact `hardneg fetch` command and its download size are printed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hardneg.fetching.layout import FetchSettings, fetched_state


@dataclass
class RunData:
    """data/videos for `run_model` (None, None: the built-in samples) and the lines to print first."""

    data: str | None = None
    videos: str | None = None
    notes: list[str] = field(default_factory=list)


def run_data(benchmarks: str, fetch: bool = False, settings: FetchSettings | None = None) -> RunData:
    """The fetched data of the named benchmarks, fetched now when `fetch`; the samples (with the fetch command
    said) when nothing is fetched; an error naming what is missing when only some are."""
    from hardneg.fetching.coverage import summary
    from hardneg.fetching.pipeline import fetch_benchmark, fetchable, not_fetched_hint
    from hardneg.run import benchmark_names

    settings = settings or FetchSettings()
    names = benchmark_names(benchmarks)
    explicit = not (benchmarks is None or benchmarks == "all")
    have = [n for n in names if fetched_state(n, settings.cache)]
    if not explicit and not fetch:
        if have:
            return RunData(notes=[f"note: fetched releases are in {settings.root} ({', '.join(have)}): name them "
                                  "(--benchmarks) to score them; 'all' scores the built-in samples"])
        return RunData()
    can = set(fetchable())
    if fetch:
        for n in names:
            if n not in have and n in can:
                fetch_benchmark(n, settings)
        have = [n for n in names if fetched_state(n, settings.cache)]
    missing = [n for n in names if n not in have]
    if not have:
        hints = [not_fetched_hint(n) for n in missing if n in can]
        return RunData(notes=[f"note: {', '.join(missing)} not fetched into {settings.root}: scoring the built-in "
                              "sample (synthetic videos), not the real benchmark. For the real release:"]
                       + [f"  {h}" for h in hints] + ["  or rerun with --fetch (downloads the same)"])
    if missing:
        why = [not_fetched_hint(n) if n in can else f"{n}: nothing to fetch (no pinned source)" for n in missing]
        raise ValueError(f"fetched: {', '.join(have)}; not fetched: {', '.join(missing)}. Fetch them first ("
                         + "; ".join(why) + "), pass --fetch, or leave them out of --benchmarks")
    notes = []
    for n in have:
        state = fetched_state(n, settings.cache)
        notes.append(f"{n}: release {state['source']['repo']} @ {state['commit'][:12]}; "
                     f"{summary(state['coverage'])}")
    videos = settings.videos_dir(have[0]) if len(have) == 1 else settings.videos_root
    return RunData(str(settings.built_root), str(videos), notes)


def fetched_paths(names: list[str] | None, settings: FetchSettings | None = None) -> tuple[str, dict[str, str]]:
    """(built root, {benchmark: videos folder}) of the fetched benchmarks among `names` (None: every fetched one),
    for `hardneg export lmms-eval` without --data/--videos; a clear error when none of them is fetched."""
    from hardneg import benchmarks as registry
    from hardneg.fetching.pipeline import fetchable, not_fetched_hint

    settings = settings or FetchSettings()
    wanted = names or registry.names()
    have = [n for n in wanted if fetched_state(n, settings.cache)]
    if not have:
        hints = "; ".join(not_fetched_hint(n) for n in wanted if n in fetchable())
        raise ValueError(f"no --data/--videos and nothing fetched into {settings.root} for "
                         f"{', '.join(wanted)}: {hints or 'name benchmarks that have a pinned source'}")
    return str(settings.built_root), {n: str(settings.videos_dir(n)) for n in have}
