/**
 * One dedicated connection doing LISTEN for a store, reconnecting by itself.
 *
 * A pooled connection would be returned, recycled or shared with queries; LISTEN needs a session
 * of its own that lives as long as the store. When that session drops (server restart, failover,
 * `pg_terminate_backend`, network) notifications sent meanwhile are lost, so after every reconnect
 * the store catches up (see `onReconnect`): subscribers read the log from their own last sequence,
 * so one "look now" per subscribed task is all they need.
 */

import type pg from 'pg';
import { escapeIdentifier } from './sql.js';

export interface ListenerOptions {
  /** A new, unconnected client for the LISTEN session. */
  createClient(): pg.Client;
  channel: string;
  onNotification(payload: string): void;
  /** After a reconnect, once LISTEN is active again. Runs on the listening client; a failure reconnects. */
  onReconnect(client: pg.Client): Promise<void>;
  /** First reconnect delay; doubles per failed attempt up to `maxDelayMs` (with jitter). */
  minDelayMs: number;
  maxDelayMs: number;
}

export class NotificationListener {
  readonly #options: ListenerOptions;
  /** The live, listening client. */
  #client: pg.Client | undefined;
  /** A client still connecting (so close() can stop it). */
  #connecting: pg.Client | undefined;
  #timer: NodeJS.Timeout | undefined;
  #attempt = 0;
  #closed = false;

  constructor(options: ListenerOptions) {
    this.#options = options;
  }

  /** Connects and LISTENs; rejects when that fails (no retry: open() reports it). */
  async start(): Promise<void> {
    this.#adopt(await this.#open());
  }

  /** Whether the LISTEN connection is up now (false while it reconnects, and once closed). */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  /** Stops listening and any pending reconnect. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const clients = [this.#client, this.#connecting];
    this.#client = undefined;
    this.#connecting = undefined;
    await Promise.all(clients.map((client) => client?.end().catch(() => {})));
  }

  async #open(): Promise<pg.Client> {
    const client = this.#options.createClient();
    // Without an 'error' listener a dropped connection would crash the process. Errors of a client
    // that is not (or no longer) the live one are already handled by whoever awaits it.
    client.on('error', () => this.#lost(client));
    client.on('end', () => this.#lost(client));
    client.on('notification', (message) => {
      if (message.channel === this.#options.channel && message.payload) this.#options.onNotification(message.payload);
    });
    this.#connecting = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${escapeIdentifier(this.#options.channel)}`);
      return client;
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    } finally {
      if (this.#connecting === client) this.#connecting = undefined;
    }
  }

  #adopt(client: pg.Client): void {
    if (this.#closed) {
      client.end().catch(() => {});
      return;
    }
    this.#client = client;
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => {});
    this.#schedule();
  }

  #schedule(): void {
    if (this.#closed || this.#timer !== undefined) return;
    const { minDelayMs, maxDelayMs } = this.#options;
    const delay = Math.min(maxDelayMs, minDelayMs * 2 ** this.#attempt) * (0.5 + Math.random() / 2);
    this.#attempt += 1;
    // unref: a store waiting to reconnect must not keep the process alive on its own.
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#reconnect();
    }, delay).unref();
  }

  async #reconnect(): Promise<void> {
    if (this.#closed) return;
    let client: pg.Client;
    try {
      client = await this.#open();
    } catch {
      this.#schedule();
      return;
    }
    this.#adopt(client);
    if (this.#client !== client) return; // closed meanwhile
    this.#attempt = 0;
    try {
      await this.#options.onReconnect(client);
    } catch {
      this.#lost(client); // couldn't catch up: start over, which catches up again
    }
  }
}
