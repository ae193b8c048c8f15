/**
 * JSON Schema validation of wire requests (ajv, every validator compiled once), and error messages
 * that name each offending field the way the client wrote it, e.g. `params.message.parts[0].kind`.
 */

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { A2AError } from '../errors.js';

export type Validator = ValidateFunction<unknown>;

/** One ajv instance's options for every version's schemas: all errors, discriminators, strict schemas. */
export function createAjv(): Ajv {
  return new Ajv({ allErrors: true, discriminator: true, strict: true, strictRequired: false, allowUnionTypes: true });
}

export interface ValidationDetail {
  /** Where, from the root the caller named: `params.message.role`, `request.id`. */
  path: string;
  problem: string;
}

/** Turns ajv errors into one sentence naming each offending field under `root`, and the full list. */
export function describeValidationErrors(
  errors: ErrorObject[] | null | undefined,
  root = 'params',
): { message: string; details: ValidationDetail[] } {
  // A failed oneOf comes with the errors of each of its branches; the oneOf's own message (below)
  // says what was wanted, so the branches' are left out.
  const oneOfs = (errors ?? []).filter((e) => e.keyword === 'oneOf').map((e) => `${e.schemaPath}/`);
  const details = (errors ?? [])
    .filter((e) => e.keyword !== 'if' && !oneOfs.some((prefix) => e.schemaPath.startsWith(prefix)))
    .map((e) => {
      let path = `${root}${e.instancePath.replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/\//g, '.')}`;
      let problem = e.message ?? 'is invalid';
      if (e.keyword === 'required') {
        path = `${path}.${(e.params as { missingProperty: string }).missingProperty}`;
        problem = 'is required';
      } else if (e.keyword === 'const') {
        problem = `must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
      } else if (e.keyword === 'enum') {
        problem = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
      } else if (e.keyword === 'discriminator') {
        const tag = (e.params as { tag: string }).tag;
        path = `${path}.${tag}`;
        problem = 'must be one of "text", "file", "data"';
      } else if (e.keyword === 'oneOf' && path.endsWith('.file')) {
        problem = 'must have exactly one of "bytes" or "uri"';
      } else if (e.keyword === 'oneOf' && /\.parts\[\d+\]$/.test(path)) {
        // A2A 1.0 Part: its content is whichever one of these members is present.
        problem = 'must have exactly one of "text", "raw", "url", "data"';
      } else if (e.keyword === 'minItems') {
        problem = `must not have fewer than ${(e.params as { limit: number }).limit} item(s)`;
      }
      return { path, problem };
    });
  const unique = details.filter((d, i) => details.findIndex((o) => o.path === d.path && o.problem === d.problem) === i);
  const message =
    unique.length === 0
      ? 'Invalid params.'
      : `Invalid params: ${unique
          .slice(0, 3)
          .map((d) => `${d.path} ${d.problem}`)
          .join('; ')}${unique.length > 3 ? ` (and ${unique.length - 3} more)` : ''}.`;
  return { message, details: unique };
}

/**
 * How deep request parameters may nest. Deeper input is refused before anything reads it: a task
 * holding it could not be copied or written back (JSON serialisers recurse, and this runtime's
 * copies stop at `MAX_JSON_DEPTH`), so one deep data part would make its task unreadable for good.
 * 100 leaves room for any real document, and for the levels a task wraps a part in.
 */
export const MAX_PARAMS_DEPTH = 100;

/**
 * The path of the first value nested deeper than `maxDepth` (objects and arrays count a level
 * each), or undefined. The common answer, "not too deep", comes from a walk that builds no paths
 * and allocates nothing; only input it cannot clear is walked again, path by path, to name the
 * place (the path walk cost most of the params check of every request: bench/PROFILE.md).
 */
export function tooDeep(value: unknown, maxDepth: number, root: string): string | undefined {
  if (value === null || typeof value !== 'object' || !nestsAtLeast(value, maxDepth)) return undefined;
  return firstTooDeep(value, maxDepth, root);
}

/**
 * Whether `value` may hold an object or array `levels` levels below it. Recursive, but never more
 * than `levels` calls deep, so any input depth is safe. `for…in` visits inherited enumerable keys
 * too: a superset of the path walk's, so a "no" here is a "no" there.
 */
function nestsAtLeast(value: object, levels: number): boolean {
  if (levels === 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item !== null && typeof item === 'object' && nestsAtLeast(item, levels - 1)) return true;
    }
    return false;
  }
  for (const key in value) {
    const member: unknown = (value as Record<string, unknown>)[key];
    if (member !== null && typeof member === 'object' && nestsAtLeast(member, levels - 1)) return true;
  }
  return false;
}

/** tooDeep's answer for input that may be too deep. Walks with its own stack, so any input depth is safe. */
function firstTooDeep(value: unknown, maxDepth: number, root: string): string | undefined {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value, depth: 0, path: root }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value: current, depth, path } = next;
    if (current === null || typeof current !== 'object') continue;
    if (depth >= maxDepth) return path;
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++)
        stack.push({ value: current[i], depth: depth + 1, path: `${path}[${i}]` });
    } else {
      for (const key of Object.keys(current)) {
        stack.push({ value: (current as Record<string, unknown>)[key], depth: depth + 1, path: `${path}.${key}` });
      }
    }
  }
  return undefined;
}

/**
 * Validates `params` and returns them typed.
 * @throws {A2AError} INVALID_PARAMS naming each offending field, with the list in `data.errors`.
 */
export function validateParams<T>(validate: Validator, params: unknown, root: string, what: string): T {
  if (params === undefined) throw new A2AError('INVALID_PARAMS', `Invalid params: ${what} requires a params object.`);
  if (!validate(params)) {
    const { message, details } = describeValidationErrors(validate.errors, root);
    throw new A2AError('INVALID_PARAMS', message, { data: { errors: details } });
  }
  return params as T;
}
