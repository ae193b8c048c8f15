/**
 * `a2a task download` (a2a-cli A2ACLI_DOWNLOAD_001): a task's artifacts as files in a directory.
 * A file part is saved under its own name (bytes decoded, a URI fetched), a text part as `.txt`,
 * a data part as formatted `.json`. Nothing is overwritten without `--force`, and a name the
 * agent chose never leaves the directory: one that is a path (`../x`, `/etc/x`, `a/b`) is refused
 * and the part saved under a generated name instead.
 */

import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import type { Artifact, Part, Task } from '@fastify-a2a/core/protocol';
import { A2AClientError } from '../errors.js';
import { insecureFetch } from '../insecure-fetch.js';
import { type Context, client, taskId } from './commands.js';
import { UsageError } from './errors.js';
import type { Parsed } from './options.js';
import { stateName } from './render.js';

const EXTENSIONS: Record<string, string> = {
  'text/plain': '.txt',
  'text/markdown': '.md',
  'text/csv': '.csv',
  'text/html': '.html',
  'application/json': '.json',
  'application/pdf': '.pdf',
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/svg+xml': '.svg',
};

interface Planned {
  path: string;
  artifactId: string;
  partIndex: number;
  mediaType: string | undefined;
  part: Part;
}

/** A name from the agent, if it is a plain file name; else why not. */
function safeName(name: string): { ok: true } | { ok: false; reason: string } {
  if (name === '' || name === '.' || name === '..') return { ok: false, reason: 'is not a file name' };
  if (/[/\\]/.test(name) || basename(name) !== name) return { ok: false, reason: 'is a path, not a file name' };
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a NUL or control character in a file name is what is refused.
  if (/[\u0000-\u001f]/.test(name)) return { ok: false, reason: 'holds control characters' };
  return { ok: true };
}

/** `artifact-2`-style stems from an artifact's name or id, with anything but [\w.-] replaced. */
const stem = (artifact: Artifact) =>
  (artifact.name ?? artifact.artifactId).replace(/[^\w.-]+/g, '_').replace(/^\.+/, '_');

function plan(task: Task, dir: string, warn: (line: string) => void): Planned[] {
  const planned: Planned[] = [];
  const taken = new Set<string>();
  const unique = (name: string) => {
    let candidate = name;
    const ext = extname(name);
    for (let n = 2; taken.has(candidate); n++) candidate = `${name.slice(0, name.length - ext.length)}-${n}${ext}`;
    taken.add(candidate);
    return candidate;
  };
  for (const artifact of task.artifacts ?? []) {
    artifact.parts.forEach((part, partIndex) => {
      const generated = `${stem(artifact)}-${partIndex + 1}`;
      let name: string;
      let mediaType: string | undefined;
      if (part.kind === 'text') {
        name = `${generated}.txt`;
        mediaType = 'text/plain';
      } else if (part.kind === 'data') {
        name = `${generated}.json`;
        mediaType = 'application/json';
      } else {
        mediaType = part.file.mimeType;
        const own = part.file.name;
        const check = own === undefined ? undefined : safeName(own);
        if (own !== undefined && check?.ok) name = own;
        else {
          name = `${generated}${EXTENSIONS[mediaType ?? ''] ?? '.bin'}`;
          if (own !== undefined && check && !check.ok) {
            warn(
              `Refused the file name ${JSON.stringify(own)} from the agent (it ${check.reason}); saving as ${name}.`,
            );
          }
        }
      }
      planned.push({ path: join(dir, unique(name)), artifactId: artifact.artifactId, partIndex, mediaType, part });
    });
  }
  return planned;
}

async function content(ctx: Context, part: Part): Promise<Uint8Array> {
  if (part.kind === 'text') return new TextEncoder().encode(part.text);
  if (part.kind === 'data') return new TextEncoder().encode(`${JSON.stringify(part.data, null, 2)}\n`);
  if ('bytes' in part.file) return Buffer.from(part.file.bytes, 'base64');
  const uri = part.file.uri;
  if (!/^(https?|data):/i.test(uri)) {
    throw new A2AClientError(
      'unreachable',
      `The file part's URI ${uri} is not http(s) or data: this CLI does not fetch it.`,
    );
  }
  // The URI may be anyone's: it is fetched without the agent's credentials, which are for the agent.
  const fetchUri = ctx.values.insecure === true ? insecureFetch : globalThis.fetch;
  let response: Response;
  try {
    response = await fetchUri(uri, { signal: ctx.signal });
  } catch (error) {
    throw new A2AClientError('unreachable', `Could not fetch the file part's URI ${uri}.`, { cause: error });
  }
  if (!response.ok)
    throw new A2AClientError('unreachable', `Fetching the file part's URI ${uri} answered HTTP ${response.status}.`);
  return new Uint8Array(await response.arrayBuffer());
}

export async function taskDownload(ctx: Context, parsed: Parsed): Promise<void> {
  const id = taskId(parsed);
  const dir = resolve(String(ctx.values.dir ?? '.'));
  const agent = await client(ctx);
  const task = await agent.getTask(id, { signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  const planned = plan(task, dir, (line) => ctx.stderr.write(`warning: ${line}\n`));
  const existing = planned.filter((p) => existsSync(p.path)).map((p) => p.path);
  // Checked before anything is written, so a refused download leaves the directory as it was.
  if (existing.length > 0 && ctx.values.force !== true) {
    throw new UsageError(
      `${existing.length === 1 ? 'A file' : `${existing.length} files`} to save already exist${existing.length === 1 ? 's' : ''}: ${existing.join(', ')}.`,
      'Pass --force to overwrite, or --dir <directory> to save elsewhere.',
    );
  }
  await mkdir(dir, { recursive: true });
  const saved: { path: string; artifactId: string; partIndex: number; mediaType: string | null; bytes: number }[] = [];
  for (const entry of planned) {
    const bytes = await content(ctx, entry.part);
    await writeFile(entry.path, bytes, { flag: ctx.values.force === true ? 'w' : 'wx' });
    saved.push({
      path: entry.path,
      artifactId: entry.artifactId,
      partIndex: entry.partIndex,
      mediaType: entry.mediaType ?? null,
      bytes: bytes.byteLength,
    });
  }
  if (ctx.format !== 'text') {
    ctx.printer.document({
      taskId: task.id,
      contextId: task.contextId,
      state: stateName(task.status.state),
      files: saved,
    });
    return;
  }
  const { printer } = ctx;
  printer.field('Task ID', task.id);
  printer.field('Context ID', task.contextId);
  printer.field('State', stateName(task.status.state));
  printer.field('Files', saved.length);
  for (const file of saved)
    printer.field('Saved', `${file.path} (${file.mediaType ?? 'unknown type'}, ${file.bytes} bytes)`);
}
