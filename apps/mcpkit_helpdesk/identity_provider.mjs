// The help desk's demo identity provider: oidc-provider (the certified OpenID Connect server, from the
// npm registry) configured for MCP sign-in. Started by mcpkit_helpdesk/_identity_provider.py, never by hand:
//
//   node identity_provider.mjs   (configuration as JSON on stdin, see below)
//
// Input (one JSON object on stdin):
//   {"port": 9400, "accounts": {"nour": "password", ...}, "resources": {"http://127.0.0.1:8000/mcp": ["tickets:write"]}}
// Output: one line "ready <issuer>" on stdout once it listens on 127.0.0.1:<port>; errors on stderr.
//
// What it offers: dynamic client registration (RFC 7591), the authorization code flow with PKCE,
// resource indicators (RFC 8707) for the configured resources only, JWT access tokens (RFC 9068) whose
// `aud` is the resource, signed with an RSA key made at start (published at /jwks), refresh tokens
// (offline_access), and its own sign-in and consent pages with the configured accounts and passwords.
// An authorization request without `scope`, in a query or a form (POST /auth, or pushed to /request), asks
// for the resource's scopes (what its protected resource metadata lists in scopes_supported); oidc-provider
// alone would answer it with a bare access_denied, and POST /auth with 404.
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';

import Provider, { errors } from 'oidc-provider';

async function readConfiguration() {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  const config = JSON.parse(text);
  if (!Number.isInteger(config.port) || typeof config.accounts !== 'object' || typeof config.resources !== 'object') {
    throw new Error('stdin must hold {"port": int, "accounts": {login: password}, "resources": {url: [scope]}}');
  }
  return config;
}

const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title, body) {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escape(title)}</title></head>`
    + `<body><h1>${escape(title)}</h1>${body}</body></html>`;
}

function loginPage(uid, client, error) {
  return page('Sign in to the help desk', `
    <p>${escape(client?.clientName ?? 'An MCP client')} asks you to sign in.</p>
    ${error ? `<p role="alert">${escape(error)}</p>` : ''}
    <form method="post" action="/interaction/${escape(uid)}/login">
      <label>Login <input name="login" autocomplete="username" autofocus></label>
      <label>Password <input name="password" type="password" autocomplete="current-password"></label>
      <button type="submit">Sign in</button>
    </form>`);
}

function consentPage(uid, client, details) {
  // A resource's scopes are also registered as provider scopes (for client registration), so oidc-provider
  // reports them twice: each is listed once.
  const scopes = [...new Set([
    ...(details.missingOIDCScope ?? []),
    ...Object.values(details.missingResourceScopes ?? {}).flat(),
  ])];
  const items = scopes.map((scope) => `<li>${escape(scope)}</li>`).join('');
  return page('Allow access', `
    <p>${escape(client?.clientName ?? 'An MCP client')} asks for:</p><ul>${items}</ul>
    <form method="post" action="/interaction/${escape(uid)}/confirm"><button type="submit">Allow</button></form>
    <form method="post" action="/interaction/${escape(uid)}/abort"><button type="submit">Deny</button></form>`);
}

// An authorization request without `scope` gets the scopes of the resources it names (else of the default
// resource), or `openid` when they offer none, so that the user is asked to consent to something rather than
// refused: in the query of GET /auth, and in the form of a pushed authorization request (POST /request, RFC
// 9126). A request object (`request`, `request_uri`) carries its own parameters and is left alone.
//
// OAuth 2.0 also allows the authorization request as a form (POST /auth). oidc-provider serves that only
// with its session cookie set SameSite=None, which browsers drop unless it is also Secure, and this demo
// speaks plain HTTP; so POST /auth is answered with 303 See Other to GET /auth with the same parameters,
// and from there on it is a GET in every respect (default scopes, cookies, pages).
const FORM_LIMITS = {
  'POST /auth': 8 * 1024, // the form becomes a URL, and Node refuses request heads over 16 KB
  'POST /request': 56 * 1024, // oidc-provider's own limit for a request body
};

function withDefaultScope(params, resources) {
  if (params.get('scope') || params.has('request') || params.has('request_uri')) return false;
  const named = params.getAll('resource').filter((url) => Object.hasOwn(resources, url));
  const wanted = named.length ? named : Object.keys(resources).slice(0, 1);
  const scopes = [...new Set(wanted.flatMap((url) => resources[url]))];
  params.set('scope', scopes.length ? scopes.join(' ') : 'openid');
  return true;
}

function refuse(ctx, description) {
  ctx.status = 400;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error: 'invalid_request', error_description: description };
}

function authorizationRequests(resources) {
  return async (ctx, next) => {
    const request = `${ctx.method} ${ctx.path}`;
    if (request === 'GET /auth') {
      const query = new URLSearchParams(ctx.querystring);
      if (withDefaultScope(query, resources)) ctx.querystring = query.toString();
    } else if (request === 'POST /auth' || request === 'POST /request') {
      if (!ctx.is('application/x-www-form-urlencoded')) {
        return refuse(ctx, `${request} takes a form (Content-Type: application/x-www-form-urlencoded), `
          + `not ${ctx.get('content-type') || 'a body without a Content-Type'}`);
      }
      const form = await formBody(ctx.req, FORM_LIMITS[request]);
      if (form === undefined) {
        const instead = request === 'POST /auth' ? '; push a longer one to POST /request' : '';
        return refuse(ctx, `the form sent to ${request} is over ${FORM_LIMITS[request]} bytes${instead}`);
      }
      const params = new URLSearchParams(form);
      if (request === 'POST /auth') {
        ctx.status = 303;
        ctx.set('Cache-Control', 'no-store');
        return ctx.redirect(`/auth?${params}`);
      }
      withDefaultScope(params, resources);
      // oidc-provider takes a body that was read already from req.body (and warns once, on stderr, that an
      // earlier middleware parsed it).
      ctx.req.body = params.toString();
    }
    return next();
  };
}

// The form in a request body, or undefined when it is over `limit` bytes.
async function formBody(req, limit) {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > limit) return undefined;
  }
  return text;
}

function interactions(provider, accounts) {
  const route = /^\/interaction\/([\w-]+)(?:\/(login|confirm|abort))?$/;
  return async (ctx, next) => {
    const found = route.exec(ctx.path);
    if (!found) return next();
    const [, uid, action] = found;
    ctx.set('Cache-Control', 'no-store');
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (details.uid !== uid) ctx.throw(400, 'interaction mismatch');
    const client = await provider.Client.find(details.params.client_id);
    const finish = async (result, merge) => {
      ctx.status = 303;
      ctx.redirect(await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: merge }));
    };
    if (ctx.method === 'GET' && !action) {
      ctx.type = 'html';
      ctx.body = details.prompt.name === 'login'
        ? loginPage(uid, client)
        : consentPage(uid, client, details.prompt.details);
      return undefined;
    }
    if (ctx.method !== 'POST' || !action) ctx.throw(405);
    if (action === 'abort') {
      return finish({ error: 'access_denied', error_description: 'the user denied access' }, false);
    }
    if (action === 'login') {
      const form = new URLSearchParams(await formBody(ctx.req, 10_000) ?? '');
      const [login, password] = [form.get('login'), form.get('password')];
      if (details.prompt.name !== 'login') ctx.throw(400, 'not at the sign-in step');
      if (!Object.hasOwn(accounts, login ?? '') || accounts[login] !== password) {
        ctx.status = 401;
        ctx.type = 'html';
        ctx.body = loginPage(uid, client, 'Unknown login or wrong password.');
        return undefined;
      }
      return finish({ login: { accountId: login } }, false);
    }
    if (details.prompt.name !== 'consent') ctx.throw(400, 'not at the consent step');
    const { missingOIDCScope, missingResourceScopes } = details.prompt.details;
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
    if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
    for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    return finish({ consent: { grantId: await grant.save() } }, true);
  };
}

async function main() {
  const config = await readConfiguration();
  const issuer = `http://127.0.0.1:${config.port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'helpdesk-demo', use: 'sig', alg: 'RS256' };
  const resources = config.resources;

  const provider = new Provider(issuer, {
    jwks: { keys: [signingKey] },
    findAccount: (_ctx, id) => (Object.hasOwn(config.accounts, id)
      ? { accountId: id, claims: () => ({ sub: id, name: id }) }
      : undefined),
    // Registration checks a client's scope against this list, so it names the resources' scopes too.
    scopes: ['openid', 'offline_access', ...new Set(Object.values(resources).flat())],
    claims: { openid: ['sub'] },
    cookies: { keys: [signingKey.d.slice(0, 32)] },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf ?? Object.keys(resources)[0],
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (!Object.hasOwn(resources, indicator)) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
          return {
            scope: resources[indicator].join(' '),
            audience: indicator,
            accessTokenTTL: 3600,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: { AccessToken: 3600, AuthorizationCode: 60, Grant: 3600, Interaction: 600, Session: 3600, RefreshToken: 86400 },
  });
  provider.use(authorizationRequests(resources));
  provider.use(interactions(provider, config.accounts));
  const server = provider.listen(config.port, '127.0.0.1');
  await once(server, 'listening');
  process.stdout.write(`ready ${issuer}\n`);
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // Never outlive the process that started it, even one killed with SIGKILL.
  const parent = process.ppid;
  setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 1000).unref();
}

main().catch((error) => {
  process.stderr.write(`identity provider: ${error.message}\n`);
  process.exit(1);
});
