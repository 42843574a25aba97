// An agent on the TypeScript SDK v1 (a 2025-11-25 client): it saves a draft, asks to send it, and answers the
// server's question. Prints one JSON line: what it was asked, and each tool's structured result.
// Usage: node ts_agent.mjs URL KEY ANSWER   (ANSWER: "yes", "no", or "none" to declare no elicitation)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, key, answer] = process.argv.slice(2);
const asked = [];
const capabilities = answer === "none" ? {} : { elicitation: {} };
const client = new Client({ name: "ts-agent", version: "1.0.0" }, { capabilities });
if (answer !== "none") {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return { action: "accept", content: { confirm: answer === "yes" } };
  });
}
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
await client.connect(transport);
const saved = await client.callTool({ name: "save_draft", arguments: { ticketId: "T-4", text: "Your refund is on its way." } });
const sent = await client.callTool({ name: "send_reply", arguments: { ticketId: "T-4" } });
const left = await client.callTool({ name: "get_draft", arguments: { ticketId: "T-4" } });
console.log(JSON.stringify({
  protocolVersion: transport.protocolVersion,
  asked,
  saved: saved.structuredContent,
  sent: sent.structuredContent,
  left: left.structuredContent,
}));
await client.close();
