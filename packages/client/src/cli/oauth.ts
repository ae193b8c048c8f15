/**
 * `a2a auth login` with OAuth 2 (a2a-cli SPEC.md v0.2 §10.2): the client-credentials grant
 * (RFC 6749 §4.4, A2ACLI_AUTH_006) and the device authorization grant (RFC 8628, A2ACLI_AUTH_005),
 * against the token and device-authorization endpoints the agent's card declares in an oauth2
 * security scheme (1.0 `oauth2SecurityScheme.flows`, 0.3 `type: oauth2`). The access token is
 * stored per agent by the caller (settings.ts) and sent on later calls to that agent.
 */

import { A2AClientError } from '../errors.js';
import { insecureFetch } from '../insecure-fetch.js';
import type { Context } from './commands.js';
import { UsageError } from './errors.js';

type Json = Record<string, unknown>;

export type Flow = 'client-credentials' | 'device-code';

export interface OAuthFlows {
  clientCredentials?: { tokenUrl: string };
  deviceCode?: { deviceAuthorizationUrl: string; tokenUrl: string };
}

export interface Token {
  accessToken: string;
  /** ISO 8601, when the endpoint gave `expires_in`. */
  expiresAt?: string | undefined;
  flow: Flow;
}

/** The flows of the card's first oauth2 scheme that declares one we run. */
export function oauthFlows(card: Json): OAuthFlows {
  const schemes = (card.securitySchemes ?? {}) as Record<string, Json>;
  for (const scheme of Object.values(schemes)) {
    const oauth = (scheme?.type === 'oauth2' ? scheme : scheme?.oauth2SecurityScheme) as Json | undefined;
    const flows = oauth?.flows as Record<string, Json> | undefined;
    if (flows === undefined) continue;
    const found: OAuthFlows = {};
    const cc = flows.clientCredentials;
    if (typeof cc?.tokenUrl === 'string') found.clientCredentials = { tokenUrl: cc.tokenUrl };
    const dc = flows.deviceCode;
    if (typeof dc?.deviceAuthorizationUrl === 'string' && typeof dc?.tokenUrl === 'string') {
      found.deviceCode = { deviceAuthorizationUrl: dc.deviceAuthorizationUrl, tokenUrl: dc.tokenUrl };
    }
    if (found.clientCredentials || found.deviceCode) return found;
  }
  return {};
}

/**
 * OAuth 2.1 requires TLS for its endpoints: plain http is accepted only on this machine (a local
 * identity provider in development), where nothing crosses a network.
 */
function checkEndpoint(url: string, what: string): void {
  const parsed = new URL(url);
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname);
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && loopback)) {
    throw new A2AClientError('auth', `The card's ${what} ${url} is not https: credentials are not sent there.`);
  }
}

async function post(
  ctx: Context,
  url: string,
  form: Record<string, string | undefined>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json }> {
  const body = new URLSearchParams(
    Object.entries(form).filter((entry): entry is [string, string] => entry[1] !== undefined),
  ).toString();
  const doFetch = ctx.values.insecure === true ? insecureFetch : globalThis.fetch;
  let response: Response;
  try {
    response = await doFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...headers },
      body,
      signal: ctx.signal,
    });
  } catch (error) {
    throw new A2AClientError('unreachable', `Could not reach the OAuth endpoint ${url}.`, { cause: error });
  }
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as Json };
  } catch {
    throw new A2AClientError('auth', `The OAuth endpoint ${url} answered HTTP ${response.status} without JSON.`);
  }
}

function refused(url: string, body: Json, status: number): A2AClientError {
  const description = typeof body.error_description === 'string' ? `: ${body.error_description}` : '';
  return new A2AClientError(
    'auth',
    `The OAuth endpoint ${url} refused (HTTP ${status}, ${String(body.error ?? 'no error code')}${description}).`,
    { status },
  );
}

function token(body: Json, flow: Flow, url: string, status: number): Token {
  if (typeof body.access_token !== 'string' || body.access_token === '') throw refused(url, body, status);
  const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : undefined;
  return {
    accessToken: body.access_token,
    expiresAt: expiresIn === undefined ? undefined : new Date(Date.now() + expiresIn * 1000).toISOString(),
    flow,
  };
}

/** RFC 6749 §4.4, the client authenticated with HTTP Basic (§2.3.1: each part form-encoded first). */
export async function clientCredentials(
  ctx: Context,
  tokenUrl: string,
  client: { id: string; secret: string; scope?: string | undefined },
): Promise<Token> {
  checkEndpoint(tokenUrl, 'token endpoint');
  const basic = Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64');
  const { status, body } = await post(
    ctx,
    tokenUrl,
    { grant_type: 'client_credentials', scope: client.scope },
    { authorization: `Basic ${basic}` },
  );
  return token(body, 'client-credentials', tokenUrl, status);
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(new A2AClientError('aborted', 'Interrupted while waiting for the device authorization.'));
      },
      { once: true },
    );
  });

/**
 * RFC 8628: asks for a user code, tells the user where to enter it (stderr: it is a prompt, not
 * output), then polls the token endpoint at the interval given, slowing down when told (§3.5),
 * until the user approves, denies, or the code or `--timeout` expires.
 */
export async function deviceCode(
  ctx: Context,
  endpoints: { deviceAuthorizationUrl: string; tokenUrl: string },
  client: { id: string; secret?: string | undefined; scope?: string | undefined },
): Promise<Token> {
  checkEndpoint(endpoints.deviceAuthorizationUrl, 'device authorization endpoint');
  checkEndpoint(endpoints.tokenUrl, 'token endpoint');
  const granted = await post(ctx, endpoints.deviceAuthorizationUrl, {
    client_id: client.id,
    client_secret: client.secret,
    scope: client.scope,
  });
  const { device_code: code, user_code: userCode, verification_uri: verificationUri } = granted.body;
  if (typeof code !== 'string' || typeof userCode !== 'string' || typeof verificationUri !== 'string') {
    throw refused(endpoints.deviceAuthorizationUrl, granted.body, granted.status);
  }
  const complete = granted.body.verification_uri_complete;
  ctx.stderr.write(
    `To sign in, open ${verificationUri} and enter the code ${userCode}${typeof complete === 'string' ? ` (or open ${complete})` : ''}.\n`,
  );
  let intervalMs = (typeof granted.body.interval === 'number' ? granted.body.interval : 5) * 1000;
  const expiresIn = typeof granted.body.expires_in === 'number' ? granted.body.expires_in : 900;
  const deadline = Math.min(Date.now() + expiresIn * 1000, Date.now() + (ctx.timeoutMs ?? Number.POSITIVE_INFINITY));
  for (;;) {
    if (Date.now() + intervalMs > deadline) {
      throw new A2AClientError('timeout', `The device code ${userCode} was not approved in time.`);
    }
    await sleep(intervalMs, ctx.signal);
    const { status, body } = await post(ctx, endpoints.tokenUrl, {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: code,
      client_id: client.id,
      client_secret: client.secret,
    });
    if (body.error === 'authorization_pending') continue;
    if (body.error === 'slow_down') {
      intervalMs += 5000;
      continue;
    }
    return token(body, 'device-code', endpoints.tokenUrl, status);
  }
}

/** Runs the flow asked for (`--flow`), else the one the given options and the card allow. */
export async function oauthLogin(
  ctx: Context,
  card: Json,
  options: {
    flow?: string | undefined;
    clientId?: string | undefined;
    clientSecret?: string | undefined;
    scope?: string | undefined;
  },
): Promise<Token> {
  const flows = oauthFlows(card);
  const flow =
    options.flow ??
    (options.clientSecret !== undefined && flows.clientCredentials ? 'client-credentials' : 'device-code');
  if (flow !== 'client-credentials' && flow !== 'device-code') {
    throw new UsageError(`--flow "${flow}" is not client-credentials or device-code.`);
  }
  if (options.clientId === undefined) {
    throw new UsageError(
      'OAuth login needs --client-id (A2ACLI_CLIENT_ID).',
      'The agent’s operator issues client ids.',
    );
  }
  if (flow === 'client-credentials') {
    if (flows.clientCredentials === undefined) {
      throw new A2AClientError('auth', "The agent's card declares no OAuth client-credentials flow.");
    }
    if (options.clientSecret === undefined) {
      throw new UsageError('The client-credentials flow needs --client-secret (A2ACLI_CLIENT_SECRET is safer).');
    }
    return clientCredentials(ctx, flows.clientCredentials.tokenUrl, {
      id: options.clientId,
      secret: options.clientSecret,
      scope: options.scope,
    });
  }
  if (flows.deviceCode === undefined)
    throw new A2AClientError('auth', "The agent's card declares no OAuth device-code flow.");
  return deviceCode(ctx, flows.deviceCode, {
    id: options.clientId,
    secret: options.clientSecret,
    scope: options.scope,
  });
}
