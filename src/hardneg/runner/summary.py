"""What a run did: rows in and out, skips by reason, shards resumed, time and throughput."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field


@dataclass
class RunSummary:
    """Counts cover the whole output folder (resumed shards included); throughput covers
    only the rows processed by this call."""

    backend: str
    num_workers: int
    out_dir: str
    rows_in: int = 0
    rows_out: int = 0  # output rows not marked skipped
    rows_written: int = 0  # every row in the shard files, skipped ones included
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> rows
    shards_total: int = 0
    shards_run: int = 0  # processed by this call
    shards_resumed: int = 0  # already complete on disk, left untouched
    rows_processed: int = 0  # input rows processed by this call
    seconds: float = 0.0
    startup_seconds: float = 0.0  # backend start-up (Ray init, process pool) inside `seconds`

    @property
    def rows_skipped(self) -> int:
        return sum(self.skipped.values())

    @property
    def rows_per_second(self) -> float:
        return self.rows_processed / self.seconds if self.seconds > 0 else 0.0

    def add(self, record: dict, resumed: bool) -> None:
        self.rows_in += record["rows_in"]
        self.rows_out += record["rows_out"]
        self.rows_written += record["rows_written"]
        merged = Counter(self.skipped)
        merged.update(record["skipped"])
        self.skipped = dict(sorted(merged.items()))
        if resumed:
            self.shards_resumed += 1
        else:
            self.shards_run += 1
            self.rows_processed += record["rows_in"]

    def to_dict(self) -> dict:
        d = asdict(self)
        d["rows_skipped"] = self.rows_skipped
        d["rows_per_second"] = round(self.rows_per_second, 3)
        return d

    def __str__(self) -> str:
        skips = ", ".join(f"{n} {r}" for r, n in self.skipped.items()) or "none"
        return (
            f"{self.backend} backend, {self.num_workers} worker(s): {self.rows_in} rows in, "
            f"{self.rows_out} rows out, skipped: {skips}; shards: {self.shards_run} run, "
            f"{self.shards_resumed} resumed of {self.shards_total}; {self.seconds:.1f} s "
            f"(start-up {self.startup_seconds:.1f} s), {self.rows_per_second:.1f} rows/s -> {self.out_dir}"
        )
