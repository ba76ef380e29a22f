"""claw: a small coding agent, built one chapter at a time.

This is the reference implementation. The package ``starter`` has the same modules, with the code
each chapter asks you to write replaced by stubs.
"""
