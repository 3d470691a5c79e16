"""Latency of the inbox: ``elicitation/create`` -> the question's item in an open inbox's DOM.

    .venv/bin/python -m benchmarks.inbox [--runs 200] [--warmup 5] [--json out.json]

The same stack as ``benchmarks.latency`` (server, bench agent, the task page
answering each question), with the operator's inbox open in a second window.
Each run's time is from the agent writing ``elicitation/create`` (its clock)
to the item entering the inbox's DOM (the inbox page's clock, converted with
a calibration taken just before). The loopback WebSocket round trip, measured
in the quiet after every run, is the floor the figures are given against.
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as benchmarks/inbox.py
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

import json
import time
from pathlib import Path

from benchmarks import support
from benchmarks.stack import ElicitationStack, clock_offset

TARGET_INBOX_P50 = 100.0


def main(argv: list[str] | None = None) -> int:
    parser = support.cycle_parser(__doc__)
    parser.add_argument("--floor-per-run", type=int, default=3, help="loopback round trips after each cycle")
    args = parser.parse_args(argv)

    support.header("inbox: elicitation/create -> the item in an open inbox")
    with support.workdir(keep=args.keep) as directory, ElicitationStack(directory) as stack:
        inbox = stack.open_inbox()
        latencies, floor, missing = [], [], []
        deadline = time.monotonic() + args.max_seconds
        for i in range(-args.warmup, args.runs):
            if time.monotonic() > deadline:
                print(f"   stopped after {i} runs: --max-seconds {args.max_seconds} reached")
                break
            offset, _uncertainty = clock_offset(inbox)
            cycle = stack.cycle(i)
            arrived = inbox.evaluate("(id) => window.__inboxArrived[id]", cycle.pending_id)
            time.sleep(args.gap)
            if i < 0:
                continue
            if arrived is None:
                missing.append(i)
                continue
            latencies.append(arrived - offset - cycle.t_written * 1000)
            floor += stack.baseline(args.floor_per_run)
        baseline = support.Summary("loopback WebSocket round trip (baseline)", floor)
        latency = support.Summary("elicitation/create -> item in the inbox", latencies)
        print(baseline.line())
        print(latency.line(baseline))
        met = latency.p50 <= TARGET_INBOX_P50
        print(f"target p50 <= {TARGET_INBOX_P50:.0f} ms: {'MET' if met else 'MISSED'} ({latency.p50:.1f} ms)")
        print(f"items: {len(latencies)} measured, {len(missing)} never arrived")
    support.footer()
    if args.json:
        result = {
            "baseline": baseline.as_dict(),
            "create_to_inbox": latency.as_dict(baseline),
            "target_p50_ms": TARGET_INBOX_P50,
            "met": met,
            "missing": missing,
        }
        args.json.write_text(json.dumps({"inbox": result}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
