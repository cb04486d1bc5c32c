import { ApiError, badRequest } from '../../errors.js';
import type { Middleware } from '../route.js';

/**
 * The requests HTTP/1.1 says to refuse that Node would refuse with a bare status and no body: an
 * HTTP/1.1 request without Host (400), an Expect other than 100-continue (417). server.ts hands them
 * to the app instead, so they get the contract's error, a request id and a log line like any other.
 */
export const protocolRules = (): Middleware => async (ctx, next) => {
  if (ctx.req.httpVersion === '1.1' && ctx.get('Host') === '') throw badRequest('the Host header is required in HTTP/1.1');
  const expect = ctx.get('Expect');
  if (expect !== '' && expect.toLowerCase() !== '100-continue')
    throw new ApiError(417, 'expectation_failed', `Expect: ${expect} is not supported; only 100-continue is`);
  await next();
};
