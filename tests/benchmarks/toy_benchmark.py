"""A toy benchmark declared in one file, to prove a new benchmark needs nothing else (see test_toy_benchmark.py).

Format of its raw release: `toy.jsonl`, one line per video: {"video": id, "captions": [positive, negatives...]}.
"""

import json
from pathlib import Path

from hardneg.benchmarks import Benchmark, Metric
from hardneg.datasets.hub_layout import ConfigData, release_build
from hardneg.datasets.raw_common import RawFormatError, mc_table, provenance


def parse(raw: Path):
    path = Path(raw) / "toy.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{raw}: no toy.jsonl")
    rows, where = [], []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        rec = json.loads(line)
        if len(rec["captions"]) < 2:
            raise RawFormatError(path, "fewer than 2 captions", "give the positive and at least one negative", n)
        k = len(rec["captions"])
        rows.append({"id": f"toy:{rec['video']}", "video_id": rec["video"], "source_dataset": "toy", "source_split": "test",
                     "category": "swap", "captions": rec["captions"], "label": 0, "manipulated_index": None,
                     "negative_types": ["positive"] + ["unknown"] * (k - 1),
                     "provenance": [provenance("positive")] + [provenance("human")] * (k - 1)})
        where.append(n)
    return release_build("toy", [ConfigData("main", {"test": mc_table(rows, path, where)})], [path.name], {})


BENCHMARK = Benchmark(
    name="toy", title="Toy", task="multiple_choice", hub_id="example/toy", pretty_name="Toy benchmark",
    paper_title="none", paper_url="https://example.org/toy", citation="@misc{toy}", licenses=("cc0-1.0",),
    license_note="CC0.", description="A toy.", negatives="Hand-written.", limitations="Tiny.",
    source_datasets=("toy",), parser=f"{__name__}:parse", raw_files="toy.jsonl",
    metrics=(Metric("R@1", "R@1", "positive ranked first"),), ks=(1,),
    sample="toy", sample_root=str(Path(__file__).resolve().parent / "toy_sample"), order=99,
)
