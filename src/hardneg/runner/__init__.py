"""Shared batch runner: map a batch function over an input, locally or on Ray, resumably.

See `run_map` for the batch-function contract, `read_output` for the result, and
`add_backend_arguments` / `backend_kwargs` for the command-line options. Importing this
package never imports Ray; only `backend="ray"` does.
"""

from hardneg.runner.cli import add_backend_arguments, backend_kwargs
from hardneg.runner.core import BACKENDS, run_map
from hardneg.runner.inputs import load_input
from hardneg.runner.seeds import row_seed
from hardneg.runner.shards import NO_OUTPUT_REASON, SKIP_REASON_COLUMN, SKIPPED_COLUMN, ShardError, read_output
from hardneg.runner.summary import RunSummary

__all__ = [
    "BACKENDS",
    "NO_OUTPUT_REASON",
    "SKIPPED_COLUMN",
    "SKIP_REASON_COLUMN",
    "RunSummary",
    "ShardError",
    "add_backend_arguments",
    "backend_kwargs",
    "load_input",
    "read_output",
    "row_seed",
    "run_map",
]
