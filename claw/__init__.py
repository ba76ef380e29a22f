"""``import claw`` outside the tests: the package ``CLAW_IMPL`` names, ``starter`` unless set.

The tests, the notebooks and the scripts in the book all say ``import claw`` and never name
``starter`` or ``solution``. Inside pytest the Clawbook plugin maps the name before any test
imports it, so this module never runs there. Everywhere else (a script you save and run, a
Python prompt, a notebook) this module is what ``import claw`` finds first: it makes the alias
and then puts the chosen package in its own place, so ``claw`` *is* ``starter`` (or
``solution``) and ``claw.mock`` is ``starter.mock``.
"""

import sys

from clawbook.harness import impl

sys.modules[__name__] = impl.use()
