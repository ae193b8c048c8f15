/**
 * Property tests of what the CLI does with strings an agent chooses (issue 28 item 6): download
 * naming and saving, fed arbitrary names (control characters, direction marks, separators,
 * reserved names, very long names), never writes outside `--dir` and never creates a dotfile; text
 * rendering, fed arbitrary text, never emits a control or escape sequence; json stays exact.
 */

import { lstat, mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Part, Task } from '@fastify-a2a/core/protocol';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkFileName, MAX_NAME_BYTES, planDownload, saveDownload } from '../src/cli/download.js';
import { json, Printer, terminalSafe, visible } from '../src/cli/render.js';
import { tempDir } from './helpers.js';

/** What text output must never hold raw: C0 but tab and newline, DEL, C1, bidi controls and marks. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for.
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** Pieces a hostile name or text is made of, mixed with arbitrary code points. */
const PIECES = [
  '.',
  '..',
  '/',
  '\\',
  '../',
  '.env',
  '.npmrc',
  '.envrc',
  '.git',
  '-rf',
  ' ',
  ':',
  '*',
  'CON',
  'nul',
  'com1',
  'LPT¹',
  '\x00',
  '\x1b',
  '\x1b]0;title\x07',
  '\x1b[2K',
  '\r',
  '\n',
  '\t',
  '\x7f',
  '\x85',
  '\x9b',
  '\u061c',
  '\u200e',
  '\u200f',
  '\u2028',
  '\u202a',
  '\u202e',
  '\u2066',
  '\u2069',
  '\ufeff',
  '\ud800',
  '\udfff',
  'é',
  'É',
  'e\u0301',
  '😀',
  'report',
  '.txt',
  'x'.repeat(120),
  'é'.repeat(70),
];

const hostileString = fc
  .array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ unit: 'binary', maxLength: 8 })), { maxLength: 8 })
  .map((pieces) => pieces.join(''));

const fileParts = fc.array(
  fc.record({ name: fc.option(hostileString, { nil: undefined }), text: fc.string({ maxLength: 20 }) }),
  { minLength: 1, maxLength: 6 },
);

const taskOf = (
  parts: { name: string | undefined; text: string }[],
  artifactName?: string,
): Pick<Task, 'artifacts'> => ({
  artifacts: [
    {
      artifactId: 'artifact',
      ...(artifactName === undefined ? {} : { name: artifactName }),
      parts: parts.map(
        ({ name, text }): Part => ({
          kind: 'file',
          file: {
            bytes: Buffer.from(text).toString('base64'),
            mimeType: 'text/plain',
            ...(name === undefined ? {} : { name }),
          },
        }),
      ),
    },
  ],
});

const fold = (name: string) => name.normalize('NFC').toLowerCase();

describe('download names (property)', () => {
  it('every planned name is one plain, visible, short file name, and no two collide', () => {
    fc.assert(
      fc.property(fileParts, fc.option(hostileString, { nil: undefined }), (parts, artifactName) => {
        const planned = planDownload(taskOf(parts, artifactName), () => {});
        expect(planned).toHaveLength(parts.length);
        for (const { name } of planned) {
          expect(checkFileName(name)).toEqual({ ok: true });
          expect(name.startsWith('.')).toBe(false);
          expect(name).not.toMatch(/[/\\]/);
          expect(name).not.toMatch(RAW);
          expect(Buffer.byteLength(name)).toBeLessThanOrEqual(MAX_NAME_BYTES + 8);
        }
        expect(new Set(planned.map(({ name }) => fold(name))).size).toBe(planned.length);
      }),
      { numRuns: 500 },
    );
  });

  it('checkFileName refuses every dotfile, separator, control or bidi character and reserved device name', () => {
    fc.assert(
      fc.property(hostileString, (name) => {
        const accepted = checkFileName(name).ok;
        if (name.startsWith('.') || /[/\\]/.test(name) || RAW.test(name) || /^(con|nul|com1)(\.|$)/i.test(name))
          expect(accepted).toBe(false);
        if (Buffer.byteLength(name) > MAX_NAME_BYTES) expect(accepted).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('saving a download (property, on the real file system)', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    tmp = await tempDir();
  });
  afterAll(() => tmp?.remove());

  it('writes exactly one regular, non-dot file per part, inside --dir and nowhere else', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fileParts, async (parts) => {
        const root = join(tmp.dir, `run-${run++}`);
        const dir = join(root, 'out');
        await mkdir(root);
        try {
          const saved = await saveDownload(taskOf(parts), dir, {
            force: false,
            warn: () => {},
            content: async (part) =>
              Buffer.from(part.kind === 'file' && 'bytes' in part.file ? part.file.bytes : '', 'base64'),
          });
          expect(await readdir(root)).toEqual(['out']);
          const names = await readdir(dir);
          expect(names).toHaveLength(parts.length);
          expect(names.filter((name) => name.startsWith('.') || name.endsWith('.partial'))).toEqual([]);
          for (const [index, file] of saved.entries()) {
            expect(join(dir, file.path.slice(dir.length + 1))).toBe(file.path);
            expect((await lstat(file.path)).isFile()).toBe(true);
            expect(await readFile(file.path)).toEqual(Buffer.from(parts[index]?.text ?? ''));
          }
        } finally {
          await rm(root, { recursive: true, force: true });
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('text rendering (property)', () => {
  function capture(format: 'text' | 'json', draw: (printer: Printer) => void): string {
    const out = new PassThrough();
    let written = '';
    out.on('data', (chunk: Buffer) => {
      written += chunk.toString('utf8');
    });
    draw(new Printer(format, out, true));
    out.end();
    return written || (out.read()?.toString('utf8') ?? '');
  }

  const hostileTask = fc
    .record({ id: hostileString, text: hostileString, name: hostileString, status: hostileString, meta: hostileString })
    .map(
      ({ id, text, name, status, meta }): Task => ({
        kind: 'task',
        id,
        contextId: id,
        status: {
          state: 'completed',
          timestamp: status,
          message: { kind: 'message', role: 'agent', messageId: id, parts: [{ kind: 'text', text: status }] },
        },
        metadata: { [meta]: meta },
        artifacts: [
          {
            artifactId: id,
            name,
            parts: [
              { kind: 'text', text },
              { kind: 'data', data: { [name]: text } },
              { kind: 'file', file: { name, mimeType: meta, uri: text } },
            ],
          },
        ],
      }),
    );

  it('text output never holds a control, escape or bidi character but newline and tab', () => {
    fc.assert(
      fc.property(hostileTask, (task) => {
        const text = capture('text', (printer) => printer.task(task));
        expect(text).not.toMatch(RAW);
        expect(text).toContain('State: TASK_STATE_COMPLETED\n');
      }),
      { numRuns: 300 },
    );
  });

  it('json output is the protocol document, byte for byte', () => {
    fc.assert(
      fc.property(hostileTask, (task) => {
        const out = capture('json', (printer) => printer.document(json.task(task)));
        expect(out).toBe(`${JSON.stringify(json.task(task), null, 2)}\n`);
      }),
      { numRuns: 200 },
    );
  });

  it('visible leaves safe text alone, and a field is always one line', () => {
    fc.assert(
      fc.property(hostileString, (value) => {
        expect(visible(value)).not.toMatch(RAW);
        if (!RAW.test(value)) expect(visible(value)).toBe(value);
        const line = capture('text', (printer) => printer.field('Label', value));
        expect(line.match(/\n/g)).toHaveLength(1);
        expect(line.endsWith('\n')).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('stderr made terminal-safe never passes an escape sequence through', () => {
    fc.assert(
      fc.property(hostileString, (value) => {
        const out = new PassThrough();
        terminalSafe(out).write(value);
        out.end();
        expect(out.read()?.toString('utf8') ?? '').not.toMatch(RAW);
      }),
      { numRuns: 500 },
    );
  });
});
