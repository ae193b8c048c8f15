/**
 * Issue 23, item 15: a Postgres statement refused for a passing state of the server (SQLSTATE
 * 55000, object not in prerequisite state, seen during a failover) reached clients as a generic
 * 500; it is the 503 "retry shortly" other store failures get, on both bindings and versions, and
 * the same request succeeds once the state passed. The refusal is the real server's: a trigger on
 * the store's own tasks table raises it.
 */

import { PostgresStore } from '@fastify-a2a/store-postgres';
import { describe, expect, it } from 'vitest';
import { withPostgres } from '../../../../test-support/postgres.js';
import { userMessage } from '../helpers.js';
import { protocolClient } from '../protocol/client.js';
import { serveOn } from './issue-23-stores.js';

const pg = withPostgres('a2a_issue23_transient');

describe('issue 23 on Postgres: SQLSTATE 55000', () => {
  it('answers 503 / -32603 "retry shortly" on every binding and version, and serves again once it passed', async () => {
    const schema = pg.newSchema();
    const store = { name: 'Postgres', create: () => new PostgresStore({ connectionString: pg.url, schema }) };
    const { base } = await serveOn(store, async (turn) => turn.complete('done'), { createTaskBeforeRun: true });
    const s = `"${schema}"`;
    await pg.query(`CREATE FUNCTION ${s}.not_ready() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'the table is not in a prerequisite state (test)' USING ERRCODE = '55000'; END $$`);
    await pg.query(
      `CREATE TRIGGER not_ready BEFORE INSERT OR UPDATE ON ${s}.tasks FOR EACH ROW EXECUTE FUNCTION ${s}.not_ready()`,
    );

    for (const version of ['0.3', '1.0'] as const) {
      const rpc = await protocolClient('JSONRPC', base, version).sendMessage({ message: userMessage('now?') });
      expect(rpc, `JSON-RPC ${version}`).toMatchObject({ ok: false, code: -32603 });
      expect((rpc as { message: string }).message).toMatch(/retry shortly/);
      expect((rpc as { message: string }).message).not.toMatch(/55000|prerequisite|postgres|127\.0\.0\.1/i);
    }
    const v03 = await fetch(`${base}/v1/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: { role: 'ROLE_USER', messageId: 'm-55000-a', content: [{ text: 'now?' }] } }),
    });
    expect(v03.status).toBe(503);
    const v10 = await fetch(`${base}/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ message: { role: 'ROLE_USER', messageId: 'm-55000-b', parts: [{ text: 'now?' }] } }),
    });
    expect(v10.status).toBe(503);
    expect(await v10.json()).toMatchObject({ error: { code: 503, status: 'UNAVAILABLE' } });

    await pg.query(`DROP TRIGGER not_ready ON ${s}.tasks`);
    const again = await protocolClient('HTTP+JSON', base, '1.0').sendMessage({
      message: userMessage('now?'),
      configuration: { blocking: true },
    });
    expect(again.ok).toBe(true);
  });
});
