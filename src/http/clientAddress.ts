import { isIP } from 'node:net';
import type { Middleware } from './route.js';

/**
 * The address of the client a request comes from. Behind proxies the connection's address is the
 * nearest proxy's, and `X-Forwarded-For` lists the addresses each proxy saw, nearest last. Only the
 * configured proxies (TRUSTED_PROXIES) are believed: the list is read from its end while its
 * addresses are theirs, and the first other address is the client. Anyone else can write any
 * `X-Forwarded-For`, so without trusted proxies it is never read.
 */
export function clientAddress(connection: string, forwardedFor: string, trusted: ReadonlySet<string>): string {
  let client = plainAddress(connection);
  if (!trusted.has(client)) return client;
  const hops = forwardedFor.split(',').map((hop) => plainAddress(hop.trim()));
  while (trusted.has(client) && hops.length > 0) {
    const hop = hops.pop()!;
    // A hop that is no address (a name, garbage) ends the walk: the last proxy is the client we know.
    if (isIP(hop) === 0) break;
    client = hop;
  }
  return client;
}

/** An IPv4 address as IPv4, however the socket spells it (`::ffff:10.0.0.1`). */
export const plainAddress = (address: string): string =>
  address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;

/** The set of TRUSTED_PROXIES, spelled as clientAddress compares them. */
export const trustedSet = (proxies: readonly string[]): ReadonlySet<string> => new Set(proxies.map(plainAddress));

/** Sets ctx.state.client, the address per-address limits and the request log use. */
export const identifyClient =
  (trusted: ReadonlySet<string>): Middleware =>
  async (ctx, next) => {
    ctx.state.client = clientAddress(ctx.req.socket.remoteAddress ?? '', ctx.get('X-Forwarded-For'), trusted);
    await next();
  };
