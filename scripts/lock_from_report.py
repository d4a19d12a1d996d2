"""Write constraints.txt from pip's installation report (`pip install --dry-run --report`; scripts/lock.sh).

One `name==version` line per package pip would install, sorted; the project itself is left out (it is
installed editable from the clone), and a local version label is dropped (`torch==2.13.0` matches the
local CPU wheel `2.13.0+cpu` and a CUDA build of the same release alike, PEP 440). rbo and lmms-eval are added by
hand: scripts/install.sh installs them with --no-deps (rbo's metadata pins numpy<2; lmms-eval's requires torchvision
and av<16), so the resolver never sees them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PROJECT = "video-hardneg"
EXTRA = {"rbo": "0.1.3", "lmms-eval": "0.7.3"}  # installed --no-deps by scripts/install.sh


def main(report: str, out: str) -> None:
    data = json.loads(Path(report).read_text())
    pins = dict(EXTRA)
    for item in data["install"]:
        meta = item["metadata"]
        name = meta["name"].lower().replace("_", "-")
        if name != PROJECT:
            pins[name] = meta["version"].split("+", 1)[0]
    env = data.get("environment", {})
    head = [
        "# The lock of every package version scripts/install.sh installs (quickstart, tests, CI), used as pip -c.",
        "# Made by scripts/lock.sh (pip's resolver in an empty virtual environment); do not edit by hand: rerun it.",
        f"# Resolved with pip {data.get('pip_version', '?')} for Python {env.get('python_version', '?')} on "
        f"{env.get('sys_platform', '?')} {env.get('platform_machine', '?')}.",
    ]
    body = [f"{name}=={version}" for name, version in sorted(pins.items())]
    Path(out).write_text("\n".join(head + body) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
