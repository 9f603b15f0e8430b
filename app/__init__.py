"""Versus: run, watch, compare and export database benchmarks."""
__version__ = "0.1.0"
