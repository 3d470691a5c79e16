"""Both profiles side by side: the Markdown table BENCHMARKS.md publishes, from two runs' ``--json`` files.

    .venv/bin/python -m benchmarks.compare latency embedded.json several.json
    .venv/bin/python -m benchmarks.compare concurrency embedded.json several.json

Each row is one measured path with, for each profile, its p50 and p99 and its
p50's ratio to that run's own loopback round trip (and, for latency, to that
run's framework floor): the ratios are what compare across profiles and
machines, the milliseconds only within one run.
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as benchmarks/compare.py
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

import argparse
import json
import math
from pathlib import Path

#: (key in the benchmark's JSON, row label), in the order the table lists them.
LATENCY_ROWS = (
    ("baseline", "loopback WebSocket round trip (floor)"),
    ("ssh_baseline", "… the same through an SSH tunnel (several machines)"),
    ("floor", "framework floor: `group_send` → element in the DOM"),
    ("create_to_overlay", "(a) `elicitation/create` → overlay in the DOM"),
    ("create_to_ws", "… of which: → the overlay's frame reached the page"),
    ("submit_to_read", "(b) Submit click → ACP answer read by the agent"),
    ("send_to_read", "… of which: answer frame sent → ACP answer read"),
    ("read_to_http", "ACP answer read → the page told the outcome"),
)
CONCURRENCY_ROWS = (
    ("baseline", "loopback WebSocket round trip (floor)"),
    ("ssh_baseline", "… the same through an SSH tunnel (several machines)"),
    ("sent_to_read", "answer sent → ACP answer read, all at once"),
    ("sent_to_response", "answer sent → agentctl's response, all at once"),
)
PROFILE_TITLES = {"embedded": "embedded", "several-machines": "several machines"}


def _ms(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return ""
    return f"{value:.3g} ms" if value < 100 else f"{value:.0f} ms"


def _ratio(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return ""
    return f"{value:.2g}×" if value < 10 else f"{value:.0f}×"


def _cells(figures: dict | None, *, with_floor: bool) -> list[str]:
    if not figures:
        return ["", "", "", ""] if with_floor else ["", "", ""]
    cells = [_ms(figures.get("p50")), _ms(figures.get("p99")), _ratio(figures.get("ratio_p50"))]
    if with_floor:
        cells.append(_ratio(figures.get("floor_ratio_p50")))
    return cells


def side_by_side(benchmark: str, runs: list[dict]) -> str:
    """The Markdown table of ``runs`` (each one benchmark's JSON object, e.g. ``{"profile": ..., "baseline": ...}``).

    The loopback row of each run shows 1× and the floor row its own ratio to
    the loopback round trip, so every ratio in a column is to that column's
    run's floors.
    """
    with_floor = benchmark == "latency"
    rows = LATENCY_ROWS if with_floor else CONCURRENCY_ROWS
    per_run = ["p50", "p99", "p50 × loopback", *(["p50 × floor"] if with_floor else [])]
    titles = [PROFILE_TITLES.get(run.get("profile", "embedded"), str(run.get("profile"))) for run in runs]
    header = ["", *[f"{title}: {column}" for title in titles for column in per_run]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for key, label in rows:
        cells = [label]
        for run in runs:
            figures = run.get(key)
            if key == "baseline" and figures:
                figures = {**figures, "ratio_p50": 1.0}
            if with_floor and key == "floor" and figures:
                figures = {**figures, "floor_ratio_p50": 1.0}
            cells += _cells(figures, with_floor=with_floor)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmark", choices=["latency", "concurrency"])
    parser.add_argument("runs", nargs="+", type=Path, help="each run's --json file, in the table's column order")
    args = parser.parse_args(argv)
    runs = [json.loads(path.read_text())[args.benchmark] for path in args.runs]
    print(side_by_side(args.benchmark, runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
