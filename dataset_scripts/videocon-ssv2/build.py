"""Build the videocon-ssv2 Hub dataset repo from the authors' raw release (thin wrapper over `hardneg build videocon-ssv2`).

    python dataset_scripts/videocon-ssv2/build.py --raw RAW_DIR --out OUT_DIR [--overwrite] [--strict] [--push video-hardneg/<name>]
    python dataset_scripts/videocon-ssv2/build.py --sample --out OUT_DIR      # the tiny built-in sample
"""

import sys

from hardneg.cli import main

if __name__ == "__main__":
    sys.exit(main(["build", "videocon-ssv2", *sys.argv[1:]]))
