"""TPROC-C's transaction mix, declared once: the types and weights, counters, keying and
think times, and the two ways a transaction fails."""
from __future__ import annotations

TYPES = ("new-order", "payment", "order-status", "delivery", "stock-level")
WEIGHTS = (45, 43, 4, 4, 4)                      # the standard mix, declared once
COUNTERS = ("new_orders", "commits", "rollbacks", "retries")
NEW_ORDERS, COMMITS, ROLLBACKS, RETRIES = range(4)
NO, PAY, OS, DLV, SL = range(5)
# TPC-C 5.2.5.7 keying times and 5.2.5.4 mean think times, seconds, by type
KEYING = (18.0, 3.0, 2.0, 2.0, 2.0)
THINK = (12.0, 12.0, 10.0, 5.0, 5.0)
MAX_ATTEMPTS = 20
BATCH = 64                      # transactions whose inputs are drawn ahead at a time
COMMIT, ROLLBACK = "commit", "rollback"


class Retry(Exception):
    """A deadlock or serialization failure: the attempt was rolled back; try again."""


class TxnError(Exception):
    """Any other failure of one transaction (rolled back)."""
