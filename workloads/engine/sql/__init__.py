"""SQL access for the agent and the virtual users: connections and sessions (db.py), the one
classification of database errors (errors.py), the fast clients of the hot loops
(clients.py, libmariadb.py)."""
