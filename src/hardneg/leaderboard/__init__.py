"""The leaderboard: validated submissions, scores recomputed with the ranking core, intervals, nothing lost.

```python
from hardneg.leaderboard import Leaderboard
board = Leaderboard("lb-data", benchmarks_dir="built")      # folders written by `hardneg build`
outcome = board.submit(open("preds.parquet", "rb").read(), submitter="alice")
print(outcome.message)
board.table("feint6k")                                        # pandas DataFrame, intervals and ties marked
```
"""

from hardneg.leaderboard.items import ItemSet, dataset_revision, load_benchmarks, load_item_sets
from hardneg.leaderboard.service import ADMIN_TOKEN_ENV, Leaderboard, SubmitOutcome
from hardneg.leaderboard.store import Store
from hardneg.leaderboard.validate import SubmissionError, validate_submission

__all__ = [
    "ADMIN_TOKEN_ENV",
    "ItemSet",
    "Leaderboard",
    "Store",
    "SubmissionError",
    "SubmitOutcome",
    "dataset_revision",
    "load_benchmarks",
    "load_item_sets",
    "validate_submission",
]
