import type { oas31, ZodOpenApiOverride, ZodOpenApiResponseObject } from 'zod-openapi';
import type { z } from 'zod/v4';
import { errorBody } from '../errors.js';
import type { Reuse } from './route.js';

/** The responses and headers several routes document alike, written once. */

type Response = ZodOpenApiResponseObject;

export const errorResponse = (description: string): Response => ({
  description,
  content: { 'application/json': { schema: errorBody } },
});

export const rateHeaders: Record<string, oas31.HeaderObject> = {
  'RateLimit-Limit': { description: 'Requests allowed per window for this key.', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the oldest counted request leaves the window.', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: 'The policy, e.g. `120;w=60`.', schema: { type: 'string' } },
};

/** The responses every keyed route can give besides its own. */
export const keyedErrors: Record<string, Response> = {
  '401': {
    description:
      'Missing, malformed, unknown or revoked key, or more than one `Authorization` header (`code` is `unauthorized`); the scheme `Bearer` may be in any case. Carries `WWW-Authenticate: Bearer`.',
    headers: { 'WWW-Authenticate': { schema: { type: 'string', const: 'Bearer' } } },
    content: { 'application/json': { schema: errorBody } },
  },
  '403': errorResponse(
    'The key names the web origins whose browser pages may use it, and `Origin` is another (`code` `forbidden`). A key with origins answers their pages with CORS ' +
      '(`Access-Control-Allow-Origin` echoing the origin, `Vary: Origin`, the rate-limit headers and `ETag` exposed); a preflight (`OPTIONS` with `Origin` and ' +
      '`Access-Control-Request-Method`) needs no key, answers alike for every path and is limited per client address. A key without origins answers no CORS.',
  ),
  '429': {
    description: "More than the key's budget (default 120 requests in a sliding 60-second window); `code` is `rate_limited`.",
    headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } }, ...rateHeaders },
    content: { 'application/json': { schema: errorBody } },
  },
  '500': errorResponse('Server fault (`code` is `internal`); retry with backoff.'),
  '503': {
    description:
      'A store the request needs is away or does not answer in time (`code` is `unavailable`; the message names PostgreSQL, Redis or Elasticsearch). ' +
      'Answered within a second; retry after `Retry-After`. What does not need that store keeps working (README, Failure modes).',
    headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
    content: { 'application/json': { schema: errorBody } },
  },
};

/** What a route that reads a JSON body answers to any other body (readJsonBody). */
export const unsupportedBody = errorResponse(
  '`Content-Type` is not `application/json`, or `Content-Encoding` is other than `identity` (`code` `unsupported_media_type`); the body is not read.',
);

/** A body over `limitBytes`. */
export const bodyTooLarge = (limitBytes: number): Response =>
  errorResponse(`Body larger than ${limitBytes / 1024} KiB (\`code\` \`payload_too_large\`).`);

/** A batch route's 429: the whole batch is refused when the budget cannot cover all its items. */
export const batchRefused: Response = {
  description:
    "The key's remaining budget cannot cover every item of the batch (each item counts as one request); nothing was done and nothing was spent. " +
    '`Retry-After` says when enough of the budget is back for the whole batch. A batch larger than the whole budget is never admitted: send smaller ones.',
  headers: { 'Retry-After': { description: 'Seconds until the whole batch fits.', schema: { type: 'integer' } }, ...rateHeaders },
  content: { 'application/json': { schema: errorBody } },
};

export const BATCH_BUDGET =
  "Each item (of a bulk lookup, each distinct key) draws one unit of the key's rate budget, all or none; a body that cannot be read as a batch costs one unit, like any request.";
/** zod gives every integer the bounds of a safe integer; they say nothing a reader needs. */
export const withoutSafeIntegerBounds: ZodOpenApiOverride = ({ jsonSchema }) => {
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
};

/** What each kind of answer's Cache-Control says (middleware/conditional.ts), in words. */
const REUSE_WORDS: Record<Reuse, string> = {
  point: '`private, max-age=<point-cache lifetime>` (24 hours by default): reuse it as long as the point cache keeps it.',
  short: '`private, max-age=<short-cache lifetime>` (30 seconds by default): reuse it briefly.',
  settled:
    '`private, max-age=31536000, immutable` for a full page of changes (`has_more` true), which can never change; `no-store` for the page at the head of the feed.',
  never: '`no-store`.',
  revalidate: '`no-cache`: revalidate with `If-None-Match` before reusing it.',
};

/** The request header and answers of a conditional GET, added to every GET route answering JSON (openapi.ts). */
export const ifNoneMatch: oas31.ParameterObject = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    'The `ETag` of an earlier answer: when the answer is still the same, it is a 304 without a body (counted and metered like any call).',
  schema: { type: 'string' },
};

export const notModified: Response = {
  description: 'Not modified: the `ETag` given in `If-None-Match` is still current. No body.',
  headers: { ETag: { schema: { type: 'string' } } },
};

export const validatorHeaders = (reuse: Reuse, keyed: boolean): Record<string, oas31.HeaderObject> => ({
  ETag: { description: 'A strong tag of these exact bytes; send it back as `If-None-Match`.', schema: { type: 'string' } },
  'Cache-Control': { description: REUSE_WORDS[reuse], schema: { type: 'string' } },
  ...(keyed ? { Vary: { description: '`Authorization`: the answer is for this key.', schema: { type: 'string' } } } : {}),
});

/** The `fields` query parameter of a route answering partial records (middleware/partialResponses.ts). */
export const fieldsParameter = (record: z.ZodObject, what: string): oas31.ParameterObject => ({
  name: 'fields',
  in: 'query',
  required: false,
  description:
    `Only these top-level fields of each ${what}, comma-separated; \`id\` always comes back. Any of ${Object.keys(record.shape).join(', ')}. ` +
    'An unknown field is a 400 naming it. Absent: whole records.',
  schema: { type: 'string' },
  example: Object.keys(record.shape)
    .filter((field) => ['id', 'title', 'name', 'authors', 'year', 'cover_url'].includes(field))
    .join(','),
});
