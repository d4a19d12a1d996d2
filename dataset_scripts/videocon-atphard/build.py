"""Build the videocon-atphard Hub dataset repo from the authors' raw release (thin wrapper over `hardneg build videocon-atphard`).

    python dataset_scripts/videocon-atphard/build.py --raw RAW_DIR --out OUT_DIR [--overwrite] [--strict] [--push video-hardneg/<name>]
    python dataset_scripts/videocon-atphard/build.py --sample --out OUT_DIR      # the tiny built-in sample
"""

import sys

from hardneg.cli import main

if __name__ == "__main__":
    sys.exit(main(["build", "videocon-atphard", *sys.argv[1:]]))
