"""The sbtest tables as sysbench creates them, and the sysbench tests over them: the schema
per dialect, the loader, the value pickers (ids, c and pad strings as sysbench draws them),
the tests' catalogue and events, and the runner of one test as a phase. Shared by the micro
suite, point-query, perf-trace and sysbench (which reuses tables this loader made); not a
workload itself."""
