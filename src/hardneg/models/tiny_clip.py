"""The built-in tiny CLIP: random weights from a fixed seed, a small WordPiece tokenizer built in-process.

Its vocabulary holds everyday caption words and every word of the world's closed grammar
(`hardneg.world.vocab`), and its context is CLIP's 77 tokens, so every caption of every built-in
sample fits without a cut (tests/scoring/test_truncation.py checks it): a caption cut before the
word that sets it apart from its negatives would tie with them and score chance (issue 33).

It makes the whole scoring path (tokenizer, image processor, both towers, pooling, cache,
predictions, metrics) run offline in seconds. Its scores carry no meaning: on the
built-in samples it should land near chance. `python -m hardneg.models.tiny_clip DIR`
rebuilds the shipped copy in `hardneg/data/tiny_clip/` byte for byte.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SEED = 1234
SHIPPED = Path(__file__).resolve().parents[1] / "data" / "tiny_clip"

#: Text the tokenizer is trained on: everyday video-caption vocabulary.
_CORPUS = """
a man is playing a guitar on the stage while a woman sings into a microphone
a woman is cutting vegetables in the kitchen with a large knife
two children are running across the green field and kicking a ball
the dog jumps over the fence and catches a red frisbee in the park
a person rides a bicycle down the street past parked cars at night
a girl throws the ball to a boy who catches it with both hands
people are dancing at a party and a man opens a bottle of wine
a chef slowly pours sauce over the pasta and then adds cheese
the cat sleeps on the sofa under a blue blanket next to the window
a group of men lift heavy boxes into the back of a white truck
she quickly opens the door and walks into the dark room
he carefully climbs up the ladder to paint the old wall
a car drives fast along the road near the river under the bridge
the player hits the tennis ball across the net toward his opponent
a baby laughs while her mother feeds her with a small spoon
someone writes on a whiteboard and explains the math problem to students
a horse runs around the track while the crowd cheers loudly
the woman puts on her coat and leaves the house in the rain
two men shake hands in front of a building and smile at the camera
a boy swims in the pool and his father watches from the side
""".split("\n")


#: CLIP's own text context; the longest built-in sample caption needs far fewer tokens
CONTEXT = 77
#: the words the world's grammar puts between its slots ("a ... , then it ...": `hardneg.world.grammar`)
_WORLD_GLUE = ("a", "then", "it")


def world_words() -> list[str]:
    """Every word a world caption can hold (slot words split at spaces, e.g. "in front of"), sorted."""
    from hardneg.world.vocab import SLOT_WORDS

    return sorted({w for words in SLOT_WORDS.values() for phrase in words for w in phrase.split()} | set(_WORLD_GLUE))


def build_tiny_clip(out: str | os.PathLike) -> Path:
    """Write the tiny CLIP (config, weights, tokenizer, image processor) into `out`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import CLIPConfig, CLIPImageProcessorPil, CLIPModel, PreTrainedTokenizerFast

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # A WordPiece vocabulary built explicitly (single characters as word pieces, then the sorted corpus and
    # world words), so the tokenizer is deterministic and any lowercase word still tokenizes.
    # eos must not be id 2: CLIP treats eos_token_id == 2 as "pool at the largest id" (legacy)
    specials = ["<|pad|>", "<|unk|>", "<|startoftext|>", "<|endoftext|>"]
    alphabet = list("abcdefghijklmnopqrstuvwxyz0123456789.,!?'\"-:;()")
    words = sorted({w for ln in _CORPUS for w in ln.split()} | set(world_words()))
    vocab_list = specials + alphabet + ["##" + c for c in alphabet] + [w for w in words if w not in alphabet]
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(vocab_list)}, unk_token="<|unk|>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.decoder = decoders.WordPiece()
    bos, eos = tok.token_to_id("<|startoftext|>"), tok.token_to_id("<|endoftext|>")
    tok.post_processor = processors.TemplateProcessing(
        single="<|startoftext|> $A <|endoftext|>", special_tokens=[("<|startoftext|>", bos), ("<|endoftext|>", eos)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|startoftext|>", eos_token="<|endoftext|>",
                                   pad_token="<|pad|>", unk_token="<|unk|>", model_max_length=CONTEXT)
    fast.save_pretrained(out)

    config = CLIPConfig(
        text_config={"vocab_size": tok.get_vocab_size(), "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 2, "max_position_embeddings": CONTEXT,
                     "bos_token_id": bos, "eos_token_id": eos, "pad_token_id": tok.token_to_id("<|pad|>")},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                       "num_attention_heads": 2, "image_size": 32, "patch_size": 8},
        projection_dim=32,
    )
    torch.manual_seed(SEED)
    model = CLIPModel(config).eval()
    model.save_pretrained(out)
    CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(out)
    return out


def tiny_clip_path() -> Path:
    """The shipped tiny CLIP folder (built into the user cache if the package lacks it)."""
    if (SHIPPED / "config.json").is_file():
        return SHIPPED
    from hardneg.resources import cache_dir as default_cache_dir

    cached = default_cache_dir() / "tiny_clip"
    if not (cached / "config.json").is_file():
        build_tiny_clip(cached)
    return cached


if __name__ == "__main__":
    print(build_tiny_clip(sys.argv[1] if len(sys.argv) > 1 else SHIPPED))
