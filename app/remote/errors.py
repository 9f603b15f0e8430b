"""Typed remote errors; each str() is a sentence a user can act on."""


class RemoteError(Exception):
    """Base for every failure reaching or using a host."""


class Unreachable(RemoteError):
    pass


class AuthFailed(RemoteError):
    pass


class UnknownHostKey(RemoteError):
    """The host presented a key we have never seen; the user must accept its fingerprint."""

    def __init__(self, host: str, port: int, key_type: str, fingerprint: str):
        self.host, self.port, self.key_type, self.fingerprint = host, port, key_type, fingerprint
        super().__init__(
            f"{host}:{port} presented an unknown {key_type} host key {fingerprint}. "
            f"Check it with the host's administrator, then accept it "
            f"(CLI: --accept-host-key {fingerprint}).")


class HostKeyMismatch(RemoteError):
    def __init__(self, host: str, port: int, expected: str, got: str,
                 files: "list[str] | None" = None, app_file: str = ""):
        self.host, self.port, self.expected, self.got = host, port, expected, got
        self.files = list(files or [])
        name = host if port == 22 else f"[{host}]:{port}"
        where = " and ".join(self.files) or "your known_hosts files"
        also = (f" (Versus keeps the keys you accepted in {app_file})"
                if app_file and app_file not in self.files else "")
        super().__init__(
            f"WARNING: the host key of {host}:{port} has changed (known {expected}, now {got}). "
            f"Someone may be intercepting the connection; Versus refuses to connect. If the host "
            f"was reinstalled, remove the line for {name} from {where}{also}.")


class ChannelLost(RemoteError):
    pass


class CommandFailed(RemoteError):
    def __init__(self, argv, rc: int, stderr: str):
        self.argv, self.rc, self.stderr = argv, rc, stderr
        tail = stderr.strip().splitlines()[-1] if stderr.strip() else "no error output"
        super().__init__(f"command {argv[0]!s} on the host exited with {rc}: {tail}")
