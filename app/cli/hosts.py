"""`versus host`, `versus target` and `versus check`: saved hosts and targets, and what runs on them."""
from __future__ import annotations

import json
import sys

from app.remote.errors import RemoteError, UnknownHostKey
from app.remote.secrets import KeyringUnavailable
from app.store.catalog import Catalog, CatalogError
from workloads.registry import WORKLOADS

from .console import fail as _fail


def cmd_host(a) -> int:
    from app.model.config import HostConfig
    from app.remote.facts import format_facts, gather_facts
    from app.remote.hosts import open_transport, resolve_host
    from app.remote.runner import agent_python
    catalog = Catalog()
    try:
        if a.action == "list":
            for h in catalog.hosts():
                print(f"{h.name:<20} {h.title}  auth={h.auth} python={h.python}")
            return 0
        if a.action == "remove":
            from app.remote.hosts import remove_host
            if catalog.host(a.name) is None:
                return _fail(f"there is no saved host {a.name!r} (see 'versus host list')")
            remove_host(catalog, a.name)
            print(f"removed host {a.name} and its password")
            return 0
        if a.action == "add":
            from app.model.config import host_problem
            auth = "key" if a.key else "password" if a.password_stdin else "agent"
            h = HostConfig(name=a.name, address=a.address, port=a.port, user=a.user or "",
                           auth=auth, key_file=a.key or "", python=a.python)
            problem = host_problem(h)      # before the password reaches the keyring
            if problem:
                return _fail(problem)
            if a.password_stdin:           # into the keyring first: refused, nothing is saved
                from app.remote.secrets import set_secret
                set_secret("host", a.name, sys.stdin.readline().rstrip("\n"))
            catalog.save_host(h)
            print(f"saved host {a.name}")
            return 0
        host = resolve_host(a.name, catalog)
        t = open_transport(host, a.accept_host_key)
        try:
            from app.remote.agentctl import AgentControl
            if a.action == "facts":
                facts = gather_facts(t, python=AgentControl(t, agent_python(host)).python)
                if a.json:
                    print(json.dumps(facts, indent=2))
                else:
                    for k, v in format_facts(facts):
                        print(f"{k:<24} {v}")
                return 0
            ctl = AgentControl(t, agent_python(host))
            if a.action == "clean":
                return _clean_host(ctl, host, a)
            missing = ctl.missing_drivers()
            if not missing:
                print(f"{host.title} is ready: {ctl.python} has the database drivers")
                return 0
            if not a.yes:
                return _fail(f"{host.title} lacks {', '.join(missing)}; run again with --yes to "
                             f"create a virtual environment in ~/.versus/venv on the host and "
                             f"install the drivers from the package index")
            py = ctl.prepare(log=lambda m: print(f"  {m}", flush=True))
            print(f"{host.title} is ready: the agent will use {py}")
            return 0
        finally:
            t.close()
    except (CatalogError, RemoteError, KeyringUnavailable) as exc:
        return _fail(str(exc))


def _clean_host(ctl, host, a) -> int:
    if a.older_than < 0:
        return _fail("--older-than takes a number of days, 0 or more")
    from app.remote.attach import find_open_runs_in_folder
    ctl.deploy()
    open_here, _ = find_open_runs_in_folder(a.name)
    keep = [o.run.id for o in open_here]
    for o in open_here:
        print(f"  keeping run {o.run.id}: open in {o.session_path} ('versus attach "
              f"{o.session_path}' brings in the rest)")
    found = ctl.clean(a.older_than, dry_run=True, keep=keep)
    old = found["would_remove"]
    for k in found["kept"]:
        if k["id"] not in keep:
            print(f"  keeping {k['kind']} {k['id']} ({k['why']})")
    if not old:
        print(f"{host.title}: no run folder is older than {a.older_than:g} days")
        return 0
    size = sum(c["bytes"] for c in old) / 1e6
    for c in old:
        print(f"  {c['kind']} {c['id']}  {c['age_days']:g} days old, {c['bytes'] / 1e6:,.1f} MB")
    print(f"{len(old)} folder(s), {size:,.1f} MB in {ctl.root} on {host.title}")
    if not a.yes:
        if not sys.stdin.isatty():
            return _fail("nothing was removed; run again with --yes to remove them")
        if input("Remove them? [y/N] ").strip().lower() not in ("y", "yes"):
            print("nothing was removed")
            return 0
    done = ctl.clean(a.older_than, dry_run=False, keep=keep)["removed"]
    left = [c for c in done if not c.get("removed")]
    print(f"removed {len(done) - len(left)} folder(s) from {host.title}")
    if left:
        return _fail(f"could not remove {', '.join(c['id'] for c in left)} (check their "
                     f"permissions on the host)", 1)
    return 0


def cmd_target(a) -> int:
    from app.remote.runner import check_target, resolve_target
    catalog = Catalog()
    try:
        if a.action == "list":
            for t in catalog.targets():
                print(f"{t.name:<20} {t.title} on host {t.host}")
            return 0
        if a.action == "remove":
            from app.remote.hosts import remove_target
            if catalog.target(a.name) is None:
                return _fail(f"there is no saved target {a.name!r} (see 'versus target list')")
            remove_target(catalog, a.name)
            print(f"removed target {a.name} and its password")
            return 0
        if a.action == "add":
            t = resolve_target(a.url, catalog)
            t.name, t.host = a.name, a.host
            if a.password_stdin:           # into the keyring first: refused, nothing is saved
                from app.remote.secrets import set_secret
                set_secret("target", a.name, sys.stdin.readline().rstrip("\n"))
            catalog.save_target(t)
            print(f"saved target {a.name}")
            return 0
        host = a.host or (catalog.target(a.name).host if catalog.target(a.name) else "local")
        print(check_target(catalog, host, a.name, a.accept_host_key))
        return 0
    except (CatalogError, RemoteError, KeyringUnavailable) as exc:
        return _fail(str(exc))


def cmd_check(a) -> int:
    """versus check WORKLOAD TARGET: the workload's consistency check, run on the host."""
    from app.remote.agentctl import AgentControl
    from app.remote.hosts import open_transport, resolve_host
    from app.remote.runner import (
        _embedded_target,
        agent_python,
        resolve_target,
        target_password,
    )
    try:
        catalog = Catalog()
        host = resolve_host(a.host, catalog)
        target = resolve_target(a.target, catalog)
        if target.engine not in ("postgres", "mysql", "mariadb"):
            return _fail(f"cannot check a {target.engine} target")
        if target.is_embedded:
            target = _embedded_target(host)
        t = open_transport(host, a.accept_host_key)
        try:
            ctl = AgentControl(t, agent_python(host))
            ctl.check_python()
            ctl.deploy()
            result = ctl.check_workload(a.workload, target.spec(), target_password(target))
        finally:
            t.close()
    except UnknownHostKey as exc:
        return _fail(str(exc))
    except (CatalogError, RemoteError) as exc:
        return _fail(str(exc))
    if a.json:
        print(json.dumps(result, indent=2))
    else:
        for line in result.get("lines") or []:
            print(line)
    return 0 if result.get("ok") else 1


def add_host(sub) -> None:
    h = sub.add_parser("host", help="saved hosts: list, add, facts, prepare, clean")
    hs = h.add_subparsers(dest="action", required=True)
    hs.add_parser("list")
    hs.add_parser("remove").add_argument("name")
    ha = hs.add_parser("add")
    ha.add_argument("name"); ha.add_argument("--address", required=True)
    ha.add_argument("--port", type=int, default=22); ha.add_argument("--user")
    ha.add_argument("--key", metavar="FILE"); ha.add_argument("--python", default="python3")
    ha.add_argument("--password-stdin", action="store_true",
                    help="read the SSH password from standard input into the keyring")
    for name in ("facts", "prepare", "clean"):
        hp = hs.add_parser(name, help={
            "clean": "remove the host's run folders older than --older-than days (asks "
                     "first; never a running one)"}.get(name))
        hp.add_argument("name", help="a saved host, local, or [user@]address[:port]")
        hp.add_argument("--accept-host-key", metavar="SHA256:...")
        hp.add_argument("--json", action="store_true")
        hp.add_argument("--yes", action="store_true",
                        help="consent to removing the folders" if name == "clean" else
                        "consent to installing drivers")
        if name == "clean":
            hp.add_argument("--older-than", type=float, default=30, metavar="DAYS",
                            help="age of the newest file in a run's folder (default 30)")
    h.set_defaults(func=cmd_host)


def add_target(sub) -> None:
    tg = sub.add_parser("target", help="saved targets: list, add, check")
    ts = tg.add_subparsers(dest="action", required=True)
    ts.add_parser("list")
    ts.add_parser("remove").add_argument("name")
    ta = ts.add_parser("add")
    ta.add_argument("name"); ta.add_argument("--url", required=True)
    ta.add_argument("--host", default="local")
    ta.add_argument("--password-stdin", action="store_true",
                    help="read the database password from standard input into the keyring")
    tc = ts.add_parser("check")
    tc.add_argument("name"); tc.add_argument("--host")
    tc.add_argument("--accept-host-key", metavar="SHA256:...")
    tg.set_defaults(func=cmd_target)


def add_check(sub) -> None:
    c = sub.add_parser("check", help="consistency check of a workload's schema on a target")
    checked = [w.name for w in WORKLOADS.values() if w.checker]
    c.add_argument("workload", choices=checked,
                   help="the workload whose data to check: " + ", ".join(checked))
    c.add_argument("target", help="a saved target, or a postgresql:// or mysql:// URL")
    c.add_argument("--host", default="local", help="where the check runs (default: local)")
    c.add_argument("--accept-host-key", metavar="SHA256:...")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_check)
