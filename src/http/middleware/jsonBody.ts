import { ApiError, badRequest } from '../../errors.js';
import type { AppContext } from '../route.js';

/** What a single JSON body may weigh (a batch's may weigh more). */
export const JSON_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * The parsed JSON body of a request, of at most `limitBytes`. A body that is not declared JSON, or
 * is encoded (gzip...), is refused with 415 before it is read: it would otherwise be parsed by
 * guesswork. Malformed or empty JSON is a 400, an oversized body a 413.
 */
export async function readJsonBody(ctx: AppContext, limitBytes = JSON_BODY_LIMIT_BYTES): Promise<unknown> {
  const text = await readBodyText(ctx, 'application/json', limitBytes);
  if (text.trim() === '') throw badRequest('request body must be a JSON object');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badRequest('malformed JSON body');
  }
}

/** A request body of the given media type as UTF-8 text, of at most `limitBytes` and not encoded (gzip...). */
export async function readBodyText(ctx: AppContext, type: string, limitBytes = JSON_BODY_LIMIT_BYTES): Promise<string> {
  const encoding = ctx.get('Content-Encoding');
  if (encoding !== '' && encoding.toLowerCase() !== 'identity') {
    throw new ApiError(415, 'unsupported_media_type', `Content-Encoding ${encoding} is not supported: send the body uncompressed`);
  }
  if (ctx.request.length !== 0 && ctx.is(type) === false) {
    throw new ApiError(415, 'unsupported_media_type', `Content-Type must be ${type}`);
  }
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
  return Buffer.concat(chunks).toString('utf8');
}
