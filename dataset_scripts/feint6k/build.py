"""Build the feint6k Hub dataset repo from the authors' raw release (thin wrapper over `hardneg build feint6k`).

    python dataset_scripts/feint6k/build.py --raw RAW_DIR --out OUT_DIR [--overwrite] [--strict] [--push video-hardneg/<name>]
    python dataset_scripts/feint6k/build.py --sample --out OUT_DIR      # the tiny built-in sample
"""

import sys

from hardneg.cli import main

if __name__ == "__main__":
    sys.exit(main(["build", "feint6k", *sys.argv[1:]]))
