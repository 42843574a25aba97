import pytest
from mcpkit import tool, app, ToolContext, Server, StaticKeys
from mcpkit_remember import RememberPlugin


@tool(name="set_signature", description="Set.")
class SetSignature(ToolContext):
    async def execute(self, signature: str) -> dict:
        await self.remember.set("signature", signature, scope="user")
        return {"signature": signature}


@tool(name="get_signature", description="Get.")
class GetSignature(ToolContext):
    async def execute(self) -> dict:
        return {
            "signature": await self.remember.get("signature", scope="user", default="The Help Desk"),
            "n": await self.remember.increment("n"),
            "keys": await self.remember.list(scope="user"),
        }


@app(id="a", tools=[SetSignature, GetSignature], plugins=[RememberPlugin.init(type="memory")])
class A: ...


@pytest.fixture
def mcpkit_server():
    return Server([A], auth=StaticKeys({"nour": "nour-key-123", "sam": "sam-key-1234"}), allow_anonymous=True)


async def test_smoke(call_as, mcp_protocol):
    nour = call_as("nour")
    await nour.call("set_signature", {"signature": "Nour"})
    print(await nour.call("get_signature"))
    print(await nour.call("get_signature"))
    print(await call_as("sam").call("get_signature"))
    print((await call_as(None).call_tool("get_signature")).content[0].text)
