import { hash } from 'node:crypto';
import type { Message } from '../model/types.js';

/**
 * A digest of what a message says: SHA-256, in lower-case hex, of the canonical JSON of its
 * `role`, `parts`, `metadata`, `extensions` and `referenceTaskIds` (those present).
 *
 * Not of `messageId`, `taskId`, `contextId` or `kind`: a retried message that started a new task
 * carries no `taskId` or `contextId`, while the copy the store indexed has the ids the runtime
 * generated, and both must digest the same; the message id is the key the digest is looked up
 * by. So a runtime can tell a retry (same id, same digest) from a client reusing an id for
 * another message (same id, other digest).
 *
 * Canonical JSON: the JSON value (what `JSON.stringify` would keep: a `Date` as its ISO string,
 * no `undefined` properties) written with object keys sorted by UTF-16 code units and no
 * whitespace, as RFC 8785 (JCS) does, so key order never changes the digest. The same message
 * read back from any store digests the same.
 * @throws {TypeError} for what JSON cannot carry (a BigInt, a cycle), as `JSON.stringify` does.
 */
export function messageDigest(message: Message): string {
  // Written straight from the message, with JSON's rules, rather than from a JSON copy of it: the
  // digest is taken once per message sent, on the hot path of every message/send. The members are
  // written in their sorted order, without an object to sort them out of.
  const ancestors: object[] = [];
  let text = '{';
  for (const key of DIGESTED_FIELDS) {
    const member = canonicalJson(message[key], ancestors);
    if (member !== undefined) text += text.length === 1 ? `"${key}":${member}` : `,"${key}":${member}`;
  }
  return hash('sha256', `${text}}`, 'hex');
}

/** The fields {@link messageDigest} covers, in the order canonical JSON writes them (sorted). */
const DIGESTED_FIELDS = ['extensions', 'metadata', 'parts', 'referenceTaskIds', 'role'] as const;

/** What JSON.stringify escapes in a string: a quote, a backslash, a control character, a surrogate (when lone). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify(text)`, without its cost for the usual string that needs no escape. */
function jsonString(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * Sorts keys by UTF-16 code units, as `Array.prototype.sort` does by default, in place: insertion
 * sort for the few keys an object of a message usually has (the default sort's string conversions
 * cost more than the sorting there).
 */
function sortKeys(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
}

/**
 * `value` as JSON text with object keys sorted by UTF-16 code units and no whitespace; undefined
 * where JSON.stringify leaves the value out (undefined, a function, a symbol), so that the caller
 * drops the member (or writes null in an array). `toJSON` is honoured, as JSON.stringify does.
 * @throws {TypeError} for a BigInt (from JSON.stringify) or a cycle (`ancestors` holds the path).
 */
function canonicalJson(input: unknown, ancestors: object[]): string | undefined {
  let value = input;
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  if (typeof value === 'string') return jsonString(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (ancestors.includes(value)) throw new TypeError('Converting circular structure to JSON');
  ancestors.push(value);
  let text: string;
  if (Array.isArray(value)) {
    text = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text += ',';
      text += canonicalJson(value[i], ancestors) ?? 'null';
    }
    text += ']';
  } else {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object);
    sortKeys(keys);
    text = '{';
    for (const key of keys) {
      const member = canonicalJson(object[key], ancestors);
      if (member !== undefined)
        text += text.length === 1 ? `${jsonString(key)}:${member}` : `,${jsonString(key)}:${member}`;
    }
    text += '}';
  }
  ancestors.pop();
  return text;
}
