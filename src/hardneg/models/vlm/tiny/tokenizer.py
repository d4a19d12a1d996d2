"""The tiny video LLMs' tokenizers, built the way the real families' are (byte-level BPE or SentencePiece-style),
trained here on a small corpus of captions, prompts and answers."""

from __future__ import annotations


#: words the tokenizer knows whole (the rest is spelt in characters): captions, prompts, answers
_WORDS = """
a an the man woman person people child children boy girl dog cat horse car ball door guitar kitchen
is are was be it he she they his her their this that of in on at to into from with and or then before after
while up down left right over under across toward away slowly quickly fast carefully
plays playing play walks walking walk runs running run opens opening open closes closing close
throws throwing throw catches catching catch jumps jumping jump pours pouring pour picks picking pick
puts putting put takes taking take moves moving move pushes pushing push pulls pulling pull
turns turning turn rides riding ride cuts cutting cut holds holding hold sits sitting sit stands standing
video show shows describe description sentence one does this entail which caption matches better best
option options answer directly give please question yes no Yes No
""".split()

SPECIALS = ["<|endoftext|>", "<|unk|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
            "<|video_pad|>", "<|image_pad|>", "<video>", "<image>"]


#: Qwen2's pre-tokenizer split (the `pre_tokenizer` of Qwen/Qwen2-VL-7B-Instruct's tokenizer.json: a `Split` with
#: this pattern, behaviour "isolated", then byte-level without its own regex); written out, not read from the Hub
QWEN_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
              r"\s*[\r\n]+|\s+(?!\S)|\s+")
#: how many tokens each tiny tokenizer learns beyond its alphabet (small: the models are tiny)
VOCAB_SIZE = 700


def _corpus() -> list[str]:
    """The text the tiny tokenizers are trained on: the vocabulary in sentences, the prompts, option lines,
    answers and a little non-ASCII text, each many times so that whole words and "Yes"/"No" merge."""
    words = _WORDS
    lines = [" ".join(words[i:i + 8]) for i in range(0, len(words), 8)]
    lines += ["Which caption matches the video better?", "Please directly give the best option:",
              "Does this video entail the description:", "Describe this video in one sentence.",
              "Caption A: a man opens the door.", "Sentence B: the dog runs across the park.",
              "Option 1: a woman is pouring water.", "(A) A man opens the door. \n(B) A man closes the door.",
              "Yes", "No", "Yes.", "No.", "A.", "B.", "A", "B", "C", "D",
              "café naïve jalapeño – “quoted” 猫が走る 😀", "Ünïcödé straße ÅÄÖ ñ"]
    lines += list("ABCDEFGHIJKLMNOPQRSTUVWXYZ") + [" ".join("ABCDEFGHIJKLMNOPQRSTUVWXYZ")]
    return lines * 20


def _qwen_tokenizer(specials=SPECIALS):
    """Byte-level BPE with Qwen2's pre-tokenizer and decoder, trained here: every byte is a token, so no text is
    ever unknown; a space is part of the next word's token (Ġ), a newline its own."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=list(specials), show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(_corpus(), trainer)
    return tok


def _sentencepiece_tokenizer():
    """A SentencePiece-style (Llama / Vicuna) BPE trained here: spaces become "▁" and a word's first piece carries
    it (Metaspace, prepended to the first word only), characters outside the vocabulary fall back to their UTF-8
    bytes (<0x..> tokens), as the LLaVA families' Llama and Vicuna tokenizers do."""
    import json

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<|unk|>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    bytes_ = [f"<0x{i:02X}>" for i in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIALS + bytes_, show_progress=False)
    tok.train_from_iterator(_corpus(), trainer)
    spec = json.loads(tok.to_str())
    # the byte tokens are vocabulary entries (as in Llama's tokenizer.model), not added tokens parsed out of text
    spec["added_tokens"] = [t for t in spec["added_tokens"] if t["content"] in SPECIALS]
    return Tokenizer.from_str(json.dumps(spec))


def build_tokenizer(kind: str = "byte-bpe", named: dict[str, str] | None = None, more: tuple[str, ...] = ()):
    """The tiny models' tokenizer, built the way the real families' are: "byte-bpe" (Qwen2-VL, Qwen2.5-VL and
    LLaVA-OneVision, whose language model is Qwen2) or "sentencepiece" (Video-LLaVA: Vicuna / Llama). Case is kept,
    and the option letters and the first tokens of "Yes" and "No" are single tokens (checked)."""
    from transformers import PreTrainedTokenizerFast

    named = dict(named or {})
    extra = list(dict.fromkeys(t for t in [*named.values(), *more] if t not in SPECIALS))
    if kind == "byte-bpe":
        tok = _qwen_tokenizer(SPECIALS + extra)
    else:
        if extra:
            raise ValueError("named special tokens beyond SPECIALS: byte-bpe tokenizers only")
        tok = _sentencepiece_tokenizer()
    kw = {"model_specific_special_tokens": named} if named else {}
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   unk_token="<|unk|>", model_max_length=4096,
                                   additional_special_tokens=SPECIALS[2:] + extra, **kw)
    for word in ("Yes", "No", *"ABCDEFGHIJKLMNOPQRSTUVWXYZ"):
        if len(fast.encode(word, add_special_tokens=False)) != 1:
            raise RuntimeError(f"the tiny {kind} tokenizer spells {word!r} in several tokens; extend its corpus")
    return fast
