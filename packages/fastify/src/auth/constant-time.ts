/**
 * Looking a secret up without telling an attacker, by the time the answer takes, how much of a
 * guess was right. A string `===` or a Map lookup stops at the first differing character; here
 * every candidate is compared, in full, with each stored secret.
 */

import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The SHA-256 digest of `secret`. Comparing digests rather than the secrets themselves gives
 * `timingSafeEqual` equal lengths (it throws on unequal ones) and hides the secret's length.
 */
export function digestOf(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Whether two secrets are equal, in time that depends on neither's content or length. */
export function secretsEqual(a: string, b: string, compare: typeof timingSafeEqual = timingSafeEqual): boolean {
  return compare(digestOf(a), digestOf(b));
}

/**
 * Secrets (bearer tokens, API keys) and what each stands for. {@link find} compares the candidate
 * with every entry, even after a match, so neither which entry matched nor whether one did shows
 * in the time it takes.
 */
export class SecretTable<T> {
  readonly #entries: { digest: Buffer; value: T }[] = [];
  readonly #compare: typeof timingSafeEqual;

  /** `compare` is for tests, which count the comparisons made. */
  constructor(entries: Iterable<readonly [string, T]>, compare: typeof timingSafeEqual = timingSafeEqual) {
    this.#compare = compare;
    for (const [secret, value] of entries) this.#entries.push({ digest: digestOf(secret), value });
  }

  get size(): number {
    return this.#entries.length;
  }

  /** What `candidate` stands for, or undefined when it is none of the secrets. */
  find(candidate: string): T | undefined {
    const digest = digestOf(candidate);
    let found: T | undefined;
    for (const entry of this.#entries) {
      // No early exit: the loop runs over every entry whatever matched.
      if (this.#compare(entry.digest, digest) && found === undefined) found = entry.value;
    }
    return found;
  }
}
