"""PoSRank (Chen et al., ACCV 2024): 20 single-word negatives per caption and part of speech.

The raw-release parser (`parse`) lives here with the declaration:

PoSRank: one JSON of negatives per dataset and part of speech, joined to the dataset's captions.

The authors' release (`Datasets/HardNegatives/` of github.com/JewelChen2019/Fine-grained-negatives)
names the files as their test scripts read them:

| folder      | negatives                             | key                  | caption source (positive)                                  |
|-------------|---------------------------------------|----------------------|------------------------------------------------------------|
| `VLN-UVO/`  | `uvo_val_<pos>_RE20.json`             | `<video>##*##<i>`    | `captions.txt`, lines `<video>##*##<i>**#**<caption>` (shipped) |
| `VLN-OOPS/` | `oops_val_<pos>_RE20.json`            | `<video>##*##<i>`    | `captions.txt` in the same format (not shipped)           |
| `MSR-VTT/`  | `msr1ka_<pos>_RE20.json`              | `<video>#<i>`        | MSR-VTT test captions: `msrvtt10ktest.caption.txt` (`<video>#<i> <caption>`) or the annotations JSON (`test_videodatainfo.json` / `MSRVTT_data.json`, `sentences`) |
| `VATEX/`    | `vatex1k5_<pos>_RE20.json`            | `<video>#<i>`        | VATEX captions: `vatex_test1k5_enc.txt` (`<video>#enc#<i> <caption>`) or the VATEX JSON (`vatex_validation_v1.0.json`, `enCap`) |

`<pos>` is noun, verb, adjective, adverb or preposition (or the short forms; the older
`Change<POS>` names of the authors' scripts work too). Each JSON maps a caption key to
`{"0": negative, ..., "19": negative}`. The dataset and split may be fused in the name
(`msr1ka` = MSR-VTT 1k-A test, `vatex1k5` = VATEX 1.5k test). Files are recognized by
content as well as name: a negatives JSON whose name does not say the dataset and part of
speech is an error, not a skipped file. Caption sources are recognized by content and
looked up next to each negatives file first, then anywhere in the raw folder; the one that
holds every key of the negatives file is used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from hardneg.benchmarks.base import Benchmark, Headline, Metric, ReleaseFile, ReportedRow, Source, VideoSource
from hardneg.benchmarks.video_sources import MSRVTT_ZIP
from hardneg.datasets.hub_layout import BenchmarkBuild, ConfigData, release_build
from hardneg.datasets.raw_common import (
    AUTHORS_RELEASE,
    RawFolder,
    RawFormatError,
    check_text,
    first_line,
    is_single_word,
    json_kind,
    load_json_strict,
    looks_binary,
    mc_table,
    provenance,
    read_head,
    read_text,
    replaced_span,
)
from hardneg.schema import PARTS_OF_SPEECH

_T3 = "Chen et al., Beyond Coarse-Grained Matching (PoSRank), Table 3 (average PoSRank)"
_T7 = "Chen et al., Beyond Coarse-Grained Matching (PoSRank), Table 7 (X-CLIP, per part of speech)"
#: the paper's order of the parts of speech in Table 7
_T7_ORDER = ("noun", "adj", "verb", "adv", "prep")


def _mean(model: str, **by_config: float) -> ReportedRow:
    return ReportedRow(model, _T3, {(c, "PoSRank"): v for c, v in by_config.items()})


def _per_pos(model: str, by_config: dict) -> ReportedRow:
    return ReportedRow(model, _T7, {(c, f"PoSRank_{pos}"): v for c, five in by_config.items()
                                    for pos, v in zip(_T7_ORDER, five)})


#: the pinned sources `hardneg fetch` reads (docs/fetching.md): JewelChen2019/Fine-grained-negatives at ebd5678ce2f2 (2024-12-05)
SOURCE = Source(
    repo="github.com/JewelChen2019/Fine-grained-negatives", commit="ebd5678ce2f2bf68fad29468c2054dd32ef7407d",
    license="none stated (no LICENSE file; README is two lines)",
    files=(
        ReleaseFile("Datasets/HardNegatives/VLN-UVO/uvo_val_adverb_RE20.json",
                    577347, "7af599e2a4419df007d24eb9783370f3cbdd3786b93cbaf1e0a5aa3901e8d04c"),
        ReleaseFile("Datasets/HardNegatives/VLN-UVO/captions.txt",
                    2148395, "7d6aad1ad4d2929985f8e7ef5b1fb1d28b8c71ef41f137d61165912f7fb4f452"),
        ReleaseFile("Datasets/HardNegatives/VLN-UVO/vln_uvo_word_dic_20230920.json",
                    43421, "7510a5e3960c0193e12a8500608f06348f280a1a5f5140c5276b824f515e6fc2"),
        ReleaseFile("Datasets/HardNegatives/VLN-UVO/uvo_val_preposition_RE20.json",
                    551160, "4dca12231efd219c6bd6d954f978d1f04d6b29eb6250fb741c4bc299bcf70b51"),
        ReleaseFile("Datasets/HardNegatives/VLN-UVO/uvo_val_adjective_RE20.json",
                    None, "", git_blob="dae8b9a16fb09f99375aeae301004a6a9358660f"),
        ReleaseFile("Datasets/HardNegatives/VLN-UVO/uvo_val_noun_RE20.json",
                    None, "", git_blob="f244aec8335f84c6666063193abd69e8b8bea6ed"),
        ReleaseFile("Datasets/HardNegatives/VLN-UVO/uvo_val_verb_RE20.json",
                    None, "", git_blob="0c9027daf0afef18c2b2c1d9c3d11f32afc191d9"),
        ReleaseFile("Datasets/HardNegatives/MSR-VTT/msr1ka_adverb_RE20.json",
                    1248257, "8d748ca32d2ce1353b900665ecd07f02e9f8033123f5c81728a2f8a78b04f398"),
        ReleaseFile("Datasets/HardNegatives/MSR-VTT/msr1ka_preposition_RE20.json",
                    657322, "79a3bbf2d4ae136fae2ae89cad6fa4ebf19b1ac0b01dbdcf1d06d7bd01961bf7"),
        ReleaseFile("Datasets/HardNegatives/MSR-VTT/msr1ka_adjective_RE20.json",
                    None, "", git_blob="6f4d8b87d5d4d1d9543239b07561cf2a3e4fe6d2"),
        ReleaseFile("Datasets/HardNegatives/MSR-VTT/msr1ka_noun_RE20.json",
                    None, "", git_blob="dd832169ee6a2bd154f0e8c6643ea8267b5da288"),
        ReleaseFile("Datasets/HardNegatives/MSR-VTT/msr1ka_verb_RE20.json",
                    None, "", git_blob="2a1c16f9cc181d2c052fa34fd8991b5f63dd5a7e"),
    ),
    videos=(
        VideoSource(
            "manual", official="https://sites.google.com/view/unidentified-video-object/dataset",
            steps=(("UVO v1.0 clips are Kinetics-400 videos (UVO kit guide: 'Videos annotated in UVO are from the "
                    "Kinetics400 dataset. We refer to the DeepMind website and CVDF's snapshot'): download "
                    "Kinetics-400 from https://github.com/cvdfoundation/kinetics-dataset (k400 train/val/test "
                    "tarballs, ~450 GB in all) or the preprocessed UVO videos offered on the UVO site "
                    "(uvo_videos_sparse / uvo_videos_dense, Google Drive)"), ("select the VLN-UVO val videos (the ids in the built dataset's videos list, e.g. from "
                    "`hardneg fetch posrank --dry-run`)"), ("name each file <youtube_id>.mp4 (Kinetics names clips "
                    "<youtube_id>_<start:06d>_<end:06d>.mp4: strip the times; UVO's own preprocessed videos are "
                    "already named by id)"), "pass the folder with --videos (or put it in the cache under posrank/vln_uvo/)",),
            why=("YouTube clips; no redistributable copy on the Hub found; the VLN/UVO authors distribute "
                 "annotations only (plus UVO's Google Drive copies)"),
            part="vln_uvo",
            evidence=("Fine-grained-negatives@ebd5678 "
                      "X-CLIP_fine_grained_vp/dataloaders/dataloader_vlnUvo_retrieval.py (videos found by walking "
                      "features_path for <video_id>.*); UVO v1.0 Kit Guide text (code corpus search 'UVO v1.0 Kit "
                      "Guide'); a third-party dataset layout listing uvo/uvo_videos_dense/ (code corpus)")),
        VideoSource(
            "manual", official="https://oops.cs.columbia.edu/data/",
            steps=(("download the Oops! dataset videos (oops_dataset video.tar.gz from the Oops! site; the "
                    "authors host it at Columbia)"), ("the VLN-OOPS negatives and captions are NOT in the authors' repository (no "
                    "Datasets/HardNegatives/VLN-OOPS folder at any commit), so this config cannot be built from "
                    "public files"),),
            why="no released negatives; videos from the Oops! site only",
            part="vln_oops",
            evidence="git ls-tree of JewelChen2019/Fine-grained-negatives at all 7 commits"),
        replace(MSRVTT_ZIP, part="msrvtt"),
    ),
    notes=("HEAD of main (2024-12-05). The repo holds only Datasets/HardNegatives/VLN-UVO/ and MSR-VTT/ (no "
           "VLN-OOPS/, no VATEX/ folder at any commit). The three realdata files equal their blobs at ebd5678 "
           "(the only commit holding captions.txt and the word dic; the RE20 negatives are also in 4a44486 'added "
           "data'). Files of 4 MiB and more are absent from the offline snapshot: for those the git blob SHA-1 is "
           "given and sha256/size must be filled in on first online download (or verified by `git hash-object`). "
           "MSR-VTT negatives need a caption source the repo does not ship: msrvtt10ktest.caption.txt or "
           "MSRVTT_data.json (see other_files). Realdata holds only the VLN-UVO adverb set (3 files, all equal to "
           "the blobs at ebd5678)."),
)


BENCHMARK = Benchmark(
    source=SOURCE,
    name="posrank",
    title="PoSRank",
    order=30,
    #: one number: the unweighted mean of PoSRank over the datasets the release holds (Table 3 columns)
    overall=Headline("mean"),
    task="multiple_choice",
    hub_id="video-hardneg/posrank",
    pretty_name="PoSRank fine-grained negatives (per part of speech)",
    paper_title="Beyond Coarse-Grained Matching in Video-Text Retrieval",
    paper_url="https://arxiv.org/abs/2410.12407",
    citation="""@inproceedings{chen2024beyond,
  title     = {Beyond Coarse-Grained Matching in Video-Text Retrieval},
  author    = {Chen, Aozhu and Doughty, Hazel and Li, Xirong and Snoek, Cees G. M.},
  booktitle = {Asian Conference on Computer Vision (ACCV)},
  year      = {2024}
}""",
    licenses=("unknown",),
    license_note=(
        "The PoSRank authors' release states no data license that we could confirm; captions come from the source "
        "datasets (MSR-VTT, VATEX, VLN-UVO, VLN-OOPS), which keep their own terms. Check the authors' repository "
        "before redistributing."
    ),
    description=(
        "PoSRank tests whether a video-text model sees single-word differences: for each caption, 20 copies with "
        "one noun, verb, adjective, adverb or preposition replaced. The model ranks the true caption among them; "
        "PoSRank is the mean reciprocal rank per part of speech (`PoSRank_noun`, ..., `PoSRank_prep`) and "
        "`PoSRank` their unweighted mean. One config per source dataset with a `test` split; the part of speech "
        "is the `category` column."
    ),
    negatives=(
        "For each caption and part of speech, a word with that tag (spaCy) is replaced, preferring its antonym, then "
        "an antonym of a hypernym or hyponym (WordNet), otherwise a same-tag word from the dataset vocabulary; 20 "
        "negatives per caption. Provenance records the generator, the part of speech and, recovered by diffing "
        "against the positive, the replaced span and its replacement."
    ),
    limitations=(
        "Negatives are generated automatically, so some are not wrong for the video (a synonym, or a word the "
        "video does not contradict); `hardneg analyze posrank-duplicates` measures how often. Chance MRR with 21 "
        "candidates is 17.4%. Migration: builds before video-hardneg 0.2 used the part of speech as the split name "
        "(`split=\"adv\"`); use `split=\"test\"` and filter `category == \"adv\"`."
    ),
    source_datasets=("MSR-VTT", "VATEX", "VLN-UVO", "VLN-OOPS"),
    parser="hardneg.benchmarks.posrank:parse",
    raw_files=("uvo_val_/oops_val_/msr1ka_/vatex1k5_<pos>_RE20.json (the authors' Datasets/HardNegatives/ names)\n"
               "+ each one's caption source: captions.txt, msrvtt10ktest.caption.txt, vatex_test1k5_enc.txt\n"
               "(see docs/building.md)"),
    metrics=(
        Metric("PoSRank", "RR", "unweighted mean over parts of speech of the mean reciprocal rank (Eq. 1)",
               over="category"),
    ),
    ks=(1,),
    original_ties="posrank",
    original_ties_note="PoSRank evaluation script: ties count against the positive",
    breakdowns=("category",),
    sample="posrank",
    tags=("posrank", "fine-grained", "part-of-speech"),
    reported=(
        _mean("Frozen", msrvtt=0.285, vatex=0.243, vln_uvo=0.252, vln_oops=0.249),
        _mean("X-CLIP", msrvtt=0.343, vatex=0.278, vln_uvo=0.301, vln_oops=0.282),
        _mean("UCoFiA", msrvtt=0.351, vatex=0.268, vln_uvo=0.308, vln_oops=0.299),
        _mean("TS2-Net", msrvtt=0.351, vatex=0.283, vln_uvo=0.310, vln_oops=0.293),
        _per_pos("X-CLIP (coarse-grained training)", {
            "msrvtt": (0.430, 0.445, 0.314, 0.304, 0.225),
            "vatex": (0.312, 0.366, 0.276, 0.270, 0.166),
            "vln_oops": (0.409, 0.446, 0.236, 0.176, 0.142),
        }),
        _per_pos("X-CLIP + fine-grained prompting", {
            "msrvtt": (0.887, 0.897, 0.861, 0.723, 0.846),
            "vatex": (0.839, 0.774, 0.870, 0.738, 0.633),
            "vln_oops": (0.844, 0.783, 0.941, 0.540, 0.527),
        }),
    ),
)


# --- the raw-release parser ---------------------------------------------------------------

#: `<dataset>[<fused split>][_<split>]_[Change]<pos>_RE<K>[_<date>].json`
FILE_PATTERN = re.compile(
    r"^(?P<dataset>[A-Za-z]+)(?P<fused>[0-9][A-Za-z0-9]*)?(?:_(?P<split>[A-Za-z0-9]+))??_(?P<change>Change)?(?P<pos>[A-Za-z]+)"
    r"_RE(?P<k>[0-9]+)(?:_(?P<date>[0-9]{6,8}))?\.json$",
    re.IGNORECASE,
)
POS_ALIASES = {
    "noun": "noun",
    "verb": "verb",
    "adj": "adj",
    "adjective": "adj",
    "adv": "adv",
    "adverb": "adv",
    "prep": "prep",
    "preposition": "prep",
    "adp": "prep",  # spaCy's tag for prepositions (the authors' ChangeADP files)
}
#: Phrase-level negatives of the authors' scripts: not part of the per-part-of-speech benchmark.
PHRASE_LEVEL = {"vp": "verb phrase", "np": "noun phrase"}


@dataclass(frozen=True)
class Dataset:
    config: str
    source: str
    default_split: str
    title: str
    folder: str  # the authors' folder name
    caption_kinds: tuple[str, ...]  # caption source formats that can hold its positives
    caption_help: str  # what to download, from where


_MSRVTT_HELP = (
    "msrvtt10ktest.caption.txt (lines '<video>#<i> <caption>', the file the authors' test script reads), or the MSR-VTT "
    "annotations JSON with a 'sentences' list: test_videodatainfo.json of the MSR-VTT release, or MSRVTT_data.json from "
    "https://github.com/ArrowLuo/CLIP4Clip/releases/download/v0.0/msrvtt_data.zip (caption <i> of a video is its i-th "
    "sentence in the file's order)"
)
_VATEX_HELP = (
    "vatex_test1k5_enc.txt (lines '<video>#enc#<i> <caption>', the file the authors' test script reads), or the VATEX "
    "captions JSON: vatex_validation_v1.0.json from https://eric-xw.github.io/vatex-website/download.html (the 1k5 test "
    "videos are in the validation set; caption <i> is enCap[i]), or a JSON mapping each video to its list of English captions"
)
_VLN_HELP = (
    "captions.txt with lines '<video>##*##<i>**#**<caption>' in the same folder as the negatives (the authors' layout: "
    "{folder}/captions.txt), or {token}_captions.txt anywhere in the raw folder. {where}"
)
DATASETS: dict[str, Dataset] = {
    "uvo": Dataset("vln_uvo", "uvo", "val", "VLN-UVO", "VLN-UVO", ("vln", "key-json"), _VLN_HELP.format(
        folder="VLN-UVO", token="uvo",
        where="Download it from https://github.com/JewelChen2019/Fine-grained-negatives (Datasets/HardNegatives/VLN-UVO/captions.txt).")),
    "oops": Dataset("vln_oops", "oops", "val", "VLN-OOPS", "VLN-OOPS", ("vln", "key-json"), _VLN_HELP.format(
        folder="VLN-OOPS", token="oops",
        where="The authors' repository (github.com/JewelChen2019/Fine-grained-negatives) ships only VLN-UVO's: ask them for "
              "VLN-OOPS's, or write it from the Video Localized Narratives OOPS annotations (https://google.github.io/video-localized-narratives/).")),
    "msrvtt": Dataset("msrvtt", "msrvtt", "test-1k-A", "MSR-VTT", "MSR-VTT", ("visualsearch", "msrvtt-json", "key-json"), _MSRVTT_HELP),
    "vatex": Dataset("vatex", "vatex", "test-1k5", "VATEX", "VATEX", ("visualsearch", "vatex-json", "video-list-json", "key-json"), _VATEX_HELP),
}
#: dataset token of a file name -> DATASETS key
DATASET_TOKENS = {"uvo": "uvo", "vlnuvo": "uvo", "oops": "oops", "vlnoops": "oops", "msr": "msrvtt", "msrvtt": "msrvtt", "vatex": "vatex"}
#: split fused into the dataset token -> source_split
FUSED_SPLITS = {"1ka": "test-1k-A", "1k5": "test-1k5", "10k": "test"}

CAPTION_SEPARATOR = "**#**"
GENERATOR = "posrank-single-word"
#: a caption key: `<video>##*##<i>`, `<video>#enc#<i>` or `<video>#<i>`
_VISUALSEARCH_LINE = re.compile(r"^(\S+#(?:enc#)?[0-9]+)[ \t]+(\S.*)$")
#: share of items whose positive may differ from all its negatives by more than half (else the join is wrong)
MAX_UNMATCHED_SHARE = 0.2


def split_key(key: Any, path: Path, row: int | str) -> tuple[str, int]:
    """(video id, caption index) of a `<video>##*##<i>`, `<video>#enc#<i>` or `<video>#<i>` key."""
    fix = "keys name a video and the index of its caption with the digits 0-9: '<video>#<i>' or '<video>##*##<i>'"
    if not isinstance(key, str):
        raise RawFormatError(path, f"key {key!r} is not a string", fix, row)
    for sep in ("##*##", "#enc#", "#"):
        video, found, index = key.rpartition(sep)
        if found:
            break
    if not found or not video.strip() or not re.fullmatch(r"[0-9]+", index.strip()):
        raise RawFormatError(path, f"key {key!r} is not '<video>#<i>' or '<video>##*##<i>' with an index of digits 0-9", fix, row)
    return video.strip(), int(index.strip())


# --------------------------------------------------------------------------- caption sources


@dataclass
class CaptionSource:
    path: Path
    kind: str  # vln | visualsearch | msrvtt-json | vatex-json | video-list-json | key-json
    captions: dict[tuple[str, int], str]

    @property
    def description(self) -> str:
        return {
            "vln": f"'<video>##*##<i>{CAPTION_SEPARATOR}<caption>' lines",
            "visualsearch": "'<video>#<i> <caption>' lines",
            "msrvtt-json": "MSR-VTT annotations JSON ('sentences')",
            "vatex-json": "VATEX JSON (videoID, enCap)",
            "video-list-json": "JSON video -> list of captions",
            "key-json": "JSON caption key -> caption",
        }[self.kind]


def _add(out: dict, key: tuple[str, int], caption: Any, path: Path, where: int | str, shown: str) -> None:
    check_text(caption, path, where, f"caption of {shown}", "fill in the caption (a non-empty string)")
    if key in out:
        raise RawFormatError(path, f"duplicate caption key {shown!r}", "keep one caption per key", where)
    out[key] = caption.strip()


def read_caption_lines(path: Path, kind: str) -> dict[tuple[str, int], str]:
    """Captions of a `key**#**caption` (vln) or `key caption` (visualsearch) text file."""
    out: dict[tuple[str, int], str] = {}
    for line_no, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        if kind == "vln":
            key, sep, caption = line.partition(CAPTION_SEPARATOR)
            if not sep:
                raise RawFormatError(path, f"no '{CAPTION_SEPARATOR}' separator", f"lines are '<video>##*##<i>{CAPTION_SEPARATOR}<caption>'", line_no)
        else:
            m = _VISUALSEARCH_LINE.match(line)
            if not m:
                raise RawFormatError(path, "not a '<video>#<i> <caption>' line", "each line is a caption key, a space, then the caption", line_no)
            key, caption = m.group(1), m.group(2)
        _add(out, split_key(key.strip(), path, line_no), caption, path, line_no, key.strip())
    if not out:
        raise RawFormatError(path, "no captions in the file", "re-download the file")
    return out


def caption_json_kind(data: Any) -> str | None:
    """The caption-source format of parsed JSON, or None."""
    if isinstance(data, dict) and isinstance(data.get("sentences"), list):
        return "msrvtt-json"
    if isinstance(data, list) and data and isinstance(data[0], dict) and "videoID" in data[0] and "enCap" in data[0]:
        return "vatex-json"
    if isinstance(data, dict) and data:
        first_key, first = next(iter(data.items()))
        if isinstance(first, list) and all(isinstance(c, str) for c in first[:3]) and first and "#" not in first_key:
            return None if first_key.lower() in POS_ALIASES or first_key.lower() in ("adp", "num", "pron", "det") else "video-list-json"
        if isinstance(first, str) and "#" in first_key:
            return "key-json"
    return None


def read_caption_json(path: Path, data: Any, kind: str) -> dict[tuple[str, int], str]:
    """Captions of a parsed caption-source JSON, keyed (video, index)."""
    out: dict[tuple[str, int], str] = {}
    if kind == "msrvtt-json":
        counters: dict[str, int] = {}
        for i, s in enumerate(data["sentences"]):
            where = f"sentences[{i}]"
            if not isinstance(s, dict):
                raise RawFormatError(path, f"{where} is not an object", "each sentence is {'video_id': ..., 'caption': ...}", where)
            video = check_text(s.get("video_id"), path, where, "video_id", "each sentence names its video as a string")
            index = counters.get(video, 0)
            counters[video] = index + 1
            _add(out, (video.strip(), index), s.get("caption"), path, where, f"{video}#{index}")
    elif kind == "vatex-json":
        for i, v in enumerate(data):
            where = f"[{i}]"
            if not isinstance(v, dict):
                raise RawFormatError(path, f"entry {i} is not an object", "each entry is {'videoID': ..., 'enCap': [...]}", where)
            video = check_text(v.get("videoID"), path, where, "videoID", "each entry names its video as a string")
            caps = v.get("enCap")
            if not isinstance(caps, list):
                raise RawFormatError(path, f"field 'enCap' of {video!r} is {type(caps).__name__}, not a list", "enCap is the list of English captions", where)
            for j, c in enumerate(caps):
                _add(out, (video.strip(), j), c, path, where, f"{video}#{j}")
    elif kind == "video-list-json":
        for video, caps in data.items():
            if not isinstance(caps, list):
                raise RawFormatError(path, f"the captions of {video!r} are {type(caps).__name__}, not a list", "map each video to its list of captions", video)
            for j, c in enumerate(caps):
                _add(out, (video.strip(), j), c, path, video, f"{video}#{j}")
    else:  # key-json
        for key, caption in data.items():
            _add(out, split_key(key, path, key), caption, path, key, key)
    if not out:
        raise RawFormatError(path, "no captions in the file", "re-download the file")
    return out


def _is_negatives(data: Any) -> bool:
    if not isinstance(data, dict) or not data:
        return False
    first = next(iter(data.values()))
    return isinstance(first, dict) and "0" in first


def _is_vocabulary(data: Any) -> bool:
    return isinstance(data, dict) and bool(data) and all(isinstance(v, list) for v in data.values()) and any(
        k.lower() in POS_ALIASES for k in data
    )


_CAPTION_NAME = re.compile(r"caption|videodatainfo|msrvtt_data|vatex_|_enc\.txt$", re.IGNORECASE)


# --------------------------------------------------------------------------- negatives


def read_negatives(path: Path, data: Any, source: CaptionSource, ds: Dataset, split: str, pos: str, k: int):
    """Items of one PoSRank JSON: the positive first, then its K negatives in the file's order."""
    if not isinstance(data, dict):
        raise RawFormatError(path, f"top level is {type(data).__name__}, not an object", "the file maps caption keys to {'0': negative, ...}", row=1)
    wanted = [str(j) for j in range(k)]
    items, where = [], []
    equal_to_positive = 0
    for key, negs in data.items():
        video, index = split_key(key, path, key)
        if not isinstance(negs, dict) or sorted(negs, key=lambda s: (len(s), s)) != wanted:
            got = sorted(negs, key=lambda s: (len(s), s)) if isinstance(negs, dict) else type(negs).__name__
            raise RawFormatError(path, f"{key!r} has negatives {got}, expected keys '0'..'{k - 1}'", f"exactly {k} negatives per caption", key)
        if (video, index) not in source.captions:
            raise RawFormatError(
                path,
                f"caption {key!r} is not in {source.path.name}",
                f"use the caption file of the same dataset release ({ds.title}: {ds.caption_help})",
                key,
            )
        positive = source.captions[(video, index)]
        negatives = []
        for j in wanted:
            neg = check_text(negs[j], path, key, f"negative {j}", "each negative is a non-empty string; re-download the file")
            negatives.append(neg.strip())
        equal_to_positive += sum(n == positive for n in negatives)
        prov = [provenance("positive", details={"source": source.path.name})]
        for n in negatives:
            span = replaced_span(positive, n)
            if span is None:
                prov.append(provenance("generator", generator=GENERATOR, generator_version=AUTHORS_RELEASE, pos=pos))
            else:
                start, end, neg_end = span
                prov.append(
                    provenance(
                        "generator",
                        generator=GENERATOR,
                        generator_version=AUTHORS_RELEASE,
                        pos=pos,
                        span=positive[start:end],
                        replacement=n[start:neg_end],
                        span_start=start,
                        span_end=end,
                    )
                )
        items.append(
            {
                "id": f"{ds.config}:{pos}:{video}#{index}",
                "video_id": video,
                "source_dataset": ds.source,
                "source_split": split,
                "category": pos,
                "captions": [positive, *negatives],
                "label": 0,
                "manipulated_index": None,
                "negative_types": ["positive"] + [pos] * k,
                "provenance": prov,
            }
        )
        where.append(key)
    if not items:
        raise RawFormatError(path, "no captions in the file", "re-download the file")
    return items, where, equal_to_positive


def _unchanged_share(positive: str, negative: str) -> float:
    a, b = " ".join(positive.lower().split()), " ".join(negative.lower().split())
    span = replaced_span(a, b)
    if span is None:
        return 1.0
    start, end, _ = span
    return (start + len(a) - end) / max(len(a), 1)


def check_join(path: Path, source: CaptionSource, items: list[dict]) -> int:
    """Number of items whose positive shares less than half its text with every negative; error when many do."""
    unmatched = [it for it in items if max(_unchanged_share(it["captions"][0], n) for n in it["captions"][1:]) < 0.5]
    if len(unmatched) > MAX_UNMATCHED_SHARE * len(items):
        it = unmatched[0]
        raise RawFormatError(
            path,
            f"{len(unmatched)} of {len(items)} positives taken from {source.path.name} do not resemble their negatives "
            f"(e.g. {it['id']}: positive {it['captions'][0]!r}, negative 0 {it['captions'][1]!r}); the caption source is of "
            "another split, version or caption order",
            "use the caption file the negatives were made from (see docs/building.md, PoSRank)",
        )
    return len(unmatched)


# --------------------------------------------------------------------------- the folder


@dataclass
class NegativesFile:
    path: Path
    data: Any
    ds: Dataset
    token: str  # the dataset letters of the file name (uvo, oops, msr, vatex, ...)
    split: str
    pos: str
    k: int


def _name_info(path: Path) -> dict[str, Any] | None:
    """What a negatives file name says (dataset token, split, part of speech, K), or None if it does not match."""
    m = FILE_PATTERN.match(path.name)
    if not m:
        return None
    letters, fused = m["dataset"].lower(), (m["fused"] or "").lower()
    key = DATASET_TOKENS.get(letters)
    split = (m["split"] or "").lower() or FUSED_SPLITS.get(fused) or fused
    return {
        "letters": letters,
        "token": letters + fused,
        "dataset": DATASETS[key] if key else None,
        "split": split or None,
        "pos_word": m["pos"],
        "pos": POS_ALIASES.get(m["pos"].lower()),
        "k": int(m["k"]),
    }


def release_name(path: Path) -> bool:
    """Names of PoSRank negatives and caption sources (a 0-byte one is a failed download: an error)."""
    return bool(FILE_PATTERN.match(path.name) or _CAPTION_NAME.search(path.name))


def parse(raw: Path) -> BenchmarkBuild:
    """Validate and convert every PoSRank negatives JSON under `raw`, each joined to its caption source."""
    folder = RawFolder(raw, "posrank", release_name)
    negatives: list[NegativesFile] = []
    sources: list[CaptionSource] = []
    for path in folder.files:
        head = read_head(path)
        info = _name_info(path) if path.suffix.lower() == ".json" else None
        if info is None and looks_binary(head) and not _CAPTION_NAME.search(path.name):
            folder.malformed(path, "binary file (not JSON or text)")
            continue
        if info is not None:
            ds, split, pos_word, pos, token = info["dataset"], info["split"], info["pos_word"], info["pos"], info["token"]
            if pos_word.lower() in PHRASE_LEVEL:
                folder.ignore(path, f"{PHRASE_LEVEL[pos_word.lower()]} negatives of the authors' scripts, not part of the per-part-of-speech benchmark")
                continue
            if pos is None:
                raise RawFormatError(path, f"part of speech {pos_word!r} in the file name is unknown", f"name the file with one of {sorted(POS_ALIASES)}")
            data = load_json_strict(path)
            if not isinstance(data, dict):
                raise RawFormatError(path, f"top level is {type(data).__name__} {str(data)[:40]!r}, not an object", "the file maps caption keys to {'0': negative, ...}", row=1)
            if ds is None:
                ds = Dataset(token, token, split or "test", token, token, ("vln", "visualsearch", "key-json"),
                             f"{token}_captions.txt (lines '<video>##*##<i>{CAPTION_SEPARATOR}<caption>') or {token}_captions.json (key -> caption)")
            negatives.append(NegativesFile(path, data, ds, info["letters"], split or ds.default_split, pos, info["k"]))
            continue
        kind = json_kind(head)
        if kind is not None:
            try:
                data = load_json_strict(path)
            except RawFormatError as exc:
                if _CAPTION_NAME.search(path.name):
                    raise
                folder.malformed(path, f"not readable as JSON, so not a release file ({exc})")
                continue
            if _is_negatives(data):
                raise RawFormatError(
                    path,
                    "holds PoSRank negatives (caption key -> {'0': ..., '19': ...}) but its name does not say the dataset and part of speech",
                    "rename it as the authors do: <dataset>[_<split>]_<pos>_RE20.json, e.g. uvo_val_adverb_RE20.json, "
                    "msr1ka_noun_RE20.json, vatex1k5_verb_RE20.json",
                )
            if _is_vocabulary(data):
                folder.ignore(path, "word vocabulary by part of speech (the authors' generator input), not needed to build")
                continue
            ckind = caption_json_kind(data)
            if ckind is None:
                folder.malformed(path, "JSON that is neither PoSRank negatives nor a caption source")
                continue
            sources.append(CaptionSource(path, ckind, read_caption_json(path, data, ckind)))
            continue
        line = first_line(head)
        if CAPTION_SEPARATOR in line:
            sources.append(CaptionSource(path, "vln", read_caption_lines(path, "vln")))
        elif _VISUALSEARCH_LINE.match(line):
            sources.append(CaptionSource(path, "visualsearch", read_caption_lines(path, "visualsearch")))
        else:
            folder.malformed(path, "text that is neither a caption file ('<key>**#**<caption>' or '<video>#<i> <caption>' lines) nor JSON")
    if not negatives:
        raise folder.nothing_found(
            "<dataset>[_<split>]_<pos>_RE20.json negatives (uvo_val_adverb_RE20.json, oops_val_noun_RE20.json, "
            "msr1ka_verb_RE20.json, vatex1k5_preposition_RE20.json) with their caption sources"
        )

    per_config: dict[str, dict[str, tuple]] = {}
    report: dict = {
        "negatives_per_caption": {},
        "negatives_equal_to_positive": {},
        "captions_joined": {},
        "caption_sources": {},
        "positives_unlike_negatives": {},
        "single_word_diffs": {},
    }
    raw_files: list[str] = []
    used_sources: dict[Path, list[str]] = {}
    for neg in negatives:
        source = _pick_source(neg, sources, folder)
        items, where, equal = read_negatives(neg.path, neg.data, source, neg.ds, neg.split, neg.pos, neg.k)
        unlike = check_join(neg.path, source, items)
        config, pos = neg.ds.config, neg.pos
        if pos in per_config.setdefault(config, {}):
            first = per_config[config][pos][0]
            raise RawFormatError(neg.path, f"a second file for {config}/{pos} (first: {folder.rel(first)})", "keep one file per dataset and part of speech")
        per_config[config][pos] = (neg.path, items, where)
        raw_files.append(folder.rel(neg.path))
        used_sources.setdefault(source.path, []).append(f"{config}/{pos}")
        label = f"{config}/{pos}"
        report["negatives_per_caption"][label] = neg.k
        report["negatives_equal_to_positive"][label] = equal
        report["captions_joined"][label] = len(items)
        report["caption_sources"][label] = folder.rel(source.path)
        report["positives_unlike_negatives"][label] = unlike
        diffs = [is_single_word(p["span"]) and is_single_word(p["replacement"]) for it in items for p in it["provenance"][1:]]
        report["single_word_diffs"][label] = f"{sum(diffs)}/{len(diffs)}"
        folder.use(neg.path, f"{neg.ds.title} {pos} negatives ({len(items)} captions x {neg.k}), split {neg.split}, positives from {folder.rel(source.path)}")
    for source in sources:
        if source.path in used_sources:
            raw_files.append(folder.rel(source.path))
            folder.use(source.path, f"caption source ({source.description}) for {', '.join(used_sources[source.path])}")
        else:
            folder.ignore(source.path, f"caption source ({source.description}) that no negatives file here needs")
    report["files"] = folder.report()

    # one `test` split per config; the part of speech is the `category` column (builds before 0.2 used it
    # as the split name: see the declaration's limitations for the migration)
    configs = []
    for config in sorted(per_config):
        tables = [mc_table(items, path, where) for pos in PARTS_OF_SPEECH if pos in per_config[config]
                  for path, items, where in [per_config[config][pos]]]
        configs.append(ConfigData(config, {"test": pa.concat_tables(tables)},
                                  "positive + 20 single-word negatives; part of speech in `category`"))
    return release_build("posrank", configs, raw_files, report)


def _pick_source(neg: NegativesFile, sources: list[CaptionSource], folder: RawFolder) -> CaptionSource:
    """The caption source holding the most keys of `neg`: same folder first, then named for the dataset."""
    keys = []
    for key in neg.data:
        keys.append(split_key(key, neg.path, key))
    candidates = [s for s in sources if s.kind in neg.ds.caption_kinds]
    if not candidates:
        seen = "; ".join(
            f"{rel} ({e['reason']})" for rel, e in sorted(folder.entries.items()) if e["status"] == "ignored" and not Path(rel).name.startswith(".")
        )
        raise FileNotFoundError(
            f"{neg.path}: no caption source for these {neg.ds.title} negatives (the positives are not in the JSON). "
            f"Needed, next to the negatives file or anywhere under {folder.root}: {neg.ds.caption_help}"
            + (f". Files in the raw folder not usable as one: {seen}" if seen else "")
        )

    def rank(s: CaptionSource) -> tuple:
        covered = sum(k in s.captions for k in keys)
        same_dir = s.path.parent == neg.path.parent
        named = neg.token in s.path.name.lower() or neg.ds.source in s.path.name.lower()
        return (covered, same_dir, named, -len(folder.rel(s.path)))

    return max(candidates, key=rank)
