"""The agent's start and follow, as the processes the app runs: a repeated start (the app
retries after a dropped link) starts no second agent; follow marks a damaged spool line with
its offset and sends it only after the event it resumes from, and keeps an idle stream
alive with empty lines."""
import json
import subprocess
import sys
import time


def _agent(*args, timeout=30):
    return subprocess.run([sys.executable, "-m", "workloads.agent", *args], capture_output=True,
                          timeout=timeout)


def test_a_repeated_start_starts_no_second_agent(tmp_path):
    (tmp_path / "spec.json").write_text(json.dumps({
        "run_id": "r", "workload": "no-such-workload", "params": {},
        "target": {"engine": "postgres", "address": "127.0.0.1", "port": 1}}))
    first = _agent("start", "--dir", str(tmp_path))
    second = _agent("start", "--dir", str(tmp_path))
    assert first.returncode == 0 and second.returncode == 0
    assert int(first.stdout) > 0
    assert int(second.stdout) in (0, int(first.stdout))
    spool = tmp_path / "events.jsonl"
    deadline = time.monotonic() + 20
    while b'"end"' not in (spool.read_bytes() if spool.exists() else b""):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.5)
    kinds = [json.loads(x)["kind"] for x in spool.read_text().splitlines()]
    assert kinds.count("end") == 1


def _spool(tmp_path):
    lines = [json.dumps({"v": 1, "seq": 1, "t": 0, "kind": "hello"}),
             json.dumps({"v": 1, "seq": 2, "t": 1, "kind": "log", "message": "x"}),
             "Segmentation fault (core dumped)",
             json.dumps({"v": 1, "seq": 3, "t": 2, "kind": "log", "message": "y"}),
             json.dumps({"v": 1, "seq": 4, "t": 3, "kind": "end", "status": "ok"})]
    data = ("\n".join(lines) + "\n").encode()
    (tmp_path / "events.jsonl").write_bytes(data)
    return data, data.index(b"Segmentation")


def test_follow_marks_a_damaged_line_with_its_offset_once(tmp_path):
    data, offset = _spool(tmp_path)
    out = _agent("follow", "--dir", str(tmp_path), "--from-seq", "1").stdout.splitlines()
    assert out[2] == b"#%d Segmentation fault (core dumped)" % offset
    # resuming right after event 2: the line may not have reached the app yet, so it is sent
    # again with the same offset (the app counts each offset once)
    out = _agent("follow", "--dir", str(tmp_path), "--from-seq", "3").stdout.splitlines()
    assert out[0] == b"#%d Segmentation fault (core dumped)" % offset
    assert [json.loads(x)["seq"] for x in out[1:]] == [3, 4]
    # resuming after event 3, the line lies behind: not sent again
    out = _agent("follow", "--dir", str(tmp_path), "--from-seq", "4").stdout.splitlines()
    assert [json.loads(x)["seq"] for x in out] == [4]


def test_an_idle_follow_sends_empty_lines(tmp_path):
    (tmp_path / "events.jsonl").write_bytes(b"")
    run = subprocess.Popen(["sleep", "30"])          # stands for a live agent
    (tmp_path / "agent.pid").write_text(str(run.pid))
    p = subprocess.Popen([sys.executable, "-m", "workloads.agent", "follow", "--dir",
                          str(tmp_path)], stdout=subprocess.PIPE)
    try:
        line = p.stdout.readline()         # nothing in the spool: only the heartbeat comes
    finally:
        for proc in (p, run):
            proc.kill()
            proc.wait()
    assert line == b"\n"
