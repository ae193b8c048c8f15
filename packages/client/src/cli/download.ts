/**
 * `a2a task download` (a2a-cli A2ACLI_DOWNLOAD_001): a task's artifacts as files in a directory.
 * A file part is saved under its own name (bytes decoded, a URI fetched), a text part as `.txt`,
 * a data part as formatted `.json`.
 *
 * A file name is the agent's data, never a path or a setting: one that could leave the directory
 * (`../x`, `/etc/x`, `a/b`), that a tool would read as configuration or hide (`.env`, `.npmrc`,
 * any dotfile), that a shell reads as an option (`-rf`), that Windows reserves (`CON`, `nul.txt`),
 * that holds control, format or bidirectional characters, or that is too long is refused, and the
 * part saved under a generated name instead, with a warning naming both.
 *
 * All or nothing: every name is checked, and every part's content fetched, before anything is
 * written. Each file is written to a temporary file in the directory (created exclusively, so
 * never through a symlink) and then moved into place: linked without `--force`, so an existing
 * name is never replaced; renamed with it, which replaces a symlink itself rather than writing
 * through it. A failure removes what this run wrote.
 */

import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
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

/**
 * The longest name taken from an agent, in UTF-8 bytes: below the 255 of common file systems
 * (NAME_MAX), with room for the `-2` a repeated name gets.
 */
export const MAX_NAME_BYTES = 200;

/** The longest stem of a generated name (from an artifact's name or id). */
const MAX_STEM = 64;

/** Device names Windows reserves in every directory, with or without an extension. */
const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$/i;

/** A name from the agent, if it is a plain, visible file name no tool reads as its own; else why not. */
export function checkFileName(name: string): { ok: true } | { ok: false; reason: string } {
  if (name === '' || name === '.' || name === '..') return { ok: false, reason: 'is not a file name' };
  if (/[/\\]/.test(name)) return { ok: false, reason: 'is a path, not a file name' };
  // Cc: C0, DEL and C1 controls; Cf: format characters, the bidirectional controls among them
  // (U+202A–U+202E, U+2066–U+2069), which make a name read as another; Zl/Zp: line breaks; Cs: a
  // lone surrogate, which no file system stores as given.
  if (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u.test(name))
    return { ok: false, reason: 'holds control, format or bidirectional characters' };
  if (name.startsWith('.')) return { ok: false, reason: 'starts with a dot: a hidden or configuration file' };
  if (name.startsWith('-')) return { ok: false, reason: 'starts with a dash: commands would read it as an option' };
  if (/^\s|[\s.]$/u.test(name)) return { ok: false, reason: 'starts or ends with a space, or ends with a dot' };
  if (/[<>:"|?*]/.test(name)) return { ok: false, reason: 'holds a character file systems refuse (<>:"|?*)' };
  if (RESERVED.test(name)) return { ok: false, reason: 'is a device name Windows reserves' };
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES)
    return { ok: false, reason: `is longer than ${MAX_NAME_BYTES} bytes` };
  return { ok: true };
}

/** `outputs`-style stems from an artifact's name or id: only [A-Za-z0-9_.-], never leading with . or -. */
function stem(artifact: Pick<Artifact, 'name' | 'artifactId'>): string {
  const plain = (artifact.name ?? artifact.artifactId).replace(/[^\w.-]+/g, '_').slice(0, MAX_STEM);
  if (plain === '') return 'artifact';
  return /^[.-]/.test(plain) ? `_${plain.slice(1)}` : plain;
}

export interface PlannedFile {
  /** The file's name in the directory: always one `checkFileName` accepts. */
  name: string;
  artifactId: string;
  partIndex: number;
  mediaType: string | undefined;
  part: Part;
}

/** Each part's file name, decided before anything is fetched or written. */
export function planDownload(task: Pick<Task, 'artifacts'>, warn: (line: string) => void): PlannedFile[] {
  const planned: PlannedFile[] = [];
  // Compared folded, so two names one case-insensitive or normalising file system takes as one
  // (macOS, Windows) are not written over each other.
  const taken = new Set<string>();
  const fold = (name: string) => name.normalize('NFC').toLowerCase();
  const unique = (name: string) => {
    let candidate = name;
    const ext = extname(name);
    for (let n = 2; taken.has(fold(candidate)); n++)
      candidate = `${name.slice(0, name.length - ext.length)}-${n}${ext}`;
    taken.add(fold(candidate));
    return candidate;
  };
  for (const artifact of task.artifacts ?? []) {
    artifact.parts.forEach((part, partIndex) => {
      const generated = `${stem(artifact)}-${partIndex + 1}`;
      // A stem may itself be a device name's (`CON.-1.txt` is Windows' CON): set it apart.
      const ours = (name: string) => (checkFileName(name).ok ? name : `_${name}`);
      let name: string;
      let mediaType: string | undefined;
      if (part.kind === 'text') {
        name = ours(`${generated}.txt`);
        mediaType = 'text/plain';
      } else if (part.kind === 'data') {
        name = ours(`${generated}.json`);
        mediaType = 'application/json';
      } else {
        mediaType = part.file.mimeType;
        const own = part.file.name;
        const check = own === undefined ? undefined : checkFileName(own);
        if (own !== undefined && check?.ok) name = own;
        else {
          name = ours(`${generated}${EXTENSIONS[mediaType ?? ''] ?? '.bin'}`);
          if (own !== undefined && check && !check.ok) {
            warn(
              `Refused the file name ${JSON.stringify(own)} from the agent (it ${check.reason}); saving as ${name}.`,
            );
          }
        }
      }
      planned.push({ name: unique(name), artifactId: artifact.artifactId, partIndex, mediaType, part });
    });
  }
  return planned;
}

/**
 * Moves a written temporary file to a name that must not exist: a hard link fails if anything
 * (a file, a symlink, dangling or not) holds the name, where a rename would replace it.
 */
async function placeNew(temporary: string, path: string): Promise<void> {
  try {
    await link(temporary, path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A file system without hard links (some network and FAT mounts): checked, then renamed.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'ENOSYS') throw error;
    if ((await lstat(path).catch(() => undefined)) !== undefined)
      throw Object.assign(new Error(`${path} exists`), { code: 'EEXIST', path });
    await rename(temporary, path);
    return;
  }
  await unlink(temporary);
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

export interface SavedFile {
  path: string;
  artifactId: string;
  partIndex: number;
  mediaType: string | null;
  bytes: number;
}

/**
 * Saves a task's parts as files in `dir`, all or nothing (see the header): names planned and
 * checked, existing names refused unless `force`, every content read, then each written to a
 * temporary file and moved into place.
 */
export async function saveDownload(
  task: Pick<Task, 'artifacts'>,
  dir: string,
  options: { force: boolean; warn: (line: string) => void; content: (part: Part) => Promise<Uint8Array> },
): Promise<SavedFile[]> {
  const { force } = options;
  const planned = planDownload(task, options.warn).map((entry) => ({ ...entry, path: join(dir, entry.name) }));
  // Checked before anything is written, so a refused download leaves the directory as it was.
  const existing: string[] = [];
  for (const entry of planned) {
    const found = await lstat(entry.path).catch(() => undefined);
    if (found === undefined) continue;
    if (found.isDirectory())
      throw new UsageError(`${entry.path} is a directory: the file part ${entry.name} cannot be saved there.`, null);
    existing.push(entry.path);
  }
  if (existing.length > 0 && !force) {
    throw new UsageError(
      `${existing.length === 1 ? 'A file' : `${existing.length} files`} to save already exist${existing.length === 1 ? 's' : ''}: ${existing.join(', ')}.`,
      'Pass --force to overwrite, or --dir <directory> to save elsewhere.',
    );
  }
  // Every part's content before the first write: a URI that fails leaves nothing behind.
  const contents: Uint8Array[] = [];
  for (const entry of planned) contents.push(await options.content(entry.part));
  await mkdir(dir, { recursive: true });
  const temporaries: string[] = [];
  const placed: string[] = [];
  try {
    for (const bytes of contents) {
      // Not a dotfile either; `wx` (O_CREAT|O_EXCL) never follows a symlink planted under the name.
      const temporary = join(dir, `a2a-download-${randomBytes(6).toString('hex')}.partial`);
      temporaries.push(temporary);
      await writeFile(temporary, bytes, { flag: 'wx' });
    }
    for (const [index, entry] of planned.entries()) {
      const temporary = temporaries[index] as string;
      if (force) await rename(temporary, entry.path);
      else await placeNew(temporary, entry.path);
      placed.push(entry.path);
    }
  } catch (error) {
    await Promise.all(temporaries.map((path) => unlink(path).catch(() => undefined)));
    if (!force) await Promise.all(placed.map((path) => unlink(path).catch(() => undefined)));
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new UsageError(
        `A file appeared while saving: ${(error as NodeJS.ErrnoException).path ?? ''}; nothing was saved.`,
        'Pass --force to overwrite.',
      );
    throw error;
  }
  return planned.map((entry, index) => ({
    path: entry.path,
    artifactId: entry.artifactId,
    partIndex: entry.partIndex,
    mediaType: entry.mediaType ?? null,
    bytes: (contents[index] as Uint8Array).byteLength,
  }));
}

export async function taskDownload(ctx: Context, parsed: Parsed): Promise<void> {
  const id = taskId(parsed);
  const dir = resolve(String(ctx.values.dir ?? '.'));
  const agent = await client(ctx);
  const task = await agent.getTask(id, { signal: ctx.signal, timeoutMs: ctx.timeoutMs });
  const saved = await saveDownload(task, dir, {
    force: ctx.values.force === true,
    warn: (line) => ctx.stderr.write(`warning: ${line}\n`),
    content: (part) => content(ctx, part),
  });
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
