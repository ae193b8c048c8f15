/**
 * The monitor's live page in headless Chromium (Debian's `chromium`, driven by playwright-core):
 * two real worker processes on one store; the page is served by worker B, a task is sent to
 * worker A, and the page shows it within a second and follows its state live. Task text is shown
 * as text, never run. `A2A_UPDATE_SCREENSHOTS=1` writes docs/monitor.png.
 */

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Task } from '@fastify-a2a/core';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withPostgres } from '../../../../test-support/postgres.js';
import { userMessage } from '../helpers.js';
import { Cluster, type Worker } from '../multi-worker/cluster.js';

const CHROMIUM = '/usr/bin/chromium';
const TOKEN = 'page-operator-token';
const docs = fileURLToPath(new URL('../../../../docs/', import.meta.url));

describe('the monitor page in Chromium, served by one worker of two (Postgres)', () => {
  const pg = withPostgres('a2a_monitor_page');
  const profile = mkdtempSync(join(tmpdir(), 'a2a-chromium-'));
  let cluster: Cluster;
  let browser: BrowserContext;
  let page: Page;
  const w = (n: number): Worker => cluster.worker(`w${n}`);

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it in CI)`);
    }
    cluster = await new Cluster({
      storeUrl: `${pg.url}${pg.url.includes('?') ? '&' : '?'}schema=${pg.schema}`,
      workers: 2,
      drainTimeoutMs: 200,
      env: { MONITOR_TOKEN: TOKEN },
    }).start();
    // A fresh profile (the --user-data-dir), as playwright takes it.
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      viewport: { width: 1400, height: 800 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = browser.pages()[0] ?? (await browser.newPage());
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await cluster?.stop();
    rmSync(profile, { recursive: true, force: true });
  });

  const send = (worker: Worker, text: string) =>
    cluster.result<Task>('message/send', { message: userMessage(text), configuration: { blocking: false } }, worker, {
      authorization: 'Bearer tok-alice',
    });

  it('asks for the token, refuses a wrong one, then shows workers and tasks', async () => {
    const outside: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(w(2).url)) outside.push(request.url());
    });
    await page.goto(`${w(2).url}/monitor/`);
    await page.fill('#token', 'not-the-token');
    await page.click('#login button');
    await expect.poll(() => page.textContent('#login-error')).toMatch(/not an operator/);
    await page.fill('#token', TOKEN);
    await page.click('#login button');
    await page.waitForSelector('#status[data-state="live"]', { timeout: 5000 });
    await page.waitForSelector('#workers tbody tr[data-worker="w1"]');
    await page.waitForSelector('#workers tbody tr[data-worker="w2"]');
    expect(outside).toEqual([]);
  }, 20_000);

  it('a task sent to worker A appears on the page of worker B within a second, and its state changes live', async () => {
    // Markup in the text: shown as text, never as HTML.
    const task = await send(w(1), 'sleep:1500');
    const sentAt = Date.now();
    const row = `#tasks tbody tr[data-task-id="${task.id}"]`;
    await page.waitForSelector(`${row}[data-state="working"]`, { timeout: 1000 });
    expect(Date.now() - sentAt).toBeLessThan(1000);
    expect(await page.textContent(`${row} td:nth-child(5)`)).toBe('w1');
    if (process.env.A2A_UPDATE_SCREENSHOTS === '1') await page.screenshot({ path: join(docs, 'monitor.png') });
    // The filter shows running tasks: switch to all before it completes, to see it change.
    await page.selectOption('#state-filter', '');
    await page.waitForSelector(`${row}[data-state="completed"]`, { timeout: 5000 });
  }, 20_000);

  it('shows untrusted task text as text, and a task’s event log on click', async () => {
    const hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    const task = await send(w(1), hostile);
    const row = `#tasks tbody tr[data-task-id="${task.id}"]`;
    await page.waitForSelector(`${row}[data-state="completed"]`, { timeout: 5000 });
    await page.click(row);
    await page.waitForSelector('#detail:not([hidden]) #events tbody tr');
    const kinds = await page.$$eval('#events tbody tr td:nth-child(3)', (cells) => cells.map((c) => c.textContent));
    expect(kinds[0]).toBe('task');
    expect(kinds).toContain('status-update');
    const log = await page.textContent('#events tbody');
    expect(log).toContain('onerror');
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.$$('#events img, #tasks img, #events script')).toEqual([]);
    if (process.env.A2A_UPDATE_SCREENSHOTS === '1') await page.screenshot({ path: join(docs, 'monitor-task.png') });
  }, 20_000);
});
