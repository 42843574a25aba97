// The TypeScript SDK v1 connecting with a key the server does not accept: prints one JSON line with what the
// SDK's error says (its class, code and message), which is what an application built on it shows its user.
// Usage: node ts_wrong_key.mjs URL KEY
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key] = process.argv.slice(2);
const client = new Client({ name: "ts-wrong-key", version: "1.0.0" }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
try {
  await client.connect(transport);
  console.log(JSON.stringify({ connected: true }));
} catch (error) {
  console.log(JSON.stringify({ connected: false, name: error.constructor.name, code: error.code, message: error.message }));
}
await client.close();
