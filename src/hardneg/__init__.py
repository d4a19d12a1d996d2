"""video-hardneg: does a video-text model understand the video, or only the objects in one frame?

The library behind the Hub datasets, the `evaluate` metric modules, the negative
generators, model scoring, the demo Space and the leaderboard.
"""

__version__ = "0.1.0"
