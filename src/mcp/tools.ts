import { z } from 'zod/v4';
import { badRequest } from '../errors.js';
import { CHANGES_DEFAULT_LIMIT, CHANGES_MAX_LIMIT, changesSince } from '../services/changeFeed.js';
import type { Services } from '../services/context.js';
import { authorById, bookById, bookByIsbn, workById, type Resolved } from '../services/lookups.js';

/**
 * The MCP tools: one per capability of the HTTP API, each a thin call of the same service function
 * as its route, answering the JSON that route answers for the same request.
 */

/** What a tool answers: the HTTP API's JSON for the same request, and a remark for the model when there is one. */
export interface ToolAnswer {
  json: unknown;
  /** Said next to the JSON, never inside it (e.g. that a merged id was followed to its survivor). */
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
  /** Checks the arguments (a 400 bad_request when they do not fit the schema) and runs the tool. */
  call(services: Services, args: unknown): Promise<ToolAnswer>;
}

function defineTool<Input extends z.ZodObject>(definition: {
  name: string;
  title: string;
  description: string;
  input: Input;
  run: (services: Services, input: z.output<Input>) => Promise<ToolAnswer>;
}): Tool {
  const { input, run, ...described } = definition;
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(input, { io: 'input' });
  return {
    ...described,
    inputSchema: { ...inputSchema, type: 'object' },
    async call(services, args) {
      const parsed = input.safeParse(args ?? {});
      if (!parsed.success) throw badRequest(parsed.error.issues.map(describeIssue).join('; '));
      return run(services, parsed.data);
    },
  };
}

/** Our own messages name their argument ("since cursor is required"); zod's generic ones get it prefixed. */
const describeIssue = (issue: z.core.$ZodIssue): string =>
  issue.path.length > 0 && !issue.message.startsWith(String(issue.path[0])) ? `${issue.path.join('.')}: ${issue.message}` : issue.message;

/** A required string argument whose absence reads like the HTTP API's message for it. */
const requiredText = (name: string, missing = `${name} is required`) =>
  z.string({ error: (issue) => (issue.input === undefined ? missing : `${name} must be a string`) });

/**
 * A required argument that is text in a URL but often arrives as a JSON number (an ISBN-13, the
 * cursor 0): clients such as the MCP Inspector turn digit strings into numbers.
 */
const requiredDigits = (name: string, missing: string, expected: string) =>
  z
    .union([z.string(), z.int().nonnegative()], { error: (issue) => (issue.input === undefined ? missing : `${name} must be ${expected}`) })
    .transform(String);

// Merges are flattened to one hop (see stores/postgres/merges.ts); a second hop only happens when a
// merge commits between the two reads.
const MAX_MERGE_HOPS = 3;

/**
 * A point lookup, with a merged id followed to its survivor the way an HTTP client follows the 301:
 * the JSON is exactly what `GET <Location>` answers, and the note says the id was merged.
 */
async function pointLookup<T>(first: Resolved<T>, survivorById: (id: string) => Promise<Resolved<T>>, asked: string): Promise<ToolAnswer> {
  let resolved = first;
  for (let hops = 0; 'mergedInto' in resolved; hops++) {
    if (hops === MAX_MERGE_HOPS) throw new Error(`merge chain of ${asked} is longer than ${MAX_MERGE_HOPS} hops`);
    const { mergedInto, location } = resolved;
    resolved = await survivorById(mergedInto);
    if ('record' in resolved) {
      return {
        json: resolved.record,
        note: `${asked} was merged into ${mergedInto}: the record above is the survivor ${mergedInto} (GET ${location}). Use ${mergedInto} from now on.`,
      };
    }
  }
  return { json: resolved.record };
}

const ID_FORMATS = 'Ids are opaque and stable; the prefix says what they name: bk_ a book (one edition), wk_ a work (all editions of one text), au_ an author.';

const MERGES =
  'If the id was merged into another one, the tool follows it: the JSON is the surviving record and a second text item names the survivor, whose id to use from now on.';

const lookupIsbn = defineTool({
  name: 'lookup_isbn',
  title: 'Book by ISBN',
  description:
    'Look up the one book (edition) that carries an ISBN. Use this whenever you have an ISBN: it is exact and cached. ' +
    'Accepts ISBN-10 or ISBN-13 with or without hyphens or spaces; the check digit is validated (an invalid ISBN is an error, bad_request). ' +
    'Answers the book record: id (bk_…), work_id, isbn_13, isbn_10, title, subtitle, series, authors, publisher, year, language, pages, cover_url, ratings. ' +
    'not_found means the ISBN is valid but no book in the catalogue has it; try match_book with the title instead. ' +
    MERGES,
  input: z.object({
    isbn: requiredDigits('isbn', 'isbn is required', 'a string such as "978-0-439-02348-1"').describe(
      'An ISBN-10 or ISBN-13 as a string, e.g. "978-0-439-02348-1" or "0439023483".',
    ),
  }),
  run: async ({ db }, { isbn }) => pointLookup(await bookByIsbn(db, isbn), (id) => bookById(db, id), `ISBN ${isbn}`),
});

const getBook = defineTool({
  name: 'get_book',
  title: 'Book by id',
  description:
    'Fetch one book (a single edition: its ISBNs, publisher, year, language, pages) by its bk_ id, e.g. an id found in search results, a work\'s editions or the change feed. ' +
    ID_FORMATS + ' ' + MERGES,
  input: z.object({ id: requiredText('id').describe('A book id, e.g. "bk_5n1x7q0c2r9a".') }),
  run: async ({ db }, { id }) => pointLookup(await bookById(db, id), (survivor) => bookById(db, survivor), id),
});

const getWork = defineTool({
  name: 'get_work',
  title: 'Work by id',
  description:
    'Fetch one work (the text itself, across all its editions and translations) by its wk_ id, e.g. a book\'s work_id: title, original year, authors, ' +
    'the number of editions and the most popular editions (up to 100). Use it to find other editions of a book. ' +
    ID_FORMATS + ' ' + MERGES,
  input: z.object({ id: requiredText('id').describe('A work id, e.g. a book\'s work_id.') }),
  run: async ({ db }, { id }) => pointLookup(await workById(db, id), (survivor) => workById(db, survivor), id),
});

const getAuthor = defineTool({
  name: 'get_author',
  title: 'Author by id',
  description:
    'Fetch one author by their au_ id (found in a book\'s or work\'s authors): name, other spellings of the name, the number of works and the most popular works (up to 100). ' +
    'To find an author by name, use search_authors instead. ' +
    ID_FORMATS + ' ' + MERGES,
  input: z.object({ id: requiredText('id').describe('An author id, e.g. "au_3k8d0f1m2x7p".') }),
  run: async ({ db }, { id }) => pointLookup(await authorById(db, id), (survivor) => authorById(db, survivor), id),
});

const listChanges = defineTool({
  name: 'list_changes',
  title: 'Change feed',
  description:
    'Follow the catalogue\'s change feed: every insert, update, delete and merge of a book, work or author, oldest first. ' +
    'A cursor is an opaque position in the feed: pass since = "0" the first time, then the `next` cursor of the previous page; ' +
    'following `next` sees every change exactly once. `has_more` true means call again at once; false means you are at the head (come back later with the same `next`). ' +
    'A merge entry names the survivor in survivor_id. Use this to keep a copy in sync, not to find books.',
  input: z.object({
    since: requiredDigits('since', 'since cursor is required', 'a cursor string such as "0"').describe(
      'Where to start: "0" for the beginning, else the `next` cursor of the previous page.',
    ),
    limit: z
      .int()
      .optional()
      .meta({ minimum: 1, maximum: CHANGES_MAX_LIMIT, default: CHANGES_DEFAULT_LIMIT })
      .describe(`Changes per page, 1 to ${CHANGES_MAX_LIMIT} (default ${CHANGES_DEFAULT_LIMIT}).`),
  }),
  run: async ({ db, shortCache }, { since, limit }) => ({
    json: await changesSince(db, shortCache, since, limit === undefined ? undefined : String(limit)),
  }),
});

export const tools: readonly Tool[] = [lookupIsbn, getBook, getWork, getAuthor, listChanges];

export const toolsByName: ReadonlyMap<string, Tool> = new Map(tools.map((tool) => [tool.name, tool]));
