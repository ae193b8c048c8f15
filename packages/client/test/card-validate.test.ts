/**
 * `a2a card get --validate` (a2a-cli SPEC.md v0.2 §8.1, A2ACLI_CARD_GET_002), through the real
 * binary: our server's cards in each shape it serves pass; broken cards, served by a small HTTP
 * server here, fail with A2ACLI_ERR_CARD_INVALID (exit 1, Appendix E) and every violation named
 * by its JSON pointer and rule, in text and in json.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAgentCard } from '../src/card-schema.js';
import { a2a, ensureBuilt } from './cli-process.js';
import { type Served, serve } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: the CLI's JSON output, read member by member in assertions.
type Json = Record<string, any>;

let combined: Served;
let only0_3: Served;
let cardServer: Server;
let cardBase: string;
/** What the card server answers at /<name>/.well-known/agent-card.json. */
const cards = new Map<string, unknown>();

/** A valid 1.0 card; each broken card below changes one thing in a copy of it. */
const card1_0 = () => ({
  name: 'Broken cards',
  description: 'Serves cards for the validation tests.',
  version: '1.0.0',
  supportedInterfaces: [
    { url: 'http://127.0.0.1:1/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'http://127.0.0.1:1/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
  ],
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Echoes.', tags: ['test'] }],
});

/** A valid 0.3 card. */
const card0_3 = () => ({
  protocolVersion: '0.3.0',
  name: 'Broken 0.3 cards',
  description: 'Serves 0.3 cards for the validation tests.',
  url: 'http://127.0.0.1:1/a2a',
  preferredTransport: 'JSONRPC',
  additionalInterfaces: [{ url: 'http://127.0.0.1:1/rest', transport: 'HTTP+JSON' }],
  version: '1.0.0',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [],
});

beforeAll(async () => {
  ensureBuilt();
  combined = await serve('memory:');
  only0_3 = await serve('memory:', { agentCardVersions: ['0.3'] });
  cardServer = createServer((req, res) => {
    const name = req.url?.split('/')[1] ?? '';
    if (!cards.has(name) || !req.url?.endsWith('/.well-known/agent-card.json')) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(cards.get(name)));
  });
  await new Promise<void>((resolve) => cardServer.listen(0, '127.0.0.1', resolve));
  cardBase = `http://127.0.0.1:${(cardServer.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await combined?.close();
  await only0_3?.close();
  await new Promise((resolve) => cardServer?.close(resolve));
});

/** Serves `card` under a path of its own and returns the reference to give the CLI. */
function served(name: string, card: unknown): string {
  cards.set(name, card);
  return `${cardBase}/${name}`;
}

/** Runs `card get --validate` on a broken card in both formats; returns the json envelope's violations. */
async function violationsOf(reference: string, extra: string[] = []): Promise<{ json: Json[]; text: string }> {
  const json = await a2a(['card', 'get', reference, '--validate', '-o', 'json', ...extra]);
  expect(json.code).toBe(1);
  const envelope = json.json() as Json;
  expect(envelope.error.code).toBe('A2ACLI_ERR_CARD_INVALID');
  const text = await a2a(['card', 'get', reference, '--validate', ...extra]);
  expect(text.code).toBe(1);
  expect(text.stdout).toContain('Valid: false\n');
  // The error is one line on stderr, never a stack trace.
  expect(text.stderr.trim().split('\n')).toHaveLength(1);
  expect(text.stderr).toContain('[A2ACLI_ERR_CARD_INVALID]');
  return { json: envelope.error.violations as Json[], text: text.stdout };
}

describe('card get --validate: our server', () => {
  it('the combined card served by default meets both versions’ schemas', async () => {
    const json = await a2a(['card', 'get', combined.url, '--validate', '-o', 'json']);
    expect(json.code).toBe(0);
    const card = json.json() as Json;
    // Both versions' members: the combined card, held to 0.3's schema and to 1.0's.
    expect(card.protocolVersion).toMatch(/^0\.3/);
    expect(card.supportedInterfaces.length).toBeGreaterThan(0);
    const text = await a2a(['card', 'get', combined.url, '--validate']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Valid: true\n');
  });

  it('the pure 1.0 card (A2A-Version: 1.0) meets 1.0’s schema', async () => {
    const json = await a2a(['card', 'get', combined.url, '--validate', '-o', 'json', '--svc-param', 'A2A-Version:1.0']);
    expect(json.code).toBe(0);
    const card = json.json() as Json;
    expect(card.protocolVersion).toBeUndefined();
    expect(card.supportedInterfaces[0].protocolBinding).toBe('JSONRPC');
  });

  it('the pure 0.3 card of a 0.3-only deployment meets 0.3’s schema', async () => {
    const json = await a2a(['card', 'get', only0_3.url, '--validate', '-o', 'json', '--a2a-version', '0.3']);
    expect(json.code).toBe(0);
    const card = json.json() as Json;
    expect(card.supportedInterfaces).toBeUndefined();
    expect(card.url).toMatch(/\/a2a$/);
  });
});

describe('card get --validate: broken cards', () => {
  it('a card that is valid passes (the baseline the broken ones start from)', async () => {
    const run = await a2a(['card', 'get', served('valid', card1_0()), '--validate']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Valid: true\n');
  });

  it('a missing required member: its pointer and `required`', async () => {
    const { description: _description, ...card } = card1_0();
    const { json, text } = await violationsOf(served('missing', card));
    expect(json).toEqual([{ version: '1.0', pointer: '/description', rule: 'required', message: 'is required' }]);
    expect(text).toContain('Violation: [1.0] /description (required) is required\n');
  });

  it('a member of the wrong type: its pointer and `type`', async () => {
    const card = card1_0();
    (card.capabilities as Json).streaming = 'yes';
    const { json, text } = await violationsOf(served('wrong-type', card));
    expect(json).toEqual([
      { version: '1.0', pointer: '/capabilities/streaming', rule: 'type', message: 'must be boolean' },
    ]);
    expect(text).toContain('Violation: [1.0] /capabilities/streaming (type) must be boolean\n');
  });

  it('an interface whose URL is not an absolute URL: its pointer and `format:uri`', async () => {
    const card = card1_0();
    (card.supportedInterfaces[1] as Json).url = '/rest';
    const { json } = await violationsOf(served('bad-url', card));
    expect(json).toEqual([
      { version: '1.0', pointer: '/supportedInterfaces/1/url', rule: 'format:uri', message: 'must be an absolute URL' },
    ]);
  });

  it('an unknown protocol binding (neither a core one nor a URI, 1.0 §5.8)', async () => {
    const card = card1_0();
    (card.supportedInterfaces[0] as Json).protocolBinding = 'CARRIER-PIGEON';
    const { json } = await violationsOf(served('bad-binding', card));
    expect(json).toHaveLength(1);
    expect(json[0]).toMatchObject({ pointer: '/supportedInterfaces/0/protocolBinding', rule: 'format:a2a-binding' });
    // A custom binding named by a URI is allowed.
    (card.supportedInterfaces[0] as Json).protocolBinding = 'https://example.com/bindings/pigeon';
    const custom = await a2a(['card', 'get', served('custom-binding', card), '--validate']);
    expect(custom.code).toBe(0);
  });

  it('every violation is reported, not only the first', async () => {
    const { name: _name, ...card } = card1_0();
    (card.skills[0] as Json).tags = 'test';
    (card.supportedInterfaces[0] as Json).url = 'not a url';
    const { json } = await violationsOf(served('many', card));
    expect(json.map((v) => v.pointer).sort()).toEqual(['/name', '/skills/0/tags', '/supportedInterfaces/0/url']);
  });

  it('a 0.3 card is held to 0.3’s schema', async () => {
    const card = card0_3() as Json;
    card.additionalInterfaces[0].url = 'rest';
    delete card.skills;
    const { json } = await violationsOf(served('broken-0-3', card), ['--a2a-version', '0.3']);
    expect(json).toEqual([
      { version: '0.3', pointer: '/skills', rule: 'required', message: 'is required' },
      {
        version: '0.3',
        pointer: '/additionalInterfaces/0/url',
        rule: 'format:uri',
        message: 'must be an absolute URL',
      },
    ]);
  });

  it('a combined card is held to both: a member only 1.0 requires is named under 1.0', async () => {
    const card = { ...card0_3(), supportedInterfaces: [{ url: 'http://127.0.0.1:1/a2a', protocolBinding: 'JSONRPC' }] };
    const { json } = await violationsOf(served('combined-broken', card));
    expect(json).toEqual([
      { version: '1.0', pointer: '/supportedInterfaces/0/protocolVersion', rule: 'required', message: 'is required' },
    ]);
  });
});

describe('validateAgentCard: security schemes', () => {
  it('a 0.3 scheme needs the members of its type', () => {
    const card = { ...card0_3(), securitySchemes: { key: { type: 'apiKey', name: 'X-Key' } } };
    expect(validateAgentCard(card)).toEqual([
      { version: '0.3', pointer: '/securitySchemes/key/in', rule: 'required', message: 'is required' },
    ]);
  });

  it('a 1.0 scheme is exactly one kind', () => {
    const card = { ...card1_0(), securitySchemes: { key: { description: 'no kind' } } };
    expect(validateAgentCard(card)).toEqual([
      {
        version: '1.0',
        pointer: '/securitySchemes/key',
        rule: 'oneOf',
        message:
          'must have exactly one of apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, openIdConnectSecurityScheme, mtlsSecurityScheme',
      },
    ]);
    const valid = {
      ...card1_0(),
      securitySchemes: { key: { apiKeySecurityScheme: { location: 'header', name: 'X-Key' } } },
    };
    expect(validateAgentCard(valid)).toEqual([]);
  });
});
