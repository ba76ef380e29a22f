"""The test harness the suite runs on.

The pytest plugin, the runner and its results, failure frames, the network guard, the loopback
server, and the switch between ``starter/`` and ``solution/``.
"""
