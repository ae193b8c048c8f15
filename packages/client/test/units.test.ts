/**
 * The client's small parts on their own: `exec:` word splitting (no shell), Retry-After, the
 * CLI's durations, .env files and agent keys, card interfaces and negotiation, SSE framing.
 */

import { describe, expect, it } from 'vitest';
import { cardUrls, endpointsOf, selectEndpoint } from '../src/card.js';
import { agentKey, parseDotenv } from '../src/cli/config.js';
import { parseDuration } from '../src/cli/options.js';
import { resolveHeaderValue, splitCommand } from '../src/headers.js';
import { retryAfterMs } from '../src/http.js';
import { readSse } from '../src/sse.js';

describe('exec: commands', () => {
  it('splits words like a shell, expanding nothing', () => {
    expect(splitCommand(`cat '/tmp/a b' "x\\"y" plain\\ word $HOME | wc`)).toEqual([
      'cat',
      '/tmp/a b',
      'x"y',
      'plain word',
      '$HOME',
      '|',
      'wc',
    ]);
    expect(() => splitCommand(`echo 'open`)).toThrow(/unclosed ' quote/);
  });

  it('runs the command without a shell and trims its output; exec-shell: asks for one', async () => {
    expect(await resolveHeaderValue('exec:echo  tok-1 ', 'h')).toBe('tok-1');
    expect(await resolveHeaderValue('exec:echo $HOME', 'h')).toBe('$HOME');
    expect(await resolveHeaderValue('exec-shell:echo a | tr a b', 'h')).toBe('b');
    await expect(resolveHeaderValue('exec:no-such-command-xyz', 'header x')).rejects.toThrow(
      'The header command for header x was not found',
    );
  });
});

describe('Retry-After', () => {
  it('reads delay-seconds and HTTP dates', () => {
    expect(retryAfterMs('3')).toBe(3000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});

describe('CLI durations', () => {
  it('accepts ms, s, m, h and bare seconds; names a bad one', () => {
    expect(parseDuration('500ms', 'timeout')).toBe(500);
    expect(parseDuration('30s', 'timeout')).toBe(30_000);
    expect(parseDuration('2m', 'timeout')).toBe(120_000);
    expect(parseDuration('1.5', 'timeout')).toBe(1500);
    expect(() => parseDuration('soon', 'timeout')).toThrow('--timeout "soon" is not a duration');
  });
});

describe('cards and negotiation', () => {
  const card = {
    name: 'x',
    protocolVersion: '0.3.0',
    url: 'http://a/rpc',
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url: 'http://a/rest', transport: 'HTTP+JSON' }],
    supportedInterfaces: [
      { url: 'http://a/grpc', protocolBinding: 'GRPC', protocolVersion: '1.0' },
      { url: 'http://a/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: 't1' },
      { url: 'http://a/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ],
  };
  const resolved = { card, source: 'test', endpoints: endpointsOf(card) };

  it('reads 1.0 interfaces, then 0.3 ones, keeping tenants', () => {
    expect(resolved.endpoints.map((e) => `${e.binding} ${e.version} ${e.tenant ?? ''}`.trim())).toEqual([
      'GRPC 1.0',
      'HTTP+JSON 1.0 t1',
      'JSONRPC 1.0',
      'JSONRPC 0.3',
      'HTTP+JSON 0.3',
    ]);
  });

  it('prefers 1.0 JSON-RPC by default, the card order on request, and the caller order first', () => {
    expect(selectEndpoint(resolved)).toMatchObject({ binding: 'JSONRPC', version: '1.0' });
    expect(selectEndpoint(resolved, { preferences: 'card' })).toMatchObject({ binding: 'HTTP+JSON', tenant: 't1' });
    expect(selectEndpoint(resolved, { preferences: [{ version: '0.3', binding: 'HTTP+JSON' }] })).toMatchObject({
      binding: 'HTTP+JSON',
      version: '0.3',
    });
  });

  it('refuses a 0.3-only agent unless 0.3 is allowed, saying how', () => {
    const old = { name: 'o', protocolVersion: '0.3.0', url: 'http://a/rpc' };
    const only03 = { card: old, source: 'old', endpoints: endpointsOf(old) };
    expect(() => selectEndpoint(only03, { versions: ['1.0'] })).toThrow(/allow it explicitly \(--a2a-version 0\.3\)/);
    expect(selectEndpoint(only03, { versions: ['0.3'] })).toMatchObject({ version: '0.3' });
  });

  it('tries both well-known names, under a prefix and then at the origin', () => {
    expect(cardUrls('agents.example')).toEqual([
      'https://agents.example/.well-known/agent-card.json',
      'https://agents.example/.well-known/agent.json',
    ]);
    expect(cardUrls('http://h:1/agents/echo/')).toEqual([
      'http://h:1/agents/echo/.well-known/agent-card.json',
      'http://h:1/agents/echo/.well-known/agent.json',
      'http://h:1/.well-known/agent-card.json',
      'http://h:1/.well-known/agent.json',
    ]);
    expect(cardUrls('http://h/card.json')).toEqual(['http://h/card.json']);
  });
});

describe('SSE', () => {
  async function* chunks(...parts: string[]) {
    for (const part of parts) yield new TextEncoder().encode(part);
  }

  it('joins data lines, reports only the id an event carries itself, ignores comments, splits CRLF across chunks', async () => {
    const events = [];
    for await (const event of readSse(
      chunks(': hi\r', '\nid: 7\r\ndata: a\r\ndata: b\r', '\n\r\nevent: error\ndata: c\n\n'),
    )) {
      events.push(event);
    }
    expect(events).toEqual([
      { id: '7', event: 'message', data: 'a\nb' },
      // No id: line of its own: not reported as 7 (which would read as a replay of the first).
      { id: undefined, event: 'error', data: 'c' },
    ]);
  });
});

describe('.env files and agent keys', () => {
  it('reads dotenv lines: comments, export, quotes, inline comments', () => {
    const entries = parseDotenv(
      [
        '# a comment',
        'A2ACLI_AGENT_CARD=http://agent.example # inline comment',
        'export A2ACLI_OUTPUT=json',
        "A2ACLI_BEARER='tok #not a comment'",
        'A2ACLI_METADATA="{\\"k\\":\\"v\\"}"',
        'not a setting',
        '',
      ].join('\n'),
    );
    expect(Object.fromEntries(entries)).toEqual({
      A2ACLI_AGENT_CARD: 'http://agent.example',
      A2ACLI_OUTPUT: 'json',
      A2ACLI_BEARER: 'tok #not a comment',
      A2ACLI_METADATA: '{"k":"v"}',
    });
  });

  it('names one agent by its origin and path, however the reference is written', () => {
    const key = 'https://agent.example:8443/a2a';
    expect(agentKey('agent.example:8443/a2a')).toBe(key);
    expect(agentKey('https://agent.example:8443/a2a/')).toBe(key);
    expect(agentKey('https://agent.example:8443/a2a/.well-known/agent-card.json')).toBe(key);
    expect(agentKey('https://agent.example:8443/other')).not.toBe(key);
  });
});
