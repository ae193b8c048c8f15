/**
 * Finding an agent's card (A2A 1.0 §8.2, 0.3 §5.3) and choosing how to talk to it.
 *
 * A reference is a card URL (used as is), a base URL (the well-known paths are tried under it:
 * `/.well-known/agent-card.json`, then 0.3's earlier `/.well-known/agent.json`; an agent served
 * under a prefix has its card under that prefix, so a path is kept, and the origin's well-known
 * paths are tried last), or a local file (`file://…` or a path).
 *
 * Cards are cached per URL as HTTP says (RFC 9111): `max-age` (or `s-maxage`) keeps one fresh,
 * `no-store` keeps none, and a stale one with an `ETag` is revalidated with `If-None-Match`.
 */

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { JsonObject as Json } from '@fastify-a2a/core/protocol';
import { A2AClientError } from './errors.js';
import { CallScope, type HttpClient } from './http.js';

export type { Json };

/** The bindings this client speaks. gRPC is not one of them (see packages/grpc). */
export type Binding = 'JSONRPC' | 'HTTP+JSON';
export type Version = '1.0' | '0.3';

/** One (binding, version) the card offers, at a URL. */
export interface AgentEndpoint {
  url: string;
  binding: string;
  /** Major.minor: `1.0`, `0.3`… */
  version: string;
  /** The routing identifier to send in every request (1.0 §8.3.2), when the interface sets one. */
  tenant?: string | undefined;
}

export interface ResolvedCard {
  /** The card as the agent sent it (its JSON, unmodified: what `card get -o json` prints). */
  card: Json;
  /** Where it was read from. */
  source: string;
  /** Every interface the card declares, in its order (1.0's `supportedInterfaces` first). */
  endpoints: AgentEndpoint[];
}

const WELL_KNOWN = ['/.well-known/agent-card.json', '/.well-known/agent.json'];

interface CacheEntry {
  card: ResolvedCard;
  etag: string | undefined;
  freshUntil: number;
}

const cache = new Map<string, CacheEntry>();
const MAX_CACHED = 256;

/** Empties the card cache (tests, or a caller that knows a card changed). */
export function clearCardCache(): void {
  cache.clear();
}

/** max-age in ms from Cache-Control; 0 for no-cache, undefined for no-store. */
function freshness(cacheControl: string | null): number | undefined {
  if (cacheControl === null) return 0;
  const directives = cacheControl.toLowerCase();
  if (/(^|,)\s*no-store\b/.test(directives)) return undefined;
  if (/(^|,)\s*no-cache\b/.test(directives)) return 0;
  const age = /(?:^|,)\s*(?:s-maxage|max-age)\s*=\s*"?(\d+)/.exec(directives);
  return age ? Number(age[1]) * 1000 : 0;
}

const majorMinor = (version: unknown): string => {
  if (typeof version !== 'string' || version === '') return '0.3';
  const match = /^(\d+)\.(\d+)/.exec(version);
  return match ? `${match[1]}.${match[2]}` : version;
};

/** The interfaces a card declares: 1.0's list, then 0.3's (`url` + `preferredTransport`, `additionalInterfaces`). */
export function endpointsOf(card: Json): AgentEndpoint[] {
  const out: AgentEndpoint[] = [];
  const seen = new Set<string>();
  const add = (endpoint: AgentEndpoint) => {
    const key = `${endpoint.binding} ${endpoint.version} ${endpoint.url} ${endpoint.tenant ?? ''}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(endpoint);
    }
  };
  if (Array.isArray(card.supportedInterfaces)) {
    for (const entry of card.supportedInterfaces as Json[]) {
      if (entry === null || typeof entry !== 'object' || typeof entry.url !== 'string') continue;
      const binding = (entry.protocolBinding ?? entry.transport) as unknown;
      if (typeof binding !== 'string') continue;
      add({
        url: entry.url,
        binding: binding.toUpperCase(),
        version: majorMinor(entry.protocolVersion ?? card.protocolVersion),
        tenant: typeof entry.tenant === 'string' && entry.tenant !== '' ? entry.tenant : undefined,
      });
    }
  }
  // 0.3 §5.6: `url` at `preferredTransport` (JSONRPC by default), plus `additionalInterfaces`.
  const legacy = majorMinor(card.protocolVersion);
  if (legacy.startsWith('0.') && typeof card.url === 'string') {
    const preferred = typeof card.preferredTransport === 'string' ? card.preferredTransport.toUpperCase() : 'JSONRPC';
    add({ url: card.url, binding: preferred, version: legacy });
    if (Array.isArray(card.additionalInterfaces)) {
      for (const entry of card.additionalInterfaces as Json[]) {
        if (entry && typeof entry.url === 'string' && typeof entry.transport === 'string') {
          add({ url: entry.url, binding: entry.transport.toUpperCase(), version: legacy });
        }
      }
    }
  }
  return out;
}

/** Checks the card is an A2A agent card this client can use; the message names what is missing. */
export function checkCard(value: unknown, source: string): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new A2AClientError('card-invalid', `${source} is not an agent card: it holds no JSON object.`);
  }
  const card = value as Json;
  const problems: string[] = [];
  if (typeof card.name !== 'string') problems.push('no "name"');
  if (!Array.isArray(card.supportedInterfaces) && typeof card.url !== 'string') {
    problems.push('neither "supportedInterfaces" (1.0) nor "url" (0.3)');
  }
  if (card.capabilities !== undefined && (typeof card.capabilities !== 'object' || card.capabilities === null)) {
    problems.push('"capabilities" is not an object');
  }
  if (problems.length > 0) {
    throw new A2AClientError('card-invalid', `${source} is not a valid agent card: ${problems.join(', ')}.`);
  }
  return card;
}

/** Checks a parsed card and returns it, or throws a `card-invalid` error naming what is wrong. */
export type CardCheck = (value: unknown, source: string) => Json;

function parseCard(text: string, contentType: string | null, source: string, check: CardCheck): ResolvedCard {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const type = contentType?.split(';')[0]?.trim();
    const what = type ? `a ${type} document` : 'something';
    throw new A2AClientError('card-invalid', `${source} answered ${what} that is not JSON: no A2A agent card there.`);
  }
  const card = check(json, source);
  return { card, source, endpoints: endpointsOf(card) };
}

/** The URLs to try for a reference, in order. */
export function cardUrls(reference: string): string[] {
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(reference) ? reference : `https://${reference}`);
  } catch {
    throw new A2AClientError('usage', `"${reference}" is not a URL, a host or a file path.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new A2AClientError('usage', `"${reference}": only http(s) URLs and files can name an agent card.`);
  }
  if (url.pathname.endsWith('.json')) return [url.href];
  const base = url.href.replace(/\/+$/, '').replace(/[?#].*$/, '');
  const urls = WELL_KNOWN.map((path) => `${base}${path}`);
  if (url.pathname !== '/' && url.pathname !== '') urls.push(...WELL_KNOWN.map((path) => `${url.origin}${path}`));
  return urls;
}

function isFileReference(reference: string): boolean {
  return (
    reference.startsWith('file://') ||
    reference.startsWith('/') ||
    reference.startsWith('./') ||
    reference.startsWith('../')
  );
}

export interface ResolveOptions {
  http: HttpClient;
  /** Bypass the cache (still stores what is read). */
  fresh?: boolean;
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** How the card read is checked: `checkCardSchema` holds it to the full schema. @default checkCard */
  cardCheck?: CardCheck | undefined;
}

/** Reads the card a reference names. */
export async function resolveCard(reference: string, options: ResolveOptions): Promise<ResolvedCard> {
  const check = options.cardCheck ?? checkCard;
  // A cached card passed the check it was read with, which may be laxer than this call's.
  const rechecked = (cached: ResolvedCard) => {
    check(cached.card, cached.source);
    return cached;
  };
  if (isFileReference(reference)) {
    const path = reference.startsWith('file://') ? fileURLToPath(reference) : reference;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      throw new A2AClientError(
        'card-not-found',
        `Could not read the agent card file ${path}: ${(error as Error).message}`,
      );
    }
    return parseCard(text, 'application/json', path, check);
  }
  const scope = new CallScope({ timeoutMs: options.timeoutMs, signal: options.signal });
  const tried: string[] = [];
  for (const url of cardUrls(reference)) {
    const cached = cache.get(url);
    if (cached && !options.fresh && cached.freshUntil > Date.now()) return rechecked(cached.card);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (cached?.etag) headers['if-none-match'] = cached.etag;
    const response = await options.http.send({ method: 'GET', url, headers }, scope);
    if (response.status === 304 && cached) {
      cached.freshUntil = Date.now() + (freshness(response.headers.get('cache-control')) ?? 0);
      return rechecked(cached.card);
    }
    if (response.status === 404 || response.status === 405 || response.status === 410) {
      tried.push(`${url} (${response.status})`);
      continue;
    }
    if (response.status === 401 || response.status === 403) {
      throw new A2AClientError(
        'auth',
        `${url} refused the card request (HTTP ${response.status}): check the credentials.`,
        {
          status: response.status,
        },
      );
    }
    if (response.status < 200 || response.status >= 300) {
      throw new A2AClientError('card-not-found', `${url} answered HTTP ${response.status}, not an agent card.`, {
        status: response.status,
      });
    }
    const card = parseCard(response.text, response.headers.get('content-type'), url, check);
    const maxAge = freshness(response.headers.get('cache-control'));
    if (maxAge !== undefined) {
      if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
      cache.set(url, { card, etag: response.headers.get('etag') ?? undefined, freshUntil: Date.now() + maxAge });
    }
    return card;
  }
  throw new A2AClientError('card-not-found', `No agent card at ${tried.join(', ')}.`);
}

/** A preferred (binding, version); an unset member matches any. */
export interface InterfacePreference {
  binding?: Binding | undefined;
  version?: Version | undefined;
}

/** The default: 1.0 JSON-RPC, 1.0 HTTP+JSON, then 0.3 JSON-RPC, then 0.3 HTTP+JSON. */
export const DEFAULT_PREFERENCES: readonly InterfacePreference[] = [
  { binding: 'JSONRPC', version: '1.0' },
  { binding: 'HTTP+JSON', version: '1.0' },
  { binding: 'JSONRPC', version: '0.3' },
  { binding: 'HTTP+JSON', version: '0.3' },
];

/** Whether this client speaks an endpoint: JSON-RPC and HTTP+JSON, in 0.3 and 1.0 (not gRPC). */
export function speaks(endpoint: AgentEndpoint): boolean {
  return (
    (endpoint.binding === 'JSONRPC' || endpoint.binding === 'HTTP+JSON') &&
    (endpoint.version === '1.0' || endpoint.version === '0.3')
  );
}

export interface SelectOptions {
  /** Preferences in order; `'card'` takes the card's own order (the a2a-cli default, §11.1). */
  preferences?: readonly InterfacePreference[] | 'card' | undefined;
  /** Versions allowed at all. @default ['1.0', '0.3'] */
  versions?: readonly Version[] | undefined;
}

/** The endpoint to use: the first preference the card offers, else the card's first this client speaks. */
export function selectEndpoint(resolved: ResolvedCard, options: SelectOptions = {}): AgentEndpoint {
  const versions = options.versions ?? ['1.0', '0.3'];
  const usable = resolved.endpoints.filter((e) => speaks(e) && versions.includes(e.version as Version));
  const preferences = options.preferences ?? DEFAULT_PREFERENCES;
  if (preferences !== 'card') {
    for (const preference of preferences) {
      const match = usable.find(
        (e) =>
          (preference.binding === undefined || e.binding === preference.binding) &&
          (preference.version === undefined || e.version === preference.version),
      );
      if (match) return match;
    }
  }
  const first = usable[0];
  if (first) return first;
  const offered = resolved.endpoints.map((e) => `${e.binding} ${e.version}`).join(', ') || 'none';
  throw new A2AClientError(
    'no-interface',
    `The agent at ${resolved.source} offers no interface this client may use (offered: ${offered}; allowed: JSONRPC or HTTP+JSON, versions ${versions.join(', ')}).` +
      (resolved.endpoints.some((e) => e.version === '0.3') && !versions.includes('0.3')
        ? ' It speaks A2A 0.3: allow it explicitly (--a2a-version 0.3).'
        : ''),
  );
}
