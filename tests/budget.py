"""How many examples a property test tries: all of them in CI and ``clawbook verify``, fewer in
the learner's quick loop.

``clawbook check``, ``watch`` and ``status`` set ``CLAWBOOK_EXAMPLES=quick``, so a chapter's
check answers in seconds; a plain ``pytest``, ``clawbook verify`` and CI try every example. A
property test writes ``@settings(max_examples=examples(200))``; tests that name no count get
the profile ``tests/conftest.py`` loads.
"""

import os

QUICK = os.environ.get("CLAWBOOK_EXAMPLES") == "quick"
QUICK_SHARE = 10
"""In the quick loop a property test tries a tenth of its examples (at least ``QUICK_LEAST``)."""
QUICK_LEAST = 5


def examples(full: int) -> int:
    """``full`` in CI and verify; a tenth of it (at least 5) in the learner's quick loop."""
    return max(QUICK_LEAST, full // QUICK_SHARE) if QUICK else full
