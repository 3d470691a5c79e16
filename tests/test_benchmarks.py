"""The benchmark harness on the several-machines profile: its stack starts and a short run gives figures.

Each benchmark runs as the lead runs it (``python -m benchmarks.NAME --profile
several-machines --json FILE``) on the PostgreSQL, Redis and sshd scripts/test
starts (the same scripts/lib.sh functions scripts/bench uses), and its JSON is
read back: the figures are there, with their ratios to the same-run floors,
the agent ran on the SSH executor, and every answer reached it exactly once.
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def several_machines():
    if not os.environ.get("KANDEV_TEST_POSTGRES_URL"):
        pytest.fail("KANDEV_TEST_POSTGRES_URL is not set: run the suite with scripts/test, which starts its services.")


def run_benchmark(name: str, tmp_path: Path, *options: str) -> dict:
    out = tmp_path / f"{name}.json"
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{name}", "--profile", "several-machines", "--json", str(out), *options],
        cwd=ROOT, capture_output=True, text=True, timeout=110,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return json.loads(out.read_text())[name]


def started_over_ssh(ancestors: list[str]) -> bool:
    return any(name.startswith("sshd") for name in ancestors)


def test_concurrency_on_several_machines_answers_every_pending_once_through_two_ssh_tunnels(
    several_machines, tmp_path
):
    result = run_benchmark("concurrency", tmp_path, "--sessions", "20", "--batches", "2", "--baseline", "20")
    assert result["profile"] == "several-machines"
    assert started_over_ssh(result["agentctl_started_by"]) and result["tunnelled"]
    assert result["exactly_once"] and result["round1_delivered"] == 20
    assert result["round2_outcomes"] == {"ok": 20, "NOT_FOUND": 20}
    assert result["baseline"]["n"] == 20 and result["sent_to_read"]["n"] == 20
    assert math.isfinite(result["sent_to_read"]["ratio_p50"]) and result["sent_to_read"]["ratio_p50"] > 1


def test_latency_on_several_machines_measures_both_paths_against_floors_of_the_same_run(several_machines, tmp_path):
    result = run_benchmark(
        "latency", tmp_path, "--runs", "2", "--warmup", "0", "--baseline-per-run", "2", "--floor-per-run", "1"
    )
    assert result["profile"] == "several-machines"
    # The page is on the other web process than the one holding the agent's stream, and the agent is over SSH.
    assert result["page_on"] != result["stream_held_by"]
    assert started_over_ssh(result["agentctl_started_by"])
    assert result["baseline"]["n"] == 4 and result["floor"]["n"] == 2
    for path in ("create_to_overlay", "submit_to_read"):
        assert result[path]["n"] == 2
        assert result[path]["p50"] > 0 and math.isfinite(result[path]["floor_ratio_p50"])
        assert math.isfinite(result[path]["ratio_p50"])
    assert result["bad_answers"] == [] and result["not_delivered"] == []
