"""An offline harness that measures claw on tasks in scratch git repositories (chapter 25).

``tasks`` is the task format (SWE-bench's instance fields plus claw's own), ``scratch`` makes
a task's repository and checks what the agent left in it, ``harness`` runs each task in its
own worker process under a time limit, ``report`` adds the runs up (with an interval, not
one number) and draws the comparison, ``shipped`` holds the tasks that come with claw, and
``command`` is ``claw eval``.
"""
