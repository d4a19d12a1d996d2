"""Where fetched files live, and the settings of one fetch (`FetchSettings`)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from hardneg.resources import cache_dir



def hub_offline() -> bool:
    """True when HF_HUB_OFFLINE asks for no network (huggingface_hub's own rule: 1, true, yes, on)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def hf_home() -> Path:
    """$HF_HOME as huggingface_hub and lmms-eval read it (default ~/.cache/huggingface)."""
    return Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface").expanduser()


@dataclass(frozen=True)
class FetchSettings:
    """How one fetch runs.

    cache: the cache root (default $HARDNEG_CACHE or ~/.cache/hardneg). mirror: a base URL serving the same paths as
    the release URLs and the Hub (None: the declared URLs and HF_ENDPOINT). offline: no network (default:
    HF_HUB_OFFLINE). progress: tqdm bars. videos: also fetch the videos (False: release and build only).
    decode_check: open every referenced video once (False: presence only). timeout: seconds a connection may stall.
    reuse_lmms_eval: link lmms-eval's unpacked videos ($HF_HOME/<cache_dir>) when a user has them, instead of
    downloading the archives again.
    """

    cache: Path = field(default_factory=cache_dir)
    mirror: str | None = None
    offline: bool = field(default_factory=hub_offline)
    progress: bool = True
    videos: bool = True
    decode_check: bool = True
    timeout: float = 60.0
    reuse_lmms_eval: bool = True

    @property
    def root(self) -> Path:
        return Path(self.cache).expanduser() / "fetch"

    def release_dir(self, benchmark: str, commit: str) -> Path:
        return self.root / "release" / benchmark / commit

    @property
    def built_root(self) -> Path:
        """`hardneg run --data` for fetched benchmarks: one built folder per benchmark under it."""
        return self.root / "built"

    def built_dir(self, benchmark: str) -> Path:
        return self.built_root / benchmark

    @property
    def videos_root(self) -> Path:
        return self.root / "videos"

    def videos_dir(self, benchmark: str) -> Path:
        return self.videos_root / benchmark

    def state_file(self, benchmark: str) -> Path:
        return self.root / "state" / f"{benchmark}.json"

    def hub_cache(self) -> Path:
        """huggingface_hub's download cache for the video archives (resumable .incomplete files, blobs)."""
        return Path(self.cache).expanduser() / "hub"


def fetched_state(benchmark: str, cache: Path | None = None) -> dict | None:
    """What `hardneg fetch` recorded for `benchmark` (fetch.json), or None when it was never completed."""
    settings = FetchSettings(cache=Path(cache)) if cache else FetchSettings()
    path = settings.state_file(benchmark)
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (settings.built_dir(benchmark) / "README.md").is_file():
        return None
    return state
