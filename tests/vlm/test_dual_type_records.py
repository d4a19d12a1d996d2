"""A dual-encoder type is one record (`hardneg.models.dual_types.DualType`); the tables `dual:` reads are views of
it, and the two tables that stay beside it (the tiny builders' kinds, the video-native encoder classes) name the
same types."""

from __future__ import annotations

from hardneg.models import dual_types
from hardneg.models.dual_video import VIDEO_ENCODERS
from hardneg.models.tiny_encoders import KINDS


def test_the_dual_tables_are_views_of_the_records():
    names = [t.name for t in dual_types.TYPES]
    assert len(set(names)) == len(names) and list(dual_types.ENCODERS) == names
    for t in dual_types.TYPES:
        assert dual_types.ENCODERS[t.name] == (t.path, t.frames, t.score)
        assert (t.name in dual_types.VIDEO_NATIVE_TYPES) == t.video_native != (t.name in dual_types.FRAME_MEAN_TYPES)
        assert (t.name in dual_types.MAX_LENGTH_PADDING) == t.max_length_padding
        assert t.path.startswith("video-native" if t.video_native else "frame-mean")


def test_every_dual_type_has_a_tiny_builder_and_every_video_native_one_an_encoder():
    assert set(KINDS) == {t.name for t in dual_types.TYPES}
    assert set(VIDEO_ENCODERS) == set(dual_types.VIDEO_NATIVE_TYPES)
