import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionLimits } from './config.js';
import { plainAddress } from './http/clientAddress.js';
import { ApiError } from './errors.js';

/**
 * What one client may hold of the server, against slow and silent clients (slow loris): its request
 * line and headers within headersTimeoutMs, the whole request within requestTimeoutMs (both are
 * node's own deadlines, answered 408 by the server's clientError handler), a body that pauses no
 * longer than bodyIdleTimeoutMs between bytes (408), at most maxConnectionsPerClient open
 * connections from one address (429) and maxConnections in all (503). Each refusal is the contract's JSON error, then the
 * connection is closed; a connection past the cap that sends no request is closed without one.
 */

/** The options of node's server that hold the deadlines; node checks them this often, at most. */
export function deadlineOptions(limits: ConnectionLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // Node's default, 30 s, would let a connection outlive its deadline by that much.
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

// A connection past a cap is given this long to send the request its refusal answers.
const REFUSED_GRACE_MS = 1_000;

/** What the server asks of the limits for each request and each unparsable one. */
export interface ConnectionGate {
  /**
   * False when the request was answered here (its connection is past the cap); true when the app may
   * handle it, with a deadline on its body's silences from then on.
   */
  admit(request: IncomingMessage, response: ServerResponse): boolean;
  /** Whether an answer has begun on the connection and not finished: another cannot be written in the middle of it. */
  answering(socket: Socket): boolean;
}

/**
 * Counts the connections on `server`, in all and per address (a trusted proxy's are many clients'
 * and have no per-address cap), and keeps what the gate needs of each request.
 */
export function limitConnections(server: Server, limits: ConnectionLimits, trustedProxies: ReadonlySet<string>): ConnectionGate {
  const overCap = new WeakMap<Socket, 'address' | 'server'>();
  const responses = new WeakMap<Socket, ServerResponse>();
  const open = new Map<string, number>();
  let total = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const perAddress = limits.maxConnectionsPerClient > 0 && !trustedProxies.has(plainAddress(address));
    const count = open.get(address) ?? 0;
    const over =
      limits.maxConnections > 0 && total >= limits.maxConnections
        ? 'server'
        : perAddress && count >= limits.maxConnectionsPerClient
          ? 'address'
          : null;
    if (over) {
      overCap.set(socket, over);
      setTimeout(() => socket.destroy(), REFUSED_GRACE_MS).unref();
      return;
    }
    total += 1;
    open.set(address, count + 1);
    socket.once('close', () => {
      total -= 1;
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
  return {
    admit(request, response) {
      responses.set(request.socket, response);
      const over = overCap.get(request.socket);
      if (over === 'address') {
        answerAndClose(
          response,
          429,
          'too_many_connections',
          `more than ${limits.maxConnectionsPerClient} open connections from one address: reuse a connection, or close one`,
          { 'Retry-After': '1' },
        );
        return false;
      }
      if (over === 'server') {
        answerAndClose(
          response,
          503,
          'too_many_connections',
          `the server holds its ${limits.maxConnections} connections at most: retry shortly`,
          {
            'Retry-After': '1',
          },
        );
        return false;
      }
      if (hasBody(request)) watchBodySilences(request, response, limits.bodyIdleTimeoutMs);
      return true;
    },
    answering(socket) {
      const response = responses.get(socket);
      return response !== undefined && response.headersSent && !response.writableFinished;
    },
  };
}

const hasBody = (request: IncomingMessage): boolean =>
  request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;

/**
 * Answers 408 once the body has sent nothing for `idleMs` (checked every half of it, so within one
 * and a half times it), or closes the connection when the app has answered already (a 401, a 413)
 * and the client keeps the rest of a body it will never send. The check ends with the body or the
 * connection, whichever comes first (the request deadline closes the connection at the latest). Node's `socket.bytesRead` is the
 * progress: the HTTP parser reads the socket itself, without `data` events.
 */
function watchBodySilences(request: IncomingMessage, response: ServerResponse, idleMs: number): void {
  const socket = request.socket;
  let lastBytes = socket.bytesRead;
  let lastProgress = Date.now();
  const timer = setInterval(
    () => {
      if (request.complete || socket.destroyed) {
        clearInterval(timer);
        return;
      }
      if (socket.bytesRead > lastBytes) {
        lastBytes = socket.bytesRead;
        lastProgress = Date.now();
        return;
      }
      if (Date.now() - lastProgress < idleMs) return;
      clearInterval(timer);
      if (response.headersSent) socket.destroy();
      else answerAndClose(response, 408, 'request_timeout', `request body stalled: nothing received for ${idleMs / 1000} s`);
    },
    Math.max(10, Math.floor(idleMs / 2)),
  );
  timer.unref();
}

/** The contract's error JSON, then the connection closed (the rest of a request is not read). */
function answerAndClose(
  response: ServerResponse,
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(new ApiError(status, code, message).toJSON());
  response.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  response.end(body, () => response.socket?.destroy());
}
