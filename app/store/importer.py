"""Importing the logs people already have (HammerDB, sysbench, pgbench) as runs in a session.

The workloads that wrap those tools declare an importer (see workloads.registry.importers);
this module only hands them the files, collects the runs they return and writes each as a
run of a session file, so an imported run compares like any other. A file no importer
claims, or one its tool's importer cannot read, gets a sentence naming the file (and the
line); the files that could be read are imported all the same.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.model.phase import PhaseSummary
from workloads.events import LogFormatError
from workloads.registry import importers

from .session import SessionFile

MAX_BYTES = 4 << 30           # a log larger than this is surely not one


@dataclass
class ImportedRun:
    run_id: str
    workload: str
    files: list[str]
    target: str
    summary: PhaseSummary | None        # the last phase's


@dataclass
class ImportOutcome:
    session_path: Path
    runs: list[ImportedRun] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _opener(path: Path):
    def open_lines():
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            yield from f
    return open_lines


def _check(path: Path) -> str | None:
    if not path.exists():
        return f"{path} does not exist"
    if path.is_dir():
        return f"{path} is a folder; name the log files in it"
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as exc:
        return f"{path} cannot be read ({exc.strerror or exc})"
    if size == 0:
        return f"{path} is empty"
    if size > MAX_BYTES:
        return f"{path} is {size / 2**30:.1f} GiB, too large to be a tool's log"
    if b"\x00" in head:
        return f"{path} line 1: holds binary data; it is not a tool's text log"
    return None


def _first_line(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.strip():
                    return line.strip()[:60]
    except OSError:
        pass
    return ""


def read_logs(paths: list[Path]) -> tuple[list[dict[str, Any]], list[str]]:
    """The runs found in ``paths`` and a sentence per file that could not be imported."""
    problems: list[str] = []
    pending: dict[str, Path] = {}
    for p in paths:
        msg = _check(p)
        if msg:
            problems.append(msg)
        else:
            pending[str(p)] = p
    runs: list[dict[str, Any]] = []
    for _, read in importers():
        while pending:
            files = [(name, _opener(p)) for name, p in pending.items()]
            try:
                found = read(files)
            except LogFormatError as exc:
                problems.append(str(exc))
                pending.pop(exc.file, None)
                continue          # again without the file it could not read
            except (OSError, UnicodeError) as exc:
                problems.append(f"could not read the logs: {exc}")
                pending.clear()
                break
            for run in found:
                for name in run["files"]:
                    pending.pop(name, None)
            runs.extend(found)
            break
    for name, p in pending.items():
        first = _first_line(p)
        problems.append(f"{name} line 1: is not a log Versus can import (HammerDB, sysbench or "
                        f"pgbench output)" + (f"; it begins {first!r}" if first else ""))
    return runs, problems


def import_logs(paths: list[Path], out: Path) -> ImportOutcome:
    """Import ``paths`` as runs appended to the session file ``out`` (created if needed)."""
    runs, problems = read_logs([Path(p) for p in paths])
    outcome = ImportOutcome(Path(out), problems=problems)
    if not runs:
        return outcome
    with SessionFile(out, readonly=False) as s:
        for run in runs:
            stem = Path(run["files"][0]).stem[:40]
            run_id = f"import-{stem}-{secrets.token_hex(3)}"
            evs = run["events"]
            for e in evs:
                if e["kind"] == "hello":
                    e["run_id"] = run_id
            s.add_run(run_id, run["workload"], run["target"], "imported", run["params"],
                      info={"imported": run["files"]})
            s.append_events(run_id, evs)
            end = next((e for e in reversed(evs) if e["kind"] == "end"), {})
            s.finish_run(run_id, end.get("status", "ok"), end.get("reason", ""))
            last = next((x for x in map(PhaseSummary.of, reversed(evs)) if x), None)
            outcome.runs.append(ImportedRun(run_id, run["workload"], run["files"],
                                            run["target"], last))
    return outcome


def describe(run: ImportedRun) -> str:
    """One line for the CLI and the GUI: what was imported and its headline figure."""
    files = ", ".join(Path(f).name for f in run.files)
    s = run.summary
    res = s.result if s is not None else {}
    if res.get("nopm") is not None:
        fig = f"{res['nopm']:,} NOPM, {res.get('tpm') or 0:,} TPM"
    elif res.get("qps") is not None:
        fig = f"{res['qps']:,.2f} QPS, {res.get('tps') or 0:,.2f} TPS"
    elif res.get("tps") is not None:
        fig = f"{res['tps']:,.2f} TPS"
    elif s is not None and s.phase == "load":
        fig = f"load {s.duration_s or 0:,.1f} s"
    else:
        fig = "no result in the log"
    src = res.get("nopm_source") or res.get("qps_source") or res.get("tps_source") or \
        (s.source if s is not None else "")
    return (f"{files} → run {run.run_id} ({run.workload}, {run.target}): {fig}"
            + (f" ({src})" if src else ""))
