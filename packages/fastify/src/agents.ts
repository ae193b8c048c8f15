/**
 * `fastify.a2a`: the agents this plugin serves in a Fastify instance, by prefix, so an application
 * can reach an agent's runtime and store (admin routes, scripts, tests) without keeping references
 * of its own.
 */

import type { A2ARuntime, A2AStore, AgentCard, Dispatcher, Principal, SupportedInterface } from '@fastify-a2a/core';
import { A2AError } from '@fastify-a2a/core';
import type { FastifyBaseLogger } from 'fastify';
import type { Authentication } from './auth/authentication.js';
import type { CardCache } from './card.js';

export interface A2AAgent {
  /** The route prefix the agent is served under (`''` for the root). */
  readonly prefix: string;
  readonly runtime: A2ARuntime;
  readonly store: A2AStore;
  /** The dispatch every binding calls: validation, the authorize hook, the capability gate. */
  readonly dispatcher: Dispatcher;
  /**
   * The public card as clients reaching the agent at `baseUrl` get it (scheme, host and port),
   * without `signatures`: with `agentCardSigning` they are made on each served shape's JSON.
   * @default the plugin's `baseUrl` option, else `http://localhost`
   */
  card(baseUrl?: string): AgentCard;
  /**
   * Lists an interface served beside Fastify, by a listener of its own (`@fastify-a2a/grpc`'s), in
   * the card's `supportedInterfaces` (A2A 1.0 §4.4.1), public and extended; one whose
   * `protocolVersion` is `0.3` also in 0.3's `additionalInterfaces`, as `{ url, transport }` (0.3
   * §5.6). Returns the function that removes it again.
   */
  addInterface(supportedInterface: SupportedInterface): () => void;
  /**
   * Authenticates a call that reached the agent through a listener other than Fastify's, with the
   * plugin's `authenticate` option: its credentials under HTTP header names (lowercase). Resolves
   * to the caller, or undefined when the agent is open.
   * @throws {A2AError} refusing the call as an HTTP request would be: UNAUTHENTICATED (401),
   *   UNAVAILABLE (the credentials could not be checked) or INTERNAL.
   */
  authenticate(headers: Readonly<Record<string, string | undefined>>, callId: string): Promise<Principal | undefined>;
}

export class A2AAgents {
  readonly #agents = new Map<string, A2AAgent>();

  /**
   * The agent under `prefix`. Without a prefix: the only agent, or the one at the root when there
   * are several.
   * @throws {A2AError} INVALID_OPTIONS when there is no such agent.
   */
  get(prefix?: string): A2AAgent {
    if (prefix === undefined) {
      const only = this.#agents.size === 1 ? this.#agents.values().next().value : this.#agents.get('');
      if (only !== undefined) return only;
      throw new A2AError(
        'INVALID_OPTIONS',
        this.#agents.size === 0
          ? 'fastify.a2a: no agent is registered yet; await app.register(a2aPlugin, …) (or app.ready()) first.'
          : `fastify.a2a: ${this.#agents.size} agents are registered (${this.#list()}); name one: fastify.a2a.get('/prefix').`,
      );
    }
    const agent = this.#agents.get(prefix);
    if (agent === undefined) {
      throw new A2AError(
        'INVALID_OPTIONS',
        `fastify.a2a: no agent under prefix "${prefix}"; registered: ${this.#list() || 'none'}.`,
      );
    }
    return agent;
  }

  has(prefix: string): boolean {
    return this.#agents.has(prefix);
  }

  /** Every agent, in registration order. */
  list(): A2AAgent[] {
    return [...this.#agents.values()];
  }

  /** The runtime of {@link get}'s default agent. */
  get runtime(): A2ARuntime {
    return this.get().runtime;
  }

  /** The store of {@link get}'s default agent. */
  get store(): A2AStore {
    return this.get().store;
  }

  /** @internal the plugin adds each agent as it registers. */
  add(agent: A2AAgent): void {
    this.#agents.set(agent.prefix, agent);
  }

  /** @internal the plugin removes an agent when its server closes. */
  delete(prefix: string): void {
    this.#agents.delete(prefix);
  }

  #list(): string {
    return [...this.#agents.keys()].map((p) => JSON.stringify(p)).join(', ');
  }
}

/** {@link A2AAgent.addInterface}: the interface joins the list the cards are built with, and cards made before are forgotten. */
export function addInterface(
  interfaces: SupportedInterface[],
  cards: CardCache,
  supportedInterface: SupportedInterface,
): () => void {
  const added = { ...supportedInterface };
  interfaces.push(added);
  cards.clear();
  return () => {
    const index = interfaces.indexOf(added);
    if (index < 0) return;
    interfaces.splice(index, 1);
    cards.clear();
  };
}

/** {@link A2AAgent.authenticate} with the plugin's authentication (undefined when the agent is open). */
export async function authenticateHeaders(
  authentication: Authentication | undefined,
  headers: Readonly<Record<string, string | undefined>>,
  callId: string,
  log: FastifyBaseLogger,
): Promise<Principal | undefined> {
  if (authentication === undefined) return undefined;
  const outcome = await authentication.authenticateHeaders(headers, callId, log);
  if ('id' in outcome) return outcome;
  throw outcome.error;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The A2A agents registered with fastify-a2a, by prefix (see {@link A2AAgents}). */
    a2a: A2AAgents;
  }
}
