/**
 * The official SDK server (@a2a-js/sdk 0.3.14) on express 5, as both SDK bench servers serve it:
 * `GET /__rss`, the card, and JSON-RPC at `/a2a` through `jsonRpcHandler`, with no authentication;
 * listening on {@link LISTEN} and reporting to the parent ({@link serve}).
 */

import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AgentCard } from '@a2a-js/sdk';
import type { AgentExecutor } from '@a2a-js/sdk/server';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { fail, LISTEN, rssReport, serve, wantsGc } from './common.js';

// express ships no type declarations and @types/express is not a dependency: type what we use.
interface ExpressResponse {
  json(body: unknown): void;
}
interface ExpressApp {
  get(path: string, handler: (request: { url: string }, response: ExpressResponse) => void): void;
  use(path: string, handler: unknown): void;
  listen(port: number, host: string, callback: (error?: Error) => void): Server;
}
const express = createRequire(import.meta.url)('express') as () => ExpressApp;

/** Serves `executor` behind the SDK's `DefaultRequestHandler` with its `InMemoryTaskStore`. */
export function serveSdkInMemory(card: AgentCard, executor: AgentExecutor): void {
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  const app = express();
  app.get('/__rss', (request, response) => response.json(rssReport(wantsGc(request.url))));
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: requestHandler }));
  app.use('/a2a', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  const server = app.listen(LISTEN.port, LISTEN.host, (error) => {
    if (error) fail(error);
    const address = server.address();
    serve(
      typeof address === 'object' && address ? address.port : 0,
      () =>
        new Promise((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    );
  });
}
