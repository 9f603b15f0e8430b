"""The command line for server profiles and settings:

    versus profile list [--engine E] | show REF [--engine E] [--render --clients N]
    versus profile apply REF --target TARGET [--host HOST] [--restart-command CMD [--restart]]
                                                 # ALTER SYSTEM / SET PERSIST / SET GLOBAL
    versus settings SESSION [RUN_ID ...] [--all] [--json]   # differences in effective settings
"""
from __future__ import annotations

import json
import sys

from app.model.profile import ProfileError
from app.remote.errors import RemoteError
from app.store.catalog import Catalog, CatalogError
from app.store.session import SessionError, SessionFile

from .console import fail as _fail


def cmd_profile(a) -> int:
    from app.store.profiles import broken_profiles, list_profiles, load_profile
    from workloads.profiles import ProfileError as RenderError
    from workloads.profiles import host_context, render
    try:
        if a.action == "list":
            for p in list_profiles(a.engine):
                durable = "" if p.durable is None else ("durable" if p.durable else "no fsync")
                print(f"{p.id:<32} {p.versions or 'all':<10} {durable:<9} {p.description}")
            for path, why in broken_profiles():
                print(f"versus: skipped {why}", file=sys.stderr)
            return 0
        p = load_profile(a.ref, a.engine)
        if a.action == "apply":
            return _apply_profile(p, a)
        if a.render:
            ctx = host_context(a.clients)
            print(render(p.config, ctx), end="")
        else:
            print(f"# {p.id} ({p.path})\n# versions {p.versions or 'all'}: {p.description}")
            print(p.config, end="")
        return 0
    except (ProfileError, RenderError, CatalogError, RemoteError) as exc:
        return _fail(str(exc))


def _apply_profile(p, a) -> int:
    from app.remote.profile_check import apply_profile_on_target
    if a.restart and not a.restart_command:
        return _fail("--restart runs the command given with --restart-command; give one")
    out = apply_profile_on_target(p, a.target, Catalog(), a.host, a.clients or 16,
                                  a.restart_command, a.restart, a.accept_host_key)
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{p.id} on {a.target} ({out.get('version', '')})")
        if out["applied"]:
            print("applied:       " + ", ".join(out["applied"]))
        if out["needs_restart"]:
            print("needs restart: " + ", ".join(out["needs_restart"]))
        for r in out["rejected"]:
            print(f"rejected:      {r['name']} = {r.get('value')}: {r['error']}")
        for note in out.get("notes", []):
            print(f"note: {note}")
        if a.restart:
            print("restarted" if out["restarted"] else
                  f"restart failed: {out.get('restart_output', '')}")
    if a.restart and not out["restarted"]:
        return 1
    return 1 if out["rejected"] else 0


def cmd_settings(a) -> int:
    from app.analysis.settings_diff import diff_settings, format_diff, session_reports
    try:
        with SessionFile(a.file) as s:
            runs = s.runs()
            ids = a.run_ids or [r.id for r in runs]
            known = {r.id: r for r in runs}
            for rid in ids:
                if rid not in known:
                    return _fail(f"{a.file} has no run {rid!r}")
            reports = session_reports(s, ids)
    except SessionError as exc:
        return _fail(str(exc))
    missing = [rid for rid, r in reports.items() if r is None]
    diffs = diff_settings(reports, include_instance=a.all)
    if a.json:
        print(json.dumps({"runs": ids, "without_settings": missing,
                          "differences": [{"name": d.name, "values": d.values,
                                           "origins": d.origins} for d in diffs]}, indent=2))
        return 0
    if missing:
        print(f"(no settings recorded for {', '.join(missing)})")
    labels = {rid: f"{known[rid].target} {rid[-6:]}" for rid in ids}
    print(format_diff(diffs, labels))
    return 0


def add_parsers(sub) -> None:
    pr = sub.add_parser("profile", help="server profiles: list, show, render")
    prs = pr.add_subparsers(dest="action", required=True)
    pl = prs.add_parser("list")
    pl.add_argument("--engine", choices=("postgres", "mysql", "mariadb"))
    sh = prs.add_parser("show")
    sh.add_argument("ref", help="engine/name, a name with --engine, or a .toml path")
    sh.add_argument("--engine", choices=("postgres", "mysql", "mariadb"))
    sh.add_argument("--render", action="store_true", help="render for this computer")
    sh.add_argument("--clients", type=int, default=None)
    ap = prs.add_parser("apply", help="apply a profile to a running server (ALTER SYSTEM, SET "
                                      "PERSIST or SET GLOBAL); lists what needs a restart")
    ap.add_argument("ref", help="engine/name, a name with --engine, or a .toml path")
    ap.add_argument("--engine", choices=("postgres", "mysql", "mariadb"))
    ap.add_argument("--target", required=True, help="a saved target")
    ap.add_argument("--host", help="the target's host (default: the target's own, else local)")
    ap.add_argument("--clients", type=int, default=None, help="for {{ clients }} in the profile")
    ap.add_argument("--restart-command", metavar="CMD",
                    help="your command that restarts the server, run by the host's shell")
    ap.add_argument("--restart", action="store_true",
                    help="run the restart command after applying")
    ap.add_argument("--accept-host-key", metavar="SHA256:...")
    ap.add_argument("--json", action="store_true")
    pr.set_defaults(func=cmd_profile)

    se = sub.add_parser("settings", help="differences in the effective server settings of runs")
    se.add_argument("file")
    se.add_argument("run_ids", nargs="*")
    se.add_argument("--all", action="store_true",
                    help="include per-instance settings (port, data directory, socket …)")
    se.add_argument("--json", action="store_true")
    se.set_defaults(func=cmd_settings)
