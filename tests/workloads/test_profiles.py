"""Profiles: the safe renderer, the shipped profiles, malformed ones; plans and their state."""
import pytest

from app.analysis.settings_diff import SettingsReport, diff_settings, pg_value
from app.model.plan import PlanError, PlanState, parse_plan
from app.model.profile import Profile, ProfileError
from app.store import profiles as store
from workloads import profiles as r
from workloads.engine.servers.managed import server_errors

CTX = {"ram_mb": 16000, "ram_gb": 15, "cores": 8, "clients": 16}


def test_expressions_render_host_relative_values():
    text = ("shared_buffers = {{ ram_mb * 0.25 | int }}MB\n"
            "max_connections = {{ max(100, clients * 2 + 20) }}\n"
            "workers = {{ cores // 2 }}  # {{ -cores + 10 }}\n"
            "plain = 1\n")
    assert r.render(text, CTX) == ("shared_buffers = 4000MB\nmax_connections = 100\n"
                                   "workers = 4  # 2\nplain = 1\n")
    assert r.render("x = {{ ram_mb / 3 | round }}", CTX) == "x = 5333"
    assert r.render("x = {{ ceil(clients / 3) }}", CTX) == "x = 6"
    assert r.render("x = {{ 0.9 }}", CTX) == "x = 0.9"


@pytest.mark.parametrize("expr, says", [
    ("__import__('os').system('touch /tmp/pwned')", "only min, max"),
    ("().__class__", "not allowed"),
    ("ram_mb.real", "not allowed"),
    ("'abc'", "is not a number"),
    ("2 ** 100000", "operator Pow is not allowed"),
    ("memory * 2", "unknown name 'memory'"),
    ("ram_mb | upper", "after '|' comes a filter"),
    ("ram_mb *", "is not a valid expression"),
    ("ram_mb / 0", "division by zero"),
    ("ram_mb * 1e300", "too large"),
    ("[x for x in ()]", "not allowed"),
    ("lambda: 1", "not allowed"),
])
def test_anything_but_arithmetic_is_refused_with_the_line(expr, says):
    with pytest.raises(r.ProfileError) as e:
        r.render(f"a = 1\nb = {{{{ {expr} }}}}\n", CTX)
    assert "line 2" in str(e.value) and says in str(e.value)


def test_unclosed_expression_and_missing_value_are_sentences():
    with pytest.raises(r.ProfileError, match="line 1: an expression is not closed"):
        r.render("x = {{ ram_mb ", CTX)
    with pytest.raises(r.ProfileError, match="'clients' is not known for this run"):
        r.render("x = {{ clients }}", {"ram_mb": 1, "cores": 1})


def test_host_context_reads_this_machine():
    ctx = r.host_context(4)
    assert ctx["ram_mb"] > 100 and ctx["cores"] >= 1 and ctx["clients"] == 4


def test_every_shipped_profile_loads_and_renders_for_this_host():
    profs = store.list_profiles()
    ids = {p.id for p in profs}
    for eng in ("postgres", "mariadb", "mysql"):
        for name in ("defaults", "bench", "defaults-nofsync", "bench-nofsync"):
            assert f"{eng}/{name}" in ids
    assert "postgres/pg18-bench-iosync" in ids
    assert not store.broken_profiles()
    for p in profs:
        text = r.render(p.config, r.host_context(8))
        assert "{{" not in text
        if p.engine != "postgres":
            assert r.cnf_options(text)
        assert p.durable is not None and p.description
    nofsync = r.pg_settings(r.render(store.load_profile("postgres/bench-nofsync").config, CTX))
    assert nofsync["fsync"] == "off" and nofsync["synchronous_commit"] == "off"
    assert nofsync["shared_buffers"] == "4000MB"
    maria = dict(r.cnf_options(r.render(store.load_profile("bench", "mariadb").config, CTX)))
    assert maria["innodb_buffer_pool_size"] == "12000M"
    assert dict(r.cnf_options(store.load_profile("mariadb/bench-nofsync").config))[
        "innodb_flush_log_at_trx_commit"] == "2"


def test_versions_a_profile_applies_to():
    iosync = store.load_profile("postgres/pg18-bench-iosync")
    assert iosync.applies_to("18.6") and not iosync.applies_to("15.20")
    assert iosync.applies_to("PostgreSQL 18.1 on x86_64")
    p = Profile("x", "mariadb", "", versions=">=10.6, <11")
    assert p.applies_to("10.11.19") and p.applies_to("10.6") and not p.applies_to("11.4.2")
    assert not p.applies_to("10.5.27")
    with pytest.raises(ProfileError, match="not a version constraint"):
        Profile.from_dict({"name": "x", "engine": "mysql", "config": "", "versions": "new"})


@pytest.mark.parametrize("text, says", [
    ("name = 'x'\nengine = 'postgres'\nconfig = '''\n", "is not valid TOML"),
    ("name = 'x'\nconfig = ''", "the key 'engine' is missing"),
    ("name = 'x'\nengine = 'oracle'\nconfig = ''", "engine must be one of"),
    ("name = 'x'\nengine = 'postgres'\nconfig = 'a = {{ ram * 2 }}'", "unknown name 'ram'"),
    ("name = 'x'\nengine = 'postgres'\nconfig = ''\ncolor = 1", "unknown key(s) color"),
    ("name = 'a b'\nengine = 'postgres'\nconfig = ''", "must be letters, digits"),
    ("name = 'x'\nengine = 'mariadb'\nconfig = '!includedir /etc/mysql'",
     "a managed server reads no other option files"),
])
def test_a_malformed_profile_is_a_clear_sentence(tmp_path, text, says):
    f = tmp_path / "bad.toml"
    f.write_text(text)
    with pytest.raises(ProfileError) as e:
        store.read_profile(f)
    assert str(f) in str(e.value) and says in str(e.value)


def test_save_as_and_user_profiles_win(versus_home):
    p = store.load_profile("postgres/bench")
    p.name, p.description = "mine", "my copy"
    path = store.save_profile(p)
    assert store.load_profile("mine", "postgres").description == "my copy"
    assert path.parent.name == "postgres"
    with pytest.raises(ProfileError, match="no postgres profile named 'nope'"):
        store.load_profile("nope", "postgres")


PLAN = """
name = "m"
workload = "point-query"
pause = 2
profiles = ["defaults", "bench"]
[params]
duration = 10
[matrix]
clients = [1, 4]
[[targets]]
name = "pg15"
managed = "/usr/lib/postgresql/15/bin"
[[targets]]
name = "maria"
managed = "/usr"
"""


def test_a_plan_expands_targets_profiles_and_values_in_order():
    plan = parse_plan(PLAN)
    runs = plan.expand()
    assert [r.label for r in runs] == [
        "pg15 / defaults / clients=1", "pg15 / defaults / clients=4",
        "pg15 / bench / clients=1", "pg15 / bench / clients=4",
        "maria / defaults / clients=1", "maria / defaults / clients=4",
        "maria / bench / clients=1", "maria / bench / clients=4"]
    assert runs[3].params == {"duration": 10, "clients": 4}
    again = parse_plan(__import__("tomli_w").dumps(plan.to_dict()))
    assert [r.label for r in again.expand()] == [r.label for r in runs]
    assert not again.perf
    assert parse_plan(__import__("tomli_w").dumps({**plan.to_dict(), "perf": True})).perf


@pytest.mark.parametrize("text, says", [
    ("workload = 'point-query'", "at least one [[targets]]"),
    ("[[targets]]\nname='a'\nmanaged='/x'", "say which workload"),
    ("workload='w'\n[[targets]]\nname='a'", "exactly one of managed"),
    ("workload='w'\n[matrix]\nclients=3\n[[targets]]\nname='a'\nmanaged='/x'",
     "matrix.clients must be a non-empty list"),
    ("workload='w'\n[[targets]]\nname='a'\nmanaged='/x'\n[[runs]]\ntarget='b'",
     "no target named 'b'"),
    ("workload='w'\npause=-1\n[[targets]]\nname='a'\nmanaged='/x'", "pause is a number"),
    ("workload='w'\nperf='yes'\n[[targets]]\nname='a'\nmanaged='/x'", "perf is true or false"),
])
def test_a_bad_plan_is_a_sentence(text, says):
    with pytest.raises(PlanError, match=None) as e:
        parse_plan(text, "p.toml")
    assert says in str(e.value)


def test_estimated_finish_uses_measured_overhead():
    st = PlanState.from_json({
        "plan_id": "p", "state": "running", "pause_s": 5, "now": 1000.0,
        "order": ["a", "b", "c"],
        "runs": {"a": {"state": "done", "planned_s": 60, "started": 800, "ended": 870},
                 "b": {"state": "running", "planned_s": 60, "started": 990},
                 "c": {"state": "waiting", "planned_s": 60}}})
    # overhead 10 s: b ends at 990+60+10 = 1060, c takes 5 + 60 + 10
    assert st.estimated_finish() == pytest.approx(1060 + 75)
    assert st.counts()["waiting"] == 1


def test_settings_diff_and_pg_units():
    assert pg_value("771328", "8kB") == "6026MB"
    assert pg_value("900", "s") == "900s"
    assert pg_value("-1", "kB") == "-1"
    a = SettingsReport("pg_settings", {"port": "1", "work_mem": "4MB", "fsync": "on"})
    b = SettingsReport("pg_settings", {"port": "2", "work_mem": "16MB", "fsync": "on"})
    assert [d.name for d in diff_settings({"a": a, "b": b})] == ["work_mem"]
    assert [d.name for d in diff_settings({"a": a, "b": b}, include_instance=True)] == \
        ["port", "work_mem"]


def test_server_errors_are_picked_from_a_log_tail():
    log = ("2026-11-21 11:51:49.896 GMT [4242] LOG:  unrecognized configuration parameter "
           "\"shared_bufers\" in file \"/x/versus-profile.conf\" line 1\n"
           "2026-11-21 11:51:56 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'a=1'\n"
           "2026-11-21 11:51:56 0 [ERROR] Aborting\n")
    said = server_errors(log)
    assert 'unrecognized configuration parameter "shared_bufers"' in said
    assert "unknown variable 'a=1'" in said and "Aborting" not in said
