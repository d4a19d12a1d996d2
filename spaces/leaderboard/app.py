"""video-hardneg leaderboard Space: submit predictions, see recomputed scores with intervals.

Every score on the board is recomputed here from the submitted predictions with the
project's ranking core; intervals are cluster-bootstrap (videos resampled); rows whose
interval overlaps the leader's are marked tied. Configuration (environment):

* HARDNEG_LB_DATA: folder of the SQLite store (default `data`; with a results repo, it is restored from the repo at
  start, so a Space needs no persistent storage)
* HARDNEG_LB_BENCHMARKS: folder of `hardneg build` outputs (`<folder>/<benchmark>`); unset: the
  benchmark dataset repos are downloaded from the Hub
* HARDNEG_LB_RESULTS_REPO: Hub dataset repo the store is mirrored to and restored from (the board's source of
  truth; needs HF_TOKEN); unset: no mirror, the data folder must then survive restarts
* HARDNEG_ADMIN_TOKEN: admin token for hiding/deleting rows (a Space secret, never in code)
* HARDNEG_LB_RESAMPLES: bootstrap resamples per interval (default 1000)
* HARDNEG_LB_VIDEOS: folder of videos named by id, shown in the Details tab's drill-down (optional)

Who submits is the Hub account signed in with the "Sign in with Hugging Face" button (the
Space card sets `hf_oauth: true`), or, through the API, the Hub token a client passes as
Gradio's `oauth_token` (`hardneg submit` does); a model name must be in that user's
namespace or one of their organizations'. Every handler catches what it does not expect,
logs it with a reference and answers with a plain message; uploads are deleted after use
and the upload size is capped at what the board's largest config can need.
"""

from __future__ import annotations

import functools
import hashlib
import html
import json
import logging
import os
import tempfile
import uuid
from pathlib import Path

from hardneg.apps import BOARD_PORT, choose_port, private_upload_dir
from hardneg.leaderboard.signin import SignIn, apply_operator_oauth, sign_in_from_env

private_upload_dir("leaderboard")  # before Gradio is imported: it reads GRADIO_TEMP_DIR at import too

if __name__ == "__main__":
    apply_operator_oauth()  # an operator's own OAuth app: Gradio reads its variables when it is imported

import gradio as gr

from hardneg.uploads import UPLOAD_GRACE_S, lease, release
from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.identity import IdentityError, Whoami, hub_whoami, identity_from_oauth
from hardneg import benchmarks as registry
from hardneg.leaderboard.about import about_markdown, data_license
from hardneg.leaderboard.board import GENERATIVE_MARK, KINDS
from hardneg.truncation import CUT_MARK
from hardneg.leaderboard.overall import AVERAGE, COVERAGE, MODEL_TYPES, SIZE_BUCKETS, average_header, header
from hardneg.leaderboard.model_meta import parse_model_meta_json
from hardneg.leaderboard.validate import quote

ORDER = ("best first", "worst first")
#: submissions checked and scored at once (their own concurrency id: page loads never wait behind them)
SUBMIT_CONCURRENCY = 4
#: queued events (submissions, plots, details) waiting at most; page loads and table redraws are not queued
QUEUE_MAX = 64
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


#: every cell on one line ("12.3 [10.1, 14.5]" never split; the columns are wide enough) but a model's name, which
#: wraps rather than being cut; headers wrap; the wide tables scroll sideways inside their box (the full table is
#: reachable at 1280 px), the rank and the
#: model staying in view (Gradio 6.31's `pinned_columns` does not hold them: sticky cells do; the first
#: column is 40 px wide, see the tables' `column_widths`)
CSS = """
.board-table .table-wrap, .board-table .table-container { overflow-x: auto !important; }
.board-table [role=gridcell], .board-table [role=gridcell] * { white-space: nowrap !important; }
.board-table [role=row] > [role=gridcell]:nth-child(2), .board-table [role=row] > [role=gridcell]:nth-child(2) * {
    white-space: normal !important; overflow-wrap: anywhere; }
.board-table [role=gridcell], .board-table [role=gridcell] *, .board-table [role=columnheader],
.board-table [role=columnheader] * { font-size: 12px !important; }
.board-table [role=columnheader], .board-table [role=columnheader] * { white-space: normal !important; }
#board-intro p { margin: 0 !important; }
#board-intro h1 { margin: 0 0 2px 0 !important; font-size: 1.5em !important; }
.board-legend { font-size: 0.85em !important; opacity: 0.85; }
.board-legend p { margin: 0 !important; }
.board-table [role=row] > :nth-child(1) { position: sticky !important; left: 0; z-index: 3;
    background: var(--background-fill-primary); }
.board-table [role=row] > :nth-child(2) { position: sticky !important; left: 40px; z-index: 3;
    background: var(--background-fill-primary); box-shadow: 2px 0 0 var(--border-color-primary); }
"""


def launch_options(board: Leaderboard) -> dict:
    """What `launch()` needs besides the address: uploads capped at the largest file the board can need; the
    page's CSS (Gradio 6 takes it at launch)."""
    return {"max_file_size": board.upload_limit, "css": CSS}

#: the page's first lines: what the board is, in two lines; the long explanations are folded away (HOW_TO_READ)
#: and on the About tab, so that the Overall table starts high on a 1280 x 800 screen (issue 33)
INTRO = """# video-hardneg leaderboard
Every score is **recomputed from the submitted predictions**, with a 95% interval (videos resampled); percent, one
decimal. How each number is computed: the **About** tab.
"""
#: the explanations a first visit can skip (an Accordion, closed)
HOW_TO_READ = """Scores are recomputed from your predictions with the project's ranking core (exact expected ties), each with
a 95% cluster-bootstrap interval (videos resampled); percent with one decimal. **Overall** lists every model with its
coverage and averages only models that cover every benchmark. On a benchmark's tab, recomputed rows are ranked among
themselves (the #1 row in the sort column is the **leader**, rows whose interval overlaps it **tied with leader**,
*p vs #1* a paired test on the same items); the papers' own numbers (*reported, not recomputed*) follow, unranked.
The board refreshes by itself when a submission lands.

**Overall.** One number per benchmark, the one `hardneg run` prints and results.json holds under the benchmark's
name: its declared metric on its overall config, or the mean over its disjoint configs (the About tab says which).
Every model is listed with its coverage; the average over all benchmarks is taken only for models with every one
of them, over values in one unit.

{legend}
"""
#: the marks the tables use, said once under each table
LEGEND = "{mark} generative model (a video LLM) · intervals: 95%"
#: the cut mark's line, under a benchmark's table (`hardneg.truncation.CUT_MARK`)
CUT_LEGEND = ("{cut} the model's tokenizer cut captions longer than its text context (candidates the cut made "
              "identical tie, and a tie scores chance)")
#: what the mark means, in the folded explanations
GENERATIVE_TEXT = ("{mark} marks a generative model (a video LLM: it scores captions by likelihood, a yes-probability "
                   "or an option letter, not by embedding similarity), as the model type stored with its submission "
                   "says.")
P_LEGEND = ("*p vs #1*: paired randomization test against the #1 row on the same items; *computing…* until the "
            "background test lands, *n/a* says why there is none")
#: seconds between the page's checks for new submissions (one indexed read when nothing changed)
REFRESH_S = 5.0
#: widths of the Overall columns (#, model, kind, type, params, coverage, parts, average, benchmarks..., license,
#: submitted): the model column keeps whole names; the rest of the table scrolls sideways
def OVERALL_WIDTHS(n_benchmarks: int) -> list[str]:  # noqa: N802 (a table of constants)
    # rank, model, type, coverage and average, then the benchmarks: wide enough for "100.0 [100.0, 100.0]" on one
    # line, narrow enough that four or more show at 1280 px; the model's other facts follow, reached by scrolling,
    # each wide enough for its longest value ("contrastive", "submitted", "2026-11-27": never cut or split)
    return ["40px", "184px", "96px", "76px", "160px"] + ["160px"] * n_benchmarks + \
        ["96px", "72px", "72px", "120px", "112px"]


#: rows of the drill-down table
MAX_FAILURES = 200

#: what every mode's Submit tab says of the file and of what the board does with it
SUBMIT_FILE = ("upload one predictions file (`hardneg score` output: one benchmark config). The file is checked, "
               "scored and stored as a new version; nothing is overwritten, and the same file twice is stored once.")


def submit_help(sign_in: SignIn, url: str | None = None) -> str:
    """The Submit tab's text for the board's sign-in mode: in local mode (`hardneg leaderboard serve`) there is no
    Hub account and no token, so the text says what that mode does instead (issue 33), with the board's own
    address (`url`, known to whoever launches it; issue 41: the page showed a literal placeholder)."""
    if sign_in.mode == "local":
        name = sign_in.local.username
        return (f"**Local board** (`hardneg leaderboard serve`): no sign-in and no Hub token. {SUBMIT_FILE[0].upper()}"
                f"{SUBMIT_FILE[1:]} Every submission is stored under **{html.escape(name)}** and shown as *local*; "
                f"the model name in the file (`model_id`) must be `{html.escape(name)}/<name>` or `local/<name>` "
                "(`hardneg run ... --model-id local/NAME`). From a terminal on this machine: "
                f"`hardneg submit runs/NAME --space {html.escape(url or 'http://127.0.0.1:PORT')}` (no token needed"
                + ("" if url else "; PORT: the port in this page's address") + ").")
    return ("Sign in with your Hugging Face account, then " + SUBMIT_FILE + " The model name in the file "
            "(`model_id`) must be `<your user name>/<name>` or `<your organization>/<name>`. "
            "Or run `hardneg submit predictions.parquet --space <this Space>` (uses your Hub token).")


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
        restore="background",  # the page serves while the results repo is read back (issue 42)
    )


def _csv_file(frame, name: str) -> str:
    """The table as a CSV file for a download button."""
    return _bytes_file(frame.to_csv(index=False).encode("utf-8"), name, ".csv")


def _bytes_file(data: bytes, name: str, suffix: str) -> str:
    """A download file named by its content, so concurrent pages never clash; written atomically."""
    folder = Path(tempfile.gettempdir()) / "hardneg-leaderboard-downloads"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{hashlib.sha256(data).hexdigest()[:12]}{suffix}"
    if not path.exists():
        tmp = path.with_suffix(f".{uuid.uuid4().hex[:6]}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return str(path)


def _safe_name(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-." else "_" for ch in str(text))[:80] or "model"


def create_app(board: Leaderboard, whoami: Whoami = hub_whoami, videos: str | Path | None = None,
               refresh_s: float = REFRESH_S, sign_in: SignIn | None = None,
               upload_grace_s: float = UPLOAD_GRACE_S, url: str | None = None) -> gr.Blocks:
    """The Blocks app around one Leaderboard (tests pass one built on a temporary folder, and a `whoami` that
    maps test tokens to test users). `videos`: a folder of videos named by id, shown in the drill-down.

    `sign_in`: who may submit (`hardneg.leaderboard.signin`; default: decided from the environment). Outside a
    Space with real OAuth, Gradio's sign-in is a mock, so the board is read-only there unless it runs in the
    explicit local mode (`hardneg leaderboard serve`), whose one identity is used for every submission. The mode is
    said once, here (a WARNING log line; the launchers print nothing more). `url`: the board's address, for the
    Submit tab's command.

    Nothing is computed when the app is built: every visitor's page load reads the store as it is then, and a
    timer re-reads it when a submission or a moderation lands (`board.state()`), so a submission appears on open
    pages without a reload."""
    private_upload_dir("leaderboard")  # before any Blocks: this process's uploads in a folder of its own
    sign_in = sign_in if sign_in is not None else sign_in_from_env()
    log.warning("leaderboard %s", sign_in.banner())
    board.start_background()  # p-values and rows prepared off the page loads (issue 29)
    benchmarks = board.benchmarks
    names = board.overall_names()
    video_folder = None
    if videos:
        from hardneg.video import VideoFolder

        video_folder = VideoFolder(videos)

    def failed(what: str):
        ref = _reference()
        log.exception("%s failed (reference %s)", what, ref)
        return gr.Error(f"{what} failed (internal error, reference {ref}); reload the page")

    # --- views (each returns the table and its CSV download) ---------------------------------------------
    def view_overall(search, types, sizes, kinds, sort_by, order):
        args = dict(sort_by=sort_by or AVERAGE, descending=order != ORDER[1], search=search or "",
                    types=types or None, sizes=sizes or None, kinds=kinds or [])
        return board.overall(**args), _csv_file(board.overall_frame(**args), "overall")

    def view(bench, search, kinds, shown, sort_by, order):
        table = board.table(bench, sort_by, order == ORDER[0], search, kinds or [], shown)
        return table, _csv_file(board.table_frame(bench, search, kinds or []), bench)

    def model_choices():
        return board.model_ids()

    # --- the page's one refresh: every table, when the store changed since this page last drew ------------
    controls: list = []  # flattened inputs, in the order `refresh` reads them
    outputs: list = []

    first_paint: dict = {}  # the Overall table a new visitor's page holds before its first refresh (issue 41)

    def paint_first(now, overall=None) -> None:
        """Put the default Overall table into the page Gradio serves (its config), so that a new visitor sees the
        board as soon as Gradio's scripts have drawn the page, without waiting for the page's first refresh (that
        refresh still runs and brings every table up to date: at worst the first sight is the state of a moment
        before). Drawn once per store state, from the table a fresh page's refresh draws anyway (`overall`)."""
        if first_paint.get("state") == now or "table" not in first_paint:
            return
        table = first_paint["table"]
        value = table.postprocess(board.overall() if overall is None else overall)
        value = value.model_dump() if hasattr(value, "model_dump") else value
        table.value = value
        for c in (getattr(demo, "config", None) or {}).get("components", []):
            if c.get("id") == table._id:
                c.setdefault("props", {})["value"] = value
        first_paint["state"] = now

    def refresh(token, *values):
        try:
            now = board.state()
            if token == now:
                return [gr.skip()] * (1 + len(outputs))
            vals = list(values)
            out = [now, *view_overall(*vals[:6])]
            if [v or "" for v in vals[:6]] == first_paint.get("defaults"):  # a fresh page's view: the one a new visitor first sees
                try:
                    paint_first(now, out[1])
                except Exception:  # noqa: BLE001 (a page whose first sight waits for its refresh, as before)
                    log.exception("drawing the first Overall table into the page failed")
            vals = vals[6:]
            for bench in benchmarks:
                out += list(view(bench, *vals[:5]))
                vals = vals[5:]
            out.append(gr.Dropdown(choices=model_choices()))
            return out
        except Exception:
            raise failed("drawing the board") from None

    def redraw_overall(*vals):
        try:
            return view_overall(*vals)
        except Exception:
            raise failed("drawing the Overall table") from None

    def redraw(bench, *vals):
        try:
            return view(bench, *vals)
        except Exception:
            raise failed("drawing the board") from None

    # --- plots, details ----------------------------------------------------------------------------------
    def columns_of(bench):
        cols = board.columns(bench)
        first = next((c.name for c in cols if c.headline), cols[0].name)
        return gr.Dropdown(choices=[c.name for c in cols], value=first)

    def draw_plots(bench, column, search):
        try:
            title = registry.get(bench).title
            fig = board.chart(bench, column, search or "", list(KINDS))
            types = board.negative_type_chart(bench, search or "") if not registry.get(bench).is_retrieval else None
            return (gr.Plot(fig, label=f"{title}: each model against chance"),
                    gr.Plot(types, label=f"{title}: per negative type" if types is not None
                            else f"{title}: no negative types (retrieval)"))
        except Exception:
            raise failed("drawing the plots") from None

    def parts_for(model_id):
        parts = sorted(f"{s.benchmark}/{s.config}/{s.split}" for s in board.parts_of(model_id or ""))
        return gr.Dropdown(choices=parts, value=parts[0] if parts else None)

    def show_failures(model_id, part):
        if not model_id or not part:
            return (None, gr.Dropdown(choices=[], value=None), "Pick a model and one of its benchmark parts.", None,
                    gr.DownloadButton(visible=False))
        try:
            bench, config, split = part.split("/", 2)
            found = board.failures(model_id, bench, config, split, MAX_FAILURES)
        except ValueError as exc:
            return (None, gr.Dropdown(choices=[], value=None), f"**{html.escape(str(exc))}**", None,
                    gr.DownloadButton(visible=False))
        except Exception:
            raise failed("the drill-down") from None
        import pandas as pd

        retrieval = registry.get(bench).is_retrieval
        frame = pd.DataFrame.from_records([{
            "item": f.item_id, "video": f.video_id, ("query" if retrieval else "positive"): f.query,
            "positive score": round(f.positive_score, 4), ("top video" if retrieval else "negative that beat it"): f.winner,
            "its score": round(f.winner_score, 4), "outcome": f.outcome, "positive rank": f.positive_rank,
            ("relevance" if retrieval else "negative type"): f.negative_type, "provenance": f.provenance}
            for f in found])
        total = len(board.item_sets[(bench, config, split)])
        summary = (f"**{len(found)}** of {total} items of {html.escape(part)} where {html.escape(model_id)}'s "
                   f"{'own video' if retrieval else 'positive caption'} was beaten or tied"
                   + (f" (first {MAX_FAILURES} shown)" if len(found) >= MAX_FAILURES else "") + ".")
        ids = [f.item_id for f in found]
        card, video = failure_card(found[0], bench) if found else ("", None)
        csv = _csv_file(frame, f"failures-{_safe_name(model_id)}-{_safe_name(part)}") if found else None
        return (frame, gr.Dropdown(choices=ids, value=ids[0] if ids else None), summary + "\n\n" + card, video,
                gr.DownloadButton(value=csv, visible=csv is not None))

    def failure_card(f, bench):
        retrieval = registry.get(bench).is_retrieval
        if retrieval:
            text = (f"**Query** {html.escape(f.query)}\n\n**Its own video** `{html.escape(f.positive)}` scored "
                    f"{f.positive_score:.4f} (rank {f.positive_rank})\n\n**Top video** `{html.escape(f.winner)}` "
                    f"scored {f.winner_score:.4f}: {html.escape(f.negative_type)}"
                    + (f"\n\n**Provenance** {html.escape(f.provenance)}" if f.provenance else ""))
        else:
            text = (f"**Positive** ✓ {html.escape(f.positive)} — score {f.positive_score:.4f} (rank {f.positive_rank})"
                    f"\n\n**Negative that {'tied' if f.outcome == 'tied' else 'beat'} it** ✗ {html.escape(f.winner)} — "
                    f"score {f.winner_score:.4f}; type `{html.escape(f.negative_type)}`"
                    f"\n\n**Provenance** {html.escape(f.provenance) or 'not recorded'}")
        path = video_folder.path(f.video_id) if video_folder is not None else None
        where = "" if path else f"\n\n*Video `{html.escape(f.video_id)}` is not available on this board.*"
        return f"#### Item `{html.escape(f.item_id)}`, video `{html.escape(f.video_id)}`\n\n{text}{where}", \
            (str(path) if path else None)

    def show_one(model_id, part, item_id):
        if not (model_id and part and item_id):
            return gr.skip(), gr.skip()
        bench, config, split = part.split("/", 2)
        found = {f.item_id: f for f in board.failures(model_id, bench, config, split, MAX_FAILURES)}
        if item_id not in found:
            return gr.skip(), gr.skip()
        return failure_card(found[item_id], bench)

    def download_details(model_id):
        try:
            data = board.details_parquet(model_id or None)
        except Exception:
            raise failed("the details download") from None
        return _bytes_file(data, f"details-{_safe_name(model_id or 'all')}", ".parquet")

    # --- handlers kept from the submission path ---------------------------------------------------------
    def submitter(profile, oauth_token):
        """The verified identity of a request, or the refusal to answer."""
        if sign_in.mode == "local":
            return sign_in.local, None
        if not sign_in.accepts:
            return None, f"submission refused:\n- this board is read-only: {sign_in.reason}; nothing was stored"
        try:
            return identity_from_oauth(profile, oauth_token, whoami), None
        except IdentityError as exc:
            return None, ("submission refused:\n- sign in with your Hugging Face account (the button above; "
                          f"from the API, pass your Hub token as oauth_token): {exc}; nothing was stored")

    @plain_errors("submission refused:\n- the board could not take this submission")
    def do_submit(path: str | None, profile: gr.OAuthProfile | None, oauth_token: gr.OAuthToken | None) -> str:
        lease(path)  # identical uploads share Gradio's copy: held while read, deleted after the last reader
        try:
            if not path:
                return "submission refused:\n- no file: choose your predictions .parquet first"
            identity, refusal = submitter(profile, oauth_token)
            if refusal:
                return refusal
            return board.submit(path, identity).message
        finally:
            release(path, upload_grace_s)

    @plain_errors("submission refused:\n- the board could not take these files")
    def do_submit_files(paths, model_meta_json: str | None, profile: gr.OAuthProfile | None,
                        oauth_token: gr.OAuthToken | None) -> str:
        """Every predictions file of one model (`hardneg submit` with a `hardneg run` folder) as one submission,
        with its model metadata (JSON): stored all together or not at all."""
        paths = [getattr(p, "name", p) for p in (paths or [])]
        for p in paths:
            lease(p)
        try:
            if not paths:
                return "submission refused:\n- no file: send your predictions .parquet files"
            identity, refusal = submitter(profile, oauth_token)
            if refusal:
                return refusal
            try:  # size and nesting checked before parsing; NaN/Infinity and out-of-range values refused
                meta = parse_model_meta_json(model_meta_json)
            except ValueError as exc:
                return f"submission refused:\n- {quote(str(exc), 300)}; nothing was stored"
            return board.submit_files(paths, identity, meta).message
        finally:
            for p in paths:
                release(p, upload_grace_s)

    @plain_errors("")
    def signed_in(profile: gr.OAuthProfile | None) -> str:
        if sign_in.mode == "local":
            return f"Submitting as **{sign_in.local.username}** (local mode, shown as *local*)."
        if not sign_in.accepts:
            return f"This board is read-only: {html.escape(sign_in.reason)}."
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
        gr.Markdown(INTRO, elem_id="board-intro")
        with gr.Accordion("How to read this board", open=False, elem_id="how-to-read"):
            gr.Markdown(HOW_TO_READ.format(legend=GENERATIVE_TEXT.format(mark=GENERATIVE_MARK) + " " + P_LEGEND + "."))
        token = gr.State(None)  # the store state this page last drew
        with gr.Tabs(overflow_behavior="wrap"):  # every tab in view (a second row if need be), none behind a menu
            with gr.Tab("Overall", id="overall"):
                sort_choices = [(average_header(names), AVERAGE), (COVERAGE, COVERAGE)] + [(header(b), b) for b in names]
                with gr.Row(equal_height=True):
                    o_search = gr.Textbox(label="Search model", placeholder="part of a model name", scale=2,
                                          elem_id="overall-search", lines=1, max_lines=1)
                    o_sort = gr.Dropdown(sort_choices, value=AVERAGE, label="Sort by", elem_id="overall-sort", scale=2)
                    o_order = gr.Radio(list(ORDER), value=ORDER[0], label="Order", elem_id="overall-order", scale=1)
                with gr.Accordion("Filter by model type, size, kind", open=False, elem_id="overall-filters"):
                    with gr.Row():
                        o_types = gr.CheckboxGroup(list(MODEL_TYPES), value=list(MODEL_TYPES), label="Model type")
                        o_sizes = gr.CheckboxGroup(list(SIZE_BUCKETS), value=list(SIZE_BUCKETS), label="Parameters")
                        o_kinds = gr.CheckboxGroup(["submitted", "baseline"], value=["submitted", "baseline"],
                                                   label="Show rows")
                gr.Markdown(LEGEND.format(mark=GENERATIVE_MARK) + f" · Average: over all {len(names)} benchmarks, "
                            "only for models with every one of them",
                            elem_classes="board-legend", elem_id="overall-legend")
                o_table = gr.Dataframe(interactive=False, wrap=False, datatype="markdown", elem_id="board-overall",
                                       elem_classes="board-table", label="Overall", pinned_columns=2,
                                       max_height=640, column_widths=OVERALL_WIDTHS(len(names)))
                first_paint["table"] = o_table
                first_paint["defaults"] = [c.value or "" for c in (o_search, o_types, o_sizes, o_kinds, o_sort, o_order)]
                o_csv = gr.DownloadButton("Download CSV (fractions)", elem_id="csv-overall", size="sm")
                o_inputs = [o_search, o_types, o_sizes, o_kinds, o_sort, o_order]
                for control in o_inputs:
                    control.change(redraw_overall, o_inputs, [o_table, o_csv], api_name=False, queue=False)
                controls += o_inputs
                outputs += [o_table, o_csv]
            for bench in benchmarks:
                cols = [c.name for c in board.columns(bench)]
                headline = [c.name for c in board.columns(bench) if c.headline]
                with gr.Tab(registry.get(bench).title, id=bench):
                    bench_state = gr.State(bench)
                    with gr.Row(equal_height=True):
                        search = gr.Textbox(label="Search model", placeholder="part of a model name", scale=2,
                                            elem_id=f"search-{bench}", lines=1, max_lines=1)
                        sort_by = gr.Dropdown(cols, value=headline[0], label="Sort by (#1 and ties use this column)",
                                              scale=2)
                        order = gr.Radio(list(ORDER), value=ORDER[0], label="Order", scale=1)
                    with gr.Accordion("Rows and columns", open=False):
                        kinds = gr.CheckboxGroup(list(KINDS), value=list(KINDS), label="Show rows")
                        shown = gr.CheckboxGroup(cols, value=headline, label="Columns (headline metrics by default; "
                                                                             "the table scrolls sideways)")
                    gr.Markdown(LEGEND.format(mark=GENERATIVE_MARK) + " · " + CUT_LEGEND.format(cut=CUT_MARK) + ". "
                                + P_LEGEND + ". " +
                                data_license(registry.get(bench)), elem_id=f"license-{bench}",
                                elem_classes="board-legend")
                    table = gr.Dataframe(interactive=False, wrap=False, datatype="markdown", elem_id=f"board-{bench}",
                                         elem_classes="board-table", label=f"{registry.get(bench).title} board",
                                         pinned_columns=2, max_height=640, column_widths=["40px", "280px"])
                    csv = gr.DownloadButton("Download CSV (fractions)", elem_id=f"csv-{bench}", size="sm")
                    inputs = [search, kinds, shown, sort_by, order]
                    for control in inputs:
                        control.change(redraw, [bench_state, *inputs], [table, csv], api_name=False, queue=False)
                    controls += inputs
                    outputs += [table, csv]
            with gr.Tab("Plots", id="plots") as plots_tab:
                gr.Markdown("Each model against chance (dashed) with its 95% interval, and, for multiple-choice "
                            "benchmarks, the positive against each negative type alone (the 8 best models).")
                with gr.Row():
                    p_bench = gr.Dropdown([(registry.get(b).title, b) for b in benchmarks], value=benchmarks[0],
                                          label="Benchmark", elem_id="plot-benchmark")
                    p_col = gr.Dropdown([c.name for c in board.columns(benchmarks[0])],
                                        value=next(c.name for c in board.columns(benchmarks[0]) if c.headline),
                                        label="Column", elem_id="plot-column")
                    p_search = gr.Textbox(label="Search model (Enter)", placeholder="part of a model name")
                p_chance = gr.Plot(label="against chance", elem_id="plot-chance")
                p_types = gr.Plot(label="per negative type", elem_id="plot-types")
                p_bench.input(columns_of, p_bench, p_col, api_name=False).then(
                    draw_plots, [p_bench, p_col, p_search], [p_chance, p_types], api_name=False)
                p_col.input(draw_plots, [p_bench, p_col, p_search], [p_chance, p_types], api_name=False)
                p_search.submit(draw_plots, [p_bench, p_col, p_search], [p_chance, p_types], api_name=False)
            with gr.Tab("Details", id="details") as details_tab:
                gr.Markdown("**Drill-down**: one model's failures on one benchmark part — the video, the positive, and "
                            "the negative that beat it, with its provenance. **Per-item details**: every stored "
                            "submission's per-item scores as Parquet.")
                with gr.Row():
                    d_model = gr.Dropdown([], label="Model", elem_id="drill-model", allow_custom_value=False)
                    d_part = gr.Dropdown([], label="Benchmark / config / split", elem_id="drill-part")
                    d_btn = gr.Button("Show failures", variant="primary", elem_id="drill-btn")
                d_summary = gr.Markdown(elem_id="drill-summary")
                with gr.Row(equal_height=False):
                    with gr.Column(scale=1, min_width=260):
                        d_item = gr.Dropdown([], label="Failure", elem_id="drill-item")
                        d_video = gr.Video(label="Video", interactive=False, height=220, elem_id="drill-video")
                    with gr.Column(scale=3):
                        d_table = gr.Dataframe(interactive=False, wrap=True, elem_id="drill-table",
                                               label="Failures (worst rank first)", max_height=480)
                        d_csv = gr.DownloadButton("Download CSV", elem_id="csv-failures", size="sm", visible=False)
                with gr.Row():
                    d_one = gr.Button("Per-item details of this model (Parquet)", elem_id="details-model")
                    d_all = gr.Button("Per-item details of every stored submission (Parquet)", elem_id="details-all")
                d_file = gr.File(label="Parquet", interactive=False, elem_id="details-file")
                d_model.change(parts_for, d_model, d_part, api_name=False)
                d_btn.click(show_failures, [d_model, d_part], [d_table, d_item, d_summary, d_video, d_csv], api_name=False)
                d_item.select(show_one, [d_model, d_part, d_item], [d_summary, d_video], api_name=False)
                d_one.click(download_details, d_model, d_file, api_name=False)
                d_all.click(lambda: download_details(None), None, d_file, api_name=False)
                outputs.append(d_model)
            with gr.Tab("Submit", id="submit"):
                gr.Markdown(submit_help(sign_in, url), elem_id="submit-help")
                with gr.Row():
                    if sign_in.mode == "oauth":  # a LoginButton is what makes Gradio add its (mock, off a Space) login
                        gr.LoginButton(elem_id="login", scale=0, min_width=260)
                    who = gr.Markdown(elem_id="signed-in")
                upload = gr.File(label=f"Predictions (.parquet, at most {board.upload_limit / 2**20:.0f} MB)",
                                 file_types=[".parquet"], type="filepath", elem_id="upload")
                submit_btn = gr.Button("Submit", variant="primary", elem_id="submit-btn")
                status = gr.Textbox(label="Result", lines=6, interactive=False, elem_id="submit-status")
                demo.load(signed_in, None, who, api_name=False)
                submit_event = submit_btn.click(do_submit, [upload], status, api_name="submit",
                                                concurrency_limit=SUBMIT_CONCURRENCY, concurrency_id="submit")
                many = gr.File(file_count="multiple", type="filepath", visible=False)
                many_meta = gr.Textbox(visible=False)
                many_status = gr.Textbox(visible=False)
                files_event = gr.Button(visible=False).click(do_submit_files, [many, many_meta], many_status,
                                                             api_name="submit_files",
                                                             concurrency_limit=SUBMIT_CONCURRENCY,
                                                             concurrency_id="submit")
            with gr.Tab("History & model card", id="history"):
                model_box = gr.Textbox(label="Model id")
                with gr.Row():
                    hist_btn = gr.Button("Show all versions")
                    card_btn = gr.Button("Export .eval_results YAML")
                hist_out = gr.Code(label="Output", language="yaml")
                hist_btn.click(do_history, model_box, hist_out, api_name="history")
                card_btn.click(do_eval_results, model_box, hist_out, api_name="eval_results")
            with gr.Tab("About", id="about"):
                gr.Markdown(about_markdown(benchmarks, board.upload_limit / 2**20,
                                           {b: sorted({c for k, c, _ in board.item_sets if k == b}) for b in benchmarks}),
                            elem_id="about")
            with gr.Tab("Admin", id="admin"):
                admin_token = gr.Textbox(label="Admin token", type="password")
                target = gr.Textbox(label="Submission id or model id")
                action = gr.Radio(["hide", "delete", "restore"], value="hide", label="Action")
                reason = gr.Textbox(label="Reason")
                mod_btn = gr.Button("Apply")
                mod_out = gr.Textbox(label="Result", interactive=False)
                mod_event = mod_btn.click(do_moderate, [admin_token, target, action, reason], mod_out,
                                          api_name="moderate")
        # the results repo's state for the operator and visitors: restored or being restored, records the restore
        # skipped, what the store holds that the repo lacks (issue 42)
        mirror_footer = gr.Markdown(board.status_line(), elem_id="mirror-status")
        counts_btn = gr.Button("counts", visible=False)
        counts_out = gr.Textbox(visible=False)
        counts_btn.click(do_counts, None, counts_out, api_name="counts")

        # every page load draws from the store as it is now; the timer redraws when it changes. Drawing reads the
        # board's caches, so it runs outside Gradio's queue (queue=False: a direct call on Gradio's thread pool,
        # `launch(max_threads=...)`, which waits and never refuses): the queue's `max_size` counts every queued
        # event of every concurrency id together (gradio/queueing.py, `Queue.push`), so a page load that joined it
        # could be turned away by a burst of submissions (issue 36, N2)
        refresh_in, refresh_out = [token, *controls], [token, *outputs]
        # no loading veil over the tables: the page already shows them (`paint_first`); the refresh redraws in place
        demo.load(refresh, refresh_in, refresh_out, api_name=False, queue=False, show_progress="hidden")
        timer = gr.Timer(refresh_s)
        timer.tick(refresh, refresh_in, refresh_out, api_name=False, show_progress="hidden", queue=False)
        timer.tick(board.status_line, None, mirror_footer, api_name=False, show_progress="hidden", queue=False)
        submit_event.then(refresh, refresh_in, refresh_out, api_name=False, queue=False)
        files_event.then(refresh, refresh_in, refresh_out, api_name=False, queue=False)
        mod_event.then(refresh, refresh_in, refresh_out, api_name=False, queue=False)
        plots_tab.select(draw_plots, [p_bench, p_col, p_search], [p_chance, p_types], api_name=False)
        details_tab.select(parts_for, d_model, d_part, api_name=False)
    try:  # the rows are read before the app serves: its first visitor never races the warm-up for them
        paint_first(board.state())
    except Exception:  # noqa: BLE001
        log.exception("drawing the first Overall table into the page failed")
    return demo


if __name__ == "__main__":
    import sys

    from hardneg.leaderboard.signin import LocalModeRefused

    logging.basicConfig(level=logging.INFO)
    try:
        mode = sign_in_from_env()
    except LocalModeRefused as exc:
        print(f"leaderboard: error: {exc}", file=sys.stderr)
        sys.exit(2)
    board = leaderboard_from_env()
    videos = os.environ.get("HARDNEG_LB_VIDEOS")  # optional: videos named by id, shown in the drill-down
    host = os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0")
    requested = int(os.environ["GRADIO_SERVER_PORT"]) if os.environ.get("GRADIO_SERVER_PORT") else None
    port = choose_port(requested, BOARD_PORT, host, "leaderboard")  # a taken default: a free one, printed
    print(f"leaderboard: listening on port {port}", file=sys.stderr)
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
    create_app(board, videos=videos, sign_in=mode, url=url).queue(default_concurrency_limit=4, max_size=QUEUE_MAX).launch(
        server_name=host, server_port=port, **launch_options(board),
        allowed_paths=[str(Path(videos).resolve())] if videos else None,
    )
