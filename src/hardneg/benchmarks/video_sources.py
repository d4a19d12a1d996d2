"""Video sources several benchmarks share, pinned once (`hardneg fetch`, docs/fetching.md).

MSR-VTT and VATEX test clips are used by Feint6K, the contrast sets, FIRE, PoSRank and VITATECS. Their authors point
to frozen-in-time's MSRVTT.zip and to YouTube; a Hub copy with the same layout is in the dataset repo of Feint6K's
first author (wufeim/aug_text). A declaration uses one with `dataclasses.replace(MSRVTT_ZIP, part="<config>")`.
Facts from the research pins of issue 47 (LFS pointers: sha256 and size of each zip).
"""

from __future__ import annotations

from hardneg.benchmarks.base import VideoArchive, VideoSource

_AUG_TEXT = "wufeim/aug_text"
_REVISION = "5ce454379e2c42b1e455fd43f2d94ed6dbff900a"

MSRVTT_ZIP = VideoSource(
    "hub", repo_id=_AUG_TEXT, revision=_REVISION,
    archives=(VideoArchive("MSRVTT.zip", 6552768292,
                           "d8b3a79aee9891edcf9cf36f24b88dfcba596bac25b353e12460de41840c1894"),),
    member_pattern="MSRVTT/videos/all/{id}.mp4",
    id_to_file=("{video_id}.mp4 under MSRVTT/videos/all/ (video_id 'video<N>', all 10k MSR-VTT clips; the "
                "frozen-in-time MSRVTT.zip layout)"),
    evidence=("Hub commit page huggingface.co/datasets/wufeim/aug_text/commit/62c2c2c6ea8506714cb83848b2f4b02b0514e19d "
              "(LFS pointer: oid sha256 + size); that repo's README.md (190bdac: 'MSRVTT.zip: contains all videos', "
              "path os.path.join('MSRVTT','videos','all',vid_id+'.mp4')). Official: "
              "https://www.robots.ox.ac.uk/~maxbain/frozen-in-time/data/MSRVTT.zip (no published sha256, same "
              "layout)"))

VATEX_ZIP = VideoSource(
    "hub", repo_id=_AUG_TEXT, revision=_REVISION,
    archives=(VideoArchive("vatex.zip", 6992313234,
                           "1427ccf06c73a0fb4d3d25039821898554a3d35198fbca6aa5887ebc014ad7b7"),),
    member_pattern="test/{id}.mp4",
    id_to_file=("{video_id}.mp4 under test/ (video_id: VATEX videoID '<YouTube id>_<start:06d>_<end:06d>'; 'all "
                "available' public-test videos, so some may be missing: the coverage report lists them)"),
    evidence=("Hub commit page huggingface.co/datasets/wufeim/aug_text/commit/ace6265a87a3aab1435b9e82be97b9ee79699eea "
              "(LFS pointer); README.md (190bdac: 'In vatex.zip ... test/: a folder containing all available "
              "videos'). VATEX itself distributes YouTube ids and times only"))
