"""Build the posrank Hub dataset repo from the authors' raw release (thin wrapper over `hardneg build posrank`).

    python dataset_scripts/posrank/build.py --raw RAW_DIR --out OUT_DIR [--overwrite] [--strict] [--push video-hardneg/<name>]
    python dataset_scripts/posrank/build.py --sample --out OUT_DIR      # the tiny built-in sample

RAW_DIR may be the authors' Datasets/HardNegatives/ folder as is (VLN-UVO/, VLN-OOPS/, MSR-VTT/,
VATEX/), with the MSR-VTT and VATEX caption sources added: see docs/building.md.
"""

import sys

from hardneg.cli import main

if __name__ == "__main__":
    sys.exit(main(["build", "posrank", *sys.argv[1:]]))
