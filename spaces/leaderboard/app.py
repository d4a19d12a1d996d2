"""video-hardneg leaderboard Space: submit predictions, see recomputed scores with intervals.

Every score on the board is recomputed here from the submitted predictions with the
project's ranking core; intervals are cluster-bootstrap (videos resampled); rows whose
interval overlaps the leader's are marked tied. Configuration (environment):

* HARDNEG_LB_DATA: folder of the SQLite store (default `data`; on a Space, `/data` with persistent storage)
* HARDNEG_LB_BENCHMARKS: folder of `hardneg build` outputs (`<folder>/<benchmark>`); unset: the
  benchmark dataset repos are downloaded from the Hub
* HARDNEG_LB_RESULTS_REPO: Hub dataset repo the store is mirrored to (needs HF_TOKEN); unset: no mirror
* HARDNEG_ADMIN_TOKEN: admin token for hiding/deleting rows (a Space secret, never in code)
* HARDNEG_LB_RESAMPLES: bootstrap resamples per interval (default 1000)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import gradio as gr

from hardneg.leaderboard import Leaderboard
from hardneg import benchmarks as registry
from hardneg.leaderboard.board import KINDS

ORDER = ("best first", "worst first")

INTRO = """# video-hardneg leaderboard
Scores are **recomputed from your predictions** with the project's ranking core (exact expected ties),
each with a 95% cluster-bootstrap interval (videos resampled). Rows whose interval overlaps the leader's
(in the sort column) are marked **tied with leader**; *p vs leader* is a paired randomization test on the
same items. Rows marked *reported, not recomputed* are the papers' own numbers (source table named).
"""


def benchmark_item_sets():
    """Item sets from HARDNEG_LB_BENCHMARKS, or from a download of the Hub dataset repos.

    Downloaded repos also accept the Hub commit as data_revision (what `hardneg score` records
    when it reads a Hub id); local folders accept the content hash `hardneg score` records for them.
    """
    from hardneg.leaderboard import load_benchmarks

    local = os.environ.get("HARDNEG_LB_BENCHMARKS")
    if local:
        return load_benchmarks(local)
    from huggingface_hub import HfApi, snapshot_download

    root = Path(os.environ.get("HARDNEG_LB_DATA", "data")) / "benchmarks"
    revisions = {}
    for bench, repo in ((n, b.hub_id) for n, b in registry.all_benchmarks().items()):
        sha = HfApi().dataset_info(repo).sha
        snapshot_download(repo, repo_type="dataset", revision=sha, local_dir=root / bench)
        revisions[bench] = {sha}
    return load_benchmarks(root, extra_revisions=revisions)


def leaderboard_from_env() -> Leaderboard:
    mirror = None
    repo = os.environ.get("HARDNEG_LB_RESULTS_REPO")
    if repo:
        from hardneg.leaderboard.mirror import HubMirror

        mirror = HubMirror(repo, token=os.environ.get("HF_TOKEN"))
    return Leaderboard(
        os.environ.get("HARDNEG_LB_DATA", "data"),
        item_sets=benchmark_item_sets(),
        n_resamples=int(os.environ.get("HARDNEG_LB_RESAMPLES", "1000")),
        mirror=mirror,
    )


def create_app(board: Leaderboard) -> gr.Blocks:
    """The Blocks app around one Leaderboard (tests pass one built on a temporary folder)."""
    benchmarks = board.benchmarks

    def view(bench, search, kinds, shown, sort_by, order):
        table = board.table(bench, sort_by, order == ORDER[0], search, kinds or [], shown)
        fig = board.chart(bench, sort_by, search, kinds or [])
        return table, fig

    def do_submit(data: bytes | None, submitter: str) -> str:
        if data is None:
            return "submission refused:\n- no file: choose your predictions .parquet first"
        return board.submit(bytes(data), submitter).message

    def do_history(model_id: str) -> str:
        return json.dumps(board.history(model_id), indent=1)

    def do_moderate(token: str, target: str, action: str, reason: str) -> str:
        try:
            return board.moderate(token, target, action, reason)
        except (PermissionError, ValueError) as exc:
            return f"refused: {exc}"

    def do_eval_results(model_id: str) -> str:
        try:
            files = board.eval_results(model_id)
        except ValueError as exc:
            return f"# {exc}"
        return "\n".join(f"# {name}\n{text}" for name, text in files.items())

    def do_counts() -> str:
        return json.dumps(board.counts())

    with gr.Blocks(title="video-hardneg leaderboard") as demo:
        gr.Markdown(INTRO)
        refreshers = []  # (function inputs, outputs) per benchmark tab
        with gr.Tabs():
            for bench in benchmarks:
                cols = [c.name for c in board.columns(bench)]
                headline = [c.name for c in board.columns(bench) if c.headline]
                with gr.Tab(registry.get(bench).title, id=bench):
                    bench_state = gr.State(bench)
                    with gr.Row():
                        search = gr.Textbox(label="Search model", placeholder="part of a model name", scale=2)
                        kinds = gr.CheckboxGroup(list(KINDS), value=list(KINDS), label="Show rows")
                    with gr.Row():
                        sort_by = gr.Dropdown(cols, value=headline[0], label="Sort by (#1 and ties use this column)")
                        order = gr.Radio(list(ORDER), value=ORDER[0], label="Order")
                    shown = gr.CheckboxGroup(cols, value=headline, label="Columns (headline metrics by default)")
                    table0, fig0 = view(bench, "", list(KINDS), headline, headline[0], ORDER[0])
                    table = gr.Dataframe(table0, interactive=False, wrap=True, elem_id=f"board-{bench}",
                                         label=f"{registry.get(bench).title} board")
                    plot = gr.Plot(fig0, label="bar chart of the sort column")
                    inputs = [bench_state, search, kinds, shown, sort_by, order]
                    for control in (search, kinds, shown, sort_by, order):
                        control.change(view, inputs, [table, plot], api_name=False)
                    refreshers.append((inputs, [table, plot]))
            with gr.Tab("Overall", id="overall"):
                gr.Markdown("Models with results on every benchmark: each benchmark's first headline metric "
                            "(mean over its configs) and their average. Reported paper numbers are not included.")
                gr.Dataframe(board.average(), interactive=False, wrap=True, elem_id="board-overall")
            with gr.Tab("Submit", id="submit"):
                gr.Markdown(
                    "Upload one predictions file (`hardneg score` output: one benchmark config/split). "
                    "It is checked, scored and stored as a new version; nothing is overwritten. "
                    "Or run `hardneg submit predictions.parquet --space <this Space>`."
                )
                upload = gr.File(label="Predictions (.parquet)", file_types=[".parquet"], type="binary",
                                 elem_id="upload")
                submitter = gr.Textbox(label="Submitter (your Hub user name)", elem_id="submitter")
                submit_btn = gr.Button("Submit", variant="primary", elem_id="submit-btn")
                status = gr.Textbox(label="Result", lines=6, interactive=False, elem_id="submit-status")
                event = submit_btn.click(do_submit, [upload, submitter], status, api_name="submit",
                                         concurrency_limit=4)
                for inputs, outputs in refreshers:
                    event = event.then(view, inputs, outputs, api_name=False)
            with gr.Tab("History & model card", id="history"):
                model_box = gr.Textbox(label="Model id")
                with gr.Row():
                    hist_btn = gr.Button("Show all versions")
                    card_btn = gr.Button("Export .eval_results YAML")
                hist_out = gr.Code(label="Output", language="yaml")
                hist_btn.click(do_history, model_box, hist_out, api_name="history")
                card_btn.click(do_eval_results, model_box, hist_out, api_name="eval_results")
            with gr.Tab("Admin", id="admin"):
                token = gr.Textbox(label="Admin token", type="password")
                target = gr.Textbox(label="Submission id or model id")
                action = gr.Radio(["hide", "delete", "restore"], value="hide", label="Action")
                reason = gr.Textbox(label="Reason")
                mod_btn = gr.Button("Apply")
                mod_out = gr.Textbox(label="Result", interactive=False)
                mod_event = mod_btn.click(do_moderate, [token, target, action, reason], mod_out, api_name="moderate")
                for inputs, outputs in refreshers:
                    mod_event = mod_event.then(view, inputs, outputs, api_name=False)
        counts_btn = gr.Button("counts", visible=False)
        counts_out = gr.Textbox(visible=False)
        counts_btn.click(do_counts, None, counts_out, api_name="counts")
    return demo


if __name__ == "__main__":
    create_app(leaderboard_from_env()).queue(default_concurrency_limit=4).launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0"), max_file_size="256mb"
    )
