/**
 * One artifact per streamed message. TEMPORARY: writes each delta as its own chunk; replaced by the
 * shared coalescer of `@fastify-a2a/core/agent-kit` once it lands.
 */
import type { TurnContext } from '@fastify-a2a/core';

export interface TextArtifactsOptions {
  maxDelayMs?: number;
  maxChars?: number;
}

export class TextArtifacts {
  readonly #turn: TurnContext;
  readonly #open = new Map<string, string>();

  constructor(turn: TurnContext, _options: TextArtifactsOptions = {}) {
    this.#turn = turn;
  }

  async write(artifactId: string, text: string, name: string): Promise<void> {
    const append = this.#open.has(artifactId);
    this.#open.set(artifactId, name);
    await this.#turn.artifact({ artifactId, name, text, append });
  }

  async end(): Promise<void> {
    for (const [artifactId, name] of this.#open) {
      await this.#turn.artifact({ artifactId, name, text: '', append: true, lastChunk: true });
    }
    this.#open.clear();
  }
}
