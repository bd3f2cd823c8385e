"""An agent inside its sandbox using a browser through `baton mcp --proxy`, for
tests/sandbox_browser.rs. Raw JSON-RPC over stdio (the standard library only: the sandbox shows
the system's Python, not the test tools' virtual environment).

Usage: sandboxed_browser_agent.py APP_URL
Prints one JSON object with what it saw, for the test to read from the task's output.
"""
import json
import os
import subprocess
import sys
import time

DEADLINE = time.monotonic() + 120


class Server:
    def __init__(self, args):
        self.process = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self.next_id = 1
        self.notifications = []

    def send(self, message):
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def receive(self):
        if time.monotonic() > DEADLINE:
            raise TimeoutError("no answer before the deadline")
        line = self.process.stdout.readline()
        if not line:
            raise EOFError("the server closed its output")
        return json.loads(line)

    def request(self, method, params=None):
        ident = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}})
        while True:
            message = self.receive()
            if message.get("id") == ident:
                return message
            if "method" in message:
                self.notifications.append(message["method"])

    def initialize(self):
        answer = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "sandboxed-agent", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def tools(self):
        return [t["name"] for t in self.request("tools/list")["result"]["tools"]]

    def call(self, name, arguments):
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def wait_for_list_changed(self):
        while "notifications/tools/list_changed" not in self.notifications:
            message = self.receive()
            if "method" in message:
                self.notifications.append(message["method"])

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


def text_of(answer):
    result = answer.get("result") or {}
    texts = [c.get("text", "") for c in result.get("content", [])]
    if "error" in answer:
        texts.append(json.dumps(answer["error"]))
    return "\n".join(texts)


def main(url):
    seen = {}
    # Baton's plain server, reached through the door: no browser tools on the lead's side.
    plain = Server(["baton", "mcp", "--quiet"])
    plain.initialize()
    seen["door_tools"] = plain.tools()
    launched = plain.call("coordinator_launch_browser", {})
    seen["door_launch"] = text_of(launched)
    plain.close()

    proxy = Server(["baton", "mcp", "--proxy", "--quiet"])
    proxy.initialize()
    tools = proxy.tools()
    if "browser_navigate" not in tools:
        proxy.wait_for_list_changed()
        tools = proxy.tools()
    seen["proxy_tools"] = tools
    navigated = proxy.call("browser_navigate", {"url": url})
    seen["page"] = text_of(navigated)
    status = proxy.call("coordinator_status", {})
    running = status["result"]["structuredContent"]["browser"]["running"]
    pid = running["pid"]
    # Only the sandbox's own processes are in sight here: the browser is one of them.
    with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
        seen["browser_command"] = cmdline.read().replace(b"\0", b" ").decode()
    seen["children"] = [
        {"name": c["name"], "running": c["running"]}
        for c in status["result"]["structuredContent"]["children"]
    ]
    sent = proxy.call(
        "message_send",
        {"to": "lead", "subject": "Browsed", "body": "from the sandbox"},
    )
    seen["message"] = text_of(sent)
    seen["message_is_error"] = sent.get("result", {}).get("isError", False)
    proxy.close()
    seen["home"] = os.environ.get("HOME")
    return seen


if __name__ == "__main__":
    print("AGENT-SAW " + json.dumps(main(sys.argv[1])))
