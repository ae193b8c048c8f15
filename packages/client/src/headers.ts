/**
 * Request headers whose values may come from elsewhere: a literal, `file:PATH` (the file's
 * contents, trimmed) or `exec:COMMAND` (the command's standard output, trimmed; run without a
 * shell, its words split like a shell's but nothing expanded; `exec-shell:COMMAND` runs it with
 * `/bin/sh -c` for those who ask). Values are read when first needed and again after a 401, so a
 * token that rotates is picked up once; and every value read is remembered as a secret to redact
 * from anything printed.
 */

import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { A2AClientError } from './errors.js';

/** A header's value: a literal, `file:PATH`, `exec:COMMAND`, `exec-shell:COMMAND`, or a function. */
export type HeaderValue = string | (() => string | Promise<string>);

export interface Credentials {
  /** Sent as `Authorization: Bearer <token>`. */
  bearer?: HeaderValue | undefined;
  /** Sent in the header `apiKeyHeader` names (default from the card's apiKey scheme, else `X-API-Key`). */
  apiKey?: HeaderValue | undefined;
  apiKeyHeader?: string | undefined;
  /** Any other headers (service parameters, A2A §3.2.6). */
  headers?: Readonly<Record<string, HeaderValue>> | undefined;
}

const EXEC_TIMEOUT_MS = 10_000;

/** `exec:` words: whitespace-separated, with '…' and "…" quoting and \ escapes; nothing expanded. */
export function splitCommand(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: '"' | "'" | undefined;
  let started = false;
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < command.length) word += command[++i];
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      started = true;
    } else if (c === '\\' && i + 1 < command.length) {
      word += command[++i];
      started = true;
    } else if (/\s/.test(c)) {
      if (started) words.push(word);
      word = '';
      started = false;
    } else {
      word += c;
      started = true;
    }
  }
  if (quote !== undefined) throw new A2AClientError('usage', `exec: command has an unclosed ${quote} quote.`);
  if (started) words.push(word);
  return words;
}

function run(file: string, args: string[], what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: EXEC_TIMEOUT_MS, maxBuffer: 1024 * 1024 }, (error, stdout) => {
      // The command's stderr and output stay out of the message: they may hold the secret.
      if (error) {
        const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'was not found' : 'failed';
        reject(new A2AClientError('auth', `The header command for ${what} ${why}; run it yourself to see why.`));
      } else resolve(stdout.trim());
    });
  });
}

/** Reads one header value from its source. `what` names the header in errors (never the value). */
export async function resolveHeaderValue(value: HeaderValue, what: string): Promise<string> {
  if (typeof value === 'function') return (await value()).trim();
  if (value.startsWith('file:')) {
    const path = value.slice('file:'.length);
    try {
      return (await readFile(path, 'utf8')).trim();
    } catch (error) {
      throw new A2AClientError('auth', `Could not read ${what} from file ${path}: ${(error as Error).message}`);
    }
  }
  if (value.startsWith('exec-shell:')) return run('/bin/sh', ['-c', value.slice('exec-shell:'.length)], what);
  if (value.startsWith('exec:')) {
    const [file, ...args] = splitCommand(value.slice('exec:'.length));
    if (file === undefined) throw new A2AClientError('usage', `exec: for ${what} names no command.`);
    return run(file, args, what);
  }
  return value;
}

/** The headers of every request, resolved once and again on demand (after a 401). */
export class HeaderSet {
  readonly #sources: [name: string, value: HeaderValue][] = [];
  /** Headers whose values are credentials: redacted wherever headers are shown. */
  readonly #credentialNames = new Set<string>();
  #resolved: Promise<Record<string, string>> | undefined;
  readonly #secrets = new Set<string>();
  /** Whether the caller named the API key's header (else the card's apiKey scheme may). */
  #apiKeyNamed = true;

  constructor(credentials: Credentials = {}) {
    if (credentials.bearer !== undefined) {
      this.#sources.push(['authorization', credentials.bearer]);
      this.#credentialNames.add('authorization');
    }
    if (credentials.apiKey !== undefined) {
      this.#apiKeyNamed = credentials.apiKeyHeader !== undefined;
      const name = (credentials.apiKeyHeader ?? 'X-API-Key').toLowerCase();
      this.#sources.push([name, credentials.apiKey]);
      this.#credentialNames.add(name);
    }
    for (const [name, value] of Object.entries(credentials.headers ?? {})) {
      this.#sources.push([name.toLowerCase(), value]);
      // Any header may carry a credential (A2A-CLI §10.1 redacts service parameters too).
      this.#credentialNames.add(name.toLowerCase());
    }
  }

  /**
   * The header the card's apiKey scheme names (A2A §4.5.2 `in: header`), for an API key given
   * without a header name.
   */
  useApiKeyHeader(name: string): void {
    if (this.#apiKeyNamed) return;
    const lower = name.toLowerCase();
    const entry = this.#sources.find(([header]) => header === 'x-api-key');
    if (entry === undefined) return;
    entry[0] = lower;
    this.#credentialNames.add(lower);
    this.#apiKeyNamed = true;
    this.#resolved = undefined;
  }

  /** Whether any value can change when read again (a file, a command, a function). */
  get refreshable(): boolean {
    return this.#sources.some(([, v]) => typeof v === 'function' || /^(file|exec|exec-shell):/.test(v));
  }

  get hasCredentials(): boolean {
    return this.#sources.length > 0;
  }

  resolve(): Promise<Record<string, string>> {
    this.#resolved ??= this.#read();
    // A failed read is not cached: the next request tries again.
    this.#resolved.catch(() => {
      this.#resolved = undefined;
    });
    return this.#resolved;
  }

  /** Forgets the values read, so the next request reads each source again (after a 401). */
  refresh(): void {
    this.#resolved = undefined;
  }

  async #read(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const [name, source] of this.#sources) {
      const value = await resolveHeaderValue(source, `header ${name}`);
      const sent = name === 'authorization' && !/^\w+ /.test(value) ? `Bearer ${value}` : value;
      if (value.length >= 4) this.#secrets.add(value);
      out[name] = sent;
    }
    return out;
  }

  /** `text` with every credential value read so far replaced by `***`. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.#secrets) out = out.split(secret).join('***');
    return out;
  }
}
