/** Reading the monitor's events stream in tests: named events, with their ids. */

export interface MonitorEvent {
  id: string | undefined;
  event: string;
  data: Record<string, unknown>;
}

/** A live events stream: events as they arrive, and a way to wait for one. */
export class EventsReader {
  readonly events: MonitorEvent[] = [];
  readonly status: number;
  readonly #controller: AbortController;
  #ended = false;
  readonly done: Promise<void>;

  private constructor(response: Response, controller: AbortController) {
    this.status = response.status;
    this.#controller = controller;
    this.done = this.#read(response).finally(() => {
      this.#ended = true;
    });
  }

  static async open(url: string, headers: Record<string, string>): Promise<EventsReader> {
    const controller = new AbortController();
    const response = await fetch(url, { headers, signal: controller.signal });
    return new EventsReader(response, controller);
  }

  get ended(): boolean {
    return this.#ended;
  }

  get lastId(): string | undefined {
    return this.events.findLast((e) => e.id !== undefined)?.id;
  }

  async #read(response: Response): Promise<void> {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let index = buffer.indexOf('\n\n');
        while (index !== -1) {
          const block = buffer.slice(0, index);
          buffer = buffer.slice(index + 2);
          let id: string | undefined;
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length > 0) this.events.push({ id, event, data: JSON.parse(data.join('\n')) });
          index = buffer.indexOf('\n\n');
        }
      }
    } catch (error) {
      if ((error as Error).name !== 'AbortError') throw error;
    }
  }

  /** The first event (from `from` on) that `match` accepts, waiting up to `timeoutMs`. */
  async waitFor(
    match: (event: MonitorEvent) => boolean,
    timeoutMs = 5000,
    what = 'an event',
    from = 0,
  ): Promise<MonitorEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.slice(from).find(match);
      if (found) return found;
      if (Date.now() > deadline) {
        throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}; got ${JSON.stringify(this.events)}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  close(): void {
    this.#controller.abort();
  }
}

/** A task event (snapshot or change) of `taskId`, optionally in `state`. */
export const taskEvent =
  (taskId: string, state?: string) =>
  (event: MonitorEvent): boolean =>
    (event.event === 'task' || event.event === 'snapshot') &&
    event.data.id === taskId &&
    (state === undefined || event.data.state === state);
