"""The words of the world and what each one means in pixels: one table per slot of the grammar.

Every value of a slot excludes every other value of the same slot (a square is no circle, a
scene's one relation rules out the others), so that a single-slot change of a true caption is
false by construction; `hardneg.world.truth` checks it anyway. Sizes, speeds and amplitudes are
in units of `S` = the shorter side of the frame, so the same scene renders at any resolution.
"""

from __future__ import annotations

#: shapes (nouns); each is drawn inside a circle of the object's radius (`hardneg.world.draw`)
SHAPES = ("square", "circle", "triangle", "diamond", "star", "cross", "heart", "ring", "hexagon", "crescent")

#: colours (adjectives) -> RGB; the colour a caption names is the object's colour in the first frame
COLOURS = {
    "red": (220, 40, 40), "orange": (245, 140, 20), "yellow": (240, 225, 40), "green": (40, 180, 60),
    "cyan": (40, 220, 230), "blue": (50, 80, 235), "purple": (150, 60, 200), "pink": (250, 140, 200),
    "white": (245, 245, 245), "brown": (140, 85, 40), "grey": (140, 140, 140),
}

#: sizes (adjectives) -> radius in units of S; the size a caption names is the size in the first frame
SIZES = {"small": 0.1, "medium": 0.14, "large": 0.18}

#: actions (verbs). Only `moves` takes a direction; the others happen in place.
ACTIONS = ("moves", "rotates", "bounces", "grows", "shrinks", "blinks", "shakes", "pulses", "fades", "wobbles")
DIRECTIONAL = frozenset({"moves"})

#: manners (adverbs): how fast an action goes
MANNERS = ("slowly", "quickly")

#: directions (adverbs of direction, after the manner: "moves slowly left"), as (dx, dy) with y down
DIRECTIONS = {"left": (-1.0, 0.0), "right": (1.0, 0.0), "up": (0.0, -1.0), "down": (0.0, 1.0)}

#: spatial relations of the subject to the second object (prepositions); "in front of" is one unit
RELATIONS = ("above", "below", "beside", "in front of", "behind")

#: antonyms the grammar has: a negative that changes one of these words uses its antonym first
ANTONYMS = {
    "small": "large", "large": "small", "slowly": "quickly", "quickly": "slowly", "left": "right",
    "right": "left", "up": "down", "down": "up", "above": "below", "below": "above", "grows": "shrinks",
    "shrinks": "grows", "in front of": "behind", "behind": "in front of",
}

#: part of speech of each slot kind (PoSRank's five)
SLOT_POS = {"size": "adj", "colour": "adj", "shape": "noun", "verb": "verb", "manner": "adv", "direction": "adv",
            "relation": "prep"}

#: the words each slot kind may hold
SLOT_WORDS = {"size": tuple(SIZES), "colour": tuple(COLOURS), "shape": SHAPES, "verb": ACTIONS, "manner": MANNERS,
              "direction": tuple(DIRECTIONS), "relation": RELATIONS}

# ----------------------------------------------------------------------------- how actions look

#: per event, by manner: distance a move covers (units of S)
MOVE_DISTANCE = {"slowly": 0.1, "quickly": 0.28}
#: per event, by manner: rotation angle (degrees)
ROTATE_DEGREES = {"slowly": 60.0, "quickly": 200.0}
#: per event, by manner: scale factor reached by `grows` (its inverse for `shrinks`)
GROW_FACTOR = {"slowly": 1.2, "quickly": 1.5}
#: per event, by manner: share of the colour lost by `fades`
FADE_SHARE = {"slowly": 0.35, "quickly": 0.7}
#: per event, by manner: cycles of bounces, blinks and pulses
CYCLES = {"slowly": 1, "quickly": 2}
#: per event, by manner: cycles of the swings (shakes, wobbles). Not 2: with 8 of 16 frames sampled (4 per
#: event, at a quarter of each event apart) two full swings would be sampled at their zeros and vanish
SWING_CYCLES = {"slowly": 1, "quickly": 2.5}
BOUNCE_HEIGHT = 0.12  # units of S
SHAKE_AMPLITUDE = 0.06  # units of S
PULSE_AMPLITUDE = 0.3  # extra scale at the top of a pulse
WOBBLE_DEGREES = 30.0

#: background colour of every frame
BACKGROUND = (24, 28, 36)
