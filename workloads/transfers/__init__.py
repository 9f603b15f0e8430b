"""transfers: a payments workload (funds transfers across six tables), as Reserva publishes
it (github.com/calmitchell617/reserva) and its PostgreSQL-vs-MySQL chart shows it: transfers
per second over the run.

Users with auth tokens own accounts; each transfer takes four round trips: check the
caller's token; lock both accounts in id order and read their balances; move the money (two
balance updates and a transfer row); write the audit and balance-history rows and commit.
Insufficient funds end the transfer as a business rejection (counted apart from errors);
deadlocks and serialization failures are retried (counted). After every run, and with
`versus check transfers TARGET`, money must be conserved: the balances sum to what was
loaded, every transfer has its two audit rows, no balance is negative.
"""
from __future__ import annotations

from ..params import ChartSpec, MetricSpec, Param, PhaseSpec, WorkloadSpec

ROUND_TRIPS = ("rt1-token", "rt2-lock", "rt3-move", "rt4-commit")

SPEC = WorkloadSpec(
    name="transfers",
    title="Transfers",
    description="Payments: funds transfers between accounts in four round trips across six "
                "tables (token check, locks in id order, balance moves, audit and commit); "
                "transfers per second, and money conserved.",
    params=(
        Param("users", "int", 1000, "Users, each with an auth token.", min=1,
              max=10_000_000, group="schema"),
        Param("accounts-per-user", "int", 2, "Accounts per user.", min=1, max=100,
              group="schema"),
        Param("initial-balance", "int", 10_000, "Balance of every account at load, in whole "
              "currency units.", min=1, max=1_000_000_000_000, group="schema"),
        Param("rebuild", "bool", False, "Drop and load the tables again even when they match "
              "(the balances and transfers of earlier runs are kept otherwise).",
              group="schema"),
        Param("clients", "int", 4, "Concurrent clients, one process and one connection each.",
              min=1, max=1024, group="driver"),
        Param("max-amount", "int", 2000, "Amounts are drawn uniformly from 1 to this; a "
              "transfer larger than the payer's balance is rejected.", min=1,
              max=1_000_000_000_000, group="driver"),
        Param("deletes", "bool", False, "Deletes as Reserva's --deletes: every 20th transfer "
              "of a client also deletes one of that client's transfers made delete-lag "
              "transfers earlier (its audit rows stay).", group="driver"),
        Param("delete-lag", "int", 1000, "With deletes: how many of its own transfers "
              "behind a client deletes (Reserva: 1000). No deletes until a client has made "
              "this many transfers.", min=1, max=1_000_000, group="driver"),
        Param("warmup", "int", 0, "Seconds of transfers before the measured period (not "
              "counted).", min=0, max=86400, unit="s"),
        Param("duration", "int", 60, "Seconds measured.", min=1, max=30 * 86400, unit="s"),
    ),
    native=True,
    dialects=("postgres", "mysql"),
    phases=(
        PhaseSpec("load", "load", unit="rows/s"),
        PhaseSpec("warmup", "warmup", seconds="warmup", when="warmup > 0"),
        PhaseSpec("measure", "measured", seconds="duration"),
    ),
    metrics=(
        MetricSpec("transfers", "Transfers", "transfers/s", summary="rate",
                   series="throughput", headline=True,
                   source="transfers the clients committed / measured time (the mean)"),
        MetricSpec("transfer-p99", "p99 per transfer", "ms p99", summary="lat_ms.transfer.p99",
                   series="latency.transfer.p99", lower_is_better=True,
                   source="one transfer's four round trips and any retries, from the "
                          "clients' latency histograms"),
        MetricSpec("transfer-rejections", "Rejections", "/s", summary="counters.rejections/s",
                   series="counter.rejections", role="detail",
                   source="transfers refused for insufficient funds (not errors)"),
        MetricSpec("transfer-retries", "Retries", "/s", summary="counters.retries/s",
                   series="counter.retries", role="detail", lower_is_better=True,
                   source="deadlocks and serialization failures rolled back and retried"),
        MetricSpec("server-commits", "server", "commits", summary="result.server_commits",
                   source="@result.server_commits_source", role="check"),
        MetricSpec("client-commits", "client", "transfers + rejections",
                   summary="result.client_commits", role="check",
                   source="transfers and rejections the clients committed"),
        MetricSpec("money-violations", "money check", "violations",
                   summary="result.money_violations", source="@result.money_source",
                   role="check", lower_is_better=True),
        MetricSpec("transfer-cpu", "client CPU", "µs per transfer",
                   summary="result.client_cpu_us_per_transfer", role="check",
                   lower_is_better=True, source="getrusage of the clients"),
    ) + tuple(
        MetricSpec(f"{rt}-p99", f"{rt} p99", "ms", summary=f"timings.{rt}.p99",
                   series=f"latency.{rt}.p99", role="detail", lower_is_better=True,
                   source="one round trip of a transfer, from the clients' histograms")
        for rt in ROUND_TRIPS),
    charts=(
        ChartSpec("transfers", "Transfers per second", "/s",
                  ("throughput", "counter.rejections", "counter.retries"),
                  labels=("transfers", "rejections", "retries"),
                  description="transfers the clients committed per second, with the "
                              "rejections (insufficient funds) and retries (deadlocks, "
                              "serialization failures)"),
        ChartSpec("round-trips", "Latency per round trip · p99", "ms",
                  tuple(f"latency.{rt}.p99" for rt in ROUND_TRIPS)
                  + ("latency.transfer.p99",),
                  labels=ROUND_TRIPS + ("transfer",),
                  description="p99 of each of a transfer's four round trips and of the "
                              "whole transfer, per interval"),
    ),
    throughput_unit="transfers/s",
    op_count="counters.transfers",
    op_name="transfer",
    quick={"users": 50, "accounts-per-user": 2, "clients": 2},
    runner="workloads.transfers.transactions:run",
    checker="workloads.transfers.check:run_check",
)
