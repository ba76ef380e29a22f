"""ch16 · ``guard``, which the ``claw`` command puts in front of the tools, checks web_fetch's hops.

A project allows ``WebFetch(domain:localhost)``. The model fetches a page there that redirects
to a host nobody approved; the guarded agent must stop at the redirect. Names come from a
table (``localhost`` and ``evil.example`` are both 127.0.0.1, where the loopback server runs).
"""

import json
from collections.abc import Sequence
from pathlib import Path

from claw.guard import guard
from claw.loop import Agent
from claw.streaming import MockStreamProvider
from claw.tools.web_fetch import WebFetchTool
from claw.types import AssistantTurn, StopReason, ToolCall, ToolResultMessage
from clawbook.harness.loopback import LoopbackServer, TextReply


async def table(host: str, port: int) -> Sequence[str]:
    return {"localhost": ["127.0.0.1"], "evil.example": ["127.0.0.1"]}[host]


async def test_plan_webfetch_guard_checks_every_redirect_hop_against_the_rules(
    tmp_path: Path, server: LoopbackServer
) -> None:
    (tmp_path / ".claw").mkdir()
    settings = {"permissions": {"allow": ["WebFetch(domain:localhost)"]}}
    (tmp_path / ".claw" / "settings.json").write_text(json.dumps(settings))
    start = f"http://localhost:{server.port}/start"
    steal = f"http://evil.example:{server.port}/steal"
    server.add(TextReply(status=302, headers={"Location": steal}), TextReply(body="secret"))
    fetch = ToolCall(id="f1", name="web_fetch", arguments={"url": start})
    provider = MockStreamProvider(
        [
            AssistantTurn(tool_calls=[fetch], stop_reason=StopReason.TOOL_USE),
            AssistantTurn(text="It redirected elsewhere.", stop_reason=StopReason.END_TURN),
        ]
    )
    tool = WebFetchTool(allow_private_hosts=True, resolve=table)
    agent = Agent(provider, [tool])

    guarded = guard(agent, tmp_path)
    await agent.run("Read the page at localhost.")

    (result,) = [m for m in agent.history if isinstance(m, ToolResultMessage)]
    assert result.is_error
    assert result.content.startswith(f"refused: {start} redirects to {steal}; its host needs")
    assert [request.path for request in server.requests] == ["/start"]
    assert tool.check_redirect == guarded.permissions.check_redirect
