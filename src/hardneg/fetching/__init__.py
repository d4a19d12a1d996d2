"""`hardneg fetch`: a benchmark's pinned release files and videos, downloaded, checked and built into the cache.

What is fetched comes only from each declaration's `source` (`hardneg.benchmarks.base.Source`): the authors' files
at one commit (URL, size, sha256) and the Hub repo of the videos at one revision (archives, member pattern), or the
manual steps where no copy may be redistributed. Nothing here knows a benchmark by name.

The cache (`$HARDNEG_CACHE/fetch/`, `hardneg.fetching.layout`):
  release/<benchmark>/<commit>/<raw_name>   the release files, each checked against its sha256
  built/<benchmark>/                        the Hub folder `hardneg build` writes from them (`hardneg run --data`)
  videos/<benchmark>/                       the unpacked videos (or links into lmms-eval's $HF_HOME/<cache_dir>)
  state/<benchmark>.json                    what was fetched: source, commit, revision, coverage (N of M, why not)

Every write is atomic (a temporary name, then a rename), so a kill -9 at any point leaves only whole files and a
rerun completes the work (HTTP Range resumes a partial download). docs/fetching.md is the user's guide.
"""

from hardneg.fetching.errors import FetchError
from hardneg.fetching.layout import FetchSettings, fetched_state
from hardneg.fetching.pipeline import dry_run, fetch_benchmark, not_fetched_hint

__all__ = ["FetchError", "FetchSettings", "dry_run", "fetch_benchmark", "fetched_state", "not_fetched_hint"]
