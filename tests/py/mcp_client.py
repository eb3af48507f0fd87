"""Drive mediaparse's MCP endpoint with the official Python MCP SDK (PyPI `mcp`).

Reads a JSON job on stdin: {"url", "token", "mode", "calls": [{"name", "arguments"}]}.
`mode` is the SDK's: "legacy" (initialize handshake and session), "auto"
(server/discover, falling back to initialize), or a stateless revision such as
"2026-07-28". Prints one JSON transcript on stdout: the negotiated protocol
version, the tools as listed, and every call's result as received.
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def dump(model):
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


async def main() -> None:
    job = json.loads(sys.stdin.read())
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {job['token']}"})
    transcript = {"mode": job["mode"], "calls": []}
    async with http:
        transport = streamable_http_client(job["url"], http_client=http)
        async with Client(transport, mode=job["mode"], cache=None) as client:
            transcript["protocolVersion"] = client.protocol_version
            listed = await client.list_tools()
            transcript["tools"] = [dump(t) for t in listed.tools]
            for call in job["calls"]:
                result = await client.call_tool(call["name"], call.get("arguments") or {})
                transcript["calls"].append(dump(result))
    print(json.dumps(transcript))


if __name__ == "__main__":
    asyncio.run(main())
