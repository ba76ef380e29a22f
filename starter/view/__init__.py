"""``claw view``: a session's transcript as one static HTML page, to read after the fact.

Two passes: ``model`` reads the transcript (chapter 22) and folds it into a ``SessionView``
(turns, steps, tool calls, subagents, compactions, rewinds); ``page`` renders that as one
file, readable without script or network, every text from the session escaped. ``command``
is the ``claw view`` command.
"""
