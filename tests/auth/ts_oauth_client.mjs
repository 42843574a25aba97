// The TypeScript SDK v1 signing in with its own OAuth client (its `auth()` flow, its transport's 401 and 403
// handling): it finds the metadata from the 401, registers (RFC 7591), sends the user to the authorization URL
// with PKCE and a resource indicator, trades the code, and calls the help desk's tools as the signed-in user.
// The user is played by the test: this prints {"authorize": URL} and reads back one JSON line on stdin,
// {"code": ..., "state": ...}, what the browser would have brought to the redirect URI.
// Usage: node ts_oauth_client.mjs MCP_URL REDIRECT_URI TICKET
// Prints one JSON line at the end: the negotiated protocol version, the tools' structured results, the
// client id and the access token it was given.
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, redirectUri, ticketId] = process.argv.slice(2);
const answers = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

// What an application keeps for one user (on disk, usually), handed to the SDK as its OAuthClientProvider.
class Provider {
  constructor() {
    this.saved = {};
    this.authorizations = 0;
  }

  get redirectUrl() { return redirectUri; }

  get clientMetadata() {
    return {
      client_name: 'mcpkit tests (TypeScript SDK)',
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state() {
    this.saved.state = randomBytes(16).toString('hex');
    return this.saved.state;
  }

  clientInformation() { return this.saved.client; }
  saveClientInformation(client) { this.saved.client = client; }
  tokens() { return this.saved.tokens; }
  saveTokens(tokens) { this.saved.tokens = tokens; }
  saveCodeVerifier(verifier) { this.saved.verifier = verifier; }
  codeVerifier() { return this.saved.verifier; }

  async redirectToAuthorization(authorizationUrl) {
    this.authorizations += 1;
    console.log(JSON.stringify({ authorize: authorizationUrl.href }));
    const { value } = await answers.next();
    const { code, state } = JSON.parse(value);
    if (state !== this.saved.state) throw new Error(`the redirect came back with state ${state}, not ours`);
    this.saved.code = code;
  }
}

const provider = new Provider();

// The SDK's own pattern: connecting throws UnauthorizedError once the user has been sent to sign in; the
// application then hands the code to finishAuth and connects again with a new transport.
async function connected() {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    const client = new Client({ name: 'ts-oauth-client', version: '1.0.0' }, { capabilities: {} });
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    try {
      await client.connect(transport);
      return { client, transport };
    } catch (error) {
      if (!(error instanceof UnauthorizedError) || provider.saved.code === undefined) throw error;
      await transport.finishAuth(provider.saved.code);
      provider.saved.code = undefined;
    }
  }
  throw new Error('still unauthorized after signing in');
}

const { client, transport } = await connected();
const saved = await client.callTool({ name: 'save_draft', arguments: { ticketId, text: 'Signed in from TypeScript.' } });
const sent = await client.callTool({ name: 'send_reply', arguments: { ticketId } });  // needs tickets:write
console.log(JSON.stringify({
  protocolVersion: transport.protocolVersion,
  saved: saved.structuredContent,
  sent: sent.structuredContent,
  authorizations: provider.authorizations,
  clientId: provider.saved.client?.client_id,
  accessToken: provider.saved.tokens?.access_token,
}));
await client.close();
process.exit(0);
