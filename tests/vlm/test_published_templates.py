"""Every verified type's tiny folder carries its published chat template (with where it was read), or is a named
stand-in: the same conversations rendered with the published text and with the folder's own template (as
`AutoProcessor` loads it) must be identical, and the text must still be what was read (its sha256)."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from chat_reference import conversation
from hardneg.models.vlm.model import DEFAULT_PROMPTS
from hardneg.models.vlm.published import FOLDER, PUBLISHED, PublishedTemplate, template_source
from hardneg.models.vlm.support import VERIFIED
from hardneg.models.vlm.tiny import STAND_IN_TEMPLATES, tiny_vlm_path
from waves import arch_params

CAPTION = "a man opens the door."


def conversations():
    """Each protocol's conversation, and one with a system turn."""
    out = []
    for protocol in ("caption-likelihood", "yes-probability", "choice-letter"):
        text = "A. a man opens the door.\nB. a man closes the door." if protocol == "choice-letter" else CAPTION
        out.append(conversation(DEFAULT_PROMPTS[protocol].prompt, protocol, text))
    msgs, gen = out[1]
    out.append(([{"role": "system", "content": [{"type": "text", "text": "You are a helpful assistant."}]}, *msgs],
                gen))
    return out


def test_every_verified_type_is_published_or_a_named_stand_in():
    for model_type in VERIFIED:
        assert (model_type in PUBLISHED) != (model_type in STAND_IN_TEMPLATES), model_type
    for model_type, why in STAND_IN_TEMPLATES.items():
        assert model_type in VERIFIED and why.strip(), model_type


@pytest.mark.parametrize("model_type", sorted(PUBLISHED))
def test_the_published_text_is_what_was_read(model_type):
    rec = PUBLISHED[model_type]
    text = (FOLDER / rec.file).read_text(encoding="utf-8")
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == rec.sha256
    assert rec.url.startswith(("https://github.com/", "https://huggingface.co/")) and f"/{rec.commit}/" in rec.url
    assert re.fullmatch(r"[0-9a-f]{40}|v\d+\.\d+\.\d+|main", rec.commit), rec.commit
    assert template_source(model_type) == {"url": rec.url, "commit": rec.commit, "sha256": rec.sha256,
                                           "source": rec.source}


def test_a_changed_text_is_refused(tmp_path, monkeypatch):
    """The sha256 check can fail: one character more and the text is refused."""
    import hardneg.models.vlm.tiny.record as record  # where `PublishedTemplate.text` reads the folder

    rec = PUBLISHED["qwen2_vl"]
    (tmp_path / rec.file).write_text(rec.text() + " ", encoding="utf-8")
    monkeypatch.setattr(record, "FOLDER", tmp_path)
    with pytest.raises(RuntimeError, match="sha256"):
        PublishedTemplate(rec.file, rec.url, rec.commit, rec.sha256, rec.source).text()


@pytest.mark.parametrize("arch", arch_params(sorted(a for t, a in VERIFIED.items() if t in PUBLISHED)))
def test_the_folder_renders_as_the_published_template(arch):
    from transformers import AutoProcessor

    from hardneg.models.vlm.tiny import MODEL_TYPES

    model_type = MODEL_TYPES[arch]
    folder = tiny_vlm_path(arch)
    assert json.loads((folder / "template_source.json").read_text(encoding="utf-8")) == template_source(model_type)
    proc = AutoProcessor.from_pretrained(folder)
    published = PUBLISHED[model_type].text()
    for msgs, gen in conversations():
        want = proc.apply_chat_template(msgs, chat_template=published, tokenize=False, add_generation_prompt=gen)
        got = proc.apply_chat_template(msgs, tokenize=False, add_generation_prompt=gen)  # the folder's own
        assert got == want
    # and the rendering sees the conversation: another caption gives another text
    msgs, gen = conversations()[1]
    other = json.loads(json.dumps(msgs).replace("opens", "closes"))
    assert proc.apply_chat_template(other, tokenize=False, add_generation_prompt=gen) != \
        proc.apply_chat_template(msgs, tokenize=False, add_generation_prompt=gen)


@pytest.mark.parametrize("arch", arch_params(sorted(a for t, a in VERIFIED.items() if t in STAND_IN_TEMPLATES)))
def test_a_stand_in_folder_says_no_source(arch):
    assert not (tiny_vlm_path(arch) / "template_source.json").exists()


def test_models_json_names_each_template_source(capsys):
    """`hardneg models --json`: `template_source` is the record for a published template, null for a stand-in."""
    from hardneg.cli import main

    assert main(["models", "--json"]) == 0
    rows = {r["model_type"]: r for r in json.loads(capsys.readouterr().out)}
    for model_type in VERIFIED:
        got = rows[model_type]["template_source"]
        assert got == template_source(model_type)
        assert (got is None) == (rows[model_type]["stand_in_template"] is not None)
    assert rows["qwen2_vl"]["template_source"]["sha256"] == PUBLISHED["qwen2_vl"].sha256
