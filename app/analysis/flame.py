"""Flame graphs of the folded stacks a run's ``profile`` events carry: the layout both the app
draws and the SVG export writes, so the two show the same picture. No Qt.

A stack ``"server.fg;main;PostgresMain;exec_simple_query"`` with N samples adds N to every
frame on its path; a frame's width is its share of all samples, its children sit on top of
it (root at the bottom), siblings in name order.
"""
from __future__ import annotations

import html
import re
import zlib
from dataclasses import dataclass, field
from typing import Any, Iterable


@dataclass
class Node:
    name: str
    count: int = 0
    children: dict[str, "Node"] = field(default_factory=dict)


@dataclass(frozen=True)
class Frame:
    name: str
    depth: int            # 0 = the root frame (the process group)
    x: float              # left edge, share of all samples (0..1)
    width: float          # share of all samples
    count: int
    path: str             # "a;b;c": the frame with its callers, to zoom on


def tree(stacks: Iterable[Iterable[Any]]) -> Node:
    root = Node("all")
    for stack, count in stacks:
        n = int(count)
        if n <= 0:
            continue
        root.count += n
        node = root
        for name in str(stack).split(";"):
            child = node.children.get(name)
            if child is None:
                child = node.children[name] = Node(name)
            child.count += n
            node = child
    return root


def layout(stacks: Iterable[Iterable[Any]], focus: str = "", min_width: float = 0.0
           ) -> tuple[list[Frame], int]:
    """Frames to draw and the sample total. ``focus`` ("a;b"): that frame fills the width
    and only what it called is shown above it (its callers stay below, full width)."""
    root = tree(stacks)
    total = root.count
    if not total:
        return [], 0
    frames: list[Frame] = []
    node, path = root, []
    for depth, name in enumerate([p for p in focus.split(";") if p]):
        nxt = node.children.get(name)
        if nxt is None:
            break
        node = nxt
        path.append(name)
        frames.append(Frame(name, depth, 0.0, 1.0, nxt.count, ";".join(path)))
    scale = node.count or 1

    def walk(n: Node, depth: int, x: float, prefix: list[str]) -> None:
        for name in sorted(n.children):
            c = n.children[name]
            w = c.count / scale
            if w >= min_width:
                p = prefix + [name]
                frames.append(Frame(name, depth, x, w, c.count, ";".join(p)))
                walk(c, depth + 1, x, p)
            x += w

    walk(node, len(path), 0.0, path)
    return frames, total


def colour(name: str) -> str:
    """A warm colour fixed by the frame's name; process-group roots in the groups' blues."""
    if name.startswith("server.") or name in ("driver", "monitor", "other"):
        return "#7fa7d9" if name.startswith("server.") else "#b9b9b9"
    h = zlib.crc32(name.encode())
    r = 205 + h % 50
    g = 90 + (h >> 8) % 130
    b = 40 + (h >> 16) % 55
    return f"#{r:02x}{g:02x}{b:02x}"


def svg(stacks: Iterable[Iterable[Any]], title: str, width: int = 1200, row: int = 17,
        focus: str = "", subtitle: str = "") -> str:
    """A self-contained SVG flame graph; each frame's tooltip gives its samples and share."""
    frames, total = layout(list(stacks), focus, min_width=0.5 / width)
    depth = max((f.depth for f in frames), default=0) + 1
    top = 44 if subtitle else 30
    height = top + depth * row + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" '
           f'font-size="11">',
           '<rect width="100%" height="100%" fill="#ffffff"/>',
           f'<text x="{width / 2:.0f}" y="18" text-anchor="middle" font-size="15" '
           f'fill="#222">{html.escape(title)}</text>']
    if subtitle:
        out.append(f'<text x="{width / 2:.0f}" y="34" text-anchor="middle" fill="#666">'
                   f'{html.escape(subtitle)}</text>')
    pad = 10
    span = width - 2 * pad
    for f in frames:
        x = pad + f.x * span
        w = f.width * span
        y = height - 10 - (f.depth + 1) * row
        share = 100.0 * f.count / total
        out.append(f'<g><title>{html.escape(f.name)} ({f.count:,} samples, {share:.2f} %)'
                   f'</title><rect x="{x:.2f}" y="{y}" width="{max(w - 0.5, 0.1):.2f}" '
                   f'height="{row - 1}" rx="2" fill="{colour(f.name)}"/>')
        chars = int((w - 6) / 6.5)
        if chars >= 3:
            label = f.name if len(f.name) <= chars else f.name[:chars - 2] + ".."
            out.append(f'<text x="{x + 3:.2f}" y="{y + row - 5}" fill="#111">'
                       f'{html.escape(label)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def profiles(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """A run's profile events that hold stacks, in order (one per profiled phase)."""
    return [e for e in events if e.get("kind") == "profile" and isinstance(e.get("stacks"),
                                                                          list)]


def short_pids(text: str, keep: int = 3) -> str:
    """A perf command line with a long ``-p`` list shortened for display."""
    def cut(m: "re.Match") -> str:
        pids = m.group(1).split(",")
        return m.group(0) if len(pids) <= keep else \
            f"-p {','.join(pids[:keep])},… ({len(pids)} processes)"
    return re.sub(r"-p ([\d,]+)", cut, text)


def describe(profile: dict[str, Any]) -> str:
    """Where a profile comes from, for a subtitle or a tooltip."""
    return (f"{profile.get('samples', 0):,} samples of {profile.get('event', '?')} at "
            f"{profile.get('frequency', '?')} Hz over {profile.get('seconds', 0):g} s in phase "
            f"{profile.get('phase', '?')} ({short_pids(str(profile.get('source', 'perf record')))}"
            f"; call graph {profile.get('call_graph', '?')})")


def run_profiles(file: str, run_id: str) -> list[dict[str, Any]]:
    """The profile events stored for one run of a session file."""
    from app.store.session import SessionFile
    with SessionFile(file) as s:
        return profiles(s.events(run_id, kinds=("profile",)))


def run_svg(file: str, run_id: str, label: str, phase: str | None = None) -> str:
    """The flame graph of one run's profile (of ``phase``, else its first) as SVG text;
    ValueError with a sentence when there is none."""
    found = run_profiles(file, run_id)
    if phase:
        found = [p for p in found if p.get("phase") == phase]
    if not found:
        where = f" in phase {phase}" if phase else ""
        raise ValueError(f"run {run_id} has no CPU profile{where}: record one with "
                         f"'versus run … --profile SECONDS'")
    prof = found[0]
    return svg(prof["stacks"], f"{label}: CPU of the server in {prof.get('phase', '?')}",
               subtitle=describe(prof))
