/**
 * A demo that cannot start says why in one line on stderr and exits non-zero: no stack trace, no
 * "ready" line, no password.
 */
import { describe, expect, it } from 'vitest';
import { spawnDemo } from './demo-process.js';

const cases = [
  { store: 'redis://x', says: /Unsupported store URL "redis:\/\/x"; use memory:, sqlite:<path>/ },
  { store: 'sqlite:', says: /The store URL "sqlite:" names no file/ },
  { store: 'postgres://exa mple/db', says: /is not a valid URL/ },
  {
    // Port 1: nothing listens there, so the connection is refused at once.
    store: 'postgres://postgres:s3cret-password@127.0.0.1:1/x',
    says: /Cannot open the PostgreSQL store at 127\.0\.0\.1:1 .*ECONNREFUSED/,
  },
] as const;

describe('the demo on a store it cannot use', () => {
  it.each(cases)('A2A_STORE=$store exits non-zero with one line naming the problem', async ({ store, says }) => {
    const demo = await spawnDemo({ A2A_STORE: store });
    const exit = await demo.exited;
    expect(exit.code).not.toBe(0);
    expect(exit.code).not.toBeNull(); // exited by itself, not killed
    const stderr = demo.stderr().trim();
    expect(stderr.split('\n')).toHaveLength(1);
    expect(stderr).toMatch(/^Could not start the demo: /);
    expect(stderr).toMatch(says);
    expect(stderr).not.toMatch(/^ {4}at /m);
    expect(demo.stdout()).not.toMatch(/ready/);
    expect(`${demo.stdout()}${demo.stderr()}`).not.toContain('s3cret-password');
  });

  it('exits non-zero on an A2A_GRPC_PORT that is not a port, naming the variable', async () => {
    const demo = await spawnDemo({ A2A_STORE: 'memory:', A2A_GRPC_PORT: 'nope' });
    const exit = await demo.exited;
    expect(exit.code).toBe(1);
    expect(demo.stderr().trim()).toBe(
      'Could not start the demo: A2A_GRPC_PORT must be a port number from 1 to 65535; got "nope".',
    );
  });

  it('exits non-zero on an unknown DEMO_AGENT, naming the choices', async () => {
    const demo = await spawnDemo({ A2A_STORE: 'memory:', DEMO_AGENT: 'nope' });
    const exit = await demo.exited;
    expect(exit.code).toBe(1);
    expect(demo.stderr().trim()).toBe('DEMO_AGENT must be one of echo, tck, delegate, ai-sdk, langgraph; got "nope".');
  });

  it.each(['ai-sdk', 'langgraph'])(
    'exits non-zero on a DEMO_TOKENS_PER_S that is not a rate, for the %s agent',
    async (agent) => {
      const demo = await spawnDemo({ A2A_STORE: 'memory:', DEMO_AGENT: agent, DEMO_TOKENS_PER_S: '0' });
      const exit = await demo.exited;
      expect(exit.code).toBe(1);
      expect(demo.stderr().trim()).toBe(
        'Could not start the demo: DEMO_TOKENS_PER_S must be a number of tokens a second above 0; got "0".',
      );
    },
  );
});
