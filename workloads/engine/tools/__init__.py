"""External tools (sysbench, pgbench, HammerDB): running one (toolrun.py) and reading its logs
into events (imported.py)."""
