"""ch24 · The official ``anthropic`` SDK in a process of its own: the oracle of test_anthropic_sdk.

Importing the SDK takes a second (it builds a thousand pydantic models), as long as all the rest
of chapter 24's tests. So ``test_anthropic_sdk`` starts this file as a process when it is
imported: the SDK loads on the other CPU while the other files' tests run, and the SDK's tests
come last. A test asks it for one SDK call against the test's own loopback server, one line of
JSON; the answer, one line of JSON, is what the SDK made of what that server sent: the turn it
assembled (``sdk_view``: the same fields ``claw_view`` gives of claw's turn), what its request
types kept of a request body, or the error it raised. The SDK's objects never leave its
process, and the test compares what they hold field by field.

Run as a script, this file is the oracle; imported, it gives ``SdkOracle``, which starts it and
asks it, and starts one at once (``EARLY``): the first of chapter 24's files that pytest collects
imports this one, so the SDK's import begins before claw's modules load; an oracle nobody asked
is stopped at exit. The oracle installs the suite's network guard: it reaches 127.0.0.1 only.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading
import traceback
from itertools import count
from typing import Any

KEY = "sk-ant-api03-oracle-0123456789"
TIMEOUT = 20.0
"""How long the SDK waits for a loopback server (its own default is ten minutes)."""


class SdkOracle:
    """The oracle's process, started at once, and the questions a test puts to it.

    A question is sent at once and its answer read when the test needs it (``send``, then
    ``answer``), so the SDK can read its reply while claw reads its own. A thread reads the
    answers as they come.
    """

    def __init__(self) -> None:
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115 (open as long as the process)
        self.process = subprocess.Popen(
            [sys.executable, "-I", __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            text=True,
            encoding="utf-8",
        )
        self.owner = os.getpid()
        self.numbers = count()
        self.answers: dict[int, dict[str, Any]] = {}
        self.ended = False
        self.arrived = threading.Condition()
        self.asked = False
        threading.Thread(target=self._read, name="sdk-oracle", daemon=True).start()
        atexit.register(self._stop_if_unasked)

    def _stop_if_unasked(self) -> None:
        """At exit: kill an oracle that no test asked (its import may still be running)."""
        if not self.asked and self.owner == os.getpid() and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def usable(self) -> bool:
        """Whether this process may still ask: not closed, and not a copy left by a fork."""
        stdin = self.process.stdin
        return self.owner == os.getpid() and stdin is not None and not stdin.closed

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            answer = json.loads(line)
            with self.arrived:
                self.answers[answer.pop("n")] = answer
                self.arrived.notify_all()
        with self.arrived:
            self.ended = True
            self.arrived.notify_all()

    def send(self, what: str, **arguments: Any) -> int:
        """Have the SDK do ``what`` (a function of the oracle's); the question's number."""
        number = next(self.numbers)
        self.asked = True
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"n": number, "do": what, **arguments}) + "\n")
        self.process.stdin.flush()
        return number

    def answered(self, number: int) -> bool:
        """Whether the answer to question ``number`` has come (or never will)."""
        with self.arrived:
            return number in self.answers or self.ended

    def answer(self, number: int) -> dict[str, Any]:
        """The answer to question ``number``, once it has come (the first waits for the import)."""
        with self.arrived:
            self.arrived.wait_for(lambda: number in self.answers or self.ended)
            answer = self.answers.pop(number, None)
        if answer is None:
            self.errors.seek(0)
            said = self.errors.read().decode(errors="replace")
            raise AssertionError(f"the SDK oracle exited ({self.process.wait()}): {said}")
        if "crashed" in answer:
            raise AssertionError(f"the SDK oracle failed:\n{answer['crashed']}")
        return answer

    def ask(self, what: str, **arguments: Any) -> dict[str, Any]:
        """Have the SDK do ``what`` and wait for its answer."""
        return self.answer(self.send(what, **arguments))

    def close(self) -> None:
        """End the process: it exits when its input closes."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.errors.close()


EARLY = SdkOracle() if __name__ != "__main__" else None
"""Started as this module is imported, so that the SDK loads while chapter 24's other tests run."""


# ---- the oracle's side (run as a script): nothing above imports the SDK


def serve() -> None:
    """Answer each question on standard input with one line on standard output, until EOF."""
    import gc

    gc.disable()  # a fifth of the SDK's import is collecting garbage; this process lives briefly
    import ssl

    import anthropic
    import anthropic.types
    from pydantic import TypeAdapter

    from clawbook.harness.netguard import NetworkGuard

    NetworkGuard().install()
    tls = ssl.create_default_context()  # loaded once: it takes 20 ms each time

    def client(url: str, max_retries: int = 0) -> anthropic.Anthropic:
        """The official client, pointed at a loopback server, retrying only when told."""
        return anthropic.Anthropic(
            api_key=KEY,
            base_url=url,
            max_retries=max_retries,
            timeout=TIMEOUT,
            http_client=anthropic.DefaultHttpxClient(verify=tls),
        )

    def sdk_view(final: anthropic.types.Message) -> dict[str, Any]:
        """What the SDK assembled, in the terms both sides are compared in."""
        counts = final.usage
        read = counts.cache_read_input_tokens or 0
        written = counts.cache_creation_input_tokens or 0
        return {
            "text": "".join(block.text for block in final.content if block.type == "text"),
            "calls": [
                [block.id, block.name, block.input]
                for block in final.content
                if block.type == "tool_use"
            ],
            "kept": [
                block.model_dump(exclude_none=True)
                for block in final.content
                if block.type in ("thinking", "redacted_thinking")
            ],
            "reasoning": "".join(
                block.thinking for block in final.content if block.type == "thinking"
            ),
            "usage": [counts.input_tokens + read + written, counts.output_tokens, read, written],
            "stop": final.stop_reason,
        }

    def stream(url: str, request: dict[str, Any], max_retries: int = 0) -> dict[str, Any]:
        """``messages.stream(**request)``, read whole: the turn, or the error raised."""
        try:
            with client(url, max_retries).messages.stream(**request) as sdk_stream:
                return {"turn": sdk_view(sdk_stream.get_final_message())}
        except anthropic.APIError as raised:
            return {"raised": raised_view(raised)}

    def create(url: str, request: dict[str, Any]) -> dict[str, Any]:
        """``messages.create(**request)``: the whole message, as the SDK read it."""
        return {"turn": sdk_view(client(url).messages.create(**request))}

    def raised_view(raised: anthropic.APIError) -> dict[str, Any]:
        status_error = isinstance(raised, anthropic.APIStatusError)
        return {
            "class": type(raised).__name__,
            "status_error": status_error,
            "status_code": raised.status_code if status_error else None,
            "body": raised.body,
            "message": str(raised),
        }

    def check_request(body: dict[str, Any]) -> dict[str, Any]:
        """Each part of a request body as the SDK's own request types validate it.

        A key they do not know would be dropped, a wrong type or value refused (a crash).
        """
        message = TypeAdapter(anthropic.types.MessageParam)  # alive while its iterators are read
        system = TypeAdapter(anthropic.types.TextBlockParam)
        tool = TypeAdapter(anthropic.types.ToolParam)
        thinking = TypeAdapter(anthropic.types.ThinkingConfigParam)
        checked = {
            "messages": [dict(message.validate_python(wire)) for wire in body["messages"]],
            "system": [system.validate_python(block) for block in body["system"]],
            "tools": [tool.validate_python(each) for each in body["tools"]],
            "thinking": thinking.validate_python(body["thinking"]),
        }
        # The validated content comes back as an iterator over the validated blocks: a list.
        return json.loads(json.dumps(checked, default=list))  # type: ignore[no-any-return]

    def send_back(url: str, request: dict[str, Any], outputs: dict[str, str]) -> dict[str, Any]:
        """The SDK's way to continue a turn: its response's content blocks, as they came, as
        the assistant's message, then a tool result per call (``outputs[name]``)."""
        sdk = client(url)
        with sdk.messages.stream(**request) as sdk_stream:
            final = sdk_stream.get_final_message()
        results = [
            [block.id, outputs[block.name]] for block in final.content if block.type == "tool_use"
        ]
        messages: list[Any] = [
            *request["messages"],
            {"role": "assistant", "content": final.content},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call_id, "content": output}
                    for call_id, output in results
                ],
            },
        ]
        with sdk.messages.stream(**{**request, "messages": messages}) as sdk_stream:
            sdk_stream.get_final_message()
        return {"results": results, "blocks": len(final.content)}

    def continue_paused(url: str, request: dict[str, Any]) -> dict[str, Any]:
        """The documented way to go on with a turn paused by ``pause_turn``: the response's
        content blocks, as they came, sent back as the assistant's message with nothing after
        it, until a response is not paused. What the SDK made of each response, in order."""
        sdk = client(url)
        messages: list[Any] = list(request["messages"])
        turns: list[dict[str, Any]] = []
        while len(turns) < 4:
            with sdk.messages.stream(**{**request, "messages": messages}) as sdk_stream:
                final = sdk_stream.get_final_message()
            turns.append(sdk_view(final))
            if final.stop_reason != "pause_turn":
                break
            messages = [*messages, {"role": "assistant", "content": final.content}]
        return {"turns": turns}

    questions = {
        "continue_paused": continue_paused,
        "stream": stream,
        "create": create,
        "check_request": check_request,
        "send_back": send_back,
    }
    client("http://127.0.0.1:9").messages  # noqa: B018 (builds what the first question needs)
    for line in sys.stdin:
        question = json.loads(line)
        number, what = question.pop("n"), question.pop("do")
        try:
            answer = questions[what](**question)
        except Exception:
            answer = {"crashed": traceback.format_exc()}
        print(json.dumps({"n": number, **answer}), flush=True)
    os._exit(0)  # at once: tearing down the SDK's thousand models takes a tenth of a second


if __name__ == "__main__":
    serve()
