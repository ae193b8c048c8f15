/**
 * HTTP/1.1 over a bare TCP socket, for tests of what a connection carries byte for byte: requests
 * written as they are (several at once for pipelining), and answers read back in order, strictly,
 * so that a stray or misplaced byte fails the read instead of being skipped as a client would.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  /** The body, chunked framing removed. */
  body: string;
}

/** One request's bytes. `body` sets Content-Length; `headers` may override anything. */
export function rawRequest(method: string, path: string, headers: Record<string, string> = {}, body?: string): string {
  const all: Record<string, string> = {
    host: '127.0.0.1',
    ...(body === undefined
      ? {}
      : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }),
    ...headers,
  };
  const head = Object.entries(all)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `${method} ${path} HTTP/1.1\r\n${head}\r\n${body ?? ''}`;
}

export class RawConnection {
  readonly #socket: Socket;
  #buffer = Buffer.alloc(0);
  #closed = false;
  #wake: (() => void) | undefined;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#wake?.();
    });
    socket.on('close', () => {
      this.#closed = true;
      this.#wake?.();
    });
    socket.on('error', () => undefined);
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  write(bytes: string): void {
    this.#socket.write(bytes);
  }

  /** Whether the server closed the connection. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The bytes received and not read as a response yet. */
  get unread(): string {
    return this.#buffer.toString('latin1');
  }

  /** Waits `ms`, then returns what arrived unread meanwhile (and before). */
  async idle(ms: number): Promise<string> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.unread;
  }

  /** The next response on the connection; rejects on malformed framing or a close before its end. */
  async response(timeoutMs = 10_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = parseResponse(this.#buffer);
      if (parsed !== undefined) {
        this.#buffer = this.#buffer.subarray(parsed.length);
        return parsed.response;
      }
      if (this.#closed)
        throw new Error(`the connection closed inside a response; received: ${JSON.stringify(this.unread)}`);
      if (Date.now() > deadline) throw new Error(`no complete response; received: ${JSON.stringify(this.unread)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
  }

  close(): void {
    this.#socket.destroy();
  }
}

/** A complete response at the start of `bytes` and its length; undefined when more bytes are needed. */
function parseResponse(bytes: Buffer): { response: RawResponse; length: number } | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd === -1) {
    if (bytes.length > 0 && !'HTTP/1.1 '.startsWith(bytes.subarray(0, 9).toString('latin1')))
      throw new Error(`not a response: ${JSON.stringify(bytes.toString('latin1'))}`);
    return undefined;
  }
  const [statusLine = '', ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine);
  if (status === null) throw new Error(`not a status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let at = headEnd + 4;
  if (headers['transfer-encoding'] === 'chunked') {
    const chunks: Buffer[] = [];
    for (;;) {
      const lineEnd = bytes.indexOf('\r\n', at);
      if (lineEnd === -1) return undefined;
      const sizeText = bytes.subarray(at, lineEnd).toString('latin1');
      if (!/^[0-9a-fA-F]+$/.test(sizeText)) {
        throw new Error(
          `malformed chunk size ${JSON.stringify(sizeText)} in: ${JSON.stringify(bytes.toString('latin1'))}`,
        );
      }
      const size = Number.parseInt(sizeText, 16);
      const dataEnd = lineEnd + 2 + size;
      if (bytes.length < dataEnd + 2) return undefined;
      if (bytes.subarray(dataEnd, dataEnd + 2).toString('latin1') !== '\r\n') {
        throw new Error(`a chunk not ended by CRLF in: ${JSON.stringify(bytes.toString('latin1'))}`);
      }
      chunks.push(bytes.subarray(lineEnd + 2, dataEnd));
      at = dataEnd + 2;
      if (size === 0) break;
    }
    return {
      response: { status: Number(status[1]), headers, body: Buffer.concat(chunks).toString('utf8') },
      length: at,
    };
  }
  const length = Number(headers['content-length'] ?? 0);
  if (bytes.length < at + length) return undefined;
  return {
    response: { status: Number(status[1]), headers, body: bytes.subarray(at, at + length).toString('utf8') },
    length: at + length,
  };
}
