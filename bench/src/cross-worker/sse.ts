/**
 * A minimal SSE client on node:http that timestamps every frame when its bytes arrive (before any
 * parsing), with the same clock the worker stamps events with.
 */

import http from 'node:http';
import { performance } from 'node:perf_hooks';

/** Wall-clock ms since the epoch with sub-ms resolution; comparable across processes on one host. */
export const hrNow = (): number => performance.timeOrigin + performance.now();

export interface SseFrame {
  id: string | undefined;
  /** The JSON-RPC response the frame carried. */
  data: { result?: Record<string, unknown>; error?: unknown };
  receivedAt: number;
  receivedAtHr: number;
}

export interface SseStream {
  /** Resolves with the first data frame (rejects if the stream fails or ends before one). */
  first: Promise<SseFrame>;
  /** Resolves with every data frame once the server ends the stream, or when `timeoutMs` passed. */
  done: Promise<{ frames: SseFrame[]; timedOut: boolean; error?: string }>;
}

const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });

/** POSTs a JSON-RPC body that answers with SSE (message/stream, tasks/resubscribe) to `${url}/a2a`. */
export function openSse(url: string, body: unknown, timeoutMs: number): SseStream {
  const { hostname, port } = new URL(url);
  const text = JSON.stringify(body);
  const frames: SseFrame[] = [];
  let resolveFirst!: (frame: SseFrame) => void;
  let rejectFirst!: (error: Error) => void;
  const first = new Promise<SseFrame>((resolve, reject) => {
    resolveFirst = resolve;
    rejectFirst = reject;
  });
  first.catch(() => undefined); // the caller may only await `done`
  const done = new Promise<{ frames: SseFrame[]; timedOut: boolean; error?: string }>((resolve) => {
    let settled = false;
    const finish = (timedOut: boolean, error?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (frames.length === 0) rejectFirst(new Error(error ?? 'stream ended without a frame'));
      resolve({ frames, timedOut, ...(error ? { error } : {}) });
    };
    const timer = setTimeout(() => {
      request.destroy();
      finish(true, `timed out after ${timeoutMs} ms`);
    }, timeoutMs);
    const request = http.request({
      agent,
      host: hostname,
      port: Number(port),
      path: '/a2a',
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'content-length': Buffer.byteLength(text),
      },
    });
    request.on('response', (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        response.on('end', () => finish(false, `HTTP ${response.statusCode}`));
        return;
      }
      response.setEncoding('utf8');
      let buffer = '';
      response.on('data', (chunk: string) => {
        const receivedAtHr = hrNow();
        const receivedAt = Date.now();
        buffer += chunk;
        let boundary = buffer.indexOf('\n\n');
        while (boundary >= 0) {
          const raw = buffer.slice(0, boundary);
          buffer = buffer.slice(boundary + 2);
          boundary = buffer.indexOf('\n\n');
          let id: string | undefined;
          const data: string[] = [];
          for (const line of raw.split('\n')) {
            if (line.startsWith('id:')) id = line.slice(3).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
          }
          if (data.length === 0) continue; // a heartbeat comment
          const frame: SseFrame = { id, data: JSON.parse(data.join('\n')), receivedAt, receivedAtHr };
          frames.push(frame);
          if (frames.length === 1) resolveFirst(frame);
        }
      });
      response.on('end', () => finish(false));
      response.on('error', (error) => finish(false, `response: ${error.message}`));
    });
    request.on('error', (error) => finish(false, `request: ${error.message}`));
    request.end(text);
  });
  return { first, done };
}
