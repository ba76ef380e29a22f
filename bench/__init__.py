"""Benchmarks for claw's streaming, agent loop and latency; run with ``python -m bench.run``."""
