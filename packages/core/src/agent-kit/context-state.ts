/**
 * The conversation across turns and workers: an adapter keeps what its framework needs to carry
 * on (the messages so far, a thread id, the tool call waiting for the user's answer) in the
 * context's state (`turn.contextState`, written with `turn.setContextState`), which the store
 * keeps per contextId and hands to the next turn on whichever worker runs it.
 */

import type { TurnContext } from '../executor.js';
import { isJsonObject, type JsonObject } from '../json.js';

/** The state as this turn last wrote it through a slot, so two slots written in one turn both stay. */
const written = new WeakMap<object, JsonObject>();

export interface ContextStateSlot<T> {
  /** The key in the context state's object. */
  readonly key: string;
  /** The slot's value as the turn began, or as this turn last wrote it; undefined when absent or not valid. */
  read(turn: Pick<TurnContext, 'contextState'>): T | undefined;
  /**
   * Writes the slot (undefined removes it), keeping the state's other keys. The store keeps JSON:
   * the value must survive a JSON round trip (no Date, Map, class instance, Uint8Array). Write
   * before the turn's final status: the next turn may start as soon as it is written.
   */
  write(turn: Pick<TurnContext, 'contextState' | 'setContextState'>, value: T | undefined): Promise<void>;
}

/**
 * A named part of the context state: the state becomes an object with one key per slot, so an
 * adapter's state and the application's own (other keys) live side by side. A state that is not
 * an object (written by something else) reads as absent and is replaced on the first write.
 *
 * @param key the slot's key, e.g. `ai-sdk`.
 * @param parse checks a stored value and returns it typed, or undefined to treat it as absent
 *   (a state written by an older version, or by hand). @default accepts any defined value
 */
export function contextStateSlot<T>(key: string, parse?: (value: unknown) => T | undefined): ContextStateSlot<T> {
  const stateOf = (turn: Pick<TurnContext, 'contextState'>): JsonObject | undefined => {
    const state = written.get(turn) ?? turn.contextState;
    return isJsonObject(state) ? state : undefined;
  };
  return {
    key,
    read(turn) {
      const value = stateOf(turn)?.[key];
      if (value === undefined) return undefined;
      return parse ? parse(value) : (value as T);
    },
    async write(turn, value) {
      const next: JsonObject = { ...stateOf(turn) };
      if (value === undefined) delete next[key];
      else next[key] = value;
      await turn.setContextState(next);
      written.set(turn, next);
    },
  };
}
