"""The chat messages a model's user writes for one protocol: the input of the processor reference that
test_vlm_reference.py and test_vlm_generic.py both compare the fast path with (one copy)."""

from __future__ import annotations


def conversation(prompt: str, protocol: str, caption_or_options: str):
    """The chat messages a user of the model writes: the prompt's text around the video, the caption as the
    assistant's answer (caption-likelihood) or inside the question."""
    before, after = prompt.split("{video}")
    if protocol == "caption-likelihood":
        after = after.replace("{caption}", "").rstrip("\n ")
        answer = caption_or_options
    else:
        slot = "{options}" if protocol == "choice-letter" else "{caption}"
        after, answer = after.replace(slot, caption_or_options), None
    user = ([{"type": "text", "text": before}] if before else []) + [{"type": "video"}]
    user += [{"type": "text", "text": after}] if after else []
    msgs = [{"role": "user", "content": user}]
    if answer is not None:
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": answer}]})
    return msgs, answer is None
