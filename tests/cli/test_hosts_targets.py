"""Saved hosts and targets from the CLI; passwords go to the keyring, never to the files."""
import json

from tests.dbs import versus


def test_target_add_and_check_with_keyring_password(versus_home, mariadb_db):
    import pymysql
    from tests.dbs import MY, unique
    user = unique("vk")
    c = pymysql.connect(**MY, autocommit=True)
    c.cursor().execute(f"CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY 's3cr3t-pw'")
    dbname = mariadb_db.rsplit("/", 1)[1]
    c.cursor().execute(f"GRANT ALL ON `{dbname}`.* TO '{user}'@'127.0.0.1'")
    try:
        url = mariadb_db.replace("root@", f"{user}@")
        r = versus("target", "add", "bench-maria", "--url", url, "--password-stdin",
                   input="s3cr3t-pw\n")
        assert r.returncode == 0, r.stderr
        config = (versus_home / "config" / "targets.toml").read_text()
        assert "bench-maria" in config and "s3cr3t-pw" not in config
        r = versus("target", "check", "bench-maria")
        assert r.returncode == 0, r.stderr
        assert "MariaDB" in r.stdout
    finally:
        c.cursor().execute(f"DROP USER '{user}'@'127.0.0.1'")
        c.close()


def test_host_facts_over_ssh(sshd, versus_home):
    import sys
    r = versus("host", "add", "box", "--address", sshd.host, "--port", str(sshd.port),
               "--user", sshd.user, "--key", str(sshd.key_file), "--python", sys.executable)
    assert r.returncode == 0, r.stderr
    r = versus("host", "facts", "box")
    assert r.returncode == 2 and sshd.host_key_fingerprint in r.stderr
    r = versus("host", "facts", "box", "--json", "--accept-host-key", sshd.host_key_fingerprint)
    assert r.returncode == 0, r.stderr
    facts = json.loads(r.stdout)
    import os
    assert facts["cores"] == os.cpu_count() and facts["drivers"]["psycopg"]
    r = versus("host", "prepare", "box")
    assert r.returncode == 0 and "is ready" in r.stdout


def test_unreachable_host_is_a_sentence(versus_home):
    import socket
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    r = versus("run", "--host", f"root@127.0.0.1:{port}", "--target",
               "postgresql://postgres@127.0.0.1/x", "--workload", "point-query")
    assert r.returncode == 2
    assert "could not reach" in r.stderr.lower() and "Traceback" not in r.stderr


def test_removing_a_host_or_target_deletes_its_password_from_the_keyring(versus_home):
    from tests.keyring_backend import SuiteKeyring
    keyring = SuiteKeyring()             # the one the CLI gets (PYTHON_KEYRING_BACKEND)
    r = versus("host", "add", "gone-box", "--address", "127.0.0.1", "--user", "bench",
               "--password-stdin", input="ssh-pw\n")
    assert r.returncode == 0, r.stderr
    r = versus("target", "add", "gone-db", "--url", "postgresql://u@127.0.0.1:5432/x",
               "--password-stdin", input="db-pw\n")
    assert r.returncode == 0, r.stderr
    assert keyring.get_password("versus", "host:gone-box") == "ssh-pw"
    assert keyring.get_password("versus", "target:gone-db") == "db-pw"
    assert versus("host", "remove", "gone-box").returncode == 0
    assert versus("target", "remove", "gone-db").returncode == 0
    assert keyring.get_password("versus", "host:gone-box") is None
    assert keyring.get_password("versus", "target:gone-db") is None
    assert "gone-box" not in (versus_home / "config" / "hosts.toml").read_text()
    r = versus("target", "remove", "gone-db")
    assert r.returncode == 2 and "no saved target" in r.stderr
