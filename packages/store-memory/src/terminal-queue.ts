/**
 * Ids in the order they were last touched, least recent first. An array with a moving head rather
 * than a Set iterated from its start: a Set added to at the end and deleted from at the front keeps
 * the deleted slots at its front until it rehashes, and every new iteration walks them all. With many
 * tasks that walk took most of a commit's time.
 */
export class TerminalQueue {
  #ids: string[] = [];
  /** The touch each entry of #ids records; only an id's latest touch counts. */
  #touches: number[] = [];
  #head = 0;
  #lastTouch = 0;
  /** Each id that is in the queue, with its latest touch. */
  readonly #latest = new Map<string, number>();

  /** Puts `id` last (again). */
  touch(id: string): void {
    const touch = ++this.#lastTouch;
    this.#ids.push(id);
    this.#touches.push(touch);
    this.#latest.set(id, touch);
  }

  /** Takes `id` out; its entries in the array are skipped when they come up. */
  remove(id: string): void {
    this.#latest.delete(id);
  }

  /** Removes and returns the least recently touched id, or undefined when there is none. */
  shift(): string | undefined {
    let found: string | undefined;
    while (found === undefined && this.#head < this.#ids.length) {
      const id = this.#ids[this.#head] as string;
      const touch = this.#touches[this.#head];
      this.#head++;
      // An entry is current only if it records the id's latest touch (not removed, not re-touched).
      if (this.#latest.get(id) === touch) {
        this.#latest.delete(id);
        found = id;
      }
    }
    if (this.#head > 1024 && this.#head * 2 > this.#ids.length) {
      this.#ids = this.#ids.slice(this.#head);
      this.#touches = this.#touches.slice(this.#head);
      this.#head = 0;
    }
    return found;
  }

  clear(): void {
    this.#ids = [];
    this.#touches = [];
    this.#head = 0;
    this.#latest.clear();
  }
}
