/**
 * The demo's signed agent cards (A2A 1.0 §8.4), from the environment:
 * - `A2A_CARD_SIGNING_KEY=<path>`: a private key file, PKCS#8 PEM or a JWK (JSON); every card the
 *   demo serves (each shape, and the extended card) is then signed with it, and its public key is
 *   published at `/.well-known/jwks.json`, which each signature's `jku` names;
 * - `A2A_CARD_SIGNING_KID`: the key id (`kid`) of the signatures; default the JWK's `kid`, else the
 *   key's RFC 7638 thumbprint.
 * A client checks the card with `a2a card get <url> --verify --jwks <the operator's key set>`.
 */

import type { A2APluginOptions } from 'fastify-a2a';

/** The plugin's `agentCardSigning` option from `env`; none when A2A_CARD_SIGNING_KEY is unset. */
export function demoCardSigning(env: NodeJS.ProcessEnv): Pick<A2APluginOptions, 'agentCardSigning'> {
  const file = env.A2A_CARD_SIGNING_KEY;
  if (file === undefined || file === '') return {};
  const kid = env.A2A_CARD_SIGNING_KID;
  return { agentCardSigning: { keys: { file, ...(kid ? { kid } : {}) }, jwks: true } };
}

/** For the "ready" line. */
export function cardSigningSummary(signing: Pick<A2APluginOptions, 'agentCardSigning'>): string {
  return signing.agentCardSigning === undefined ? 'card unsigned' : 'card signed (keys at /.well-known/jwks.json)';
}
