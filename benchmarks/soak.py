"""A soak at steady load: memory and latency over time, first window against last.

    .venv/bin/python -m benchmarks.soak [--seconds 600] [--interval 1.0] [--window 60]

The stack of ``benchmarks.latency`` (Daphne, one agentctl, the scripted agent,
headless chromium on the task page), driven at a steady rate: one full cycle
(elicitation/create -> overlay -> Submit -> ACP answer read) started every
``--interval`` seconds, in one agent session and one turn, for ``--seconds``.
Every ``--sample`` seconds the RSS of the Daphne process, its agentctl and the
agent is read from /proc. At the end: per window, the median RSS and the p50 of
both latencies; "flat" when the last window is within ``--tolerance`` of the
first (RSS: relative growth; latency: p50 ratio, with 5 ms of slack for noise).
"""

from __future__ import annotations

if __package__ in (None, ""):  # run as benchmarks/soak.py
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

import argparse
import json
import statistics
import time
from pathlib import Path

from benchmarks import support
from benchmarks.stack import ElicitationStack


def slope_per_minute(points: list[tuple[float, float]]) -> float:
    if len(points) < 2:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    denominator = sum((x - mx) ** 2 for x in xs) or 1.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / denominator * 60


def soak(stack: ElicitationStack, args: argparse.Namespace, samples: list[dict], cycles: list) -> tuple[float, int]:
    """Run a cycle every ``args.interval`` and sample RSS every ``args.sample`` for ``args.seconds``.

    Fills ``samples`` and ``cycles``; returns when it started (``time.monotonic``) and how many cycles failed.
    """
    start = time.monotonic()
    next_cycle = next_sample = start
    failures = 0
    i = 0
    while (now := time.monotonic()) - start < args.seconds:
        if now >= next_sample:
            rss = stack.process_rss()
            samples.append({"t": now - start, **rss})
            next_sample += args.sample
        if now >= next_cycle:
            try:
                cycle = stack.cycle(i)
                cycle.t_start = time.monotonic() - start  # seconds into the soak
                cycles.append(cycle)
            except Exception as error:  # a stuck cycle is a finding, not a crash of the soak
                failures += 1
                print(f"   cycle {i} failed at {now - start:.0f} s: {error!r}")
                if failures > 5:
                    break
            i += 1
            next_cycle += args.interval
            if next_cycle < time.monotonic():
                next_cycle = time.monotonic()
        time.sleep(max(0.0, min(next_cycle, next_sample) - time.monotonic()))
    return start, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=600, help="length of the soak (default 600)")
    parser.add_argument("--interval", type=float, default=1.0, help="start a cycle every this many seconds (default 1)")
    parser.add_argument("--sample", type=float, default=10, help="read RSS every this many seconds (default 10)")
    parser.add_argument("--window", type=float, default=60, help="first/last window length, seconds (default 60)")
    parser.add_argument("--tolerance", type=float, default=0.10, help="RSS growth / p50 ratio allowed (default 0.10)")
    parser.add_argument("--warmup", type=int, default=5, help="cycles before the clock starts (default 5)")
    parser.add_argument(
        "--patch",
        action="append",
        default=[],
        choices=["loop-safe-layer", "persistent-db", "sqlite-synchronous-normal"],
        help="run the server with a candidate fix patched in (see benchmarks/trace_server.py)",
    )
    parser.add_argument("--json", type=Path, help="write the samples and the verdict here as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    window = min(args.window, args.seconds / 3)

    support.header(f"soak: {args.seconds:.0f} s at one elicitation cycle every {args.interval:g} s")
    if args.patch:
        print(f"   server patched with candidate fix(es): {', '.join(args.patch)} (not the product as committed)")
    samples: list[dict] = []
    cycles: list = []
    with support.workdir(keep=args.keep) as directory, ElicitationStack(directory, patches=tuple(args.patch)) as stack:
        for i in range(args.warmup):
            stack.cycle(-1 - i)
        start, failures = soak(stack, args, samples, cycles)
        samples.append({"t": time.monotonic() - start, **stack.process_rss()})
        baseline = stack.baseline(200)
        duration = time.monotonic() - start

    def window_of(items, key, first: bool):
        if first:
            return [x for x in items if key(x) <= window]
        return [x for x in items if key(x) >= duration - window]

    print(
        f"   {len(cycles)} cycles in {duration:.0f} s ({failures} failed); baseline loopback WS round trip "
        f"p50 {support.percentile(baseline, 50):.2f} ms"
    )
    print(f"{'t (s)':>7} {'server KiB':>11} {'agentctl KiB':>13} {'agent KiB':>10} | cycles  p50 (a) ms  p50 (b) ms")
    for s in samples:
        near = [c for c in cycles if s["t"] - args.sample < c.t_start <= s["t"]]
        a = statistics.median(c.create_to_overlay for c in near) if near else float("nan")
        b = statistics.median(c.submit_to_read for c in near) if near else float("nan")
        print(
            f"{s['t']:>7.0f} {s['server']:>11} {s['agentctl']:>13} {s['agent']:>10} | "
            f"{len(near):>6} {a:>11.1f} {b:>11.1f}"
        )

    verdict = {}
    flat_all = True
    for name in ("server", "agentctl", "agent"):
        first = statistics.median(s[name] for s in window_of(samples, lambda s: s["t"], True))
        last = statistics.median(s[name] for s in window_of(samples, lambda s: s["t"], False))
        growth = (last - first) / first
        per_minute = slope_per_minute([(s["t"], s[name]) for s in samples])
        flat = growth <= args.tolerance
        flat_all &= flat
        verdict[f"rss_{name}"] = {
            "first_kib": first,
            "last_kib": last,
            "growth": growth,
            "kib_per_min": per_minute,
            "flat": flat,
        }
        print(
            f"RSS {name:<9} first {window:.0f} s {first:>8.0f} KiB, last {window:.0f} s {last:>8.0f} KiB: "
            f"{growth * 100:+.1f} % ({per_minute:+.0f} KiB/min) -> {'FLAT' if flat else 'GROWING'}"
        )
    for name, attr in (("(a) create -> overlay", "create_to_overlay"), ("(b) submit -> ACP answer", "submit_to_read")):
        first = [getattr(c, attr) for c in window_of(cycles, lambda c: c.t_start, True)]
        last = [getattr(c, attr) for c in window_of(cycles, lambda c: c.t_start, False)]
        p_first, p_last = support.percentile(first, 50), support.percentile(last, 50)
        flat = p_last <= p_first * (1 + args.tolerance) + 5
        flat_all &= flat
        verdict[attr] = {
            "first_p50": p_first,
            "last_p50": p_last,
            "first_p95": support.percentile(first, 95),
            "last_p95": support.percentile(last, 95),
            "flat": flat,
        }
        print(
            f"{name:<26} p50 first {window:.0f} s {p_first:7.1f} ms (p95 {support.percentile(first, 95):.1f}), "
            f"last {window:.0f} s {p_last:7.1f} ms (p95 {support.percentile(last, 95):.1f}) -> "
            f"{'FLAT' if flat else 'GROWING'}"
        )
    print(f"soak verdict: memory and latency {'FLAT' if flat_all else 'NOT FLAT'} over {duration:.0f} s")
    support.footer()
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "soak": verdict,
                    "samples": samples,
                    "cycles": [c.__dict__ for c in cycles],
                    "duration": duration,
                    "failures": failures,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
