"""MariaDB Connector/C (libmariadb.so.3) through ctypes: server-side prepared statements over
the binary protocol, as sysbench's mysql driver sends them, at a few ctypes calls per
statement.

MariaDB Connector/Python runs the same protocol but, per execute, looks every parameter up
as an indicator object (an AttributeError raised and cleared each time) and allocates its
value array: a point select took 12.1 µs of user CPU through it against 8.2 µs through this
module, one connection each (bench/mysql_drivers.py, 2026-11-25). The struct layout below is
MYSQL_BIND of Connector/C 3.x (mariadb_stmt.h); `load()` refuses any other library, and the
caller then uses the connector.
"""
from __future__ import annotations

import ctypes as C
import ctypes.util

_P = C.c_void_p
MYSQL_TYPE_LONGLONG, MYSQL_TYPE_STRING = 8, 254
MYSQL_OPT_CONNECT_TIMEOUT = 0
STRING_BYTES = 1024            # the longest string parameter (sysbench's c is 120 bytes)


class Bind(C.Structure):
    """MYSQL_BIND of MariaDB Connector/C 3.x."""
    _fields_ = [("length", _P), ("is_null", _P), ("buffer", _P), ("error", _P), ("u", _P),
                ("store_param_func", _P), ("fetch_result", _P), ("skip_result", _P),
                ("buffer_length", C.c_ulong), ("offset", C.c_ulong),
                ("length_value", C.c_ulong), ("flags", C.c_uint), ("pack_length", C.c_uint),
                ("buffer_type", C.c_int), ("error_value", C.c_char),
                ("is_unsigned", C.c_char), ("long_data_used", C.c_char),
                ("is_null_value", C.c_char), ("extension", _P)]


_SIGS = {
    "mysql_init": (_P, [_P]),
    "mysql_options": (C.c_int, [_P, C.c_int, _P]),
    "mysql_real_connect": (_P, [_P, C.c_char_p, C.c_char_p, C.c_char_p, C.c_char_p, C.c_uint,
                                C.c_char_p, C.c_ulong]),
    "mysql_errno": (C.c_uint, [_P]),
    "mysql_error": (C.c_char_p, [_P]),
    "mysql_autocommit": (C.c_char, [_P, C.c_char]),
    "mysql_query": (C.c_int, [_P, C.c_char_p]),
    "mysql_store_result": (_P, [_P]),
    "mysql_fetch_row": (C.POINTER(C.c_char_p), [_P]),
    "mysql_field_count": (C.c_uint, [_P]),
    "mysql_free_result": (None, [_P]),
    "mysql_ping": (C.c_int, [_P]),
    "mysql_close": (None, [_P]),
    "mysql_stmt_init": (_P, [_P]),
    "mysql_stmt_prepare": (C.c_int, [_P, C.c_char_p, C.c_ulong]),
    "mysql_stmt_param_count": (C.c_ulong, [_P]),
    "mysql_stmt_field_count": (C.c_uint, [_P]),
    "mysql_stmt_bind_param": (C.c_char, [_P, _P]),
    "mysql_stmt_execute": (C.c_int, [_P]),
    "mysql_stmt_store_result": (C.c_int, [_P]),
    "mysql_stmt_num_rows": (C.c_ulonglong, [_P]),
    "mysql_stmt_affected_rows": (C.c_ulonglong, [_P]),
    "mysql_stmt_free_result": (C.c_char, [_P]),
    "mysql_stmt_errno": (C.c_uint, [_P]),
    "mysql_stmt_error": (C.c_char_p, [_P]),
    "mysql_stmt_close": (C.c_char, [_P]),
}
_lib = None
_why = ""


def load():
    """The library with its signatures set, or None (`why()` says why not)."""
    global _lib, _why
    if _lib is not None or _why:
        return _lib
    names = ["libmariadb.so.3"]
    found = ctypes.util.find_library("mariadb")
    if found and found not in names:
        names.append(found)
    for name in names:
        try:
            lib = C.CDLL(name)
        except OSError:
            continue
        # Connector/C 3.x, whose MYSQL_BIND is the layout above (libmysqlclient's differs)
        if not hasattr(lib, "mariadb_stmt_execute_direct"):
            _why = f"{name} is not MariaDB Connector/C 3"
            continue
        for fn, (res, args) in _SIGS.items():
            f = getattr(lib, fn)
            f.restype, f.argtypes = res, args
        _lib = lib
        return lib
    _why = _why or "libmariadb.so.3 (MariaDB Connector/C) is not installed"
    return None


def why() -> str:
    return _why


class LibError(Exception):
    def __init__(self, errno: int, message: str):
        super().__init__(message)
        self.errno = errno


class Connection:
    """One MYSQL handle, autocommit on."""

    def __init__(self, host: str, port: int, user: str, password: str, database: str,
                 connect_timeout: int = 10):
        lib = load()
        if lib is None:
            raise LibError(0, why())
        self.lib = lib
        self.m = lib.mysql_init(None)
        if not self.m:
            raise LibError(0, "mysql_init failed: out of memory")
        t = C.c_uint(connect_timeout)
        lib.mysql_options(self.m, MYSQL_OPT_CONNECT_TIMEOUT, C.byref(t))
        enc = (lambda s: s.encode() if s else None)
        if not lib.mysql_real_connect(self.m, enc(host), enc(user), enc(password) or b"",
                                      enc(database), int(port or 0), None, 0):
            err = self.error()
            lib.mysql_close(self.m)
            self.m = None
            raise err
        lib.mysql_autocommit(self.m, 1)
        self._stmts: list = []

    def error(self) -> LibError:
        return LibError(self.lib.mysql_errno(self.m),
                        (self.lib.mysql_error(self.m) or b"").decode(errors="replace"))

    def alive(self) -> bool:
        return self.m is not None and self.lib.mysql_ping(self.m) == 0

    def rows(self, sql: str) -> list[tuple]:
        """A text query's rows, values as str (None for NULL)."""
        lib = self.lib
        if lib.mysql_query(self.m, sql.encode()):
            raise self.error()
        res = lib.mysql_store_result(self.m)
        if not res:
            if lib.mysql_errno(self.m):
                raise self.error()
            return []
        try:
            n = lib.mysql_field_count(self.m)
            out = []
            while True:
                row = lib.mysql_fetch_row(res)
                if not row:
                    break
                out.append(tuple(None if row[i] is None else row[i].decode()
                                 for i in range(n)))
            return out
        finally:
            lib.mysql_free_result(res)

    def statement(self, sql: str, types: str) -> "Statement":
        st = Statement(self, sql, types)
        self._stmts.append(st)
        return st

    def close(self) -> None:
        if self.m is None:
            return
        for st in self._stmts:
            st.close()
        self._stmts.clear()
        self.lib.mysql_close(self.m)
        self.m = None


def _too_long(n: int):
    raise LibError(0, f"a string parameter of {n} bytes is longer than {STRING_BYTES}")


class Statement:
    """A prepared statement with its parameters bound once to buffers: integers in one
    array, each string in a buffer of its own with its length."""

    def __init__(self, conn: Connection, sql: str, types: str):
        lib = conn.lib
        self.lib, self.conn = lib, conn
        self.st = lib.mysql_stmt_init(conn.m)
        if not self.st:
            raise conn.error()
        raw = sql.encode()
        if lib.mysql_stmt_prepare(self.st, raw, len(raw)):
            err = self.error()
            self.close()
            raise err
        n = lib.mysql_stmt_param_count(self.st)
        if n != len(types):
            self.close()
            raise LibError(0, f"{sql} has {n} parameters, {len(types)} types were given")
        self.results = lib.mysql_stmt_field_count(self.st) > 0
        ints = (C.c_longlong * max(1, types.count("i")))()
        lens = (C.c_ulong * max(1, types.count("s")))()
        strs = [C.create_string_buffer(STRING_BYTES) for _ in range(types.count("s"))]
        self.binds = (Bind * max(1, n))()
        ni = ns = 0
        plan = []
        for k, t in enumerate(types):
            b = self.binds[k]
            if t == "i":
                b.buffer_type = MYSQL_TYPE_LONGLONG
                b.buffer = C.addressof(ints) + 8 * ni
                plan.append((True, ni))
                ni += 1
            else:
                b.buffer_type = MYSQL_TYPE_STRING
                b.buffer = C.addressof(strs[ns])
                b.buffer_length = STRING_BYTES
                b.length = C.addressof(lens) + C.sizeof(C.c_ulong) * ns
                plan.append((False, ns))
                ns += 1
        if n and lib.mysql_stmt_bind_param(self.st, self.binds) != b"\x00":
            err = self.error()
            self.close()
            raise err
        self.plan = plan
        # the buffers as memoryviews, which keep them alive: where a call's values go
        self.int_view = memoryview(ints).cast("B").cast("q")
        self.len_view = memoryview(lens).cast("B").cast("L")
        self.str_views = [memoryview(b).cast("B") for b in strs]

    def error(self) -> LibError:
        return LibError(self.lib.mysql_stmt_errno(self.st),
                        (self.lib.mysql_stmt_error(self.st) or b"").decode(errors="replace"))

    def param_addresses(self) -> list[tuple[int, int | None]]:
        """Per parameter: its bound buffer's address, and its length's (strings) or None."""
        return [(b.buffer, b.length) for b in self.binds[:len(self.plan)]]

    def setter(self):
        """params -> None: copies a call's values into the bound buffers, in one generated
        function per statement (no loop, no ctypes call per value: memoryviews of the
        buffers take the values)."""
        if not self.plan:
            return lambda params: None
        scope = {"iv": self.int_view, "lv": self.len_view, "sv": self.str_views,
                 "too_long": _too_long}
        body = []
        for k, (is_int, j) in enumerate(self.plan):
            if is_int:
                body.append(f"iv[{j}] = p[{k}]")
            else:
                body += [f"v = p[{k}]", "n = len(v)", f"if n > {STRING_BYTES}: too_long(n)",
                         f"sv[{j}][:n] = v", f"lv[{j}] = n"]
        exec("def put(p):\n    " + "\n    ".join(body), scope)   # noqa: S102 - from the plan
        return scope["put"]

    def close(self) -> None:
        if self.st:
            self.lib.mysql_stmt_close(self.st)
            self.st = None
