"""Keeps memories in a claw memory database, for chapter 20's tests of processes writing at once.

    python memory_writer.py DATABASE PROJECT TAG COUNT

opens the database, prints ``ready``, waits for its standard input to end (the test's go, so
that two writers start together), then remembers ``TAG 0``, ``TAG 1``, ... (``COUNT`` of them;
0: until killed) and prints each number on its own line once ``remember`` has returned, that
is, once the memory is committed.
"""

import sys

from claw.memory import MemoryStore


def main() -> None:
    path, project, tag, count = sys.argv[1:5]
    store = MemoryStore(path, project=project)
    store.all()  # open it now: the tables exist before the test says go
    print("ready", flush=True)
    sys.stdin.read()
    number = 0
    while int(count) == 0 or number < int(count):
        store.remember(f"{tag} {number}")
        print(number, flush=True)
        number += 1


if __name__ == "__main__":
    main()
