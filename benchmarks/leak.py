"""Where the server's memory goes per answered question: tracemalloc inside Daphne.

    .venv/bin/python -m benchmarks.leak [--warmup 30] [--cycles 150] [--runs 2] [--top 12] [--rss-only] [--patch NAME]

The stack of ``benchmarks.latency`` (Daphne under ``benchmarks.trace_server``,
one agentctl, the scripted agent, headless chromium on the task page), cycles
run back to back instead of once a second. A tracemalloc snapshot after the
warm-up, then after each of ``--runs`` runs of ``--cycles`` cycles: a leak
grows by about the same in every run, a cache that fills up in the first only.
Prints, per run, the traced and RSS growth per cycle and the allocation sites
(by traceback) that grew most. Run 1 also pays for tracemalloc's own tables
(tracing starts at the first snapshot), so its RSS figure is not the app's.
``--rss-only`` leaves tracemalloc off and reads only the RSS, for growth that
is not Python objects (allocator fragmentation, SQLite, thread stacks);
``--patch`` runs the server with a candidate change from ``benchmarks.trace_server``
to see whether that growth moves with it.
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as benchmarks/leak.py
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

import argparse
import os
import pickle
import signal
import time
import tracemalloc
from pathlib import Path

from benchmarks import support
from benchmarks.stack import ElicitationStack
from benchmarks.trace_server import PATCHES

#: Allocations of the measurement itself.
IGNORED = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen importlib._bootstrap*>")]


def snapshot(stack: ElicitationStack, number: int) -> tracemalloc.Snapshot:
    """Ask the server for snapshot ``number`` and read it once it is written whole."""
    path = stack.directory / f"snapshot-{number}.pickle"
    os.kill(stack.server.pid, signal.SIGUSR1)
    deadline = time.monotonic() + 120
    while True:
        try:
            return tracemalloc.Snapshot.load(path).filter_traces(IGNORED)
        except (FileNotFoundError, EOFError, pickle.UnpicklingError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def report(label: str, before, after, cycles: int, rss_kib: int, top: int) -> None:
    print(f"== {label}: {cycles} cycles, server RSS {rss_kib:+d} KiB ({rss_kib / cycles:+.2f} KiB per cycle)")
    if before is None:
        return
    stats = after.compare_to(before, "traceback")
    traced = sum(stat.size_diff for stat in stats)
    print(f"   traced Python memory {traced / 1024:+.0f} KiB ({traced / cycles / 1024:+.2f} KiB per cycle)")
    for stat in sorted(stats, key=lambda s: s.size_diff, reverse=True)[:top]:
        print(
            f"   {stat.size_diff / cycles:+8.0f} B/cycle  {stat.count_diff / cycles:+6.2f} blocks/cycle  "
            f"(now {stat.size / 1024:.0f} KiB)"
        )
        for line in stat.traceback.format(limit=6, most_recent_first=True):
            print(f"        {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warmup", type=int, default=30, help="cycles before the first snapshot (default 30)")
    parser.add_argument("--cycles", type=int, default=150, help="cycles between snapshots (default 150)")
    parser.add_argument("--runs", type=int, default=2, help="runs of --cycles after the warm-up (default 2)")
    parser.add_argument("--top", type=int, default=12, help="allocation sites to show per run (default 12)")
    parser.add_argument("--rss-only", action="store_true", help="no tracemalloc: RSS growth per run only")
    parser.add_argument(
        "--patch",
        action="append",
        default=[],
        choices=sorted(PATCHES),
        help="run the server with a candidate change patched in (see benchmarks/trace_server.py)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (and the snapshots)")
    args = parser.parse_args(argv)

    traced = not args.rss_only
    support.header(
        f"leak: the server over {args.runs} x {args.cycles} answered questions"
        f"{', tracemalloc on' if traced else ', RSS only'}"
    )
    if args.patch:
        print(f"   server patched with: {', '.join(args.patch)} (not the product as committed)")
    with (
        support.workdir(keep=args.keep) as directory,
        ElicitationStack(directory, tracemalloc=traced, patches=tuple(args.patch)) as stack,
    ):
        for i in range(args.warmup):
            stack.cycle(-1 - i)
        snapshots, rss = [snapshot(stack, 1) if traced else None], [stack.process_rss()["server"]]
        for run in range(1, args.runs + 1):
            for i in range(args.cycles):
                stack.cycle(i)
            snapshots.append(snapshot(stack, run + 1) if traced else None)
            rss.append(stack.process_rss()["server"])
        for run in range(1, args.runs + 1):
            report(f"run {run}", snapshots[run - 1], snapshots[run], args.cycles, rss[run] - rss[run - 1], args.top)
    support.footer()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
