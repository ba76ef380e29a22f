"""claw: a small coding agent, built one chapter at a time.

The same modules exist twice: in ``solution``, the reference implementation, and in ``starter``,
where the code each chapter asks you to write is replaced by stubs that raise ``Todo``. The
tests, the notebooks and your scripts import whichever one ``CLAW_IMPL`` names (``starter``
unless you set it) as ``claw``.
"""
