/**
 * The errors `@fastify-a2a/langgraph` raises, each with a stable `code` and a message that says the fix.
 * Branded with `Symbol.for`, so `isLangGraphAdapterError` holds across two installed copies.
 */

const BRAND = Symbol.for('fastify-a2a.langgraph.error');

export type LangGraphAdapterErrorCode = 'INVALID_GRAPH';

export class LangGraphAdapterError extends Error {
  readonly code: LangGraphAdapterErrorCode;
  readonly [BRAND] = true;

  constructor(code: LangGraphAdapterErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LangGraphAdapterError';
    this.code = code;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}
