"""VideoLLM keeps its documented keywords (docs/models.md: `VideoLLM(..., judge=f)`) while taking at most 10
parameters (issue 51): path, seconds_per_frame and judge travel as checked keywords."""
import pytest

from hardneg.models.vlm.model import VideoLLM
from hardneg.models.vlm.tiny import tiny_vlm_path


def test_judge_path_and_spacing_are_taken_and_a_misspelt_keyword_is_refused():
    def judge(question, answer, captions):
        return 0

    m = VideoLLM(str(tiny_vlm_path("qwen2-vl")), device="cpu", judge=judge, path="generic", seconds_per_frame=2.0)
    assert m.judge is judge and m.path_choice == ("generic", "asked for (path=...)")
    with pytest.raises(TypeError, match="judges"):
        VideoLLM(str(tiny_vlm_path("qwen2-vl")), device="cpu", judges=judge)
