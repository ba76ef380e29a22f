"""The instructor's and author's commands and what they rest on.

``verify`` with its demand check, ``grade`` with its report and sandbox, and ``stubs``.
"""
