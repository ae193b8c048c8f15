/**
 * Starts the demo server (`examples/demo/src/server.ts`) as a real child process, the way
 * `npm start` and the Dockerfile do, and stops it again. Every process started here is killed in
 * `afterEach` (and on exit of the test worker), whether the test passed or not.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/**
 * The demo as `npm start` serves it: compiled to plain JavaScript by scripts/build.mjs and run by
 * Node without tsx. Built once per test process, into a file of its own (test files run in parallel).
 */
let compiled: Promise<string> | undefined;
function compiledServer(): Promise<string> {
  compiled ??= import('../scripts/build.mjs').then(({ buildDemo }) =>
    buildDemo(join(repoRoot, 'examples', 'demo', 'dist', `test-${process.pid}`, 'server.mjs')),
  );
  return compiled;
}
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000; // longer than the plugin's default drainTimeoutMs (10 s)

/** A port nothing listens on right now: bind port 0, read the port, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface DemoProcess {
  readonly child: ChildProcess;
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
  stdout(): string;
  stderr(): string;
}

export interface RunningDemo extends DemoProcess {
  /** The card URL from the "ready" line. */
  readonly cardUrl: string;
  /** The "ready" line itself. */
  readonly readyLine: string;
  /** Sends `signal` (default SIGTERM) and waits for the exit; SIGKILL after 15 s. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

const live = new Set<ChildProcess>();

function killAll(): void {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

afterEach(async () => {
  const running = [...live];
  killAll();
  await Promise.all(
    running.map((child) =>
      child.exitCode === null && child.signalCode === null
        ? new Promise<void>((resolve) => child.once('exit', () => resolve()))
        : undefined,
    ),
  );
  live.clear();
});
// If the test worker itself goes away without running the hooks, take the servers with it.
process.once('exit', killAll);

/** This process's environment without the demo's own variables, which a developer's shell may set. */
function inherited(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of [
    'A2A_BASE_URL',
    'A2A_LEASE_TTL_MS',
    'HOST',
    'PORT',
    'A2A_STORE',
    'DEMO_AGENT',
    // The ai-sdk and langgraph agents': with a developer's OPENAI_API_KEY the tests would call a real model.
    'DEMO_TOKENS_PER_S',
    'DEMO_MODEL',
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
    'LOG_LEVEL',
    'A2A_AUTH_TOKENS',
    'A2A_JWKS_URL',
    'A2A_JWT_ISSUER',
    'A2A_JWT_AUDIENCE',
    'A2A_PUSH_ALLOWED_HOSTS',
    'A2A_PUSH_ALLOWED_CIDRS',
    'A2A_PUSH_THROTTLE_MS',
    'A2A_GRPC_PORT',
    'A2A_DRAFT_11',
  ])
    delete env[name];
  return env;
}

/** Spawns the demo with `env` added to this process's environment. Does not wait for anything. */
export async function spawnDemo(env: Record<string, string>): Promise<DemoProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, ['--enable-source-maps', await compiledServer()], {
    cwd: repoRoot,
    env: { ...inherited(), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<Exit>((resolve) => {
    // 'close' (not 'exit'): the output pipes are drained by then.
    child.once('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
  return {
    child,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
  };
}

/**
 * Starts the demo on `store` and waits for its "ready" line. The port is free when chosen but may
 * be taken before the demo binds it: on EADDRINUSE it tries another one (up to 3 times).
 */
export async function startDemo(store: string, env: Record<string, string> = {}): Promise<RunningDemo> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDemoOnce(store, env);
    } catch (error) {
      if (attempt >= 3 || env.PORT !== undefined || !/EADDRINUSE/.test((error as Error).message)) throw error;
    }
  }
}

async function startDemoOnce(store: string, env: Record<string, string>): Promise<RunningDemo> {
  const demo = await spawnDemo({ A2A_STORE: store, ...env });
  const readyLine = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      demo.child.kill('SIGKILL');
      reject(new Error(`the demo did not print "ready" in ${START_TIMEOUT_MS} ms:\n${demo.stdout()}${demo.stderr()}`));
    }, START_TIMEOUT_MS);
    const onData = (): void => {
      const line = demo
        .stdout()
        .split('\n')
        .find((l) => / ready; card: /.test(l));
      if (line !== undefined) {
        clearTimeout(timer);
        demo.child.stdout?.off('data', onData);
        resolve(line);
      }
    };
    demo.child.stdout?.on('data', onData);
    onData();
    void demo.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the demo exited (${code ?? signal}) before it was ready:\n${demo.stdout()}${demo.stderr()}`));
    });
  });
  const cardUrl = / card: (\S+)/.exec(readyLine)?.[1];
  if (cardUrl === undefined) throw new Error(`no card URL in "${readyLine}"`);
  return {
    ...demo,
    cardUrl,
    readyLine,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (demo.child.exitCode === null && demo.child.signalCode === null) {
        demo.child.kill(signal);
        const timer = setTimeout(() => demo.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        const exit = await demo.exited;
        clearTimeout(timer);
        return exit;
      }
      return demo.exited;
    },
  };
}

let nextRpcId = 1;

/** One JSON-RPC call to `POST <baseUrl>/a2a`; returns the whole response body. */
export async function rpc<T = unknown>(
  baseUrl: string,
  method: string,
  params: unknown,
): Promise<{ jsonrpc: '2.0'; id: unknown; result?: T; error?: { code: number; message: string; data?: unknown } }> {
  const response = await fetch(`${baseUrl}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextRpcId++, method, params }),
  });
  if (!response.ok) throw new Error(`${method}: HTTP ${response.status}: ${await response.text()}`);
  return (await response.json()) as never;
}

/** A user message with a fresh messageId. */
export function userMessage(text: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'message',
    messageId: `demo-test-${crypto.randomUUID()}`,
    role: 'user',
    parts: [{ kind: 'text', text }],
    ...extra,
  };
}

/** The text parts of an artifact joined. */
export function artifactText(artifact: { parts: { kind: string; text?: string }[] } | undefined): string {
  return (artifact?.parts ?? []).map((p) => (p.kind === 'text' ? (p.text ?? '') : '')).join('');
}
