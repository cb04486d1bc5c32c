import { ApiError, badRequest } from '../../errors.js';
import type { Middleware } from '../state.js';

declare module 'koa' {
  interface Request {
    /** The parsed JSON body, set by `jsonBody`. */
    json?: unknown;
  }
}

/** Reads and parses a JSON request body of at most `limitBytes`; anything else is a 400 or 413. */
export const jsonBody = (limitBytes = 64 * 1024): Middleware => async (ctx, next) => {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limitBytes) throw new ApiError(413, 'payload_too_large', `request body is larger than ${limitBytes} bytes`);
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    // The client went away mid-body: its fault, not a server fault, whoever reads the log.
    throw badRequest('request body incomplete: the connection was closed');
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw badRequest('request body must be a JSON object');
  try {
    ctx.request.json = JSON.parse(text);
  } catch {
    throw badRequest('malformed JSON body');
  }
  await next();
};
