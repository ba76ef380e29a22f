"""The learner's commands: status, check, hint, watch, reset and restore.

None of them reads ``solution/``: a class may be handed only ``starter/``, ``tests/`` and the book.
"""
