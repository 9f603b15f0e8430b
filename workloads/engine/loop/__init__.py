"""The virtual user's event loops: a test's event as steps (program.py), run by the compiled
loop (fastloop.c/.py) or a generated Python function (run.py)."""
