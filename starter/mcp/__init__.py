"""MCP, the Model Context Protocol, from claw's side: a client over stdio (chapter 23).

An MCP server is a program that offers tools. claw starts it as a child process and talks
JSON-RPC 2.0 with it over the child's standard input and output, one JSON message a line
(``jsonrpc.py``). ``client.py`` holds one connection: the handshake, listing the tools, calling
them, cancelling a call, and stopping the server with every process it started. ``tools.py``
makes each of the server's tools a claw tool named ``mcp__<server>__<tool>``, so chapter 13's
permission rules and chapter 15's hooks apply to it by that name. ``config.py`` reads the
servers from a ``.mcp.json`` file in Claude Code's format and starts only those the user
enabled.
"""
