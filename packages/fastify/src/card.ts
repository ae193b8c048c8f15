/**
 * The agent card (A2A §5.5): the application's fields, plus what this plugin implements, filled in
 * so the card declares exactly that. Its URLs start from a base URL that no client can choose.
 */

import { createHash } from 'node:crypto';
import {
  A2A_0_3_VERSION,
  type AgentCard,
  type AgentExtension,
  cardOut1_0,
  type DeclaredCapabilities,
  type SecurityScheme,
  type SupportedInterface,
  securityRequirementsOut1_0,
  securitySchemeOut1_0,
} from '@fastify-a2a/core';
import type { FastifyRequest } from 'fastify';
import type { CardSigner } from './card-signing.js';
import type { AgentCardInput } from './options.js';

/** Where the plugin serves each binding, relative to the public base URL. */
export interface InterfacePaths {
  /** The JSON-RPC endpoint, e.g. `/agents/echo/a2a`. */
  jsonRpc: string;
  /** The HTTP+JSON base (its routes are `<base>/v1/…`), or undefined when REST is off. */
  rest: string | undefined;
}

/** What the card declares beyond the application's fields: the features this registration serves. */
export interface CardFeatures {
  /** Read by the capability gate of dispatch too, so the card and the answers agree. */
  capabilities: DeclaredCapabilities;
  /** The schemes the `authenticate` option accepts, and `security` naming each as an alternative. */
  security?: { securitySchemes: Record<string, SecurityScheme>; security: Record<string, string[]>[] } | undefined;
  /**
   * Interfaces served by listeners beside Fastify (a gRPC server, say), listed after the plugin's
   * own in `supportedInterfaces` (and, those speaking 0.3, in `additionalInterfaces`): added and
   * removed while the server runs ({@link A2AAgent.addInterface}).
   */
  extraInterfaces?: readonly SupportedInterface[];
  /** Extensions the plugin serves (the A2A 1.1 draft's task generations), after the application's own. */
  extensions?: readonly AgentExtension[];
}

/** The features of a registration with no authentication, push or extended card. */
export const BASIC_FEATURES: CardFeatures = Object.freeze({
  capabilities: Object.freeze({ streaming: true, pushNotifications: false, extendedAgentCard: false }),
});

/** §5.5: the card for clients reaching this agent at `base`. */
export function buildCard(
  input: AgentCardInput,
  base: string,
  paths: InterfacePaths,
  features: CardFeatures = BASIC_FEATURES,
): AgentCard {
  const url = `${base}${paths.jsonRpc}`;
  const { capabilities } = features;
  const served = features.extensions ?? [];
  const extensions =
    served.length > 0 ? [...(input.capabilities?.extensions ?? []), ...served] : input.capabilities?.extensions;
  const card: AgentCard = {
    ...input,
    protocolVersion: A2A_0_3_VERSION,
    url,
    preferredTransport: 'JSONRPC',
    capabilities: {
      ...(extensions ? { extensions } : {}),
      streaming: capabilities.streaming,
      pushNotifications: capabilities.pushNotifications,
      stateTransitionHistory: false,
    },
    defaultInputModes: input.defaultInputModes ?? ['text/plain'],
    defaultOutputModes: input.defaultOutputModes ?? ['text/plain'],
    skills: input.skills ?? [],
    supportsAuthenticatedExtendedCard: capabilities.extendedAgentCard,
  };
  if (features.security !== undefined) {
    // The application's own schemes stay; the authenticators' join them (names were checked to differ).
    card.securitySchemes = { ...input.securitySchemes, ...features.security.securitySchemes };
    card.security = input.security ?? features.security.security;
  }
  const restUrl = paths.rest === undefined ? undefined : `${base}${paths.rest}`;
  // 0.3 §5.6: every interface the agent serves, the preferred one included, each with its transport;
  // listeners beside Fastify that speak 0.3 (gRPC's `a2a.v1` service) too, at the URL they gave.
  const additional0_3 = (features.extraInterfaces ?? [])
    .filter((extra) => extra.protocolVersion === '0.3')
    .map((extra) => ({ url: extra.url, transport: extra.protocolBinding }));
  if (restUrl !== undefined || additional0_3.length > 0) {
    card.additionalInterfaces = [
      { url, transport: 'JSONRPC' },
      ...(restUrl === undefined ? [] : [{ url: restUrl, transport: 'HTTP+JSON' }]),
      ...additional0_3,
    ];
  }
  // 1.0 §4.4.1: one entry per (binding, version) served, the preferred first. The same URLs serve
  // both versions; a request's A2A-Version header picks one. 0.3 clients read the fields above and
  // ignore these; 1.0 clients read these.
  card.supportedInterfaces = [];
  for (const protocolVersion of ['1.0', '0.3']) {
    card.supportedInterfaces.push({ url, protocolBinding: 'JSONRPC', protocolVersion });
    if (restUrl !== undefined)
      card.supportedInterfaces.push({ url: restUrl, protocolBinding: 'HTTP+JSON', protocolVersion });
  }
  card.supportedInterfaces.push(...(features.extraInterfaces ?? []));
  card.capabilities.extendedAgentCard = capabilities.extendedAgentCard;
  return card;
}

/**
 * The card as served at the well-known URL, to 0.3 and 1.0 clients alike: 0.3's shape with 1.0's
 * fields beside it. Each security scheme carries both its 0.3 form (`type`, `scheme`…) and its
 * 1.0 one (`httpAuthSecurityScheme: {…}`); `securityRequirements` (1.0) mirrors `security`.
 * Readers of either version ignore the other's members.
 */
export function servedCardJson(card: AgentCard): string {
  if (card.securitySchemes === undefined && card.security === undefined) return JSON.stringify(card);
  const served: Record<string, unknown> = { ...card };
  if (card.securitySchemes !== undefined) {
    served.securitySchemes = Object.fromEntries(
      Object.entries(card.securitySchemes).map(([name, scheme]) => [
        name,
        { ...scheme, ...(securitySchemeOut1_0(scheme) as Record<string, unknown>) },
      ]),
    );
  }
  if (card.security !== undefined) served.securityRequirements = securityRequirementsOut1_0(card.security);
  return JSON.stringify(served);
}

/**
 * The public base URL (scheme, host, port; no path) of a request:
 * - the `baseUrl` option when set;
 * - with Fastify's `trustProxy` on, what the proxy says (`X-Forwarded-Proto`, `X-Forwarded-Host`,
 *   else `Host`): the application trusts that proxy with these headers;
 * - otherwise the address the client connected to. Never the bare `Host` header: it is the
 *   client's to choose, and a card pointing elsewhere (`Host: evil.example`) would send the next
 *   client, or a cache, to that host.
 */
export function publicBase(request: FastifyRequest, baseUrl: string | undefined): string {
  if (baseUrl !== undefined) return baseUrl;
  // `request.ips` exists only when trustProxy is on (Fastify's Request with trust-proxy support).
  if (request.ips !== undefined) return `${request.protocol}://${request.host}`;
  const { localAddress, localPort } = request.socket ?? {};
  if (localAddress === undefined || localPort === undefined) return `${request.protocol}://localhost`;
  const address = localAddress.startsWith('::ffff:') ? localAddress.slice('::ffff:'.length) : localAddress;
  return `${request.protocol}://${address.includes(':') ? `[${address}]` : address}:${localPort}`;
}

/**
 * Which shape of the card a client is served (the `agentCardVersions` option, issue 23):
 * - `combined`: 0.3's fields with 1.0's beside them ({@link servedCardJson}), read by both;
 * - `1.0`: 1.0's AgentCard alone, which a client validating against 1.0's schema (which allows
 *   no other members) accepts;
 * - `0.3`: 0.3's AgentCard alone.
 */
export type CardShape = 'combined' | '1.0' | '0.3';

/** The card in 1.0's shape alone, every member 1.0 requires present (ProtoJSON would leave out empty lists). */
export function card1_0Json(card: AgentCard): string {
  const out = cardOut1_0(card, card.supportedInterfaces ?? []) as Record<string, unknown>;
  return JSON.stringify({
    ...out,
    supportedInterfaces: out.supportedInterfaces ?? [],
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: out.skills ?? [],
  });
}

/** The card in 0.3's shape alone: without 1.0's `supportedInterfaces` and `capabilities.extendedAgentCard`. */
export function card0_3Json(card: AgentCard): string {
  const { supportedInterfaces: _interfaces, capabilities, ...rest } = card;
  const { extendedAgentCard: _extended, ...capabilities0_3 } = capabilities as typeof capabilities & {
    extendedAgentCard?: boolean;
  };
  return JSON.stringify({ ...rest, capabilities: capabilities0_3 });
}

/** One served form of the card: its JSON and the validator a cache revalidates it with. */
export interface ServedCard {
  card: AgentCard;
  json: string;
  /** A strong ETag of `json` (RFC 9110 §8.8.3), quoted. */
  etag: string;
}

function served(card: AgentCard, json: string): ServedCard {
  return { card, json, etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"` };
}

/** The card and its JSON per base URL and shape, made once each (bounded: only a trusting proxy varies the base). */
export class CardCache {
  readonly #entries = new Map<string, ServedCard>();
  readonly #signed = new Map<string, Promise<ServedCard>>();

  constructor(
    private readonly input: AgentCardInput,
    private readonly paths: InterfacePaths,
    private readonly features: CardFeatures = BASIC_FEATURES,
    /** Signs the served JSON (the `agentCardSigning` option); undefined: cards are served unsigned. */
    private readonly signer?: CardSigner | undefined,
    /** The agent's prefix, which the published key set's URL (`jku`) starts with after the base. */
    private readonly prefix = '',
  ) {}

  /** Forgets every card made: the features changed (an interface was added or removed). */
  clear(): void {
    this.#entries.clear();
    this.#signed.clear();
  }

  /**
   * The card as served: {@link get}'s, signed when a signer is set. Signed once per base URL and
   * shape, then kept like the unsigned ones: the card changes only when {@link clear} is called.
   */
  served(base: string, shape: CardShape = 'combined'): Promise<ServedCard> {
    const unsigned = this.get(base, shape);
    const { signer } = this;
    if (signer === undefined) return Promise.resolve(unsigned);
    const key = `${shape} ${base}`;
    let entry = this.#signed.get(key);
    if (entry === undefined) {
      entry = signer.signJson(unsigned.json, `${base}${this.prefix}`).then((json) => served(unsigned.card, json));
      if (this.#signed.size < 192) this.#signed.set(key, entry);
      // A failure is not kept: the next request tries again.
      entry.catch(() => this.#signed.delete(key));
    }
    return entry;
  }

  get(base: string, shape: CardShape = 'combined'): ServedCard {
    const key = `${shape} ${base}`;
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      const card = buildCard(this.input, base, this.paths, this.features);
      const json = shape === '1.0' ? card1_0Json(card) : shape === '0.3' ? card0_3Json(card) : servedCardJson(card);
      entry = served(card, json);
      if (this.#entries.size < 192) this.#entries.set(key, entry);
    }
    return entry;
  }
}
