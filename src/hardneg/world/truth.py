"""The truth checker: is a caption true of a scene, false, or not a caption of the world at all?

A caption "NP1 VP1 REL NP2, then it VP2" is true of a scene when some object x matches NP1 (size
and colour as in the first frame, and shape), some other object y matches NP2, x performs exactly
VP1 and then VP2 (action, manner, direction: one event per half of the video, in that order),
and REL holds between x and y in the scene's positions (`hardneg.world.motion.relations`,
recomputed from the trajectories, never taken from what the scene was drawn for). Only the subject
acts; the other object stays still, so it performs no event.
"""

from __future__ import annotations

from dataclasses import dataclass

from hardneg.world.grammar import Caption, Ungrammatical, parse

TRUE, FALSE, UNGRAMMATICAL = "true", "false", "ungrammatical"


@dataclass(frozen=True)
class Verdict:
    value: str  # "true" | "false" | "ungrammatical"
    reason: str  # the first fact that fails, or why the text is not a caption

    def __str__(self) -> str:
        return self.value


def _events_of(scene, i: int) -> tuple:
    return tuple(scene.events) if i == 0 else ()


def judge(scene, caption: str | Caption) -> Verdict:
    """The verdict on `caption` (text, or parsed facts) for `scene`, with the reason."""
    from hardneg.world.motion import relations

    if isinstance(caption, Caption):
        facts = caption
    else:
        try:
            facts = parse(caption)
        except Ungrammatical as exc:
            return Verdict(UNGRAMMATICAL, str(exc))
    subjects = [i for i, o in enumerate(scene.objects) if o.phrase == facts.a]
    if not subjects:
        return Verdict(FALSE, f"no {facts.a.size} {facts.a.colour} {facts.a.shape} in the scene")
    others = [j for j, o in enumerate(scene.objects) if o.phrase == facts.b]
    reason = f"no {facts.b.size} {facts.b.colour} {facts.b.shape} in the scene"
    for i in subjects:
        for j in others:
            if j == i:
                reason = "the two noun phrases name the same object"
                continue
            if _events_of(scene, i) != (facts.e1, facts.e2):
                reason = "the subject does not do these two things in this order"
                continue
            if (i, j) != (0, 1) or facts.relation not in relations(scene):
                reason = f"the subject is not {facts.relation} the other object"
                continue
            return Verdict(TRUE, "")
    return Verdict(FALSE, reason)


def check(scene, caption: str | Caption) -> str:
    """"true", "false" or "ungrammatical": `caption` judged against the world state `scene`."""
    return judge(scene, caption).value
