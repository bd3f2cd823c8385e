"""A real MCP client (the official Python SDK) against `baton mcp`, for tests/mcp.rs.

Usage: python_client.py BATON_BINARY PROJECT_DIR
Prints one JSON object with what it saw; exits non-zero on an unexpected failure.
"""
import asyncio
import json
import os
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(baton: str, project: str) -> dict:
    seen: dict = {}
    # The whole environment: a project kept in PostgreSQL takes its password from PGPASSWORD.
    params = StdioServerParameters(command=baton, args=["mcp", "--quiet"], cwd=project, env=dict(os.environ))
    updates: list = []
    update_event = asyncio.Event()
    signals_event = asyncio.Event()

    async def on_message(message):
        # Server notifications arrive here (resources/updated among them).
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if method == "notifications/resources/updated":
            updates.append(str(root.params.uri))
            update_event.set()
            if str(root.params.uri) == "baton://signals":
                signals_event.set()

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            init = await session.initialize()
            seen["server"] = init.server_info.name
            seen["protocol"] = init.protocol_version
            tools = await session.list_tools()
            seen["tools"] = sorted(t.name for t in tools.tools)
            seen["read_only"] = sorted(t.name for t in tools.tools if t.annotations and t.annotations.read_only_hint)
            add = next(t for t in tools.tools if t.name == "task_add")
            seen["task_add_description_field"] = add.input_schema["properties"]["description"].get("description")

            added = await session.call_tool("task_add", {"description": "Written by the Python SDK", "priority": 2})
            seen["added"] = added.structured_content["task"]["id"]
            claimed = await session.call_tool("task_claim", {"agent": "py-worker"})
            seen["claimed"] = claimed.structured_content["task"]["id"]
            seen["claim_is_error"] = claimed.is_error
            refused = await session.call_tool("task_start", {"agent": "someone-else", "task": seen["claimed"]})
            seen["refused_is_error"] = refused.is_error
            seen["refused_text"] = refused.content[0].text

            resources = await session.list_resources()
            seen["resources"] = sorted(str(r.uri) for r in resources.resources)
            board = await session.read_resource("baton://tasks")
            seen["board_total"] = json.loads(board.contents[0].text)["total"]
            catalog = await session.read_resource("agents://catalog")
            seen["catalog_total"] = json.loads(catalog.contents[0].text)["total_agents"]

            # A change made by another process is notified to a subscriber.
            await session.subscribe_resource("baton://tasks")
            subprocess.run([baton, "leader", "add-task", "Added from a terminal"], cwd=project, check=True,
                           capture_output=True)
            await asyncio.wait_for(update_event.wait(), timeout=20)
            seen["updates"] = list(updates)

            # signal_wait with progress notifications while it waits.
            progress: list = []

            async def on_progress(value, total, message):
                progress.append(value)
                if len(progress) == 2:
                    subprocess.run([baton, "signal", "write", "py-done"], cwd=project, check=True,
                                   capture_output=True)

            waited = await session.call_tool("signal_wait", {"names": ["py-done"], "timeout_seconds": 30},
                                             progress_callback=on_progress)
            seen["wait_outcome"] = waited.structured_content["outcome"]
            seen["progress_reports"] = len(progress)
            # The signal a terminal wrote reaches a subscriber of the signals too.
            await session.subscribe_resource("baton://signals")
            subprocess.run([baton, "signal", "write", "py-again"], cwd=project, check=True,
                           capture_output=True)
            await asyncio.wait_for(signals_event.wait(), timeout=20)
            seen["signals_updated"] = True

            # Wrong argument types are protocol errors, and the server keeps serving.
            try:
                bad = await session.call_tool("task_claim", {"agent": 42})
                seen["bad_args"] = "no error" if not bad.is_error else "tool error: " + bad.content[0].text
            except Exception as e:  # McpError
                seen["bad_args"] = "protocol error: " + str(e)
            try:
                await session.call_tool("no_such_tool", {})
                seen["unknown_tool"] = "no error"
            except Exception as e:
                seen["unknown_tool"] = "protocol error: " + str(e)
            status = await session.call_tool("task_status", {})
            seen["still_serving"] = status.structured_content["total"]
    return seen


if __name__ == "__main__":
    result = asyncio.run(main(sys.argv[1], sys.argv[2]))
    print(json.dumps(result))
