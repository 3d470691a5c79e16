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
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.compare import LATENCY_ROWS, side_by_side

pytestmark = pytest.mark.slow  # started first: see the root conftest.py

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def several_machines():
    if not os.environ.get("KANDEV_TEST_POSTGRES_URL"):
        pytest.fail("KANDEV_TEST_POSTGRES_URL is not set: run the suite with scripts/test, which starts its services.")


def run_benchmark(name: str, tmp_path: Path, *options: str, profile: str = "several-machines") -> dict:
    out = tmp_path / f"{name}.json"
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{name}", "--profile", profile, "--json", str(out), *options],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return json.loads(out.read_text())[name]


def started_over_ssh(ancestors: list[str]) -> bool:
    return any(name.startswith("sshd") for name in ancestors)


def test_concurrency_on_several_machines_answers_every_pending_once_through_two_ssh_tunnels(several_machines, tmp_path):
    result = run_benchmark("concurrency", tmp_path, "--sessions", "20", "--batches", "2", "--baseline", "20")
    assert result["profile"] == "several-machines"
    assert started_over_ssh(result["agentctl_started_by"])
    assert result["tunnelled"]
    assert result["exactly_once"]
    assert result["round1_delivered"] == 20
    assert result["round2_outcomes"] == {"ok": 20, "NOT_FOUND": 20}
    assert result["baseline"]["n"] == 20
    assert result["sent_to_read"]["n"] == 20
    assert result["ssh_baseline"]["n"] == 20
    assert result["ssh_baseline"]["ratio_p50"] > 0
    assert math.isfinite(result["sent_to_read"]["ratio_p50"])
    assert result["sent_to_read"]["ratio_p50"] > 1


def test_latency_on_several_machines_measures_both_paths_against_floors_of_the_same_run(several_machines, tmp_path):
    result = run_benchmark(
        "latency", tmp_path, "--runs", "2", "--warmup", "0", "--baseline-per-run", "2", "--floor-per-run", "1"
    )
    assert result["profile"] == "several-machines"
    # The page is on the other web process than the one holding the agent's stream, and the agent is over SSH.
    assert result["page_on"] != result["stream_held_by"]
    assert started_over_ssh(result["agentctl_started_by"])
    assert result["baseline"]["n"] == 4
    assert result["floor"]["n"] == 2
    assert result["ssh_baseline"]["n"] == 4
    assert result["ssh_baseline"]["ratio_p50"] > 0
    for path in ("create_to_overlay", "submit_to_read"):
        assert result[path]["n"] == 2
        assert result[path]["p50"] > 0
        assert math.isfinite(result[path]["floor_ratio_p50"])
        assert math.isfinite(result[path]["ratio_p50"])
    assert result["bad_answers"] == []
    assert result["not_delivered"] == []


def test_latency_with_more_sockets_open_on_the_task_measures_both_paths_with_every_answer_delivered(tmp_path):
    result = run_benchmark(
        "latency",
        tmp_path,
        "--runs",
        "2",
        "--warmup",
        "0",
        "--extra-sockets",
        "3",
        "--extra-as",
        "sockets",
        profile="embedded",
    )
    assert result["targets"]["extra_sockets"] == 3
    assert result["extra_as"] == "sockets"
    assert result["open_sockets"]["task"] == 4
    for path in ("create_to_overlay", "submit_to_read"):
        assert result[path]["n"] == 2
        assert math.isfinite(result[path]["floor_ratio_p50"])
    assert result["bad_answers"] == []
    assert result["not_delivered"] == []


def test_latency_with_the_real_codex_measures_both_paths_and_codex_apart(tmp_path):
    """``--agent codex``: Codex's request_user_input in place of the scripted agent (scripts/test installs it)."""
    result = run_benchmark(
        "latency",
        tmp_path,
        "--agent",
        "codex",
        "--runs",
        "3",
        "--warmup",
        "1",
        "--floor-per-run",
        "1",
        profile="embedded",
    )
    for path in ("create_to_overlay", "submit_to_read"):
        assert result[path]["n"] == 3
        assert math.isfinite(result[path]["floor_ratio_p50"])
    # What Codex itself took, outside (a) and (b): its call to elicitation/create, the answer to the model's request.
    assert result["agent_create"]["n"] == result["agent_answer"]["n"] == 3
    assert result["bad_answers"] == []
    assert result["not_delivered"] == []


def test_latency_with_sessions_streaming_in_the_background_measures_both_paths_again_against_idle(tmp_path):
    result = run_benchmark(
        "latency",
        tmp_path,
        "--runs",
        "3",
        "--warmup",
        "0",
        "--background-streams",
        "2",
        "--background-rate",
        "20",
        profile="embedded",
    )
    loaded = result["background"]
    assert (loaded["streams"], loaded["rate"]) == (2, 20)
    for path in ("create_to_overlay", "submit_to_read"):
        assert result[path]["n"] == loaded[path]["n"] == 3
        assert math.isfinite(loaded[path]["floor_ratio_p50"])
        # Each loaded figure is compared with the idle one of the same run.
        assert math.isclose(loaded[path]["idle_ratio_p50"], loaded[path]["p50"] / result[path]["p50"])
    within = loaded["create_to_overlay"]["idle_ratio_p50"] <= 2
    assert loaded["targets"]["create_to_overlay_within_idle_ratio"] is within
    # The sessions streamed while the cycles ran (an agent that fell behind catches up: no upper bound).
    assert loaded["chunks_recorded"] > 0
    assert loaded["turns"] >= 2
    assert result["bad_answers"] == loaded["bad_answers"] == []
    assert result["not_delivered"] == loaded["not_delivered"] == []


def figures(p50: float, p99: float, *, baseline: float, floor: float | None = None) -> dict:
    out = {"n": 10, "p50": p50, "p99": p99, "ratio_p50": p50 / baseline}
    if floor is not None:
        out["floor_ratio_p50"] = p50 / floor
    return out


def latency_run(profile: str, baseline: float, floor: float, overlay: float) -> dict:
    several = {"ssh_baseline": figures(baseline * 3, baseline * 6, baseline=baseline)} if profile != "embedded" else {}
    return {
        "profile": profile,
        "baseline": figures(baseline, baseline * 2, baseline=baseline),
        **several,
        "floor": figures(floor, floor * 2, baseline=baseline),
        "create_to_overlay": figures(overlay, overlay * 2, baseline=baseline, floor=floor),
        "submit_to_read": figures(overlay / 4, overlay, baseline=baseline, floor=floor),
    }


def cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def test_side_by_side_gives_each_path_its_ratios_to_the_floors_of_its_own_run():
    embedded, several = latency_run("embedded", 0.5, 4.0, 40.0), latency_run("several-machines", 0.5, 8.0, 60.0)
    header, _, *rows = side_by_side("latency", [embedded, several]).splitlines()
    assert "embedded: p50 × floor" in cells(header)
    assert "several machines: p50 × floor" in cells(header)
    overlay = next(cells(row) for row in rows if row.startswith("| (a)"))
    # embedded: 40 ms, 80 ms, 80× the loopback, 10× its floor; several machines: 60 ms, 120 ms, 120×, 7.5×.
    assert overlay[1:] == ["40 ms", "80 ms", "80×", "10×", "60 ms", "120 ms", "120×", "7.5×"]
    loopback, tunnelled, floor = (
        next(cells(row) for row in rows if row.startswith(f"| {start}"))
        for start in ("loopback", "… the same through an SSH tunnel", "framework floor")
    )
    assert loopback[3] == loopback[7] == "1×"
    assert floor[3:5] == ["8×", "1×"]
    assert floor[7:9] == ["16×", "1×"]
    # Only the several-machines run has an SSH hop: 1.5 ms, 3× its loopback round trip.
    assert tunnelled[1:5] == ["", "", "", ""]
    assert tunnelled[5] == "1.5 ms"
    assert tunnelled[7] == "3×"


@given(runs=st.lists(st.tuples(*(st.floats(min_value=0.01, max_value=5000) for _ in range(3))), min_size=1, max_size=3))
def test_side_by_side_has_one_row_per_path_and_one_cell_per_column(runs):
    table = side_by_side("latency", [latency_run("several-machines", *run) for run in runs])
    lines = table.splitlines()
    assert len(lines) == 2 + len(LATENCY_ROWS)
    assert len({line.count("|") for line in lines}) == 1
    assert lines[0].count("|") == 2 + 4 * len(runs)


def test_streaming_measures_each_configuration_with_every_chunk_recorded_and_shown_once(tmp_path):
    out = tmp_path / "streaming.json"
    options = ["--agents", "1,2", "--chunks", "20", "--rate", "50", "--long-kb", "8", "--json", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.streaming", *options], cwd=ROOT, capture_output=True, text=True, timeout=110
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    *short, long = json.loads(out.read_text())["streaming"]["runs"]
    runs = {(run["agents"], run["pages"]): run for run in short}
    assert list(runs) == [(1, 0), (1, 1), (2, 0), (2, 1)]
    assert (long["agents"], long["pages"]) == (1, 1)
    assert long["message_kb"] >= 7
    assert runs[(1, 1)]["message_kb"] < 1
    for run in [*short, long]:
        assert run["every_chunk_once_in_order"]
        assert run["chunks"] == 20 * run["agents"]
        assert run["cpu_ms_per_chunk"] > 0
        assert run["recorded_lag"]["n"] == run["agents"]
    watched = runs[(2, 1)]
    assert watched["page_chunks"] == 20
    assert watched["write_to_page"]["n"] == 20
    assert math.isfinite(watched["write_to_page"]["ratio_p50"])
