# ruff: noqa: E501
"""Make the recorded sessions of chapter 18 (``sessions.json``): run once, offline, by hand.

Each session is a realistic coding-agent history (a system prompt, a task, tool calls that read
claw's own source files, run tests and edit code, the results, the model's remarks), with the
prompt size of every request counted by a real BPE tokenizer: the ``tokenizer.json`` that the
``anthropic`` Python SDK ships in version 0.34.2 for its old, local token counting, run by
the ``tokenizers`` library. Neither is a dependency of claw, and nothing is downloaded when the
tests run: the counts are stored in the JSON file. To remake it::

    python -m venv /tmp/tok && /tmp/tok/bin/pip install tokenizers pydantic
    pip download anthropic==0.34.2 --no-deps -d /tmp && unzip /tmp/anthropic-0.34.2-*.whl \
        anthropic/tokenizer.json -d /tmp
    /tmp/tok/bin/python tests/data/context/make_sessions.py /tmp/anthropic/tokenizer.json

A request's count is the tokens of the tool definitions plus, per message, its role, its text,
its tool calls as JSON and a few tokens of framing: the way a chat template lays a request out.
It is not any provider's exact template, which is why the chapter calibrates its ratio from
what the provider reports instead of trusting a formula.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from solution.types import Message, ToolCall, dump_messages  # noqa: E402

FRAMING = 4
"""Tokens a chat template spends on each message's role markers."""

TOOLS = [
    {"name": "read", "description": "Read a text file.", "parameters": {"path": "string"}},
    {"name": "bash", "description": "Run a shell command.", "parameters": {"command": "string"}},
    {"name": "edit", "description": "Replace text in a file.", "parameters": {"path": "string"}},
    {
        "name": "grep",
        "description": "Search files for a pattern.",
        "parameters": {"pattern": "string"},
    },
]

SYSTEM = (
    "You are claw, a coding agent. You work in the user's repository with the tools you are "
    "given: read files before you change them, keep changes small, run the tests after each "
    "change, and say briefly what you did. Never invent file contents."
)

TASKS = [
    "The loop's truncate_output cuts inside a combining character sometimes. Find out why and fix it.",
    "Add a --max-cost option to the claw command and make the budget end the run before the call that would pass it.",
    "Les tests de permissions échouent sur Windows : les chemins avec des barres obliques inverses ne correspondent pas. Corrige-le, s'il te plaît. 🙏",
]

REMARKS = [
    "Let me look at how this is wired before changing anything.",
    "The tests pass now; one more check on the edge case with an empty string.",
    "That function is only called from two places, so the change stays local.",
    "I'll read the test file to see what the contract demands exactly.",
    "The failure comes from the index arithmetic: `cut` can land on a continuation byte.",
    "Die Änderung ist klein: eine Zeile in der Schleife, dazu ein Test. 日本語のテキストでも確認します。",
]


def source_files() -> list[Path]:
    """claw's own modules: realistic file contents for the read calls."""
    return sorted((ROOT / "solution").glob("*.py"))


MARKERS = ("# --8<--", "# region ", "# endregion", "# more: ")
"""The book's and the course's markers: left out, so no tool mistakes this data for code."""


def read_source(path: Path) -> str:
    """A source file without the course's marker lines."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.strip().startswith(MARKERS))


def pytest_output(rng: random.Random) -> str:
    """Output shaped like a pytest run."""
    lines = ["============================= test session starts =============================="]
    names = ["test_loop_truncate", "test_stream_usage", "test_permissions_paths", "test_plan_cycle"]
    for _ in range(rng.randint(3, 30)):
        lines.append(
            f"tests/test_{rng.choice(['agent', 'loop', 'plan'])}.py::{rng.choice(names)}_{rng.randint(1, 99)} PASSED"
        )
    if rng.random() < 0.4:
        lines += [
            "",
            "E       AssertionError: assert 'caf' == 'café'",
            "E         - café",
            "E         + caf",
        ]
    lines.append(
        f"========================= {rng.randint(3, 300)} passed in {rng.random() * 9:.2f}s ========================="
    )
    return "\n".join(lines)


def make_session(rng: random.Random, task: str, steps: int) -> list[Message]:
    """One session: system, task, then ``steps`` rounds of calls and results, then an answer."""
    files = source_files()
    messages: list[Message] = [Message.system(SYSTEM), Message.user(task)]
    for step in range(steps):
        calls: list[ToolCall] = []
        results: list[Message] = []
        for n in range(rng.choice([1, 1, 1, 2, 3])):
            call_id = f"call_{step}_{n}"
            kind = rng.choice(["read", "read", "bash", "grep", "edit"])
            if kind == "read":
                path = rng.choice(files)
                text = read_source(path)
                start = rng.randint(0, max(0, len(text) - 200))
                body = text[start : start + rng.randint(200, 9000)]
                args = {"path": str(path.relative_to(ROOT))}
            elif kind == "bash":
                body = pytest_output(rng)
                args = {"command": "pytest -q tests/test_agent_loop.py"}
            elif kind == "grep":
                path = rng.choice(files)
                lines = read_source(path).splitlines()
                picked = rng.sample(range(len(lines)), min(len(lines), rng.randint(2, 25)))
                body = "\n".join(f"{path.name}:{i + 1}:{lines[i]}" for i in sorted(picked))
                args = {"pattern": rng.choice(["def ", "history", "usage", "raise "])}
            else:
                body = "edited solution/loop.py: replaced 1 occurrence (3 lines -> 4 lines)"
                args = {"path": "solution/loop.py", "old": "cut -= 1", "new": "cut -= 1  # back up"}
            calls.append(ToolCall(id=call_id, name=kind, arguments=args))
            results.append(Message.tool_result(call_id, body or "(empty)"))
        text = rng.choice(REMARKS) if rng.random() < 0.6 else ""
        messages.append(Message.assistant(text, tool_calls=calls))
        messages += results
        if rng.random() < 0.1:
            messages.append(
                Message.user(rng.choice(["Keep going.", "Also check the docs page.", "Pourquoi ?"]))
            )
    messages.append(Message.assistant("Done: " + rng.choice(REMARKS)))
    return messages


def rendered(message: Message) -> str:
    """A message laid out as a chat template would: role, text, calls."""
    parts = [message.role, message.text]
    for call in getattr(message, "tool_calls", ()):
        parts.append(
            json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
        )
    if message.role == "tool":
        parts.insert(1, getattr(message, "tool_call_id", ""))
    return "\n".join(parts)


def main(tokenizer_path: str) -> None:
    from tokenizers import Tokenizer  # type: ignore[import-not-found]

    tokenizer = Tokenizer.from_file(tokenizer_path)

    def count(text: str) -> int:
        return len(tokenizer.encode(text).ids)

    tools_tokens = count(json.dumps(TOOLS))
    rng = random.Random(18)
    sessions = []
    for index, task in enumerate(TASKS):
        messages = make_session(rng, task, steps=[14, 22, 30][index])
        per_message = [count(rendered(m)) + FRAMING for m in messages]
        requests = []
        # A request goes out after the task and after each step's tool results.
        for end in range(2, len(messages) + 1):
            nxt = messages[end] if end < len(messages) else None
            if nxt is not None and nxt.role == "tool":
                continue
            if messages[end - 1].role == "assistant":
                continue
            requests.append(
                {"messages": end, "prompt_tokens": tools_tokens + sum(per_message[:end])}
            )
        sessions.append(
            {
                "name": f"session-{index + 1}",
                "model": "claude-2-tokenizer",
                "messages": json.loads(dump_messages(messages)),
                "requests": requests,
            }
        )
    out = Path(__file__).with_name("sessions.json")
    out.write_text(
        json.dumps(
            {"how": __doc__.split("\n\n")[1], "sessions": sessions}, ensure_ascii=False, indent=0
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {out}: {sum(len(s['requests']) for s in sessions)} requests")


if __name__ == "__main__":
    main(sys.argv[1])
