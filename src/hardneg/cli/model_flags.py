"""The flags that say which model, where it runs and how a video LLM scores: one definition for `hardneg run` and
`hardneg score`, so their help and choices never drift apart, and ONE place that turns them into the settings objects
(`model_spec`, `frame_settings`: `hardneg.settings`). A new model setting is a flag here and a field of
`hardneg.settings.ModelSpec`, read in `model_spec`."""

from __future__ import annotations


def add_model_identity_flags(p) -> None:
    """--model-revision and --model-id on parser `p` (the model itself, --model, is each command's own)."""
    p.add_argument("--model-revision", default=None, help="Hub revision (branch, tag or commit) of the model")
    p.add_argument("--model-id", default=None, metavar="ORG/NAME",
                   help="the model's name in the predictions (what `hardneg submit` and the leaderboard use): "
                        "your Hub user or organization and a name, e.g. alice/my-clip; local/NAME for a board of "
                        "your own (default: the model's own name)")


def add_model_flags(g) -> None:
    """--device, --device-map, --max-memory, --fp16, --protocol, --prompt, --protocol-set, --processor-kwargs on
    argument group `g`."""
    from hardneg.benchmarks.base import PROTOCOL_SETS, VLM_PROTOCOLS

    g.add_argument("--device", default=None, help="cpu, cuda, cuda:1 ... (default: cuda when available)")
    g.add_argument("--device-map", default=None, choices=("auto", "balanced", "balanced_low_0", "sequential"),
                   help="video LLMs only: spread the model over the GPUs present (then the CPU, then disk) with "
                        "accelerate, for models larger than one GPU (docs/models.md, 'A 72B model')")
    g.add_argument("--max-memory", default=None,
                   help="with --device-map: memory per device, e.g. 0=70GiB,1=70GiB,cpu=200GiB")
    g.add_argument("--fp16", action="store_true", help="half precision on the GPU")
    g.add_argument("--protocol", default=None, choices=VLM_PROTOCOLS,
                   help="video LLMs only: how a caption is scored (default: the benchmark's own; docs/models.md)")
    g.add_argument("--prompt", default=None, action="append",
                   help="video LLMs only: the prompt, with {video} and {caption} ({options} for choice-letter, "
                        "{question} for generate-match); NAME=PROMPT sets one benchmark's (repeat the flag); "
                        "default: the benchmark's own")
    g.add_argument("--protocol-set", default=None, choices=PROTOCOL_SETS,
                   help="video LLMs only: default (each benchmark's own), authors (the benchmark authors' released "
                        "protocol where there is one) or lmms-eval (lmms-eval's task); provenance names each "
                        "protocol's source (docs/models.md, 'Protocol sets')")
    g.add_argument("--processor-kwargs", default=None, metavar="JSON|K=V,...",
                   help="video LLMs only: keyword arguments for the model's own processor, as a JSON object or k=v "
                        "pairs, e.g. min_pixels=3136,max_pixels=602112 or '{\"fps\": 2}' (what lmms-eval's "
                        "wrappers take as model_args); with a qwen-vl-utils frame recipe min_pixels/max_pixels are "
                        "its pixel limits too; recorded in the predictions and results.json (frames.processor_kwargs)")


def device(args) -> str | None:
    """--device, or the placement of --device-map/--max-memory as a device string (hardneg.models.vlm.placement)."""
    from hardneg.models.vlm.placement import device_string

    return device_string(args.device_map, args.max_memory, args.device)


def model_spec(args):
    """The `hardneg.settings.ModelSpec` the model flags say (--model, --model-revision, --model-id, --device,
    --device-map, --max-memory, --fp16, --protocol, --prompt, --protocol-set, and --judge where the command has it)."""
    from hardneg.models.prompting import parse_prompts
    from hardneg.settings import ModelSpec

    return ModelSpec(args.model, device=device(args), fp16=args.fp16, revision=args.model_revision,
                     protocol=args.protocol, prompt=parse_prompts(args.prompt), protocol_set=args.protocol_set,
                     model_id=args.model_id, judge=getattr(args, "judge", None))


def frame_settings(args):
    """The `hardneg.video.FrameSettings` the frame flags say (--frames, --fps, --resize, --processor-kwargs, and
    --decoder/--scaler where the command has them)."""
    from hardneg.video import FrameSettings, parse_processor_kwargs

    return FrameSettings(n_frames=args.frames, fps=args.fps, resize=args.resize or None,
                         decoder=getattr(args, "decoder", "pyav"), scaler=getattr(args, "scaler", "pil"),
                         processor=parse_processor_kwargs(args.processor_kwargs))
