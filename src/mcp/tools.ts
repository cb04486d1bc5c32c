import { ErrorCode, type ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod/v4';
import { ApiError, parseInput } from '../errors.js';
import { MATCH_THRESHOLD, TITLE_ALONE } from '../domain/matching.js';
import { CHANGES_DEFAULT_LIMIT, CHANGES_MAX_LIMIT, changesSince } from '../services/changeFeed.js';
import type { Services } from '../services/context.js';
import { followMerges, isMerged, type Merged } from '../services/lookups.js';
import { pointFollowing, type PointFamily } from '../services/pointLookups.js';
import { batchBody, LOOKUP_BATCH_MAX, matchBatch, matchBatchBody, MATCH_BATCH_MAX } from '../services/batch.js';
import { BULK_KINDS, bulkKeys, bulkLookup, bulkUnits } from '../services/bulkLookups.js';
import { matchBook, matchRequest } from '../services/match.js';
import { RECOMMEND_DEFAULT_LIMIT, RECOMMEND_MAX_LIMIT, recommendFor } from '../services/recommend.js';
import { SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT, SEARCH_MAX_WINDOW, searchAuthors, searchBooks } from '../services/search.js';

/**
 * The MCP tools: one per capability of the HTTP API, each a thin call of the same service function
 * as its route, answering the bytes that route answers for the same request. Which tools a server
 * offers is the route table's to say: each route an MCP tool mirrors names it (src/http/routeTable.ts).
 */

export interface ToolContext {
  services: Services;
  requestId: string;
  tools: ToolSet;
}

/** What a tool answers: the HTTP API's JSON text for the same request, and a remark for the model when there is one. */
export interface ToolAnswer {
  text: string;
  /** Said next to the JSON, never inside it (that a merged id was followed to its survivor). */
  note?: string;
}

export interface JsonObjectSchema {
  type: 'object';
  [keyword: string]: unknown;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  /** The JSON Schema of the arguments, as tools/list shows it. */
  inputSchema: JsonObjectSchema;
  /** Checks the arguments (JSON-RPC invalid params when they do not fit the schema) and runs the tool. */
  call(context: ToolContext, args: unknown): Promise<ToolAnswer>;
  /** A batch tool: the units of the key's budget a call with these arguments draws. */
  items?(args: unknown): number;
}

/**
 * JSON-RPC invalid params, answered in these very words: the SDK answers an error's `code` and
 * `message` (an McpError's message would carry an "MCP error -32602:" prefix).
 */
export class InvalidParams extends Error {
  readonly code = ErrorCode.InvalidParams;
}

/**
 * A tool whose arguments zod checks for their types only: what the values mean (ranges, formats,
 * required combinations) is checked by the service function, so an error reads as the route's.
 */
function defineTool<Input extends z.ZodObject>(definition: {
  name: string;
  title: string;
  description: string;
  input: Input;
  run: (context: ToolContext, input: z.output<Input>) => Promise<ToolAnswer>;
}): Tool {
  const { input, run, ...described } = definition;
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(input, { io: 'input' });
  return {
    ...described,
    inputSchema: { ...inputSchema, type: 'object' },
    async call(context, args) {
      const parsed = input.safeParse(args ?? {});
      // The same words as the HTTP API's 400 for the same mistake, as the protocol's invalid-params error.
      if (!parsed.success) throw new InvalidParams(parsed.error.issues.map(describeIssue).join('; '));
      return run(context, parsed.data);
    },
  };
}

/**
 * A tool whose arguments are the body of an HTTP batch route, read by the route's own function
 * (`read`), whose 400 becomes invalid params in the same words; each item is the service's to
 * answer, as the route does. tools/list shows the body's schema (batchBody) with `item` as its items.
 */
function defineBatchTool<Item>(definition: {
  name: string;
  title: string;
  description: string;
  field: string;
  max: number;
  item: z.ZodType;
  read: (args: unknown) => Item[];
  /** The units of the budget the items draw: one each unless said otherwise. */
  units?: (items: Item[]) => number;
  run: (context: ToolContext, items: Item[]) => Promise<ToolAnswer>;
}): Tool {
  const { field, max, item, read, units = (items) => items.length, run, ...described } = definition;
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(batchBody(field, max, item), { io: 'input' });
  const itemsOf = (args: unknown): Item[] | ApiError => {
    try {
      return read(args ?? {});
    } catch (error) {
      if (error instanceof ApiError) return error;
      throw error;
    }
  };
  return {
    ...described,
    inputSchema: { ...inputSchema, type: 'object' },
    async call(context, args) {
      const items = itemsOf(args);
      if (items instanceof ApiError) throw new InvalidParams(items.message);
      return run(context, items);
    },
    items(args) {
      const items = itemsOf(args);
      return items instanceof ApiError ? 1 : units(items);
    },
  };
}

/** Our own messages name their argument ("since cursor is required"); zod's generic ones get it prefixed. */
const describeIssue = (issue: z.core.$ZodIssue): string =>
  issue.path.length > 0 && !issue.message.startsWith(String(issue.path[0])) ? `${issue.path.join('.')}: ${issue.message}` : issue.message;

/** A tool's arguments: those its schema names and no other (an unknown one is invalid params, as `additionalProperties: false` says). */
const toolArguments = <Shape extends z.ZodRawShape>(shape: Shape) =>
  z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown argument "${issue.keys[0]}": the arguments are ${Object.keys(shape).join(', ')}`
        : 'arguments must be a JSON object',
  });

/** A required string argument whose absence reads like the HTTP API's message for it. */
const requiredText = (name: string, missing = `${name} is required`) =>
  z.string({ error: (issue) => (issue.input === undefined ? missing : `${name} must be a string`) });

/** An optional integer, handed to the service as the text a query string would carry; the range is the service's to check. */
const integerArgument = (description: string, range: { minimum?: number; maximum?: number; default?: number } = {}) =>
  z
    .int()
    .optional()
    .meta(range)
    .describe(description)
    .transform((value) => (value === undefined ? undefined : String(value)));

/** What a lookup answers: the route's JSON text, and a note when a merged id was followed to its survivor (the 301 the route answers). */
function followed(asked: string, { text, mergedInto }: { text: string; mergedInto: string | null }): ToolAnswer {
  if (mergedInto === null) return { text };
  return { text, note: `${asked} was merged into ${mergedInto}: the JSON above is for ${mergedInto}. Use ${mergedInto} from now on.` };
}

/** A point lookup, as GET /v1/<family>/<key> answers it, through the route's cache; a merged key is followed. */
const pointTool = async ({ services, requestId }: ToolContext, asked: string, family: PointFamily, key: string): Promise<ToolAnswer> =>
  followed(asked, await pointFollowing(services, requestId, family, key));

const ID_FORMATS =
  'Ids are opaque and stable; the prefix says what they name: bk_ a book (one edition), wk_ a work (all editions of one text), au_ an author.';

const MERGES =
  'If the id was merged into another one, the tool follows it: the JSON is the surviving record and a second text item names the survivor, whose id to use from now on.';

const BOOK_FIELDS =
  'A book record: id (bk_…), work_id, isbn_13, isbn_10, title, subtitle, series, series_number, authors [{id, name}], publisher, year, language, pages, cover_url, ratings_count, average_rating; unknown fields are null.';

export const lookupIsbn = defineTool({
  name: 'lookup_isbn',
  title: 'Book by ISBN',
  description:
    'Look up the one book (edition) that carries an ISBN. Use this whenever you have an ISBN: it is exact and cached. ' +
    'Accepts ISBN-10 or ISBN-13 with or without hyphens or spaces; the check digit is validated (an invalid ISBN is a bad_request). ' +
    `${BOOK_FIELDS} not_found means the ISBN is valid but no book in the catalogue has it; try match_book with the title instead. ${MERGES}`,
  input: toolArguments({
    isbn: requiredText('isbn').describe('An ISBN-10 or ISBN-13 as a string, e.g. "978-0-439-02348-1" or "0439023483".'),
  }),
  run: (context, { isbn }) => pointTool(context, `ISBN ${isbn}`, 'isbn', isbn),
});

const ISBN_BULK = BULK_KINDS.find((kind) => kind.family === 'isbn')!;

export const lookupIsbns = defineBatchTool({
  name: 'lookup_isbns',
  title: 'Books by many ISBNs',
  description:
    `Look up to ${LOOKUP_BATCH_MAX} ISBNs at once (a list of ISBNs, a spreadsheet column), each answered as lookup_isbn answers it, from the same cache. ` +
    'Much faster than calling lookup_isbn once per ISBN. A list may repeat an ISBN or give its ISBN-10 beside its ISBN-13: each entry is answered in its place, and each distinct ISBN draws one unit of the rate budget; a batch the remaining budget cannot cover is refused whole. ' +
    "Answers {results: [...]}, one per ISBN in input order: {isbn (as given), status: 200, book} when found; with merged_into (the surviving book's id, to use from now on) " +
    "when the ISBN's edition was merged into another, whose record is the book; {isbn, status: 400, error} for an invalid ISBN; {isbn, status: 404, error} when no book in the catalogue has it. " +
    BOOK_FIELDS,
  field: 'isbns',
  max: LOOKUP_BATCH_MAX,
  item: z.string().describe('An ISBN-10 or ISBN-13 as a string, with or without hyphens or spaces.'),
  read: (args) => bulkKeys(ISBN_BULK, args),
  units: (isbns) => bulkUnits(ISBN_BULK, isbns),
  run: async ({ services, requestId }, isbns) => ({ text: await bulkLookup(services, requestId, ISBN_BULK, isbns) }),
});

export const getBook = defineTool({
  name: 'get_book',
  title: 'Book by id',
  description:
    "Fetch one book (a single edition: its ISBNs, publisher, year, language, pages) by its bk_ id, e.g. an id from search results, a work's editions or the change feed. " +
    `${BOOK_FIELDS} ${ID_FORMATS} ${MERGES}`,
  input: toolArguments({ id: requiredText('id').describe('A book id, e.g. "bk_5n1x7q0c2r9a".') }),
  run: (context, { id }) => pointTool(context, id, 'books', id),
});

export const getWork = defineTool({
  name: 'get_work',
  title: 'Work by id',
  description:
    "Fetch one work (the text itself, across all its editions and translations) by its wk_ id, e.g. a book's work_id: title, original_year, authors, " +
    'edition_count and the most popular editions (up to 100). Use it to find other editions of a book. ' +
    `${ID_FORMATS} ${MERGES}`,
  input: toolArguments({ id: requiredText('id').describe("A work id, e.g. a book's work_id.") }),
  run: (context, { id }) => pointTool(context, id, 'works', id),
});

export const getAuthor = defineTool({
  name: 'get_author',
  title: 'Author by id',
  description:
    "Fetch one author by their au_ id (from a book's or work's authors, or search_authors): name, alternate_names (other spellings), work_count and the most popular works (up to 100). " +
    'To find an author by name, use search_authors instead. ' +
    `${ID_FORMATS} ${MERGES}`,
  input: toolArguments({ id: requiredText('id').describe('An author id, e.g. "au_3k8d0f1m2x7p".') }),
  run: (context, { id }) => pointTool(context, id, 'authors', id),
});

const paging = {
  limit: integerArgument(`Results per page, 1 to ${SEARCH_MAX_LIMIT} (default ${SEARCH_DEFAULT_LIMIT}).`, {
    minimum: 1,
    maximum: SEARCH_MAX_LIMIT,
    default: SEARCH_DEFAULT_LIMIT,
  }),
  offset: integerArgument(`Results to skip, for the next page: offset + limit at most ${SEARCH_MAX_WINDOW}.`, { minimum: 0, default: 0 }),
};

export const searchBooksTool = defineTool({
  name: 'search_books',
  title: 'Search books',
  description:
    'Search the catalogue by free text over title, subtitle, series and author names, typo tolerant; an ISBN in q puts that edition first. ' +
    'Use it to browse or to list candidates (several books by one author, a series, books about a word in the title). ' +
    'To resolve ONE reference (a citation, a title with author/year) to the single book it means, prefer match_book, which says how sure it is; with an ISBN alone use lookup_isbn. ' +
    'Answers {total, limit, offset, results: [{score, book}]}, best first; score only ranks results within one answer. By default one result per work (its best edition). ' +
    'Page with offset: the next page is offset + limit, while offset < total.',
  input: toolArguments({
    q: requiredText('q').describe('What to look for: words of the title, subtitle, series or author names, and/or an ISBN.'),
    ...paging,
    author_id: z.string().optional().describe('Only books crediting this author (an au_ id, e.g. from search_authors).'),
    language: z.string().optional().describe('Only books in this language as the records spell it: "eng", "en-US", "spa".'),
    year_from: integerArgument('Only books published in this year or later.'),
    year_to: integerArgument('Only books published in this year or earlier.'),
    editions: z
      .string()
      .optional()
      .meta({ enum: ['best', 'all'], default: 'best' })
      .describe('"best" (default): one result per work; "all": every edition.'),
  }),
  run: async ({ services }, params) => ({ text: JSON.stringify(await searchBooks(services, params)) }),
});

export const searchAuthorsTool = defineTool({
  name: 'search_authors',
  title: 'Search authors',
  description:
    'Find authors by name, tolerant of initials ("JK Rowling"), surname-first order ("Rowling, J.K."), diacritics and typos; other spellings of a name match too. ' +
    'Answers {total, limit, offset, results: [{score, author: {id, name, alternate_names, work_count}}]}, best first. ' +
    'Then use get_author for their works, or search_books with author_id for their books.',
  input: toolArguments({ q: requiredText('q').describe('A name, or part of one.'), ...paging }),
  run: async ({ services }, params) => ({ text: JSON.stringify(await searchAuthors(services, params)) }),
});

const MATCH_ANSWER =
  `{match, confidence, signals, candidates}: match is the best book when confidence >= ${MATCH_THRESHOLD}, else null (the catalogue probably lacks the book; ` +
  `candidates show what came closest, each with its own confidence). A matching ISBN gives at least ${MATCH_THRESHOLD}; a title alone at most ${TITLE_ALONE}; ` +
  'title and author both right come near 1. signals show why: isbn (match, other_edition, mismatch, unknown, invalid, absent) and title/author/year/publisher likeness 0–1.';

export const matchBookTool = defineTool({
  name: 'match_book',
  title: 'Match a reference to one book',
  description:
    'Resolve a messy reference (a title, maybe with author, year, publisher and/or an ISBN) to the ONE catalogue book it describes, with a confidence from 0 to 1. ' +
    'Prefer this over search_books when you want the single best book for a citation or a reading-list line; give every field you have: the author and year ' +
    'tell apart books of the same title and editions of one work. ' +
    `Answers ${MATCH_ANSWER}`,
  input: matchRequest,
  run: async ({ services }, fields) => ({ text: JSON.stringify(await matchBook(services, fields)) }),
});

export const matchBooksTool = defineBatchTool({
  name: 'match_books',
  title: 'Match many references at once',
  description:
    `Resolve up to ${MATCH_BATCH_MAX} messy references at once (a reading list, a bibliography, the rows of a spreadsheet), each record exactly as match_book takes it. ` +
    'Much faster than calling match_book once per record. Each record draws one unit of the rate budget, and a batch the remaining budget cannot cover is refused whole. ' +
    `Answers {results: [...]}, one per record in input order, each what match_book answers for it: ${MATCH_ANSWER} ` +
    'A record that is not a valid match request (no title or isbn, an unknown field, a wrong type) answers {error: {code: "bad_request", message}} in its place, without failing the others.',
  field: 'records',
  max: MATCH_BATCH_MAX,
  item: matchRequest,
  read: (args) => parseInput(matchBatchBody, args).records,
  run: async ({ services }, records) => ({ text: JSON.stringify(await matchBatch(services, records)) }),
});

export const recommendBooks = defineTool({
  name: 'recommend_books',
  title: 'Books to read next',
  description:
    'Books a reader of one book is likely to want next, best first, one edition per work and never another edition of the same work. ' +
    'Signals: what readers who liked it also liked, the same series, the same author, similar titles; popular books fill the list. ' +
    "Needs the book's bk_ id (from lookup_isbn, match_book or search_books). Answers {book_id, results: [{score, book}]}. " +
    MERGES,
  input: toolArguments({
    id: requiredText('id').describe('The bk_ id of the book read.'),
    limit: integerArgument(`Books to recommend, 1 to ${RECOMMEND_MAX_LIMIT} (default ${RECOMMEND_DEFAULT_LIMIT}).`, {
      minimum: 1,
      maximum: RECOMMEND_MAX_LIMIT,
      default: RECOMMEND_DEFAULT_LIMIT,
    }),
  }),
  run: async ({ services }, { id, limit }) => {
    const recommend = async (bookId: string): Promise<{ text: string } | Merged> => {
      const resolved = await recommendFor(services, bookId, limit);
      return isMerged(resolved) ? resolved : { text: JSON.stringify(resolved.record) };
    };
    const { answer, mergedInto } = await followMerges(id, await recommend(id), ({ mergedInto: survivor }) => recommend(survivor));
    return followed(id, { text: answer.text, mergedInto });
  },
});

export const listChanges = defineTool({
  name: 'list_changes',
  title: 'Change feed',
  description:
    "Follow the catalogue's change feed: every insert, update, delete and merge of a book, work or author, oldest first. " +
    'A cursor is an opaque position in the feed: pass since = "0" the first time, then the `next` cursor of the previous page; ' +
    'following `next` sees every change exactly once. has_more true means call again at once; false means you are at the head (come back later with the same `next`). ' +
    'A merge entry names the survivor in survivor_id. Use this to keep a copy in sync, not to find books. Answers {changes: [{seq, entity, id, operation, survivor_id, changed_at}], next, has_more}.',
  input: toolArguments({
    since: requiredText('since', 'since cursor is required').describe(
      'Where to start: "0" for the beginning, else the `next` cursor of the previous page.',
    ),
    limit: integerArgument(`Changes per page, 1 to ${CHANGES_MAX_LIMIT} (default ${CHANGES_DEFAULT_LIMIT}).`, {
      minimum: 1,
      maximum: CHANGES_MAX_LIMIT,
      default: CHANGES_DEFAULT_LIMIT,
    }),
  }),
  run: async ({ services }, { since, limit }) => ({
    text: JSON.stringify(await changesSince(services.db, services.shortCache, since, limit)),
  }),
});

/** The tools a server offers, by name, and their tools/list answer (built once: the tools do not change while the process runs). */
export interface ToolSet {
  byName: ReadonlyMap<string, Tool>;
  listing: ListToolsResult;
}

export function toolSet(tools: readonly Tool[]): ToolSet {
  return {
    byName: new Map(tools.map((tool) => [tool.name, tool])),
    listing: {
      tools: tools.map(({ name, title, description, inputSchema }) => ({
        name,
        title,
        description,
        inputSchema,
        annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      })),
    },
  };
}

/** The tool a JSON-RPC message calls, and its arguments, read without checking the rest of the message; null when it calls none. */
export function toolCallIn(message: unknown, tools: ToolSet): { tool: Tool | undefined; name: string; args: unknown } | null {
  if (typeof message !== 'object' || message === null || !('method' in message) || message.method !== 'tools/call') return null;
  const params = 'params' in message && typeof message.params === 'object' && message.params !== null ? message.params : {};
  if (!('name' in params) || typeof params.name !== 'string') return null;
  return { tool: tools.byName.get(params.name), name: params.name, args: 'arguments' in params ? params.arguments : undefined };
}
