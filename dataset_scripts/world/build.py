"""Build the world Hub dataset repo from a generated world (thin wrapper over `hardneg build world`).

    hardneg world generate RAW_DIR --train 1000 --test 200 --seed 0       # the raw release: scenes + videos
    python dataset_scripts/world/build.py --raw RAW_DIR --out OUT_DIR [--overwrite] [--push video-hardneg/world]
    python dataset_scripts/world/build.py --sample --out OUT_DIR          # the tiny built-in sample
"""

import sys

from hardneg.cli import main

if __name__ == "__main__":
    sys.exit(main(["build", "world", *sys.argv[1:]]))
