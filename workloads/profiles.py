"""Render a server profile's configuration text for one host and one run (stdlib only: this
runs on the benchmark host, where the host's RAM and cores are known).

A profile's text may hold expressions in double braces, written in terms of the host and the
run:

    shared_buffers = {{ ram_mb * 0.25 | int }}MB
    max_connections = {{ max(100, clients * 2 + 20) }}

An expression is arithmetic only: numbers, the names in NAMES, + - * / // %, parentheses,
the functions min, max, int, round, ceil, floor, and filters after a bar (`x | int`,
`x | round`). Nothing is evaluated as Python: the expression is parsed and walked over a
fixed list of node types, so `{{ __import__('os') }}` is refused, not run.
"""
from __future__ import annotations

import ast
import math
import os
import re

NAMES = ("ram_mb", "ram_gb", "cores", "clients")
FUNCTIONS = {"min": min, "max": max, "int": int, "round": round, "ceil": math.ceil,
             "floor": math.floor}
FILTERS = {"int": int, "round": round, "ceil": math.ceil, "floor": math.floor}
_EXPR = re.compile(r"\{\{(.*?)\}\}", re.S)
_MAX_ABS = 1e15          # larger results are a mistake in a config value, not a setting


class ProfileError(ValueError):
    """A profile that cannot be rendered, said as a sentence naming the line."""


def host_context(clients: int | None = None) -> dict[str, float]:
    """ram_mb, ram_gb and cores of this machine, plus the run's client count when known."""
    ram_kb = 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    ram_kb = int(line.split()[1])
                    break
    except (OSError, ValueError, IndexError):
        pass
    if not ram_kb and hasattr(os, "sysconf"):
        try:
            ram_kb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 1024
        except (ValueError, OSError):
            ram_kb = 0
    ctx: dict[str, float] = {"ram_mb": ram_kb // 1024, "ram_gb": ram_kb // (1024 * 1024),
                             "cores": os.cpu_count() or 1}
    if clients is not None:
        ctx["clients"] = int(clients)
    return ctx


def _fmt(value: float) -> str:
    if isinstance(value, bool):
        raise ProfileError("a true/false value is not a setting value")
    if isinstance(value, int):
        return str(value)
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6g}" if abs(value) < 1e6 else str(round(value))


class _Eval:
    def __init__(self, ctx: dict[str, float], where: str):
        self.ctx, self.where = ctx, where

    def fail(self, what: str) -> ProfileError:
        return ProfileError(f"{self.where}: {what}; an expression may use numbers, "
                            f"{', '.join(NAMES)}, + - * / // %, parentheses, "
                            f"{', '.join(FUNCTIONS)} and filters such as '| int'")

    def __call__(self, node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return self(node.body)
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
                return node.value
            raise self.fail(f"{node.value!r} is not a number")
        if isinstance(node, ast.Name):
            if node.id not in NAMES:
                raise self.fail(f"unknown name {node.id!r}")
            if node.id not in self.ctx:
                raise ProfileError(f"{self.where}: the value of {node.id!r} is not known for "
                                   f"this run")
            return self.ctx[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = self(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.BitOr):          # `expr | filter`
                f = node.right
                if not (isinstance(f, ast.Name) and f.id in FILTERS):
                    raise self.fail("after '|' comes a filter: " + ", ".join(FILTERS))
                return self._checked(FILTERS[f.id](self(node.left)))
            ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
                   ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
                   ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}
            op = ops.get(type(node.op))
            if op is None:
                raise self.fail(f"the operator {type(node.op).__name__} is not allowed")
            a, b = self(node.left), self(node.right)
            try:
                return self._checked(op(a, b))
            except ZeroDivisionError:
                raise ProfileError(f"{self.where}: division by zero") from None
        if isinstance(node, ast.Call):
            fn = node.func
            if not (isinstance(fn, ast.Name) and fn.id in FUNCTIONS) or node.keywords:
                raise self.fail("only min, max, int, round, ceil and floor can be called")
            args = [self(a) for a in node.args]
            if not args or (fn.id not in ("min", "max") and len(args) > 1):
                raise self.fail(f"{fn.id}() takes {'numbers' if fn.id in ('min', 'max') else 'one number'}")
            return self._checked(FUNCTIONS[fn.id](*args))
        raise self.fail(f"'{ast.unparse(node)}' is not allowed")

    def _checked(self, v: float) -> float:
        if abs(v) > _MAX_ABS:
            raise ProfileError(f"{self.where}: the result {v:g} is too large for a setting")
        return v


def evaluate(expr: str, ctx: dict[str, float], where: str = "expression") -> float:
    text = expr.strip()
    if not text:
        raise ProfileError(f"{where}: empty expression in {{{{ }}}}")
    if len(text) > 500:
        raise ProfileError(f"{where}: the expression is too long")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ProfileError(f"{where}: {{{{ {text} }}}} is not a valid expression "
                           f"({exc.msg})") from None
    return _Eval(ctx, f"{where}: {{{{ {text} }}}}")(tree)


def render(text: str, ctx: dict[str, float]) -> str:
    """The configuration text with every {{ expression }} replaced by its value."""
    out = []
    for lineno, line in enumerate(text.splitlines(keepends=True), 1):
        if "{{" not in line and "}}" not in line:
            out.append(line)
            continue
        rendered = _EXPR.sub(lambda m: _fmt(evaluate(m.group(1), ctx, f"line {lineno}")), line)
        if "{{" in rendered or "}}" in rendered:
            raise ProfileError(f"line {lineno}: an expression is not closed with '}}}}'")
        out.append(rendered)
    return "".join(out)


def check(text: str) -> None:
    """Raise ProfileError when the text cannot be rendered for any host (uses sample values)."""
    render(text, {"ram_mb": 16384, "ram_gb": 16, "cores": 8, "clients": 16})


# --- reading rendered configuration text ----------------------------------------------------

def pg_settings(text: str) -> dict[str, str]:
    """name -> value of a postgresql.conf fragment (comments and blank lines ignored)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        s = line.split("#", 1)[0].strip() if "'" not in line else _strip_pg_comment(line)
        if s:
            name, value = pg_assignment(s)
            out[name.lower()] = value
    return out


def pg_assignment(s: str) -> tuple[str, str]:
    """`name = value` or `name value` of one comment-free postgresql.conf line, unquoted."""
    name, sep, value = s.partition("=")
    if not sep:
        name, _, value = s.partition(" ")
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == "'":
        value = value[1:-1].replace("''", "'")
    return name.strip(), value


def _strip_pg_comment(line: str) -> str:
    inq = False
    for i, c in enumerate(line):
        if c == "'":
            inq = not inq
        elif c == "#" and not inq:
            return line[:i].strip()
    return line.strip()


MYSQL_SERVER_GROUPS = ("mysqld", "server", "mariadb", "mariadbd", "mysqld_safe")


def cnf_options(text: str) -> list[tuple[str, str | None]]:
    """(name, value or None) for the server's groups of a my.cnf fragment, in order.

    Lines before any [group] count as [mysqld]. Names keep dashes or underscores as written.
    """
    out: list[tuple[str, str | None]] = []
    group = "mysqld"
    for raw in text.splitlines():
        s = raw.strip()
        if not s or s[0] in "#;":
            continue
        if s.startswith("[") and s.endswith("]"):
            group = s[1:-1].strip().lower()
            continue
        if s.startswith("!"):
            raise ProfileError(f"{s.split()[0]} is not allowed in a profile: a managed server "
                               f"reads no other option files")
        if group not in MYSQL_SERVER_GROUPS and not group.startswith(("mariadb-", "mysqld-")):
            continue
        name, sep, value = s.partition("=")
        name = name.strip()
        if not sep:
            out.append((name, None))
            continue
        value = value.split(" #", 1)[0].strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out.append((name, value))
    return out


def norm_mysql_name(name: str) -> str:
    n = name.strip().lower().replace("-", "_")
    for prefix in ("loose_", "maximum_"):
        if n.startswith(prefix):
            n = n[len(prefix):]
    return n
