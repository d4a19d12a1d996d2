"""video-hardneg demo: pick a hard-negative example (or upload a clip), pick a model, see why it is fooled.

Run locally with one command (built-in tiny model, built-in samples, synthetic videos):

    python spaces/demo/app.py            # then open http://127.0.0.1:7861 (or: hardneg demo)

Settings (environment variables or flags): HARDNEG_DEMO_DATA / --data (folder of built
benchmarks), HARDNEG_DEMO_VIDEOS / --videos (videos named by id), HARDNEG_DEMO_REAL / --real (benchmarks shown
with real examples, whose videos are fetched at start-up from the pinned sources), HARDNEG_DEMO_MODELS /
--models (comma-separated model names, Hub ids, local folders or module:Class; the first is the default).
Run locally (loopback host, no SPACE_ID), the model box also takes a typed path, Hub id or module:Class;
from Python, `build_app(..., models=[my_model])` takes model objects.
"""

from __future__ import annotations

import argparse
import html
import logging
import os
import random
import sys
from pathlib import Path

from hardneg.apps import DEMO_PORT, choose_port, private_upload_dir

private_upload_dir("demo")  # before Gradio is imported: it reads GRADIO_TEMP_DIR at import too

import gradio as gr  # noqa: E402
import numpy as np  # noqa: E402
import spaces  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import demo_logic as dl  # noqa: E402

from hardneg.uploads import remove_upload  # noqa: E402
from hardneg.video import VideoFolder  # noqa: E402

log = logging.getLogger("hardneg.demo")

GPU_MODELS = "tiny-clip,openai/clip-vit-base-patch32,microsoft/xclip-base-patch32,tiny-vlm,blind-unigram"
CPU_MODELS = "tiny-clip,tiny-vlm,blind-unigram"


def demo_benchmarks() -> tuple[str, ...]:
    """Every declared benchmark with a built-in sample (multiple choice: candidate captions; retrieval: a query
    and the collection's videos), in the registry's order."""
    from hardneg import benchmarks

    return tuple(n for n, b in benchmarks.all_benchmarks().items() if b.sample)


def custom_models_allowed(host: str) -> bool:
    """A typed model (a path, a Hub id, module:Class) loads code and weights: only for a local run, never on a
    Space (SPACE_ID set) nor when the page is served beyond this machine."""
    return not os.environ.get("SPACE_ID") and host in ("127.0.0.1", "localhost", "::1")


def default_models() -> list[str]:
    import torch

    env = os.environ.get("HARDNEG_DEMO_MODELS")
    return [m.strip() for m in (env or (GPU_MODELS if torch.cuda.is_available() else CPU_MODELS)).split(",") if m.strip()]


def prepare_default_data(cache: Path) -> tuple[Path, Path]:
    """Built samples and synthetic videos in the cache (made on first start)."""
    from hardneg.cli.quickstart import sample_videos
    from hardneg.datasets import build_samples, sample_video_ids

    data = cache / "demo" / "samples"
    names = demo_benchmarks()
    if not all((data / b / "README.md").is_file() for b in names):
        build_samples(data, overwrite=True, benchmarks=names)
    ids = sorted({v for b in names for v in sample_video_ids(b)})
    return data, sample_videos(ids, cache)


def prepare_real_data(cache: Path, data: Path, videos: Path, names: list[str], n: int,
                      mirror: str | None = None) -> tuple[Path, Path]:
    """`data`/`videos` with the named benchmarks' samples replaced by `n` real examples each, their videos fetched
    at start-up from the pinned sources (`hardneg.fetching.examples`: the release files and only those videos)."""
    import shutil

    from hardneg.fetching import FetchSettings
    from hardneg.fetching.examples import real_examples
    from hardneg.io import atomic_directory

    settings = FetchSettings(cache=cache, mirror=mirror, progress=False)
    real = {name: real_examples(name, n, settings) for name in names}
    root = cache / "demo-real"
    with atomic_directory(root, overwrite=True) as tmp:
        (tmp / "data").mkdir()
        (tmp / "videos").mkdir()
        for folder in sorted(Path(data).iterdir()):
            if folder.is_dir() and folder.name not in real:
                (tmp / "data" / folder.name).symlink_to(folder.resolve(), target_is_directory=True)
        for name, (built, vids) in real.items():
            (tmp / "data" / name).symlink_to(built.resolve(), target_is_directory=True)
            for f in vids.rglob("*.mp4"):
                shutil.copy2(f, tmp / "videos" / f.name)
        for f in Path(videos).iterdir():  # copies (a few KB each): Gradio serves files inside one allowed folder
            if f.is_file() and not (tmp / "videos" / f.name).exists():
                shutil.copy2(f, tmp / "videos" / f.name)
    return root / "data", root / "videos"


def _bind(model, bench: str | None) -> None:
    """A video LLM takes the benchmark's protocol and prompt (its chart then names that score)."""
    from hardneg import benchmarks
    from hardneg.models.prompting import bind_protocol

    bind_protocol(model, benchmarks.get(bench) if bench else None)


@spaces.GPU(duration=60)
def _score(pool: dl.ModelPool, model_name: str, video_path: str, captions: list[str], bench: str | None = None):
    """The GPU work: decode frames, run the model (a no-op decorator on a CPU machine). A video LLM scores by
    the benchmark's declared protocol (`bench`; an upload: caption likelihood)."""
    model = pool.get(model_name)
    _bind(model, bench)
    frames = dl.video_frames(video_path) if model.uses_video else None
    return model.score(frames, captions)


@spaces.GPU(duration=120)
def _score_videos(pool: dl.ModelPool, model_name: str, video_paths: list[str], text: str, bench: str | None = None):
    """Retrieval: one query against every video of the collection (one score per video)."""
    model = pool.get(model_name)
    _bind(model, bench)
    videos = np.concatenate([pool.video_embedding(model_name, p) for p in video_paths])
    return np.asarray(model.similarity(videos, model.encode_text([text])), np.float64)[:, 0]


def launch_options() -> dict:
    """Uploads above the demo's limit are refused by Gradio before they are written."""
    return {"max_file_size": dl.MAX_UPLOAD_BYTES}


#: what the result outputs show when there is nothing to show
EMPTY_TABLE = None


def build_app(data_dir: str | Path, videos_dir: str | Path, models: list, device: str | None = None,
              concurrency_limit: int = 2, custom_models: bool = False) -> gr.Blocks:
    """The page. `models`: names `load_model` takes (adapter names, Hub ids, local folders), 'module:Class', or
    model objects (named by their `model_id`). `custom_models`: the model box also takes a typed name (local
    runs only: see `custom_models_allowed`)."""
    from hardneg import benchmarks as registry

    private_upload_dir("demo")  # before any Blocks: this process's uploads in a folder of its own
    store = dl.ExampleStore.load(data_dir)
    videos = VideoFolder(videos_dir)
    pool = dl.ModelPool(device)
    names = []
    for m in models:
        if isinstance(m, str):
            names.append(m)
        else:
            names.append(pool.add(str(getattr(m, "model_id", None) or type(m).__name__), m))
    models = names
    rng = random.Random(0)
    bench0 = store.benchmarks()[0]
    config0 = store.configs(bench0)[0]
    ids0 = store.ids(bench0, config0)

    def on_benchmark(bench):
        configs = store.configs(bench)
        ids = store.ids(bench, configs[0])
        # a new benchmark starts with an empty search and no result of another benchmark left on the page
        return (gr.Dropdown(choices=configs, value=configs[0]), gr.Dropdown(choices=ids, value=ids[0] if ids else None),
                "", "", EMPTY_TABLE, None, gr.HighlightedText([], visible=True), "")

    def on_config(bench, config):
        ids = store.ids(bench, config)
        return gr.Dropdown(choices=ids, value=ids[0] if ids else None), ""

    def on_search(bench, config, query):
        ids = store.ids(bench, config, query)
        if not ids:
            gr.Warning(f"no caption in {bench}/{config} contains {dl.echo(query)}")
            return gr.Dropdown()
        return gr.Dropdown(choices=ids, value=ids[0])

    def on_random(bench, config):
        try:
            return gr.Dropdown(value=store.random_id(bench, config, rng))
        except dl.DemoInputError as exc:
            gr.Warning(html.escape(str(exc)))
            return gr.Dropdown()

    def on_example(bench, config, example_id):
        if not example_id:
            return None, ""
        try:
            ex = store.get(bench, config, example_id)
        except dl.DemoInputError:
            return None, ""
        path = videos.path(ex.video_id)
        text = dl.retrieval_text(ex) if ex.is_retrieval else dl.candidates_text(ex.captions, ex.label)
        return (str(path) if path else None), text

    def present(scores, captions, label, types, title, model_name, bench=None, relevant=(), what="caption"):
        order, rows = dl.rank_candidates(scores, captions, label, types)
        if relevant:  # retrieval: say which other videos were judged relevant
            for row, j in zip(rows, order):
                if j != label and j in set(relevant):
                    row[1] = "relevant (extra label)"
        score_name = getattr(pool.get(model_name), "score_name", "") or "the model's own score"
        fig = dl.score_bar_chart(scores, captions, label, order, title, score_name, relevant)
        highlights = dl.diff_highlights(captions, label, order) if label is not None and what == "caption" else []
        views = dl.example_views(bench, scores, label, types) if bench else ""
        verdict = dl.verdict_text(order, label, len(captions), scores, what)
        if relevant and label is not None and order[0] != label and order[0] in set(relevant):
            first = registry.get(bench).metrics[0]
            rule = (f": correct under {first.key} (any relevant video), not under {first.baseline.key} (its own video "
                    "only)") if first.baseline is not None else ""
            verdict += f"\n\nThe top video is judged relevant to the query (the benchmark's extra labels){rule}."
        chart = gr.Plot(fig, label=f"Scores: {score_name} (higher = better match)")
        diffs_out = gr.HighlightedText(highlights, visible=what == "caption")
        return verdict, rows, chart, diffs_out, views

    def refusal(text: str):
        """Outputs for a run that cannot happen: one plain message, everything else cleared (no error badges)."""
        return f"**{html.escape(text)}**", EMPTY_TABLE, None, gr.HighlightedText([], visible=True), ""

    def run_example(bench, config, example_id, model_name):
        if not example_id:
            return (None, *refusal("Pick an example first (or upload your own video in the other tab)."))
        if not model_name:
            return (None, *refusal("Pick a model first (or type a path, a Hub id or module:Class when run locally)."))
        try:
            ex = store.get(bench, config, example_id)
            path = dl.example_video_path(videos, ex)
            if ex.is_retrieval:
                ranked, own, relevant = dl.retrieval_subset(ex)
                paths = [dl.example_video_path(videos, dl.Example(bench, config, ex.split, ex.id, v, [], 0, []))
                         for v in ranked]
                scores = _score_videos(pool, model_name, [str(p) for p in paths], ex.query, bench)
            else:
                scores = _score(pool, model_name, str(path), ex.captions, bench)
        except dl.DemoInputError as exc:
            return (None, *refusal(str(exc)))
        except Exception as exc:  # a failing model call shows in the page, the app keeps running
            log.exception("model %s failed on %s/%s %s", model_name, bench, config, example_id)
            return (None, *refusal(f"model {str(model_name)[:80]} failed ({type(exc).__name__}); try another model"))
        title = f"{model_name} on {registry.get(bench).title} {config} {ex.id}"
        if ex.is_retrieval:
            out = present(scores, ranked, own, None, title, model_name, bench, relevant, "video")
            return (str(path), f"{out[0]}\n\n**Query:** {html.escape(ex.query)}", *out[1:])
        return (str(path), *present(scores, ex.captions, ex.label, ex.negative_types, title, model_name, bench))

    def run_upload(video, text, model_name):
        """Outputs: the result video (cleared: no earlier example's video stays), the results, the upload box."""
        try:
            dl.check_upload(video)
        except dl.DemoInputError as exc:  # the video itself is refused: it is not kept
            remove_upload(video)
            return (None, *refusal(str(exc)), gr.Video(value=None))
        try:
            captions = dl.parse_captions(text)
            scores = _score(pool, model_name, video, captions)
        except dl.DemoInputError as exc:  # fix the captions and run again: the video stays until then
            return (None, *refusal(str(exc)), gr.Video())
        except Exception as exc:
            log.exception("model %s failed on an upload", model_name)
            return (None, *refusal(f"model {model_name} failed ({type(exc).__name__}); try another model"),
                    gr.Video())
        out = present(scores, captions, 0, None, f"{model_name} on your video", model_name)
        remove_upload(video)  # scored: the upload is not kept
        return (None, out[0] + "\n\n*Your video was deleted from the server after scoring; upload it again to "
                "re-run.*", *out[1:], gr.Video(value=None))

    with gr.Blocks(title="video-hardneg demo", delete_cache=(900, 900)) as demo:
        with gr.Row(equal_height=True):
            gr.Markdown("# video-hardneg: is your video-text model fooled by hard negatives?\n"
                        "Pick a benchmark example (or upload a clip and type captions) and a model: every candidate "
                        "(a caption, or for retrieval a video of the collection) is ranked by the model's score, the "
                        "positive marked ✓, the words where each negative differs from it highlighted.")
            model = gr.Dropdown(choices=models, value=models[0], elem_id="model", scale=0, min_width=280,
                                allow_custom_value=custom_models, label="Model",
                                info="or type a path, a Hub id or module:Class" if custom_models else None)
        with gr.Tabs():
            with gr.Tab("Benchmark example"):
                with gr.Row():
                    bench = gr.Dropdown(choices=[(registry.get(b).title, b) for b in store.benchmarks()], value=bench0,
                                        label="Benchmark", elem_id="benchmark")
                    config = gr.Dropdown(choices=store.configs(bench0), value=config0, label="Config", elem_id="config")
                    example = gr.Dropdown(choices=ids0, value=ids0[0] if ids0 else None, label="Example id",
                                          elem_id="example")
                with gr.Row():
                    query = gr.Textbox(label="Search caption text", placeholder="e.g. door", scale=3, elem_id="query")
                    search = gr.Button("Search", scale=1)
                    rand = gr.Button("Random example", scale=1)
                captions_view = gr.Textbox(label="Candidates (✓ = the positive; retrieval: the query and its video)",
                                           lines=3, max_lines=5, interactive=False, elem_id="captions")
                run_btn = gr.Button("Run model", variant="primary", elem_id="run-example")
            with gr.Tab("Upload your video"):
                upload = gr.Video(label=f"Video (≤ {dl.MAX_DURATION_S:.0f} s, ≤ {dl.MAX_UPLOAD_BYTES // 2**20} MB, "
                                        f"≤ {dl.MAX_WIDTH}x{dl.MAX_HEIGHT})", sources=["upload"], include_audio=True,
                                  height=240, elem_id="upload")
                typed = gr.Textbox(label="Captions, one per line (the first is the positive)", lines=5)
                run_up = gr.Button("Run model on upload", variant="primary", elem_id="run-upload")
        verdict = gr.Markdown(elem_id="verdict")
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=240):
                video = gr.Video(label="Video", interactive=False, height=240, elem_id="video")
            with gr.Column(scale=3):
                table = gr.Dataframe(headers=["rank", "positive", "candidate", "score", "negative type"],
                                     label="Ranked candidates (best first; ✓ marks the positive)", interactive=False,
                                     elem_id="ranked", wrap=True, max_height=2400,  # every row, no scrolling
                                     column_widths=["7%", "11%", "58%", "10%", "14%"])
        chart = gr.Plot(label="Scores", elem_id="chart")
        diffs = gr.HighlightedText(label="Where each negative differs from the positive (rank order)",
                                   color_map={"changed": "#f4a261"}, show_legend=False,
                                   show_inline_category=False, elem_id="diffs")
        delta = gr.Markdown(elem_id="delta-s")

        bench.change(on_benchmark, bench, [config, example, query, verdict, table, chart, diffs, delta])
        config.change(on_config, [bench, config], [example, query])
        search.click(on_search, [bench, config, query], example)
        query.submit(on_search, [bench, config, query], example)
        rand.click(on_random, [bench, config], example)
        example.change(on_example, [bench, config, example], [video, captions_view])
        demo.load(on_example, [bench, config, example], [video, captions_view])
        run_btn.click(run_example, [bench, config, example, model], [video, verdict, table, chart, diffs, delta],
                      concurrency_limit=concurrency_limit, concurrency_id="gpu")
        run_up.click(run_upload, [upload, typed, model], [video, verdict, table, chart, diffs, delta, upload],
                     concurrency_limit=concurrency_limit, concurrency_id="gpu")
    demo.queue(max_size=32, default_concurrency_limit=concurrency_limit)
    return demo


def main(argv: list[str] | None = None) -> None:
    from hardneg.resources import cache_dir as default_cache_dir

    p = argparse.ArgumentParser(description="video-hardneg demo (Gradio)")
    p.add_argument("--data", default=os.environ.get("HARDNEG_DEMO_DATA"), help="folder of built benchmarks (default: built-in samples)")
    p.add_argument("--videos", default=os.environ.get("HARDNEG_DEMO_VIDEOS"), help="folder of videos named by id")
    p.add_argument("--models", default=None,
                   help="comma-separated models: registered names, Hub ids, local folders or module:Class "
                        "(default: tiny-clip + blind-unigram on CPU); run locally, the page also takes a typed one")
    p.add_argument("--real", default=os.environ.get("HARDNEG_DEMO_REAL"),
                   help="comma-separated benchmarks whose sample is replaced by real examples, their videos fetched "
                        "at start-up from the pinned sources (only those videos; hardneg fetch's sources)")
    p.add_argument("--real-examples", type=int, default=int(os.environ.get("HARDNEG_DEMO_REAL_EXAMPLES") or 3),
                   help="real examples (videos) per --real benchmark (default 3)")
    p.add_argument("--mirror", default=os.environ.get("HARDNEG_DEMO_MIRROR"),
                   help="fetch the real examples from this mirror (hardneg fetch --mirror)")
    p.add_argument("--device", default=None)
    p.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"))
    p.add_argument("--port", type=int, default=int(os.environ["GRADIO_SERVER_PORT"]) if os.environ.get(
        "GRADIO_SERVER_PORT") else None, help=f"port (default {DEMO_PORT}, or a free one when that is taken; printed)")
    args = p.parse_args(argv)
    port = choose_port(args.port, DEMO_PORT, args.host, "demo")
    data, vids = args.data, args.videos
    if not data or not vids:
        d, v = prepare_default_data(default_cache_dir())
        data, vids = data or d, vids or v
    if args.real:
        data, vids = prepare_real_data(default_cache_dir(), Path(data), Path(vids),
                                       [b for b in args.real.split(",") if b], args.real_examples, args.mirror)
    models = [m for m in args.models.split(",") if m] if args.models else default_models()
    app = build_app(data, vids, models, device=args.device, custom_models=custom_models_allowed(args.host))
    print(f"demo: http://{args.host}:{port}/ (Ctrl+C stops)", file=sys.stderr)
    app.launch(server_name=args.host, server_port=port, allowed_paths=[str(Path(vids).resolve())],
               **launch_options())


if __name__ == "__main__":
    main()
