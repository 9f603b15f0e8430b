"""Client saturation (workloads/engine/measure/clientload.py): a run whose driver is held to 0.3 of a core
(a cgroup CPU quota of the test's own) with many virtual users on a tiny table says that the
client limits throughput, in a warning during the run and in the phase's summary; a normal
run does not."""
from __future__ import annotations

import contextlib
import os
import time
import uuid
from pathlib import Path

import pytest

from tests.workloads.agentrun import local_target, run_agent, wait_for_quiet_host
from workloads.engine.measure.clientload import IN_A_ROW, PhaseClient, is_limited, sentence

# judges the host's CPU: alone, not beside other tests
pytestmark = pytest.mark.serial

LIMIT = "The client limits throughput, not the server"


def _warnings(evs):
    return [e["message"] for e in evs if e["kind"] == "log" and e.get("level") == "warning"]


def _measure(evs):
    return next(e for e in evs if e["kind"] == "summary" and e["phase"] == "measure")


@contextlib.contextmanager
def _cpu_quota_group(cores: float):
    """A cgroup of the test's own with a CPU quota (the v1 cpu controller, as on this
    machine, or v2); yields the command prefix that runs a process inside it."""
    v1, v2 = Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup")
    base = v1 if (v1 / "cpu.cfs_quota_us").exists() else v2
    if not os.access(base, os.W_OK) or not ((base / "cpu.cfs_quota_us").exists()
                                            or (base / "cgroup.subtree_control").exists()):
        pytest.skip("no writable cgroup CPU controller here (root on a cgroup host needed)")
    path = base / f"versus-test-{uuid.uuid4().hex[:8]}"
    path.mkdir()
    period = 100_000
    try:
        if base is v1:
            (path / "cpu.cfs_period_us").write_text(str(period))
            (path / "cpu.cfs_quota_us").write_text(str(int(cores * period)))
        else:
            (path / "cpu.max").write_text(f"{int(cores * period)} {period}")
        yield ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(path)]
    finally:
        # the agent and its virtual users have ended; the group must be empty to go
        for _ in range(50):
            try:
                path.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def test_a_driver_held_to_a_fraction_of_a_core_with_many_virtual_users_is_said_to_limit(
        tmp_path, pg_db):
    # A CPU quota caps the driver whatever else the host runs, so the verdict does not depend
    # on where the scheduler puts the server's connections (CPU affinity alone did: on one CI
    # run the connections shared the driver's core and waited as long as its VUs).
    busy = wait_for_quiet_host()
    with _cpu_quota_group(0.3) as prefix:
        evs = run_agent(tmp_path, "point-query", {"table-size": 100, "clients": 16,
                                                  "duration": 12},
                        local_target(pg_db.rsplit("/", 1)[1], "postgres"), prefix=prefix)
    assert evs[-1]["status"] == "ok", evs[-3:]
    said = [m for m in _warnings(evs) if m.startswith(LIMIT)]
    # on failure, each interval's verdict and its inputs say why
    inputs = [(h["driver_cores"], h["cores_allowed"], h.get("vu_wait_pct"),
               h.get("server_wait_pct"), h["limited"])
              for h in (e["client"] for e in evs if e["kind"] == "host")]
    assert len(said) == 1, (busy, _warnings(evs), "(cores, allowed, VU wait %, server wait %, "
                            "limited) per interval:", inputs)
    assert "of the 0.3 cores it may use (cgroup CPU quota: 0.3 cores)" in said[0]
    client = _measure(evs)["client"]
    assert client["sentence"].startswith(said[0])
    assert client["limited_intervals"] >= IN_A_ROW
    hosts = [e for e in evs if e["kind"] == "host"]
    assert all(h["client"]["cores_allowed"] == 0.3 for h in hosts)
    # the quota holds: no interval's driver used much more than 0.3 of a core
    assert max(h["client"]["driver_cores"] for h in hosts) < 0.3 * 1.5, inputs


def test_a_normal_run_is_not_said_to_be_client_bound(tmp_path, pg_db):
    evs = run_agent(tmp_path, "point-query", {"table-size": 2000, "clients": 2, "duration": 6},
                    local_target(pg_db.rsplit("/", 1)[1], "postgres"))
    assert evs[-1]["status"] == "ok", evs[-3:]
    assert not [m for m in _warnings(evs) if m.startswith(LIMIT)]
    client = _measure(evs)["client"]
    assert "sentence" not in client and client["intervals"] >= 4


def test_the_warning_comes_after_three_limited_intervals_in_a_row_and_once():
    busy = {"driver_cores": 0.97, "cores_allowed": 1.0, "allowed_by": "CPU affinity: 1 of 8 "
            "cores", "limited": True}
    calm = {**busy, "driver_cores": 0.2, "limited": False}
    pc = PhaseClient(nvu=32)
    said = [pc.add(i) for i in (busy, busy, calm, busy, busy, busy, busy)]
    assert said[:5] == [None] * 5 and said[6] is None
    assert said[5] == ("The client limits throughput, not the server: the driver used 0.97 of "
                       "the 1 core it may use (CPU affinity: 1 of 8 cores). Give the driver "
                       "more cores or use fewer virtual users.")
    assert pc.summary()["sentence"].endswith("This held in 6 of the phase's 7 one-second "
                                             "intervals (86 %).")
    waiting = {**calm, "vu_wait_pct": 80.0, "server_wait_pct": 10.0, "limited": True,
               "cores_allowed": 2.0, "allowed_by": "CPU affinity: 2 of 8 cores"}
    assert sentence(waiting, 32) == (
        "The client limits throughput, not the server: its 32 virtual users waited 80 % of "
        "the time for a CPU on the 2 cores they may use (CPU affinity: 2 of 8 cores), the "
        "server's connections 10 %. Give the driver more cores or use fewer virtual users.")


def test_waiting_vus_limit_when_they_compete_for_the_drivers_cores_or_use_half_of_them():
    # seen on 2 cores: 2 VUs, each backend woken on its VU's core, the VUs "wait" 60 %
    assert not is_limited(0.78, 2.0, 0.604, 0.011, 2)
    # 16 VUs squeezed onto one core, with the machine busy (the driver gets 0.4 of it) or not
    assert is_limited(0.657, 1.0, 0.819, 0.063, 16)
    assert is_limited(0.367, 1.0, 0.947, 0.098, 16)
    assert not is_limited(0.657, 1.0, 0.819, 0.70, 16)      # the whole host is short of CPU
    assert is_limited(1.2, 2.0, 0.7, 0.05, 2)               # VUs waiting, driver at 60 %
    assert is_limited(1.85, 2.0, None, None, 2)             # driver at 92 % of its cores
