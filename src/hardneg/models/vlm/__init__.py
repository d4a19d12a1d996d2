"""Video LLMs (image-text-to-text models that take video) as scored models.

The package's modules, each with one job:

* `model`: `VideoLLM`, the scored model `load_model` returns for a Hub id, a folder, `vlm:...` or `tiny-vlm[:arch]`;
* `engine`: one item (a video and its captions): the shared prefix once, captions on copies of its cache, and
  each protocol's readout;
* `batch`: several items per forward (left-padded prefixes, caption rows of many items), equal to `engine`;
* `families`: what differs between architectures (frames -> the model's video inputs, video-token count);
* `positions`: Qwen's 3-D rotary positions (M-RoPE) by the published rule;
* `tiny`: the built-in random-weight tiny models and their tokenizers / chat templates;
* `placement`: one model over several devices (accelerate's device map).

Nothing is imported here, so importing one module (e.g. `positions`) loads no torch and no `transformers`.
"""
