/**
 * Issue 23, items 3, 4, 7 and 16, over real HTTP on every store:
 * - input modes: a part of a media type the card does not accept is ContentTypeNotSupported
 *   (-32005; HTTP 415 on HTTP+JSON), by default for 1.0, and for 0.3 when asked;
 * - `agentCardVersions`: the combined card, the pure 1.0 card (asked for by `A2A-Version: 1.0`, or
 *   alone), the pure 0.3 card, each checked against a schema written from its version's spec;
 * - the card's caching headers, ETag and 304;
 * - the card from a JSON file, and a bad file failing `register` naming the file and the field.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message, Part, Task } from '@fastify-a2a/core';
import { Ajv, type ValidateFunction } from 'ajv';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { type A2APluginOptions, a2aPlugin, apiKeys, bearerTokens } from '../../src/index.js';
import { testCard, userMessage } from '../helpers.js';
import { protocolClient } from '../protocol/client.js';
import { agentCardSchema0_3, agentCardSchema1_0 } from './card-schemas.js';
import { BINDINGS, issueStores, serveOn, VERSIONS } from './issue-23-stores.js';

const ajv = new Ajv({ allErrors: true, strict: false });
const validate0_3: ValidateFunction = ajv.compile(agentCardSchema0_3);
const validate1_0: ValidateFunction = ajv.compile(agentCardSchema1_0);
const problems = (validate: ValidateFunction, card: unknown): string =>
  validate(card) ? '' : ajv.errorsText(validate.errors, { dataVar: 'card' });

const fullCard: A2APluginOptions['agentCard'] = {
  ...testCard,
  provider: { organization: 'Example', url: 'https://example.com' },
  documentationUrl: 'https://example.com/docs',
  iconUrl: 'https://example.com/icon.png',
  capabilities: { extensions: [{ uri: 'https://example.com/ext/1', required: false }] },
  defaultInputModes: ['text/plain', 'application/json'],
  skills: [
    {
      id: 'look',
      name: 'Look',
      description: 'Looks at pictures.',
      tags: ['images'],
      examples: ['what is in this picture?'],
      inputModes: ['image/*'],
      security: [{ bearer: [] }],
    },
  ],
};

const echo = async (turn: { text: string; complete(msg: string): Promise<void> }) =>
  turn.complete(`echo: ${turn.text}`);

const filePart = (mimeType: string): Part => ({
  kind: 'file',
  file: { uri: 'https://example.com/file', mimeType, name: 'file' },
});

for (const store of issueStores('a2a-issue23-card')) {
  describe(`issue 23 on ${store.name}`, () => {
    describe('item 3: input modes', () => {
      for (const binding of BINDINGS) {
        it(`${binding}: 1.0 refuses a part the card does not accept with ContentTypeNotSupported; 0.3 only when asked`, async () => {
          for (const validateInputModes of [undefined, ['0.3', '1.0'] as const]) {
            const { base } = await serveOn(store, echo, {
              agentCard: fullCard,
              ...(validateInputModes === undefined ? {} : { validateInputModes }),
            });
            for (const version of VERSIONS) {
              const client = protocolClient(binding, base, version);
              const send = (parts: Part[]) =>
                client.sendMessage({ message: userMessage('x', { parts }), configuration: { blocking: true } });
              const checked = version === '1.0' || validateInputModes !== undefined;
              const refused = await send([{ kind: 'text', text: 'see' }, filePart('application/pdf')]);
              if (checked) {
                expect(refused, `${version} ${validateInputModes}`).toMatchObject({ ok: false, code: -32005 });
                expect((refused as { message: string }).message).toContain('message.parts[1] is application/pdf');
              } else {
                expect(refused.ok, `${version} unchecked`).toBe(true);
              }
              // A skill's mode (image/* covers image/png), a parameter, and a file without a type pass.
              for (const parts of [
                [filePart('image/png')],
                [filePart('Text/Plain; charset=utf-8')],
                [{ kind: 'file', file: { uri: 'https://example.com/f' } } as Part],
                [{ kind: 'data', data: { a: 1 } } as Part],
              ]) {
                const accepted = await send(parts);
                if (!accepted.ok) throw new Error(`${version}: ${accepted.code} ${accepted.message}`);
                expect((accepted.result as Task).status.state).toBe('completed');
              }
            }
          }
        });
      }

      it('HTTP+JSON answers 415 in both versions; a 1.0 text part naming another media type is checked', async () => {
        const { base } = await serveOn(store, echo, { agentCard: fullCard, validateInputModes: ['0.3', '1.0'] });
        const send = (path: string, body: unknown, headers: Record<string, string>) =>
          fetch(`${base}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers },
            body: JSON.stringify(body),
          });
        const v03 = await send(
          '/v1/message:send',
          {
            message: {
              role: 'ROLE_USER',
              messageId: 'm-415-a',
              content: [{ file: { fileWithUri: 'https://example.com/a', mimeType: 'video/mp4' } }],
            },
          },
          {},
        );
        expect(v03.status).toBe(415);
        expect(await v03.json()).toMatchObject({ code: -32005, error: 'ContentTypeNotSupportedError' });
        const v10 = await send(
          '/message:send',
          {
            message: { role: 'ROLE_USER', messageId: 'm-415-b', parts: [{ text: '# hi', mediaType: 'text/markdown' }] },
          },
          { 'a2a-version': '1.0' },
        );
        expect(v10.status).toBe(415);
        expect(await v10.json()).toMatchObject({ error: { code: 415, status: 'INVALID_ARGUMENT' } });
      });

      it('validateInputModes: [] turns the check off; a bad value fails register naming the option', async () => {
        const { base } = await serveOn(store, echo, { agentCard: fullCard, validateInputModes: [] });
        const client = protocolClient('JSONRPC', base, '1.0');
        const outcome = await client.sendMessage({ message: userMessage('x', { parts: [filePart('video/mp4')] }) });
        expect(outcome.ok).toBe(true);
        const app = Fastify();
        await expect(
          app.register(a2aPlugin, {
            agentCard: testCard,
            executor: echo,
            validateInputModes: ['2.0'] as unknown as ['1.0'],
          }),
        ).rejects.toThrow(`"validateInputModes" must be an array of '1.0' and '0.3' (or [] for none)`);
        await app.close();
      });
    });

    describe('item 4: the card each version validates', () => {
      const authenticate = [bearerTokens({ 'tok-a': 'alice' }), apiKeys({ 'key-a': 'alice' })];

      it("default ['1.0', '0.3']: the combined card without a version header, the pure 1.0 card with A2A-Version: 1.0", async () => {
        const { base } = await serveOn(store, echo, { agentCard: fullCard, authenticate });
        const combined = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
        // Both clients read it: 0.3's required members and 1.0's are all there.
        expect(combined).toMatchObject({ protocolVersion: '0.3.0', url: `${base}/a2a`, preferredTransport: 'JSONRPC' });
        expect(combined.supportedInterfaces).toHaveLength(4);
        expect(problems(validate1_0, combined)).toMatch(/must NOT have additional properties/);
        for (const version of ['1.0', '1.0.1', '1.1']) {
          const res = await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'a2a-version': version } });
          const card = (await res.json()) as Record<string, unknown>;
          expect(problems(validate1_0, card), version).toBe('');
          expect(card.securitySchemes).toMatchObject({
            bearer: { httpAuthSecurityScheme: { scheme: 'bearer' } },
          });
          expect(card.supportedInterfaces).toEqual([
            { url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
            { url: base, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
            { url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
            { url: base, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
          ]);
        }
        const asked0_3 = await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'a2a-version': '0.3' } });
        expect(((await asked0_3.json()) as Record<string, unknown>).protocolVersion).toBe('0.3.0');
      });

      it("['1.0']: the pure 1.0 card for every request; both versions are still served", async () => {
        const { base } = await serveOn(store, echo, { agentCard: fullCard, authenticate, agentCardVersions: ['1.0'] });
        for (const path of ['/.well-known/agent-card.json', '/.well-known/agent.json', '/a2a']) {
          const card = await (await fetch(`${base}${path}`)).json();
          expect(problems(validate1_0, card), path).toBe('');
        }
        const client = protocolClient('JSONRPC', base, '0.3', { authorization: 'Bearer tok-a' });
        expect((await client.sendMessage({ message: userMessage('still 0.3') })).ok).toBe(true);
      });

      it("['0.3']: the pure 0.3 card, whatever the request's version", async () => {
        const { base } = await serveOn(store, echo, { agentCard: fullCard, authenticate, agentCardVersions: ['0.3'] });
        for (const headers of [{}, { 'a2a-version': '1.0' }] as Record<string, string>[]) {
          const card = await (await fetch(`${base}/.well-known/agent-card.json`, { headers })).json();
          expect(problems(validate0_3, card)).toBe('');
          expect(card).toMatchObject({
            securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
            additionalInterfaces: [
              { url: `${base}/a2a`, transport: 'JSONRPC' },
              { url: base, transport: 'HTTP+JSON' },
            ],
          });
        }
      });

      it('a minimal card (no skills, no modes) is a valid card in each pure shape', async () => {
        for (const agentCardVersions of [['1.0'], ['0.3']] as const) {
          const { base } = await serveOn(store, echo, { agentCardVersions });
          const card = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
          const validate = agentCardVersions[0] === '1.0' ? validate1_0 : validate0_3;
          expect(problems(validate, card), agentCardVersions[0]).toBe('');
        }
      });

      it('a bad agentCardVersions fails register naming the option', async () => {
        const app = Fastify();
        await expect(
          app.register(a2aPlugin, { agentCard: testCard, executor: echo, agentCardVersions: [] }),
        ).rejects.toThrow(`"agentCardVersions" must be a non-empty array of '1.0' and '0.3'.`);
        await app.close();
      });
    });

    describe('item 7: caching headers on the card', () => {
      it('Cache-Control with max-age, an ETag per shape, Last-Modified, and 304 on If-None-Match', async () => {
        const { base } = await serveOn(store, echo);
        const url = `${base}/.well-known/agent-card.json`;
        const first = await fetch(url);
        expect(first.status).toBe(200);
        expect(first.headers.get('cache-control')).toBe('public, max-age=300');
        expect(first.headers.get('vary')).toMatch(/a2a-version/i);
        const lastModified = first.headers.get('last-modified') ?? '';
        expect(Number.isNaN(Date.parse(lastModified))).toBe(false);
        const etag = first.headers.get('etag') ?? '';
        expect(etag).toMatch(/^"[\w-]+"$/);
        const again = await fetch(url, { headers: { 'if-none-match': etag } });
        expect(again.status).toBe(304);
        expect(again.headers.get('etag')).toBe(etag);
        expect(await again.text()).toBe('');
        // A weak validator and a list match too; another tag does not.
        expect((await fetch(url, { headers: { 'if-none-match': `"x", W/${etag}` } })).status).toBe(304);
        expect((await fetch(url, { headers: { 'if-none-match': '"other"' } })).status).toBe(200);
        // The 1.0 card is another representation, with its own tag.
        const pure = await fetch(url, { headers: { 'a2a-version': '1.0' } });
        expect(pure.headers.get('etag')).not.toBe(etag);
        expect((await fetch(url, { headers: { 'a2a-version': '1.0', 'if-none-match': etag } })).status).toBe(200);
      });

      it('agentCardMaxAgeSeconds: 0 sends no-cache, still with an ETag', async () => {
        const { base } = await serveOn(store, echo, { agentCardMaxAgeSeconds: 0, agentCardVersions: ['1.0'] });
        const res = await fetch(`${base}/.well-known/agent-card.json`);
        expect(res.headers.get('cache-control')).toBe('no-cache');
        expect(res.headers.get('etag')).toBeTruthy();
        expect(res.headers.get('vary')).toBeNull();
      });
    });

    describe('item 16: the card from a JSON file', () => {
      const dir = mkdtempSync(join(tmpdir(), 'a2a-card-file-'));
      afterAll(() => rmSync(dir, { recursive: true, force: true }));

      it('serves the card the file holds, on both versions', async () => {
        const file = join(dir, `card-${store.name}.json`);
        writeFileSync(file, JSON.stringify({ ...fullCard, name: 'From a file' }));
        const { base } = await serveOn(store, echo, { agentCard: file });
        const card0_3 = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
        expect(card0_3).toMatchObject({ name: 'From a file', skills: [{ id: 'look' }] });
        const card1_0 = (await (
          await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })
        ).json()) as { name: string };
        expect(problems(validate1_0, card1_0)).toBe('');
        expect(card1_0.name).toBe('From a file');
        // The file's input modes are the ones enforced.
        const refused = await protocolClient('HTTP+JSON', base, '1.0').sendMessage({
          message: userMessage('x', { parts: [filePart('video/mp4')] }) as Message,
        });
        expect(refused).toMatchObject({ ok: false, code: -32005 });
      });

      it.each([
        [
          'a field of a skill',
          { ...testCard, skills: [{ id: 's', description: 'd', tags: [] }] },
          '.skills[0].name must be a non-empty string',
        ],
        ['a missing name', { description: 'd', version: '1' }, '.name must be a non-empty string'],
        ['a field the plugin fills in', { ...testCard, url: 'https://x' }, '.url is filled in by the plugin'],
        [
          'input modes that are not a list',
          { ...testCard, defaultInputModes: 'text/plain' },
          '.defaultInputModes must be an array',
        ],
      ])('a file with %s fails register naming the file and the field', async (_what, content, problem) => {
        const file = join(dir, `bad-${Math.random().toString(36).slice(2)}.json`);
        writeFileSync(file, JSON.stringify(content));
        const app = Fastify();
        const error = await app.register(a2aPlugin, { agentCard: file, executor: echo }).then(
          () => undefined,
          (e: Error) => e,
        );
        await app.close();
        expect(error?.message).toContain(`fastify-a2a: "agentCard" file ${file}: ${problem}`);
        expect(error).toMatchObject({ code: 'INVALID_OPTIONS' });
      });

      it('a file that is not JSON, or missing, fails register naming the file and why', async () => {
        const broken = join(dir, 'broken.json');
        writeFileSync(broken, '{"name": "x",');
        const missing = join(dir, 'missing.json');
        for (const [file, why] of [
          [broken, /is not valid JSON: /],
          [missing, /could not be read \(ENOENT\)/],
          [join(dir, 'card.yaml'), /only JSON card files are read/],
        ] as const) {
          const app = Fastify();
          const error = await app.register(a2aPlugin, { agentCard: file, executor: echo }).then(
            () => undefined,
            (e: Error) => e,
          );
          await app.close();
          expect(error?.message).toContain(`"agentCard" file ${file}`);
          expect(error?.message).toMatch(why);
        }
      });
    });
  });
}
