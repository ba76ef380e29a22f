"""Real sessions in the book: scripted runs of the reference claw, rendered by ``claw view``.

A page holds the marker ``<!-- claw-view: NAME -->`` where a session should be shown; the
build replaces it with a frame showing ``sessions/NAME.html`` and a link to it. After the
build, ``on_post_build`` runs every script of ``SESSIONS`` in one child process
(``python -m clawbook.course.session_pages FOLDER``): each makes a project in a temporary
folder, scripts the loopback model's replies (``clawbook.harness.loopback``), runs the
reference claw's ``main`` in it, as a person would type the command, and writes what
``claw view`` makes of the session it recorded. So the pictures in the book are the code's own
output: when the recorder or the view changes, they change with it. The child process keeps
the build's environment and working folder out of reach of what the sessions set.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

from clawbook.harness.loopback import (
    JSONReply,
    LoopbackServer,
    StreamReply,
    completion,
    streamed_call,
    streamed_text,
    usage_body,
)

MARKER = re.compile(r"<!-- claw-view: ([a-z0-9-]+) -->")
"""Where a page shows a session: ``<!-- claw-view: ch31 -->``."""

FOLDER = "sessions"
"""The site's folder for the sessions' pages."""

PRICE = 0.000002
"""The loopback model's made-up price per token, in dollars, so the pages show costs."""


def _usage(tokens_in: int, tokens_out: int) -> dict[str, Any]:
    return usage_body(tokens_in, tokens_out, cost=round((tokens_in + tokens_out) * PRICE, 6))


def calls(name: str, arguments: dict[str, object], call_id: str, tokens: int) -> StreamReply:
    """A streamed turn asking for one call of ``name``; ``tokens`` the prompt's size."""
    return streamed_call(name, arguments, call_id, _usage(tokens, 24))


def says(text: str, tokens: int) -> StreamReply:
    """A streamed turn answering ``text``; ``tokens`` the prompt's size."""
    return streamed_text(text, _usage(tokens, len(text) // 4))


Script = Callable[[Path, LoopbackServer], list[str]]
"""Makes the project's files, scripts the model's replies; returns claw's command line."""


def agentic_loop(project: Path, server: LoopbackServer) -> list[str]:
    """Part I: the loop: look, read, answer."""
    (project / "greet.py").write_text('def greet(name):\n    return "Hello, " + name\n')
    server.add(
        calls("list_dir", {"path": "."}, "call-1", 820),
        calls("read", {"path": "greet.py"}, "call-2", 870),
        says("`greet.py` defines one function, `greet(name)`, which returns a greeting.", 930),
    )
    return ["What does this project do?", "--unguarded"]


def edit(project: Path, server: LoopbackServer) -> list[str]:
    """Part II: a read, an edit answered with its diff."""
    (project / "greet.py").write_text('def greet(name):\n    return "Hello, " + name\n')
    server.add(
        calls("read", {"path": "greet.py"}, "call-1", 840),
        calls(
            "edit",
            {
                "path": "greet.py",
                "old_string": '    return "Hello, " + name',
                "new_string": '    return f"Hello, {name}!"',
            },
            "call-2",
            910,
        ),
        says("`greet` now uses an f-string and ends with an exclamation mark.", 990),
    )
    return ["Make greet use an f-string and end with '!'.", "--unguarded"]


def permissions(project: Path, server: LoopbackServer) -> list[str]:
    """Part III: a command the rules deny, refused before it runs."""
    (project / "build").mkdir()
    server.add(
        calls("bash", {"command": "ls build"}, "call-1", 800),
        calls("bash", {"command": "rm -rf build"}, "call-2", 860),
        says("I may not remove `build/` here: a rule denies `rm`. Delete it yourself.", 930),
    )
    return ["Clean up the build folder."]


LOG = "\n".join(f"line {n}: building module {n} ... ok" for n in range(200))


def compaction(project: Path, server: LoopbackServer) -> list[str]:
    """Part IV: a history over its window, compacted between two steps."""
    (project / "build.log").write_text(LOG)
    server.add(
        calls("read", {"path": "build.log"}, "c1", 100),
        calls("read", {"path": "build.log"}, "c2", 1900),
        JSONReply(completion("The log lists 200 modules, all ok.", usage=_usage(1100, 12))),
        says("All 200 modules built.", 900),
    )
    return ["Did the build pass?", "--unguarded"]


def subagent(project: Path, server: LoopbackServer) -> list[str]:
    """Part V: a search delegated to a subagent."""
    (project / "app.py").write_text("CONFIG = 'config.toml'\n")
    server.add(
        calls(
            "task",
            {"description": "find config", "prompt": "Where is the config named?"},
            "call-1",
            800,
        ),
        calls("grep", {"pattern": "CONFIG"}, "call-2", 600),
        says("app.py names config.toml.", 650),
        says("The config is `config.toml`, named in `app.py`.", 900),
    )
    return ["Where is the config?"]


def looking(project: Path, server: LoopbackServer) -> list[str]:
    """Part VI (this chapter): a session with a search, an edit, a test run and an error."""
    (project / "greet.py").write_text('def greet(name):\n    return "Hello, " + name\n')
    (project / "test_greet.py").write_text(
        "from greet import greet\n\n\ndef test_greet():\n    assert greet('Ada') == 'Hello, Ada!'\n"
    )
    server.add(
        calls("grep", {"pattern": "def greet"}, "call-1", 800),
        calls("edit", {"path": "greet.py", "old_string": "x", "new_string": "y"}, "call-2", 850),
        calls("read", {"path": "greet.py"}, "call-3", 900),
        calls(
            "edit",
            {
                "path": "greet.py",
                "old_string": '    return "Hello, " + name',
                "new_string": '    return f"Hello, {name}!"',
            },
            "call-4",
            960,
        ),
        calls(
            "bash",
            {"command": "python -c 'from greet import greet; print(greet(\"Ada\"))'"},
            "call-5",
            1030,
        ),
        says("Done: `greet('Ada')` now returns `Hello, Ada!`, as the test expects.", 1100),
    )
    return ["Make test_greet.py pass.", "--unguarded"]


RULES = {"permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(ls:*)"]}}
"""The user's rules of the permissions session (chapter 13)."""

SESSIONS: dict[str, tuple[Script, dict[str, str], dict[str, Any]]] = {
    "ch03": (agentic_loop, {}, {}),
    "ch09a": (edit, {}, {}),
    "ch13": (permissions, {}, RULES),
    "ch18": (compaction, {"CLAW_CONTEXT_WINDOW": "1000"}, {"context": {"keep_turns": 1}}),
    "ch21": (subagent, {}, {}),
    "ch31": (looking, {}, {}),
}
"""Each session the book shows: its script, its environment and the user's settings."""


def record(name: str, target: Path) -> None:
    """Run session ``name`` with the reference claw and write its page to ``target``."""
    from solution.main import main

    script, environment, settings = SESSIONS[name]
    with tempfile.TemporaryDirectory(prefix="claw-book-") as scratch:
        base = Path(scratch)
        project, home = base / "project", base / "home"
        project.mkdir()
        (home / ".claw").mkdir(parents=True, mode=0o700)
        (home / ".claw" / "settings.json").write_text(json.dumps(settings))
        os.environ.update(
            HOME=str(home),
            CLAW_CONFIG_DIR=str(home / ".claw"),
            OPENROUTER_API_KEY="sk-or-book",
            NO_COLOR="1",
            **environment,
        )
        os.chdir(project)
        with LoopbackServer() as server:
            arguments = script(project, server)
            sys.stdin = io.StringIO("")
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()) as err:
                main([*arguments, "--model", "book/model", "--base-url", server.base_url])
                status = main(["view", "-o", str(target)])
            if status != 0:
                raise RuntimeError(f"claw view of session {name} failed: {err.getvalue()}")
        target.chmod(0o644)  # a page of the book, made from a scratch session: for everyone
        for variable in environment:
            del os.environ[variable]
        os.chdir(base.parent)


def record_all(folder: Path) -> None:
    """Every session of ``SESSIONS``, as ``folder/NAME.html``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in SESSIONS:
        record(name, folder / f"{name}.html")


def frame(name: str, page_url: str) -> str:
    """The HTML that shows session ``name`` on the page at ``page_url``: a frame and a link."""
    if name not in SESSIONS:
        raise PluginError(f"claw-view: no session {name!r} (known: {', '.join(SESSIONS)})")
    up = "../" * page_url.count("/")
    source = f"{up}{FOLDER}/{name}.html"
    return (
        f'<iframe class="claw-view" src="{source}" title="a claw session, as claw view shows it" '
        'sandbox loading="lazy" style="width: 100%; height: 32rem; border: 1px solid '
        'var(--md-default-fg-color--lightest); border-radius: 4px;"></iframe>\n\n'
        f'<p><a href="{source}">Open the session on its own page</a>, as '
        "<code>claw view</code> wrote it.</p>"
    )


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace each ``<!-- claw-view: NAME -->`` with the frame that shows that session."""
    return MARKER.sub(lambda found: frame(found[1], page.url), markdown)


def on_post_build(config: Any) -> None:
    """Record every session and write its page into the site (one child process)."""
    root = Path(config["config_file_path"]).parent
    paths = [str(root), os.environ.get("PYTHONPATH", "")]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in paths if path)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "clawbook.course.session_pages",
            str(Path(config["site_dir"]) / FOLDER),
        ],
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise PluginError(f"recording the book's sessions failed:\n{done.stderr[-3000:]}")


if __name__ == "__main__":
    record_all(Path(sys.argv[1]))
