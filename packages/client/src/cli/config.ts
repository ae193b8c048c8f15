/**
 * Configuration files (a2a-cli SPEC.md v0.2 §6.4): dotenv files holding the same `A2ACLI_<OPTION>`
 * names as the environment. Highest first: a flag, the environment, the local file (the `.env` in
 * the working directory, or the `--config` file in its place), the user file
 * `~/.config/a2a-cli/.env`, the built-in default.
 *
 * A `.env` is often not the user's: a cloned repository, an unpacked archive or another user's
 * directory can hold one. So the working directory's `.env` is the only one found by itself (never
 * one in a parent directory), it and the user file are read only when they belong to the user and
 * nobody else can write to them, and the local `.env` is read with restrictions (see
 * `LOCAL_FILE_OPTIONS` in options.ts) unless the user trusts it (`--trust-local-config`).
 *
 * Also the credentials `a2a auth login` stores per agent (`~/.config/a2a-cli/credentials.json`,
 * mode 0600): read only when no credential came from a flag, the environment or a file.
 */

import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from './errors.js';

export interface ConfigFile {
  /** `local` (found or given with --config) or `user`. */
  scope: 'local' | 'user';
  path: string;
  entries: Map<string, string>;
  /**
   * Whether every setting is taken from it: the user file and a `--config` file are (the user
   * chose them); the working directory's `.env` only when the user trusts it.
   */
  trusted: boolean;
}

/** The user's configuration directory. HOME decides it, so a test (or a user) can move it. */
export const userConfigDir = (): string => join(homedir(), '.config', 'a2a-cli');

/** Option names whose values are credentials: masked by `config show`, 0600 files expected. */
export const SECRET_OPTIONS = new Set(['bearer', 'api-key', 'svc-param', 'client-secret']);

/**
 * dotenv lines: `KEY=value`, an optional `export `, `#` comments, values optionally in single
 * quotes (taken literally) or double quotes (with \n, \" and \\ escapes).
 */
export function parseDotenv(text: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) continue;
    let value = match[2] as string;
    if (value.startsWith("'") && value.lastIndexOf("'") > 0) value = value.slice(1, value.lastIndexOf("'"));
    else if (value.startsWith('"') && value.lastIndexOf('"') > 0) {
      value = value.slice(1, value.lastIndexOf('"')).replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
    } else value = value.replace(/\s+#.*$/, '');
    entries.set(match[1] as string, value);
  }
  return entries;
}

function read(path: string, scope: ConfigFile['scope'], trusted: boolean, warnings: string[]): ConfigFile {
  const entries = parseDotenv(readFileSync(path, 'utf8'));
  const holdsSecret = [...SECRET_OPTIONS].some((name) => entries.has(envName(name)));
  // §6.4: secrets never in a file others can read. We do not change the user's file; we say so.
  if (holdsSecret && process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) {
    warnings.push(`${path} holds a credential and others can read it: chmod 600 ${path}`);
  }
  return { scope, path, entries, trusted };
}

/**
 * Why a file found by itself (not named with --config) is not the user's to read, if it is not:
 * it must be a regular file owned by the user, the link to it too, and writable by no one else
 * (as ssh reads its config). There is no owner to compare on Windows.
 */
export function notOwnReason(path: string): string | undefined {
  const target = statSync(path);
  if (!target.isFile()) return 'it is not a regular file';
  if (process.platform === 'win32' || typeof process.getuid !== 'function') return undefined;
  const uid = process.getuid();
  const link = lstatSync(path);
  if (target.uid !== uid || link.uid !== uid)
    return `it is owned by uid ${link.uid !== uid ? link.uid : target.uid}, not you (uid ${uid})`;
  if ((target.mode & 0o022) !== 0) return `others can write to it (mode ${(target.mode & 0o777).toString(8)})`;
  return undefined;
}

/** A file found by itself, if it exists and is the user's; a warning when it exists and is not. */
function own(path: string, warnings: string[]): boolean {
  if (!existsSync(path)) return false;
  const reason = notOwnReason(path);
  if (reason === undefined) return true;
  const fix = reason.startsWith('others can write') ? ` (chmod go-w ${path})` : '';
  warnings.push(`ignored ${path}: ${reason}; only your own file, writable by you alone, is read${fix}`);
  return false;
}

/** The files in force, highest precedence first; with any warnings about them. */
export function configFiles(
  explicit: string | undefined,
  cwd = process.cwd(),
): { files: ConfigFile[]; warnings: string[]; localPath: string | undefined; userPath: string } {
  const warnings: string[] = [];
  const files: ConfigFile[] = [];
  let localPath: string | undefined;
  if (explicit !== undefined) {
    localPath = resolve(cwd, explicit);
    if (!existsSync(localPath)) {
      throw new UsageError(`--config ${explicit}: no such file.`, 'Give the path of a .env file.');
    }
    files.push(read(localPath, 'local', true, warnings));
  } else {
    // The working directory's only: a `.env` in a parent (say a shared /tmp) may be anyone's.
    const candidate = join(resolve(cwd), '.env');
    if (own(candidate, warnings)) {
      localPath = candidate;
      files.push(read(candidate, 'local', false, warnings));
    }
  }
  const userPath = join(userConfigDir(), '.env');
  if (own(userPath, warnings)) files.push(read(userPath, 'user', true, warnings));
  return { files, warnings, localPath, userPath };
}

export const envName = (flag: string) => `A2ACLI_${flag.replace(/-/g, '_').toUpperCase()}`;

// ---- credentials stored by `auth login` ----

export interface StoredCredential {
  bearer?: string;
  apiKey?: string;
  apiKeyHeader?: string;
  /** ISO 8601: when `auth login` stored it. */
  storedAt: string;
  /** ISO 8601: when an OAuth token expires, if its endpoint said. */
  expiresAt?: string;
  /** How it was obtained: given, or an OAuth flow. */
  flow?: 'given' | 'client-credentials' | 'device-code';
}

export const credentialsPath = (): string => join(userConfigDir(), 'credentials.json');

/**
 * The key an agent's credential is stored under: its card reference as an origin and path (no
 * trailing slash, no well-known card path), or an absolute path for a local card file, so
 * `-a host:port`, `-a http://host:port/` and the card's URL name one agent.
 */
export function agentKey(reference: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(reference)
    ? reference
    : /^[\w.-]+(:\d+)?(\/|$)/.test(reference) && !existsSync(reference)
      ? `https://${reference}`
      : undefined;
  if (withScheme === undefined) return resolve(reference);
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    // Not a URL: no credential is stored under it, and connecting reports the bad reference.
    return reference;
  }
  if (url.protocol === 'file:') return resolve(url.pathname);
  const path = url.pathname.replace(/\/\.well-known\/agent(-card)?\.json$/, '').replace(/\/+$/, '');
  return `${url.origin}${path}`;
}

export function readCredentials(): Record<string, StoredCredential> {
  const path = credentialsPath();
  if (!existsSync(path)) return {};
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { agents?: Record<string, StoredCredential> };
    return parsed.agents ?? {};
  } catch {
    throw new UsageError(`${path} is not valid JSON.`, 'Fix or remove it, then run `a2a auth login` again.');
  }
}

/** Writes the whole credentials file, 0600 in a 0700 directory, replacing it atomically. */
export function writeCredentials(agents: Record<string, StoredCredential>): string {
  const path = credentialsPath();
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify({ agents }, null, 2)}\n`, { mode: 0o600 });
  // The mode given to writeFileSync is filtered by the umask: set it explicitly.
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
  return path;
}
