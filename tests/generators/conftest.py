"""Fixtures of the generator tests: the real offline resources, and tiny random-weight models
(T5, GPT-2, XLM-R style) with tokenizers trained in-process, saved to temporary folders and
loaded back through `from_pretrained` exactly as the Hub ids would be."""

from __future__ import annotations

from pathlib import Path

import pytest

CORPUS = [
    "a man is pushing a cart into the room",
    "a woman is pulling a cart out of the room",
    "two men walk slowly on the road",
    "a girl is eating an apple and then sleeps",
    "the boy picks up the box and throws it",
    "a person runs fast and jumps over the fence",
    "people are dancing and singing on the stage",
    "a dog is sitting under the table",
]


@pytest.fixture(scope="session")
def nlp():
    from hardneg.resources import MissingResourceError, load_spacy

    try:
        return load_spacy(("parser", "ner"))
    except MissingResourceError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def wordnet():
    from hardneg.resources import MissingResourceError, load_wordnet

    try:
        return load_wordnet()
    except MissingResourceError as exc:
        pytest.skip(str(exc))


def _word_level(specials: list[str], metaspace: bool = False):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    if metaspace:
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
    else:
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(CORPUS + [c.capitalize() for c in CORPUS],
                            trainers.WordLevelTrainer(special_tokens=specials))
    return tok


@pytest.fixture(scope="session")
def tiny_t5(tmp_path_factory) -> Path:
    import torch
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    out = tmp_path_factory.mktemp("tiny-t5")
    raw = _word_level(["<pad>", "</s>", "<unk>", "<extra_id_0>", "<extra_id_1>"])
    raw.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="<pad>", eos_token="</s>", unk_token="<unk>",
                                  additional_special_tokens=["<extra_id_0>", "<extra_id_1>"])
    tok.save_pretrained(out)
    torch.manual_seed(0)
    cfg = T5Config(vocab_size=len(tok), d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1,
                   num_heads=2, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    T5ForConditionalGeneration(cfg).save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory) -> Path:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    out = tmp_path_factory.mktemp("tiny-gpt2")
    tok = PreTrainedTokenizerFast(tokenizer_object=_word_level(["<|endoftext|>", "<unk>"]),
                                  bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<unk>")
    tok.save_pretrained(out)
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_embd=16, n_layer=1, n_head=2, n_positions=64,
                               bos_token_id=0, eos_token_id=0)).save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_xlmr(tmp_path_factory) -> Path:
    import torch
    from tokenizers import AddedToken, processors
    from transformers import PreTrainedTokenizerFast, XLMRobertaConfig, XLMRobertaForMaskedLM

    out = tmp_path_factory.mktemp("tiny-xlmr")
    raw = _word_level(["<s>", "<pad>", "</s>", "<unk>", "<mask>"], metaspace=True)
    raw.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token="<s>", cls_token="<s>", eos_token="</s>",
                                  sep_token="</s>", pad_token="<pad>", unk_token="<unk>",
                                  mask_token=AddedToken("<mask>", lstrip=True, special=True))
    tok.save_pretrained(out)
    torch.manual_seed(0)
    cfg = XLMRobertaConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=64, pad_token_id=1)
    XLMRobertaForMaskedLM(cfg).save_pretrained(out)
    return out
