#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image (Ubuntu).
# It installs Clawbook, the course's tests and their dependencies; run_autograder then grades
# each submission with them. See "Grading on Gradescope" in book/appendix-grading.md.
#
# Two ways to give the image the course:
#   1. the autograder zip holds the course repository itself (setup.sh and run_autograder at
#      the zip's top, next to pyproject.toml and tests/): nothing to edit here;
#   2. the zip holds only these two scripts: set CLAWBOOK_REPO (and CLAWBOOK_REF) below to
#      your course's repository, which must then be readable from Gradescope's servers.
set -euo pipefail

CLAWBOOK_REPO="${CLAWBOOK_REPO:-https://github.com/YOUR-COURSE/clawbook.git}"
CLAWBOOK_REF="${CLAWBOOK_REF:-main}"
PYTHON="${PYTHON:-python3.11}"

# bubblewrap: `clawbook grade` runs the submission in a sandbox of its own where the container
# lets it create namespaces; where not, it says so in report.html and grades without it.
apt-get install -y "$PYTHON" "$PYTHON-venv" git bubblewrap

if [ -f /autograder/source/pyproject.toml ] && [ -d /autograder/source/tests ]; then
    course=/autograder/source
else
    git clone --depth 1 --branch "$CLAWBOOK_REF" "$CLAWBOOK_REPO" /autograder/clawbook
    course=/autograder/clawbook
fi
ln -sfn "$course" /autograder/course

"$PYTHON" -m venv /autograder/venv
/autograder/venv/bin/python -m pip install --quiet --upgrade pip
/autograder/venv/bin/python -m pip install --quiet -e "$course[dev]"

# Prove the image works before any learner relies on it: the reference passes its own tests.
cd "$course"
CLAW_IMPL=solution /autograder/venv/bin/python -m pytest -q -p no:cacheprovider
