"""Issue 36 N8 and N10: flags given on purpose pass the guard of their kind before any work. `--prompt ''` is
refused (it silently used the default prompt), `evaluate --items ''` is refused (it silently scored every item),
and `import-scores --model-id 'org/my model'` is refused (it was accepted): each an `error:` line naming the flag
and the fix, exit code 2, no traceback."""

from __future__ import annotations

import pytest

from hardneg.cli import main


def refused(capsys, argv, *expected):
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    for text in expected:
        assert text in err, err
    assert "Traceback" not in err and len(err) < 1200
    return err


@pytest.mark.parametrize("prompt", ["", "   ", "a\x00b"])
def test_score_and_run_refuse_an_empty_or_control_prompt(tmp_path, capsys, prompt):
    refused(capsys, ["score", "--model", "tiny-vlm", "--dataset", str(tmp_path / "absent"), "--config", "c",
                     "--out", str(tmp_path / "p.parquet"), "--prompt", prompt], "error: --prompt", "leave the flag out")
    refused(capsys, ["run", "--model", "tiny-vlm", "--out", str(tmp_path / "r"), "--prompt", prompt],
            "error: --prompt", "leave the flag out")
    assert not (tmp_path / "r").exists()


def test_a_prompt_reaching_the_protocol_hook_is_guarded_too():
    from hardneg.models.prompting import bind_protocol

    with pytest.raises(ValueError, match="--prompt is empty"):
        bind_protocol(object(), None, None, "")


@pytest.mark.parametrize("items", ["", " ", "\x00"])
def test_evaluate_refuses_an_empty_items(tmp_path, capsys, items):
    refused(capsys, ["evaluate", str(tmp_path / "p.parquet"), "--items", items], "error: --items",
            "leave --items out for every item")


@pytest.mark.parametrize("model_id", ["org/my model", "org/na\nme", "org/a--b", "org", "a/b/c", "org/\x00x"])
def test_import_scores_refuses_a_model_id_that_is_not_a_hub_name(tmp_path, capsys, model_id):
    released = tmp_path / "scores.csv"
    released.write_text("x\n")
    refused(capsys, ["import-scores", "videocon-ssv2", str(released), "--data", str(tmp_path), "--model-id", model_id,
                     "--out", str(tmp_path / "p.parquet")], "error: --model-id", "'<your user or org>/<model name>'")
    assert not (tmp_path / "p.parquet").exists()
