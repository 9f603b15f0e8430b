import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

pytest_plugins = ["tests.sshd", "tests.dbs", "tests.faults"]
