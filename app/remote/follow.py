"""Follow one run's event spool on a host into a session file, exactly once, through faults.

The one place that keeps a run's events flowing (single runs, plans and `versus attach` use
it): a dropped link is reconnected with backoff, also when it drops again during the login
or while SFTP reopens; a frozen link (a stream silent for `frozen_after` seconds, while the
agent sends an empty line every few seconds) is dropped and reconnected; a follower process
that was killed is started again from the last stored event; a spool line that is not an
event is reported once however often the stream resumes. Only a real refusal (unknown or
changed host key, a login the server refused) or a run the host can no longer give ends the
following early, and every ending closes the run in the session file with one sentence.
"""
from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from app.model.config import HostConfig
from app.store.session import RunRecord, SessionFile, SessionFull
from workloads import events as ev_format

from .agentctl import AgentControl
from .errors import AuthFailed, ChannelLost, HostKeyMismatch, RemoteError, UnknownHostKey
from .hosts import open_transport

# failures that waiting cannot cure
PERMANENT = (UnknownHostKey, HostKeyMismatch, AuthFailed)
# how often a follower process may end without delivering anything before we give up
MAX_IDLE_RESTARTS = 5
LOST_LINK = "lost the connection"     # how a reason starts when the run may go on on the host


class _Unreadable(Exception):
    """A stream line in an event format newer than this Versus reads."""


class GiveUp(Exception):
    """Following (or reconnecting) cannot go on; str() is the run's reason."""


class Refused(GiveUp):
    """The host answers but refuses this connection (its key changed, the login no longer
    works): the run goes on there, and attach brings in the rest once that is resolved."""

    def __init__(self, exc: Exception):
        super().__init__(str(exc))
        self.fix = ("the host's key is verified" if isinstance(exc, (UnknownHostKey,
                                                                     HostKeyMismatch))
                    else "the login works again")


@dataclass
class FollowResult:
    status: str                  # ok | stopped | failed | running (left going on the host)
    reason: str
    skipped: int = 0             # spool lines that were not events
    first_skipped: str = ""


def agent_python(host: HostConfig) -> str:
    import sys
    return sys.executable if host.is_local else (host.python or "python3")


def backoff(attempt: int) -> float:
    """Seconds before reconnect attempt n (1, 2, …): quick at first, at most 10 s."""
    return min(10.0, 0.25 * 2 ** (attempt - 1))


def run_is_open(rec: RunRecord, has_end: bool) -> bool:
    """A run the session does not have to its end, though the host may: it started (events
    or still 'running') and its `end` event is not stored (nor will be: its agent died)."""
    return not has_end and not rec.info.get("agent_gone") and \
        (rec.status == "running" or rec.events > 0)


def open_runs(session: SessionFile) -> list[RunRecord]:
    return [r for r in session.runs()
            if run_is_open(r, bool(session.events(r.id, kinds=["end"])))]


class RunFollower:
    """Brings one run's events from a host into a session file. `ctl` is an agent control
    already connected (else follow() connects); the follower may replace it on reconnects."""

    def __init__(self, host: HostConfig, run_id: str, *, ctl: AgentControl | None = None,
                 python: str | None = None, ssh_key: str | None = None,
                 accept_host_key: str | None = None,
                 on_events: Callable[[str, list[dict]], None] | None = None,
                 on_status: Callable[[str], None] | None = None,
                 reconnect_for: float = 600.0, frozen_after: float = 30.0,
                 session_path: Path | None = None):
        self.host, self.run_id = host, run_id
        self.python = python or (ctl.python if ctl is not None else agent_python(host))
        self.ssh_key, self.accept_host_key = ssh_key, accept_host_key
        self.on_events = on_events or (lambda rid, evs: None)
        self.on_status = on_status or (lambda msg: None)
        self.reconnect_for, self.frozen_after = reconnect_for, frozen_after
        self.session_path = session_path
        self._ctl = ctl
        self._lock = threading.Lock()
        self._leave = threading.Event()        # stop following; the run goes on on the host
        self._stop = threading.Event()         # the user asked to end the run
        self._stop_sent = threading.Event()
        self._skipped: dict[str, str] = {}     # key (spool offset or seq) -> first sentence
        self._skipped_count = 0

    # --- the connection -------------------------------------------------------------------
    @property
    def ctl(self) -> AgentControl | None:
        return self._ctl

    def connect(self) -> AgentControl:
        """One attempt: a new connection and agent control in place of the old ones."""
        t = open_transport(self.host, self.accept_host_key, key_file=self.ssh_key)
        try:
            ctl = AgentControl(t, self.python)      # opens SFTP: the link may drop here too
        except BaseException:
            t.close()
            raise
        with self._lock:
            old, self._ctl = self._ctl, ctl
        if old is not None:
            old.t.close()
        return ctl

    def reconnect(self, why: str, lost_since: float) -> AgentControl:
        """Reconnect with backoff until `reconnect_for` seconds after `lost_since`; any
        transient failure on the way (a drop during the login or while SFTP opens) is one
        more attempt. Raises GiveUp with the run's reason."""
        attempt = 0
        while True:
            attempt += 1
            delay = backoff(attempt)
            if time.monotonic() + delay - lost_since > self.reconnect_for:
                raise GiveUp(f"{LOST_LINK} to {self.host.title} and could not reconnect for "
                              f"{int(self.reconnect_for)} s ({why}); the run may still be going "
                              f"on the host{self._attach_hint()}")
            self.on_status(f"connection lost ({why}); reconnecting in {delay:g} s "
                           f"(attempt {attempt})")
            if self._leave.wait(delay):
                raise GiveUp("")
            try:
                return self.connect()
            except PERMANENT as exc:
                raise Refused(exc) from None
            except (RemoteError, OSError, EOFError) as exc:
                why = str(exc) or type(exc).__name__

    def drop_link(self) -> None:
        """Close the connection as a network failure would (tests, the UI's reconnect)."""
        ctl = self._ctl
        if ctl is not None:
            ctl.t.close()

    def close(self) -> None:
        ctl = self._ctl
        if ctl is not None:
            ctl.t.close()

    # --- control from any thread ----------------------------------------------------------
    def request_stop(self) -> None:
        """Ask the agent to end the run; never blocks (resent after a reconnect)."""
        self._stop.set()
        threading.Thread(target=self._send_stop, daemon=True, name="versus-stop").start()

    def _send_stop(self) -> None:
        ctl = self._ctl
        if ctl is None or self._stop_sent.is_set():
            return
        try:
            ctl.stop(self.run_id)
            self._stop_sent.set()
        except (RemoteError, OSError, EOFError):
            pass

    def leave(self) -> None:
        """Stop following and leave the run going on the host (attach brings in the rest)."""
        self._leave.set()
        self.drop_link()

    # --- following ------------------------------------------------------------------------
    def follow(self, session: SessionFile) -> FollowResult:
        """Store the run's events from the last one the session has until the run's end,
        then close the run in the session. Never raises for a fault of the link, the host or
        the stream; the result says what happened."""
        info = session.run(self.run_id).info.get("skipped_lines") or {}
        self._skipped = dict(info.get("keys") or {})
        self._skipped_count = int(info.get("count", len(self._skipped)))
        try:
            res = self._follow(session)
        except SessionFull:
            # nothing more can be written: the run is left going, its row open for attach
            res = self._disk_full(session)
            res.skipped = self._skipped_count
            return res
        except Refused as exc:      # the run goes on on the host: say so, and how to attach
            res = FollowResult("running", f"cannot reconnect to {self.host.title}: {exc} The "
                               f"run goes on on the host; everything up to event "
                               f"{session.last_seq(self.run_id)} is saved"
                               + (f"; once {exc.fix}, 'versus attach {self.session_path}' "
                                  f"brings in the rest" if self.session_path else ""))
        except GiveUp as exc:
            res = self._left(session) if self._leave.is_set() else \
                FollowResult("failed", str(exc))
        except Exception as exc:  # noqa: BLE001 - a sentence, never a run left open
            res = FollowResult("failed", f"following the run stopped: {exc}"
                                         f"{self._attach_hint()}")
        res.skipped = self._skipped_count
        res.first_skipped = next(iter(self._skipped.values()), "")
        if res.skipped and res.status == "ok" and not res.reason:
            res.reason = (f"{res.skipped} line(s) of the event stream were not events and "
                          f"were skipped (first: {res.first_skipped})")
        try:
            session.finish_run(self.run_id, res.status, res.reason)
        except Exception as exc:  # noqa: BLE001 - the outcome still says what happened
            res.reason = f"{res.reason} (the session file could not record it: {exc})".strip()
        return res

    def _disk_full(self, session: SessionFile) -> FollowResult:
        """The session's disk is full: the run goes on on the host, its events stay in the
        spool there; the run's row stays 'running' (written when it started) for attach."""
        try:
            saved = f"everything up to event {session.last_seq(self.run_id)} is saved; "
        except Exception:  # noqa: BLE001 - the sentence does without the number
            saved = ""
        path = self.session_path or session.path
        where = "this computer" if self.host.is_local else self.host.title
        return FollowResult("running", f"the disk holding {path} is full; the run goes on on "
                                       f"{where} and its events stay in the host's "
                                       f"spool; {saved}free space there and run 'versus attach "
                                       f"{path}' to bring in the rest")

    def _left(self, session: SessionFile) -> FollowResult:
        return FollowResult("running", f"left running on {self.host.title}; everything up to "
                                       f"event {session.last_seq(self.run_id)} is saved"
                                       f"{self._attach_hint()}")

    def _attach_hint(self) -> str:
        if self.session_path is None:
            return ""
        return f"; 'versus attach {self.session_path}' brings in the rest"

    def _follow(self, session: SessionFile) -> FollowResult:
        rid = self.run_id
        last_seq = session.last_seq(rid)
        lost_since: float | None = None
        idle_restarts = 0
        if self._ctl is None:
            self._connect_first()
        while True:
            if self._leave.is_set():
                return self._left(session)
            ctl = self._ctl
            try:
                stream = ctl.follow(rid, last_seq + 1,
                                    idle_timeout=None if self.host.is_local else self.frozen_after)
                if lost_since is not None:
                    self.on_status(f"reconnected; resuming from event {last_seq + 1}")
                    lost_since = None
                if self._stop.is_set() and not self._stop_sent.is_set():
                    self._send_stop()
                splitter = ev_format.LineSplitter()
                ended = None
                progressed = False
                try:
                    for chunk in stream.chunks():
                        batch = []
                        refused = ""
                        for line in splitter.feed(chunk):
                            try:
                                e = self._decode(line, session)
                            except _Unreadable as exc:
                                refused = str(exc)
                                break
                            if e is None or e["seq"] <= last_seq:
                                continue
                            batch.append(e)
                            last_seq = e["seq"]
                            if e["kind"] == "end":
                                ended = e
                        if batch:                 # what came before a refusal is kept
                            session.append_events(rid, batch)
                            progressed = True
                            self.on_events(rid, batch)
                        if refused:
                            self._refuse(refused, last_seq)
                        if ended:
                            break
                finally:
                    stream.close()
                if ended:
                    return FollowResult(ended.get("status", "failed"), ended.get("reason", ""))
                rc = stream.exit_status()
                if rc == 3:
                    return self._agent_gone(session, ctl, last_seq)
                if rc == 2:
                    return FollowResult("failed", "the host has no events for this run (no "
                                        f"spool in {ctl.run_dir(rid)}); the agent did not start "
                                        f"there: see agent.log in that folder")
                if not ctl.t.is_alive():
                    raise ChannelLost("the event stream ended with the connection")
                # the follower process ended early (killed, or it crashed): start it again
                idle_restarts = 0 if progressed else idle_restarts + 1
                err = stream.stderr_text().strip()[-300:]
                if idle_restarts > MAX_IDLE_RESTARTS:
                    return FollowResult("failed", f"the event follower on the host keeps ending "
                                        f"(exit {rc}) without delivering events"
                                        f"{': ' + err if err else ''}{self._attach_hint()}")
                self.on_status(f"the event follower ended (exit {rc}); starting it again from "
                               f"event {last_seq + 1}")
                if self._leave.wait(min(2.0, 0.1 * 2 ** idle_restarts)):
                    return self._left(session)
            except PERMANENT as exc:
                return FollowResult("failed", f"cannot reconnect to {self.host.title}: {exc}")
            except (ChannelLost, RemoteError, OSError, EOFError) as exc:
                if self._leave.is_set():
                    return self._left(session)
                if self.host.is_local and not isinstance(exc, ChannelLost):
                    raise
                lost_since = lost_since or time.monotonic()
                self.reconnect(str(exc) or type(exc).__name__, lost_since)

    def _agent_gone(self, session: SessionFile, ctl: AgentControl, last_seq: int) -> FollowResult:
        """The agent died without its end event (killed, or it crashed): nothing more will
        come, so the run is closed for good (attach has nothing to bring in)."""
        where = "on this computer" if self.host.is_local else f"on {self.host.title}"
        said = ""
        try:
            c = ctl.t.run(["tail", "-c", "300", f"{ctl.run_dir(self.run_id)}/agent.log"],
                          check=False, timeout=30)
            said = c.stdout.decode("utf-8", "replace").strip().splitlines()[-1:]
            said = f"; its last words: {said[0]}" if said else ""
        except (RemoteError, OSError, EOFError):
            pass
        session.update_info(self.run_id, agent_gone=True)
        return FollowResult("failed", f"the agent {where} ended without finishing the run "
                                      f"(it was killed, or it crashed{said}); everything up to "
                                      f"event {last_seq} is saved and nothing more can be "
                                      f"brought in")

    def _connect_first(self) -> None:
        try:
            self.connect()
        except PERMANENT:
            raise
        except (RemoteError, OSError, EOFError) as exc:
            self.reconnect(str(exc) or type(exc).__name__, time.monotonic())

    def _decode(self, line: bytes, session: SessionFile) -> dict | None:
        """An event, or None for a line that is not one (reported once per spool line);
        _Unreadable for a line in a format this Versus does not know."""
        key = ""
        if line.startswith(b"#"):           # the agent marks a non-event line with its offset
            offset, _, line = line[1:].partition(b" ")
            key = "#" + offset.decode("ascii", "replace")
        try:
            return ev_format.decode(line)
        except ev_format.EventFormatError as exc:
            msg = str(exc)
            if "understands up to" in msg:
                raise _Unreadable(msg) from None
            if not key:
                try:
                    seq = json.loads(line).get("seq")
                except (ValueError, AttributeError):
                    seq = None
                key = f"@{seq}" if isinstance(seq, int) else f"?{hashlib.sha1(line).hexdigest()[:12]}"
            if key not in self._skipped:
                self._skipped[key] = msg
                self._skipped_count += 1
                self.on_status(f"skipped a line that is not an event: {msg}")
                keys = dict(list(self._skipped.items())[:50])    # bounded in the session
                session.update_info(self.run_id, skipped_lines={"count": self._skipped_count,
                                                                 "keys": keys})
            return None

    def _refuse(self, msg: str, last_seq: int) -> None:
        """A stream this Versus cannot read: stop the run on the host rather than leave it
        going unseen, and fail it with the sentence."""
        ctl = self._ctl
        try:
            if ctl is not None:
                ctl.stop(self.run_id, wait=10)
            stopped = "Versus stopped the run on the host"
        except (RemoteError, OSError, EOFError):
            stopped = "Versus could not stop the run on the host"
        raise GiveUp(f"{msg}. {stopped}; everything up to event {last_seq} is saved")
