"""Everything that runs on the benchmark host: the agent, samplers, the event format, workloads.

Shipped alone to the host; imports nothing from ``app``.
"""
