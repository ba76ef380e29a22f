"""Take claw's secrets out of its environment, where the commands it runs could read them.

A process's environment is not only ``os.environ``. The kernel keeps a copy of the strings a
process was started with, in the process's own memory, and shows it to every process of the
same user as ``/proc/PID/environ``. ``os.environ.pop`` and ``unsetenv`` change Python's dict and
the C ``environ`` array, never those bytes: a ``cat /proc/$PPID/environ`` run by the bash tool
would print claw's ``OPENROUTER_API_KEY`` all the same. The one rule of this module: a secret
is moved into memory only claw reads, and its bytes in the original block are overwritten.

``hide_secrets()`` runs once, first thing, in the ``claw`` command. It takes every variable
``is_secret`` names out of ``os.environ`` (so no child inherits it), overwrites it in the block
(found between ``env_start`` and ``env_end`` of ``/proc/self/stat``), and marks the process not
dumpable, so that other processes of the user can no longer read its memory through
``/proc/PID/mem`` either. ``secret(name)`` gives a hidden value back to the code that needs it.
Only Linux has this block in ``/proc``; elsewhere the variables are still taken out of
``os.environ``, and the rest is skipped.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Iterable, MutableMapping
from pathlib import Path

from .tools.bash import is_secret

PR_SET_DUMPABLE = 4
"""``prctl`` option (``<linux/prctl.h>``): 0 makes ``/proc/PID/mem``, ``environ`` and ``maps``
readable by root only, and refuses ``ptrace`` from processes of the same user."""

_hidden: dict[str, str] = {}


def hide_secrets(environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Take every secret-looking variable out of ``environ``; returns their names, sorted.

    ``environ`` defaults to ``os.environ``: then the values are kept for ``secret``, their
    bytes in the original block are overwritten, and the process is made not dumpable. Any
    other mapping only loses the variables.
    """
    own = environ is None or environ is os.environ
    environ = os.environ if environ is None else environ
    names = sorted(name for name in environ if is_secret(name))
    taken = {name: environ.pop(name) for name in names}
    if own:
        _hidden.update(taken)
        wipe_environ_block(names)
        forbid_memory_reads()
    return names


def secret(name: str) -> str | None:
    """The value of variable ``name``: from ``os.environ``, else as ``hide_secrets`` kept it."""
    return os.environ.get(name, _hidden.get(name))


def environ_block() -> tuple[int, int] | None:
    """Where the environment this process was started with lies: ``(start, end)`` addresses.

    Fields 50 and 51 of ``/proc/self/stat`` (Linux 3.5 and later); ``None`` without them.
    """
    try:
        stat = Path("/proc/self/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # field 3 (state) is fields[0]
    if len(fields) < 49:
        return None
    start, end = int(fields[47]), int(fields[48])
    return (start, end) if 0 < start < end else None


def wipe_environ_block(names: Iterable[str]) -> int:
    """Overwrite with zero bytes every ``NAME=value`` of the original block whose name is given.

    Returns how many entries were overwritten. Nothing points at these bytes any more once the
    variables are out of ``os.environ`` (``unsetenv`` removed them from the C ``environ``).
    """
    block = environ_block()
    wanted = {os.fsencode(name) for name in names}
    if block is None or not wanted:
        return 0
    start, end = block
    data = ctypes.string_at(start, end - start)
    wiped = offset = 0
    for entry in data.split(b"\0"):
        name, equals, _ = entry.partition(b"=")
        if equals and name in wanted:
            ctypes.memset(start + offset, 0, len(entry))
            wiped += 1
        offset += len(entry) + 1
    return wiped


def forbid_memory_reads() -> None:
    """Make this process not dumpable (Linux): its memory is then closed to the user's processes.

    The hidden values live in claw's memory; without this, a command of the same user could
    read them from ``/proc/$PPID/mem``. A child gets its own, dumpable state back when it
    executes a program. Where ``prctl`` is missing, nothing happens.
    """
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
