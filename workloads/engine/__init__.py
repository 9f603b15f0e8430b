"""The measurement engine: the run context a workload receives (api.py, the only module a
workload imports), the event writer, the virtual-user pool, sampling and measurement
(measure/), database servers (servers/), SQL access with one classification of errors and
the fast clients (sql/), the compiled event loop (loop/) and external tools (tools/)."""
