"""Sentences built from the clauses the agent and the remote layer give (lower-case, no full
stop, so they read inside a longer sentence too)."""
from __future__ import annotations


def as_sentence(clause: str, end: str = ".") -> str:
    """The clause as a sentence of its own: first letter upper-cased (the rest as it is:
    "QPS", "PostgreSQL"), `end` added unless it already ends so."""
    text = clause.strip()
    if not text:
        return text
    text = text[:1].upper() + text[1:]
    return text if not end or text.endswith(end) else text + end
