"""Clawbook's learner and instructor tooling: status, check, hint, watch, reset, verify, stubs."""
