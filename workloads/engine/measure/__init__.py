"""What measures a run besides its workload's own counters: the host (/proc), CPU by process
group and where the server runs, the client's limit, the server's counters, outages and
perf."""
