"""The compiled event loop (fastloop.c): the same events as the Python loop (both run a test's
steps from program.py), at sysbench's client cost.

Why: with two clients and the server on two cores, a Python loop between statements costs
the client 1.3-1.6x sysbench's CPU per statement (bench/micro.py, 2026-11-26): each wait on
the server evicts the interpreter from the CPU's caches, and bringing it back costs several
times its warm cost. The C loop runs the whole event (values, statements, timing, counters)
and comes back to Python only when a statement fails or the phase ends.

`library()` builds fastloop.c with the host's C compiler (`cc -O2 -shared -fPIC`, no headers:
the client library's functions are passed in as pointers) into the agent's cache once per
source version; without a compiler the run uses the Python loop and says so. `job()` turns a
test's steps (program.py, the same the Python loop is generated from) into the C loop's
structures.
"""
from __future__ import annotations

import ctypes as C
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

from ...events import BUCKET_LUT, LUT_US, MAX_US, N_BUCKETS, SUB_BITS
from ..sql.clients import Client, PgClient, StatementFailed
from .program import NO_DRAW, P_C, P_FIXED, P_ID, P_LO_PLUS, P_PAD, P_SAVED, Step

SOURCE = Path(__file__).with_name("fastloop.c")
DRIVES = ("postgres", "libmariadb")          # the clients (kinds) whose libraries it calls
ABI = 2
F_RESULTS, F_COUNT, F_SAVE = 1, 2, 4
ENG_PG, ENG_MYSQL = 0, 1
DISTS = {"uniform": 0, "special": 1, "zipfian": 2}
_P = C.c_void_p


class VParam(C.Structure):
    _fields_ = [("kind", C.c_int32), ("arg", C.c_int32), ("fixed", C.c_int64)]


class VStmt(C.Structure):
    _fields_ = [("h", _P), ("buf", C.POINTER(_P)), ("len", C.POINTER(_P))]


class VStep(C.Structure):
    _fields_ = [("nparams", C.c_int32), ("repeat", C.c_int32), ("table_from", C.c_int32),
                ("count_slot", C.c_int32), ("flags", C.c_int32), ("unused", C.c_int32),
                ("params", C.POINTER(VParam)), ("stmts", C.POINTER(VStmt))]


class VJob(C.Structure):
    _fields_ = [("engine", C.c_int32), ("nsteps", C.c_int32), ("tables", C.c_int32),
                ("dist", C.c_int32), ("steps", C.POINTER(VStep)), ("conn", _P),
                ("fn", _P * 5), ("result_format", C.c_int32), ("size", C.c_int64),
                ("z_e", C.c_double), ("z_s", C.c_double), ("z_top", C.c_double),
                ("z_span", C.c_double), ("rng", C.c_uint64 * 4),
                ("cpool", _P), ("cn", C.c_int64), ("cstride", C.c_int64), ("clen", C.c_int64),
                ("padpool", _P), ("padn", C.c_int64), ("padstride", C.c_int64),
                ("padlen", C.c_int64),
                ("stop", _P), ("arr", _P), ("base", C.c_int64), ("carr", _P), ("cs", C.c_int64),
                ("lut", _P), ("lut_us", C.c_int64),
                ("sub_bits", C.c_int64), ("max_us", C.c_int64), ("n_buckets", C.c_int64),
                ("values", _P), ("nums", _P),
                ("failed_step", C.c_int32), ("failed_table", C.c_int32), ("sent", C.c_int64),
                ("pgres", _P)]


_lib = None
_why = ""


def cache_dir() -> Path:
    root = os.environ.get("VERSUS_ROOT")
    if root:
        return Path(root) / "cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "versus"


def library():
    """The compiled loop (built on first use), or None: `why()` says why not."""
    global _lib, _why
    if _lib is not None or _why:
        return _lib
    try:
        src = SOURCE.read_bytes()
    except OSError as exc:
        _why = f"the compiled loop's source is not on the host ({exc.strerror}: {SOURCE})"
        return None
    tag = hashlib.sha256(src + platform.machine().encode()).hexdigest()[:16]
    path = cache_dir() / f"fastloop-{tag}.so"
    if not path.exists():
        cc = shutil.which(os.environ.get("CC") or "cc") or shutil.which("gcc")
        if not cc:
            _why = "no C compiler (cc) on the host to build the compiled loop (Debian: " \
                   "apt-get install gcc)"
            return None
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".so")
        os.close(fd)
        try:
            out = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", tmp, str(SOURCE), "-lm"],
                                 capture_output=True, timeout=120)
            if out.returncode != 0:
                _why = ("the compiled loop did not build: "
                        + out.stderr.decode(errors="replace").strip()[-300:])
                return None
            os.replace(tmp, path)              # atomic: clients building at once agree
        except (OSError, subprocess.TimeoutExpired) as exc:
            _why = f"the compiled loop did not build: {exc}"
            return None
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    try:
        lib = C.CDLL(str(path))
    except OSError as exc:
        _why = f"the compiled loop did not load: {exc}"
        return None
    if lib.fastloop_abi() != ABI or lib.fastloop_job_size() != C.sizeof(VJob):
        _why = "the compiled loop does not match this version (stale cache)"
        return None
    lib.fastloop_run.argtypes = [C.POINTER(VJob)]      # CDLL: the GIL is released
    lib.fastloop_run.restype = C.c_int
    _lib = lib
    return lib


def why() -> str:
    return _why


def layout() -> dict[str, int]:
    """What the compiled loop's C side must agree on, as the Python side has it: the
    structures' sizes and field offsets, the parameter kinds, flags, engines, distributions
    and the ABI (fastloop.c's fastloop_layout() says the same names)."""
    out = {f"sizeof.{n}": C.sizeof(s) for n, s in
           (("vparam", VParam), ("vstmt", VStmt), ("vstep", VStep), ("vjob", VJob))}
    for name, struct, fields in (
            ("vparam", VParam, ("fixed",)), ("vstmt", VStmt, ("len",)),
            ("vstep", VStep, ("flags", "params", "stmts")),
            ("vjob", VJob, ("steps", "conn", "fn", "result_format", "size", "z_e", "rng",
                            "cpool", "padpool", "stop", "arr", "base", "carr", "cs", "lut",
                            "lut_us", "sub_bits", "max_us", "n_buckets", "values", "nums",
                            "failed_step", "sent", "pgres"))):
        for f in fields:
            out[f"{name}.{f}"] = getattr(struct, f).offset
    out.update(P_ID=P_ID, P_LO_PLUS=P_LO_PLUS, P_C=P_C, P_PAD=P_PAD, P_FIXED=P_FIXED,
               P_SAVED=P_SAVED, NO_DRAW=NO_DRAW, F_RESULTS=F_RESULTS, F_COUNT=F_COUNT,
               F_SAVE=F_SAVE, ENG_PG=ENG_PG, ENG_MYSQL=ENG_MYSQL, D_UNIFORM=DISTS["uniform"],
               D_SPECIAL=DISTS["special"], D_ZIPF=DISTS["zipfian"], ABI=ABI)
    return out


def _fn(f) -> int:
    return C.cast(f, _P).value


class _Libpq:
    """The libpq psycopg's connections run on (its own copy in psycopg-binary), for the
    loop's calls and for reading a failed result."""
    _lib = None

    @classmethod
    def get(cls):
        if cls._lib is None:
            paths = {ln.split()[-1] for ln in open("/proc/self/maps")
                     if "/libpq" in ln and ".so" in ln}
            if len(paths) > 1:                 # psycopg-binary's own copy, or the system's
                from psycopg import pq
                paths = {p for p in paths if ("psycopg_binary" in p) == (pq.__impl__ == "binary")}
            if len(paths) != 1:
                raise OSError(f"cannot tell which libpq psycopg uses ({len(paths)} loaded)")
            lib = C.CDLL(paths.pop())
            for name, res, args in (
                    ("PQresultErrorMessage", C.c_char_p, [_P]),
                    ("PQresultErrorField", C.c_char_p, [_P, C.c_int]),
                    ("PQclear", None, [_P])):
                f = getattr(lib, name)
                f.restype, f.argtypes = res, args
            cls._lib = lib
        return cls._lib


def _pool(values: list[bytes]) -> tuple:
    """Equal-length values in one NUL-separated buffer: (buffer, count, stride, length)."""
    n = len(values[0])
    if any(len(v) != n for v in values):
        raise ValueError("the loop's string values must have one length")
    buf = C.create_string_buffer(b"\0".join(values) + b"\0")
    return buf, len(values), n + 1, n


class Job:
    """A VU's compiled event: the C structures, the statements' handles, and what keeps the
    memory they point into alive."""

    def __init__(self, client: Client, vu, ctx, program: list[Step], runs: list[list],
                 statements_slot: int):
        """`ctx`: the VU's drawers (transactions._Ctx); `runs`: program.prepare's."""
        lib = library()
        self.client, self.runs = client, runs
        self._keep: list = []
        j = self.j = VJob()
        tables = ctx.tables
        j.tables, j.size, j.dist = tables, ctx.size, DISTS[ctx.dist]
        j.nsteps = len(program)
        j.steps = steps_arr = (VStep * len(program))()
        self._keep.append(steps_arr)
        for s, st, table_runs in zip(steps_arr, program, runs):
            self._step(s, st, table_runs, tables)
        maxp = max(1, *(len(st.params) for st in program))
        if isinstance(client, PgClient):
            pq = _Libpq.get()
            j.engine, j.conn, j.result_format = ENG_PG, client.pg.pgconn_ptr, client.RESULT_FORMAT
            fns = [pq.PQexecPrepared, pq.PQresultStatus, pq.PQclear, pq.PQcmdTuples,
                   pq.PQntuples]
        else:
            lib_m = client.conn.lib
            j.engine = ENG_MYSQL
            fns = [lib_m.mysql_stmt_execute, lib_m.mysql_stmt_store_result,
                   lib_m.mysql_stmt_num_rows, lib_m.mysql_stmt_affected_rows,
                   lib_m.mysql_stmt_free_result]
        for i, f in enumerate(fns):
            j.fn[i] = _fn(f)
        values, nums = (_P * maxp)(), C.create_string_buffer(24 * maxp)
        j.values, j.nums = C.addressof(values), C.addressof(nums)
        self._keep += [values, nums]
        j.z_e, j.z_s, j.z_top, j.z_span = ctx.zipf
        for i in range(4):
            j.rng[i] = vu.rng.getrandbits(64) | (1 if i == 0 else 0)
        for pool, prefix in ((ctx.c_values, "c"), (ctx.pad_values, "pad")):
            if pool:
                buf, n, stride, length = _pool(pool)
                setattr(j, f"{prefix}pool", C.addressof(buf))
                setattr(j, f"{prefix}n", n)
                setattr(j, f"{prefix}stride", stride)
                setattr(j, f"{prefix}len", length)
                self._keep.append(buf)
        j.stop = C.addressof(vu.stop)
        j.base, j.cs = vu.base(0), statements_slot
        arr = (C.c_uint64 * len(vu.arr)).from_buffer(vu.arr)
        carr = (C.c_uint64 * len(vu.carr)).from_buffer(vu.carr)
        self._keep += [arr, carr]
        j.arr, j.carr = C.addressof(arr), C.addressof(carr)
        j.lut = C.addressof((C.c_uint16 * len(BUCKET_LUT)).from_buffer(BUCKET_LUT))
        j.lut_us, j.sub_bits, j.max_us, j.n_buckets = LUT_US, SUB_BITS, MAX_US, N_BUCKETS
        self.run = lib.fastloop_run
        self.ref = C.byref(j)

    def _step(self, s: VStep, st: Step, table_runs: list, tables: int) -> None:
        s.nparams, s.repeat, s.table_from, s.count_slot = (len(st.params), st.repeat,
                                                           st.table_from, st.count_slot)
        s.flags = (F_SAVE if st.save else 0) | (F_COUNT if st.count_slot >= 0 else 0)
        s.params = params = (VParam * max(1, len(st.params)))()
        for p, (kind, arg) in zip(params, st.params):
            p.kind = kind
            if kind == P_FIXED:
                p.fixed = arg
            else:
                p.arg = arg
        s.stmts = stmts = (VStmt * tables)()       # BEGIN and COMMIT: one statement for all
        for t in range(tables):
            run = table_runs[t if st.table_from != NO_DRAW else 0]
            self._handle(stmts[t], run, len(st.params))
            if getattr(run, "results", False):
                s.flags |= F_RESULTS
        self._keep += [params, stmts]

    def _handle(self, out: VStmt, run, nparams: int) -> None:
        h = run.handle
        if isinstance(h, bytes):                       # PostgreSQL: the statement's name
            name = C.create_string_buffer(h)
            self._keep.append(name)
            out.h = C.addressof(name)
            return
        out.h = h.st                                   # libmariadb: MYSQL_STMT*, buffers
        bufs, lens = (_P * max(1, nparams))(), (_P * max(1, nparams))()
        for k, (addr, length) in enumerate(h.param_addresses()):
            bufs[k], lens[k] = addr, length
        out.buf, out.len = bufs, lens
        self._keep += [bufs, lens]

    def failure(self) -> StatementFailed:
        """The failed statement's error, as the Python client would raise it."""
        j = self.j
        run = self.runs[j.failed_step][j.failed_table
                                       if len(self.runs[j.failed_step]) > 1 else 0]
        if j.engine == ENG_PG:
            pq, res = _Libpq.get(), j.pgres
            j.pgres = None
            if not res:                        # no result at all: the connection's error
                exc = self.client.failed(self.client.pg.error_message, None)
            else:
                try:
                    exc = self.client.failed(pq.PQresultErrorMessage(res),
                                             pq.PQresultErrorField(res, ord("C")))
                finally:
                    pq.PQclear(res)
        else:
            exc = self.client.failed(run.handle.error())
        exc.sent = int(j.sent)
        return exc

