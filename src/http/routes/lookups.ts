import type { oas31, ZodOpenApiResponseObject } from 'zod-openapi';
import { AUTHOR_WORKS_SHOWN, authorRecord, bookRecord, WORK_EDITIONS_SHOWN, workRecord } from '../../domain/records.js';
import { IDENTIFIER_MAX_LENGTH, isMerged, mergedBody, type PointFamily } from '../../services/lookups.js';
import { openLibraryTarget, resolveOpenLibraryKey } from '../../services/openlibrary.js';
import { pointAnswer } from '../../services/pointLookups.js';
import { spendRequest } from '../middleware/rateLimit.js';
import { errorResponse, rateHeaders } from '../responseDocs.js';
import type { Route, ToolNames } from '../route.js';
import { redirect, sendJson, sendJsonText } from '../messages.js';

export const merged = (family: string): ZodOpenApiResponseObject => ({
  description: `The id was merged; \`Location\` points at the final survivor under \`/v1/${family}/\`. Clients follow it; the old id keeps answering forever.`,
  headers: { Location: { schema: { type: 'string' } } },
  content: { 'application/json': { schema: mergedBody } },
});

export const idParameter = (what: 'book' | 'work' | 'author'): oas31.ParameterObject => ({
  name: 'id',
  in: 'path',
  required: true,
  description: `The ${what} id. An id that names no ${what} answers 404.`,
  schema: { type: 'string' },
  example: { book: 'bk_5n1x7q0c2r9a', work: 'wk_8d2m4q6s0v1x', author: 'au_3k8d0f1m2x7p' }[what],
});

const cacheHeader: Record<string, oas31.HeaderObject> = {
  'X-Cache': {
    description: '`HIT` when answered from the 24-hour point-lookup cache, else `MISS`.',
    schema: { type: 'string', enum: ['HIT', 'MISS'] },
  },
};

const deletedRecord = errorResponse(
  'The record was deleted by its source (an Open Library `/type/delete`), so it is no longer in the catalogue: `code` is `gone`. A deleted record is never shown as if live; it is left out of search, match, recommendations and every listing, and its deletion is in the change feed.',
);

/** What a lookup by id answers to text that cannot be an id of its kind (checked before any store sees it). */
const malformedId = (what: string) => errorResponse(`Not a ${what} id: the wrong prefix, length or characters (\`code\` \`bad_request\`).`);

const ID_FORMATS =
  'Ids are opaque and stable; the prefix says what they name: bk_ a book (one edition), wk_ a work (all editions of one text), au_ an author.';

/** What a tool says of a merged id, which it follows as a client follows the 301. */
export const MERGES =
  'If the id was merged into another one, the tool follows it: the JSON is the surviving record and a second text item names the survivor, whose id to use from now on.';

/** A record's fields as a tool names them, read off the schema that shapes the record. */
const fieldsOf = (record: typeof bookRecord | typeof workRecord | typeof authorRecord): string => Object.keys(record.shape).join(', ');

export const BOOK_FIELDS = `A book record: ${fieldsOf(bookRecord)}; unknown fields are null.`;

/**
 * A point lookup: through the 24-hour cache keyed by the URL's path (these routes define no query
 * parameters and ignore any, so a client cannot multiply entries by adding some), consulted after
 * authentication and the key's own check. It spends its unit of the budget itself, the rate
 * limit's round trip to Redis beside the cache read's instead of before it; nothing is answered or
 * read from the stores before the rate limit has admitted the request. `X-Cache` says HIT for an
 * answer from Redis, MISS for anything else (errors and redirects are never cached).
 */
function pointRoute(
  name: string,
  family: PointFamily,
  param: 'isbn' | 'id',
  tool: ToolNames,
  doc: {
    summary: string;
    description: string;
    parameter: oas31.ParameterObject;
    schema: typeof bookRecord | typeof workRecord | typeof authorRecord;
    notFound: string;
    malformed: ZodOpenApiResponseObject;
  },
): Route {
  return {
    name,
    method: 'GET',
    path: `/v1/${family}/:${param}`,
    access: 'key',
    cost: 'unit',
    cache: 'point',
    reuse: 'point',
    partial: { record: doc.schema, what: family === 'isbn' ? 'book' : family.slice(0, -1), at: [] },
    tag: 'lookups',
    tool,
    doc: {
      summary: doc.summary,
      description: `${doc.description} Cached for 24 hours under its canonical URL, an ISBN as its ISBN-13 (after authentication and rate limiting); a change to the record drops its cached answers at once.`,
      parameters: [doc.parameter],
      responses: {
        '200': {
          description: 'Found.',
          headers: { ...cacheHeader, ...rateHeaders },
          content: { 'application/json': { schema: doc.schema } },
        },
        '301': merged(family === 'isbn' ? 'books' : family),
        '400': doc.malformed,
        '404': errorResponse(doc.notFound),
        '410': deletedRecord,
      },
    },
    answer: (services, requestId, { params }) => pointAnswer(services, requestId, family, params[param]!),
    async handle(ctx, services, params) {
      ctx.set('X-Cache', 'MISS');
      const admission = spendRequest(ctx, services.rateLimiter);
      const answer = await pointAnswer(services, ctx.state.requestId, family, params[param]!, admission);
      if (isMerged(answer)) return redirect(ctx, answer);
      if (answer.cached) ctx.set('X-Cache', 'HIT');
      sendJsonText(ctx, answer.text);
    },
  };
}

export const lookupRoutes: readonly Route[] = [
  pointRoute(
    'lookupIsbn',
    'isbn',
    'isbn',
    {
      name: 'lookup_isbn',
      title: 'Book by ISBN',
      description:
        'Look up the one book (edition) that carries an ISBN. Use this whenever you have an ISBN: it is exact and cached. ' +
        'Accepts ISBN-10 or ISBN-13 with or without hyphens or spaces; the check digit is validated (an invalid ISBN is a bad_request). ' +
        `${BOOK_FIELDS} not_found means the ISBN is valid but no book in the catalogue has it; try match_book with the title instead. ${MERGES}`,
    },
    {
      summary: 'Look up a book by ISBN',
      description:
        'Accepts ISBN-10 or ISBN-13, with or without hyphens or spaces; the check digit is validated. An ISBN whose edition was merged answers 301 to the surviving book.',
      parameter: {
        name: 'isbn',
        in: 'path',
        required: true,
        description: `ISBN-10 or ISBN-13, at most ${IDENTIFIER_MAX_LENGTH} characters with its hyphens and spaces.`,
        schema: { type: 'string' },
        example: '978-0-439-02348-1',
      },
      schema: bookRecord,
      notFound: 'No book has this ISBN; the message names it.',
      malformed: errorResponse('Not a valid ISBN (`code` `bad_request`).'),
    },
  ),
  pointRoute(
    'getBook',
    'books',
    'id',
    {
      name: 'get_book',
      title: 'Book by id',
      description:
        "Fetch one book (a single edition: its ISBNs, publisher, year, language, pages) by its bk_ id, e.g. an id from search results, a work's editions or the change feed. " +
        `${BOOK_FIELDS} ${ID_FORMATS} ${MERGES}`,
    },
    {
      summary: 'A book (edition) by id',
      description: 'One edition of a work.',
      parameter: idParameter('book'),
      schema: bookRecord,
      notFound: 'No such book; the message names the id.',
      malformed: malformedId('book'),
    },
  ),
  pointRoute(
    'getWork',
    'works',
    'id',
    {
      name: 'get_work',
      title: 'Work by id',
      description:
        "Fetch one work (the text itself, across all its editions and translations) by its wk_ id, e.g. a book's work_id. " +
        `A work record: ${fieldsOf(workRecord)}; editions are the most popular (up to ${WORK_EDITIONS_SHOWN}). ` +
        'Use it to find other editions of a book, or how many read and rated it (readers, rating). ' +
        `${ID_FORMATS} ${MERGES}`,
    },
    {
      summary: 'A work by id',
      description: `A work with its authors, its edition count and its most popular editions (at most ${WORK_EDITIONS_SHOWN}).`,
      parameter: idParameter('work'),
      schema: workRecord,
      notFound: 'No such work; the message names the id.',
      malformed: malformedId('work'),
    },
  ),
  pointRoute(
    'getAuthor',
    'authors',
    'id',
    {
      name: 'get_author',
      title: 'Author by id',
      description:
        "Fetch one author by their au_ id (from a book's or work's authors, or search_authors). " +
        `An author record: ${fieldsOf(authorRecord)}; alternate_names are other spellings, works the most popular (up to ${AUTHOR_WORKS_SHOWN}). ` +
        'To find an author by name, use search_authors instead. ' +
        `${ID_FORMATS} ${MERGES}`,
    },
    {
      summary: 'An author by id',
      description: `An author with the other spellings of their name and their most popular works (at most ${AUTHOR_WORKS_SHOWN}).`,
      parameter: idParameter('author'),
      schema: authorRecord,
      notFound: 'No such author; the message names the id.',
      malformed: malformedId('author'),
    },
  ),
  {
    name: 'openLibraryKey',
    method: 'GET',
    path: '/v1/openlibrary/:key',
    access: 'key',
    cost: 'unit',
    cache: 'none',
    tag: 'lookups',
    doc: {
      summary: 'Our record of an Open Library key',
      description:
        'Answers 301 to the record the catalogue holds for an Open Library key: an edition key (`OL…M`) to `/v1/books/{id}`, a work key (`OL…W`) to `/v1/works/{id}`, ' +
        'an author key (`OL…A`) to `/v1/authors/{id}`. Several edition keys may lead to one book (one ISBN, one row). A key Open Library redirected leads where its target does, ' +
        'a record merged here to the survivor. Every record lists its keys under `identifiers.openlibrary`. Read from PostgreSQL by primary key, not cached.',
      parameters: [
        {
          name: 'key',
          in: 'path',
          required: true,
          description: 'An Open Library key without its path.',
          schema: { type: 'string', pattern: '^OL[1-9][0-9]*[AWM]$' },
          example: 'OL7353617M',
        },
      ],
      responses: {
        '301': {
          description: 'Our record: `Location` is its URL.',
          headers: { Location: { schema: { type: 'string' } }, ...rateHeaders },
          content: { 'application/json': { schema: openLibraryTarget } },
        },
        '400': errorResponse('Not an Open Library key of the form `OL7353617M`, `OL45804W` or `OL23919A` (`code` `bad_request`).'),
        '404': errorResponse('No record with this key has been imported.'),
        '410': errorResponse(
          'Open Library deleted the key, or the record it led to was deleted (`code` `gone`): never answered as if live.',
        ),
      },
    },
    async handle(ctx, { db }, { key }) {
      const { id, location } = await resolveOpenLibraryKey(db, key!);
      ctx.set('Location', location);
      sendJson(ctx, { id, location }, 301);
    },
  },
];
