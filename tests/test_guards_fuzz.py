"""Fuzzing the guards and the entrances outside the board (issue 36): whatever value arrives, each produces a
validated value or a clear refusal (a GuardError / ValueError / StateError naming the field, an `error:` line with
exit code 2), never another exception or a traceback.

Entrances here: every guard of `hardneg.guards`; the model metadata (`clean_model_meta`, the API's JSON text);
the CLI flags `--prompt` (score, run), `--items` (evaluate), `--model-id` / `--model-revision` (import-scores);
a training run's resume state (arbitrary bytes, and a real state with an arbitrary JSON header); a model folder's
`pytorch_model.bin` (arbitrary bytes). The board's entrances are fuzzed in tests/leaderboard/test_fuzz_board.py.

Example counts come from the Hypothesis profile (tests/conftest.py: "ci" by default, "long" by hand with
HYPOTHESIS_PROFILE=long); `budget(n)` scales an expensive test's count with it.
"""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hardneg import guards  # noqa: E402
from hardneg.cli import main  # noqa: E402
from hardneg.leaderboard.model_meta import FIELDS, clean_model_meta, parse_model_meta_json  # noqa: E402


def budget(n: int) -> int:
    """`n` examples under the "ci" profile (100 by default), proportionally more under "long"."""
    return max(1, n * settings.default.max_examples // 100)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=12), c, max_size=4),
                    max_leaves=16)
ANY = JSON | st.binary(max_size=40) | st.tuples(st.integers(), st.text(max_size=5)) | st.integers(min_value=10**30)
#: text as it arrives from a form, a file or a flag: any code point, lone surrogates included
TEXT = st.text(st.characters(), max_size=80) | st.sampled_from(["", " ", "\x00", "a\nb", "x\u202e", "org/my model",
                                                                 "https://h.co/a\n", "\ud800", "9" * 400])
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _refused_or(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except guards.GuardError as exc:
        assert exc.field and exc.fix and len(str(exc)) < 1000
        return exc


@given(value=ANY | TEXT)
def test_fuzz_every_guard_returns_a_bounded_value_or_refuses(value):
    got = _refused_or(guards.text, value, "f")
    if not isinstance(got, guards.GuardError):
        assert isinstance(got, str) and 0 < len(got) <= guards.MAX_TEXT and not _CONTROL.search(got)
    got = _refused_or(guards.url, value, "link")
    if not isinstance(got, guards.GuardError):
        assert re.fullmatch(r"https?://\S+", got) and not _CONTROL.search(got)
    got = _refused_or(guards.model_id, value)
    if not isinstance(got, guards.GuardError):
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+", got)
    got = _refused_or(guards.whole, value, "n", lo=0, hi=10**6)
    if not isinstance(got, guards.GuardError):
        assert type(got) is int and 0 <= got <= 10**6
    got = _refused_or(guards.number, value, "x")
    if not isinstance(got, guards.GuardError):
        assert isinstance(got, float) and got == got and abs(got) != float("inf")
    got = _refused_or(guards.prompt, value)
    if not isinstance(got, guards.GuardError):
        assert got.strip() and len(got) <= guards.MAX_PROMPT
    got = _refused_or(guards.item_list, value, "--items")
    if not isinstance(got, guards.GuardError):
        assert got and all(isinstance(n, str) and n for n in got)
    _refused_or(guards.json_tree, value, "tree")
    _refused_or(guards.json_text, value, "json")


@given(meta=st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), ANY | TEXT, max_size=6) | ANY)
def test_fuzz_model_meta_is_cleaned_or_refused(meta):
    try:
        out = clean_model_meta(meta)
    except ValueError as exc:
        assert "model_meta" in str(exc) and len(str(exc)) < 1000
        return
    assert set(out) == set(FIELDS) and clean_model_meta(out) == out  # what is stored passes again


@given(text=TEXT | st.builds(lambda d: json.dumps(d), st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=5)))
def test_fuzz_the_api_model_meta_json(text):
    try:
        out = parse_model_meta_json(text)
    except ValueError as exc:
        assert len(str(exc)) < 1000
        return
    assert out is None or clean_model_meta(out) == out


def _cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as exc:  # argparse's own refusal (usage + error line)
            rc = exc.code
    return rc, err.getvalue()


@settings(max_examples=budget(40))
@given(flag=st.sampled_from(["score-prompt", "run-prompt", "evaluate-items", "import-model-id",
                             "import-model-revision"]), value=TEXT)
def test_fuzz_cli_flags_give_an_error_line_never_a_traceback(tmp_path_factory, flag, value):
    tmp = tmp_path_factory.mktemp("flags")
    released = tmp / "scores.csv"
    released.write_text("x\n")
    argv = {
        "score-prompt": ["score", "--model", "tiny-vlm", "--dataset", str(tmp / "absent"), "--config", "c",
                         "--out", str(tmp / "p.parquet"), f"--prompt={value}"],
        "run-prompt": ["run", "--model", "constant", "--data", str(tmp / "absent"), "--out", str(tmp / "r"),
                       f"--prompt={value}"],
        "evaluate-items": ["evaluate", str(tmp / "absent.parquet"), f"--items={value}"],
        "import-model-id": ["import-scores", "videocon-ssv2", str(released), "--data", str(tmp),
                            f"--model-id={value}", "--out", str(tmp / "p.parquet")],
        "import-model-revision": ["import-scores", "videocon-ssv2", str(released), "--data", str(tmp),
                                  "--model-id", "org/m", f"--model-revision={value}", "--out", str(tmp / "p.parquet")],
    }[flag]
    rc, err = _cli(argv)
    assert rc == 2, err
    assert "error:" in err and "Traceback" not in err
    assert not (tmp / "p.parquet").exists()


# ------------------------------------------------------------------------------ resume states

torch = pytest.importorskip("torch")
from hardneg.training.state import STATE, StateError, apply_state, load_state, state_bytes  # noqa: E402


def _net():
    net = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    net(torch.ones(1, 3)).sum().backward()
    opt.step()
    return net, opt


def _good_state() -> bytes:
    net, opt = _net()
    return state_bytes(step=3, settings={"a": 1}, settings_key="k", model=net.state_dict(),
                       optimizer=opt.state_dict(), status="running", last_loss=0.5)


def _resume(path) -> None:
    try:
        saved = load_state(path)
    except StateError as exc:
        assert str(path) in str(exc) and len(str(exc)) < 1500
        return
    net, opt = _net()
    try:
        apply_state(saved, net, opt, path)
    except StateError:
        return
    assert all(torch.isfinite(p).all() for p in net.parameters())


@given(data=st.binary(max_size=2000) | st.builds(lambda b, k: _good_state()[:k] + b, st.binary(max_size=64),
                                                  st.integers(0, 600)))
def test_fuzz_resume_state_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("state") / STATE
    path.write_bytes(data)
    _resume(path)


HEADER_KEYS = ["format", "step", "settings", "settings_key", "status", "last_loss", "param_groups",
               "optimizer_params", "optimizer_scalars"]


@given(edits=st.dictionaries(st.sampled_from(HEADER_KEYS), JSON, min_size=1, max_size=3),
       raw=st.none() | st.text(max_size=200))
def test_fuzz_resume_state_header(tmp_path_factory, edits, raw):
    from safetensors import safe_open
    from safetensors.torch import save

    path = tmp_path_factory.mktemp("state") / STATE
    path.write_bytes(_good_state())
    with safe_open(str(path), framework="pt") as fh:
        info, tensors = json.loads(fh.metadata()["hardneg_state"]), {k: fh.get_tensor(k) for k in fh.keys()}
    header = raw if raw is not None else json.dumps({**info, **edits})
    path.write_bytes(save(tensors, metadata={"hardneg_state": header}))
    _resume(path)


# ------------------------------------------------------------------------------ model folders

@pytest.fixture(scope="module")
def clip_folder(tmp_path_factory):
    import shutil

    from hardneg.models.tiny_clip import tiny_clip_path

    out = tmp_path_factory.mktemp("clip") / "m"
    shutil.copytree(tiny_clip_path(), out)
    (out / "model.safetensors").unlink()
    return out


@settings(max_examples=budget(12))
@given(data=st.binary(max_size=3000) | st.builds(lambda b: b"PK\x03\x04" + b, st.binary(max_size=200))
       | st.just(b"X\x00\x00\x00\x01\x80"))  # found by the long profile: a UnicodeDecodeError inside torch.load
def test_fuzz_a_model_folders_weights(clip_folder, data):
    from hardneg.models import load_model
    from hardneg.models.registry import damaged_weight_file

    (clip_folder / "pytorch_model.bin").write_bytes(data)
    assert damaged_weight_file(clip_folder) is not None
    with pytest.raises(ValueError, match="pytorch_model.bin cannot be read"):
        load_model(str(clip_folder))
