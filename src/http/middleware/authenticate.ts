import { unauthorized } from '../../errors.js';
import type { Authenticator } from '../../services/authenticator.js';
import type { Middleware } from '../route.js';

const MESSAGES = {
  malformed: 'API key is malformed: expected svc_live_<kid>_<secret>',
  invalid: 'API key is not valid',
  revoked: 'API key has been revoked',
} as const;

// The scheme's name is case-insensitive (RFC 9110, 11.1); the key after it is not.
const BEARER = /^bearer /i;

/** Requires `Authorization: Bearer svc_live_<kid>_<secret>` and records the kid on ctx.state. */
export const authenticate =
  (authenticator: Authenticator): Middleware =>
  async (ctx, next) => {
    // Node keeps the first of several Authorization headers; a request that sends more than one is
    // ambiguous (which key is meant?), whatever their order, and is refused.
    if ((ctx.req.headersDistinct.authorization?.length ?? 0) > 1)
      throw unauthorized('Authorization header is given more than once: send the key once');
    const header = ctx.get('Authorization');
    if (!header) throw unauthorized('Authorization header is required: Bearer <API key>');
    if (!BEARER.test(header)) throw unauthorized("Authorization header must be 'Bearer <API key>'");
    const verdict = await authenticator.verify(header.slice('Bearer '.length));
    if (!verdict.ok) throw unauthorized(MESSAGES[verdict.reason]);
    ctx.state.kid = verdict.kid;
    ctx.state.keyOrigins = verdict.origins;
    await next();
  };
