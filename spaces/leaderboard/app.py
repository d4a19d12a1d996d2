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

Who submits is the Hub account signed in with the "Sign in with Hugging Face" button (the
Space card sets `hf_oauth: true`), or, through the API, the Hub token a client passes as
Gradio's `oauth_token` (`hardneg submit` does); a model name must be in that user's
namespace or one of their organizations'. Every handler catches what it does not expect,
logs it with a reference and answers with a plain message; uploads are deleted after use
and the upload size is capped at what the board's largest config can need.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import uuid
from pathlib import Path

import gradio as gr

from hardneg.uploads import remove_upload
from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.identity import IdentityError, Whoami, hub_whoami, identity_from_oauth
from hardneg import benchmarks as registry
from hardneg.leaderboard.board import KINDS

ORDER = ("best first", "worst first")
#: seconds between sweeps of Gradio's upload cache, and the age at which an unused upload is deleted
UPLOAD_SWEEP_S = 3600

log = logging.getLogger("hardneg.leaderboard.space")


def _reference() -> str:
    return uuid.uuid4().hex[:12]


def plain_errors(message: str):
    """Decorate a handler that returns text: any unexpected exception is logged with a reference and answered
    with `message` (never a traceback, never the exception's text)."""

    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception:
                ref = _reference()
                log.exception("%s failed (reference %s)", fn.__name__, ref)
                return f"{message} (internal error, reference {ref}); nothing was changed. Try again later."
        return inner
    return wrap


def launch_options(board: Leaderboard) -> dict:
    """What `launch()` needs besides the address: uploads capped at the largest file the board can need."""
    return {"max_file_size": board.upload_limit}

INTRO = """# video-hardneg leaderboard
Scores are **recomputed from your predictions** with the project's ranking core (exact expected ties),
each with a 95% cluster-bootstrap interval (videos resampled). Recomputed rows are ranked among themselves; the row
ranked #1 in the sort column is marked **leader**, and rows whose interval overlaps it **tied with leader**;
*p vs #1* is a paired randomization test on the same items. The papers' own numbers (*reported, not
recomputed*, source table named) are listed after them, unranked: they come from the full test sets
and the authors' tie rules. *n / items* says how many items each row was scored on.
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


def create_app(board: Leaderboard, whoami: Whoami = hub_whoami) -> gr.Blocks:
    """The Blocks app around one Leaderboard (tests pass one built on a temporary folder, and a `whoami` that
    maps test tokens to test users)."""
    benchmarks = board.benchmarks

    def view(bench, search, kinds, shown, sort_by, order):
        try:
            table = board.table(bench, sort_by, order == ORDER[0], search, kinds or [], shown)
            fig = board.chart(bench, sort_by, search, kinds or [])
        except Exception:
            ref = _reference()
            log.exception("board view failed (reference %s)", ref)
            raise gr.Error(f"the board could not be drawn (internal error, reference {ref}); reload the page") from None
        return table, fig

    @plain_errors("submission refused:\n- the board could not take this submission")
    def do_submit(path: str | None, profile: gr.OAuthProfile | None, oauth_token: gr.OAuthToken | None) -> str:
        try:
            if not path:
                return "submission refused:\n- no file: choose your predictions .parquet first"
            try:
                identity = identity_from_oauth(profile, oauth_token, whoami)
            except IdentityError as exc:
                return ("submission refused:\n- sign in with your Hugging Face account (the button above; "
                        f"from the API, pass your Hub token as oauth_token): {exc}; nothing was stored")
            return board.submit(path, identity).message
        finally:
            remove_upload(path)

    @plain_errors("")
    def signed_in(profile: gr.OAuthProfile | None) -> str:
        if profile is None:
            return "Not signed in: sign in with Hugging Face to submit. Model names live in your namespace."
        return (f"Signed in as **{profile.username}**: you can submit `{profile.username}/<model>` "
                "or `<organization>/<model>` for organizations you belong to.")

    @plain_errors("[]")
    def do_history(model_id: str) -> str:
        return json.dumps(board.history(model_id), indent=1)

    @plain_errors("refused:")
    def do_moderate(token: str, target: str, action: str, reason: str) -> str:
        try:
            return board.moderate(token, target, action, reason)
        except (PermissionError, ValueError) as exc:
            return f"refused: {exc}"

    @plain_errors("# the export failed")
    def do_eval_results(model_id: str) -> str:
        try:
            files = board.eval_results(model_id)
        except ValueError as exc:
            return f"# {exc}"
        return "\n".join(f"# {name}\n{text}" for name, text in files.items())

    @plain_errors("{}")
    def do_counts() -> str:
        return json.dumps(board.counts())

    with gr.Blocks(title="video-hardneg leaderboard", delete_cache=(UPLOAD_SWEEP_S, UPLOAD_SWEEP_S)) as demo:
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
                    "Sign in with your Hugging Face account, then upload one predictions file (`hardneg score` "
                    "output: one benchmark config). The model name in the file (`model_id`) must be "
                    "`<your user name>/<name>` or `<your organization>/<name>`. The file is checked, scored and "
                    "stored as a new version; nothing is overwritten, and the same file twice is stored once. "
                    "Or run `hardneg submit predictions.parquet --space <this Space>` (uses your Hub token)."
                )
                with gr.Row():
                    gr.LoginButton(elem_id="login", scale=0, min_width=260)
                    who = gr.Markdown(elem_id="signed-in")
                upload = gr.File(label=f"Predictions (.parquet, at most {board.upload_limit / 2**20:.0f} MB)",
                                 file_types=[".parquet"], type="filepath", elem_id="upload")
                submit_btn = gr.Button("Submit", variant="primary", elem_id="submit-btn")
                status = gr.Textbox(label="Result", lines=6, interactive=False, elem_id="submit-status")
                demo.load(signed_in, None, who, api_name=False)
                event = submit_btn.click(do_submit, [upload], status, api_name="submit", concurrency_limit=4)
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
    logging.basicConfig(level=logging.INFO)
    board = leaderboard_from_env()
    create_app(board).queue(default_concurrency_limit=4, max_size=64).launch(
        server_name=os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0"), **launch_options(board)
    )
