import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../errors.js';
import { SERVED_METHODS } from './routeTable.js';

/**
 * CONNECT asks the server to open a tunnel, as a proxy would; this service is none. Node hands such
 * requests to the server's 'connect' listeners instead of the app, and closes the socket without a
 * word when there are none: this answers them in the contract's error shape, then closes the
 * connection (whose bytes after the request would be the tunnel's).
 */
export function refuseConnect(_request: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  const allow = SERVED_METHODS.join(', ');
  const body = JSON.stringify(
    new ApiError(405, 'method_not_allowed', `method CONNECT is not allowed: this service opens no tunnels; allowed: ${allow}`).toJSON(),
  );
  socket.end(
    `HTTP/1.1 405 ${STATUS_CODES[405]}\r\nAllow: ${allow}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
