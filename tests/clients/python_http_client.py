"""The official Python SDK against `baton mcp --http`, for tests/mcp.rs.

Usage: python_http_client.py URL TOKEN
Prints one JSON object with what it saw.
"""
import asyncio
import json
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


async def main(url: str, token: str) -> dict:
    seen: dict = {}
    async with httpx2.AsyncClient() as raw:
        seen["no_token"] = (await raw.post(url, json=INIT, headers=HEADERS)).status_code
        wrong = {**HEADERS, "Authorization": "Bearer " + "0" * len(token)}
        seen["wrong_token"] = (await raw.post(url, json=INIT, headers=wrong)).status_code
        evil = {**HEADERS, "Authorization": "Bearer " + token, "Origin": "http://evil.example"}
        seen["foreign_origin"] = (await raw.post(url, json=INIT, headers=evil)).status_code
        inspector = {**HEADERS, "Authorization": "Bearer " + token, "Origin": "http://localhost:6274"}
        seen["loopback_origin"] = (await raw.post(url, json=INIT, headers=inspector)).status_code

    client = create_mcp_http_client(headers={"Authorization": "Bearer " + token})
    async with streamable_http_client(url, http_client=client) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            seen["tools"] = len(tools.tools)
            added = await session.call_tool("task_add", {"description": "Over HTTP"})
            seen["added"] = added.structured_content["task"]["id"]
    return seen


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2]))))
