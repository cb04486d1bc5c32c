import { MATCH_THRESHOLD, TITLE_ALONE, TITLE_ALONE_POWER } from '../../domain/matching.js';
import { authorSummary, bookRecord } from '../../domain/records.js';
import { matchBook, matchRequest, matchResult } from '../../services/match.js';
import { isMerged } from '../../services/lookups.js';
import { recommendations, recommendFor, recommendQuery } from '../../services/recommend.js';
import { authorSearchPage, authorSearchQuery, bookSearchPage, bookSearchQuery, searchAuthors, searchBooks } from '../../services/search.js';
import { SUGGEST_DEBOUNCE_MS, suggestBooks, suggestions, suggestQuery } from '../../services/suggest.js';
import { JSON_BODY_LIMIT_BYTES } from '../middleware/jsonBody.js';
import { bodyTooLarge, errorResponse, rateHeaders, unsupportedBody } from '../responseDocs.js';
import type { Route } from '../route.js';
import { idParameter, MERGES, merged } from './lookups.js';

/** Book and author search, match and recommendations. */

/** When a short-lived answer stops being served, before its lifetime is out. */
const SHORT_CACHE_ENDS =
  'A change to the catalogue ends it at once: an answer kept from before is not served again once the change is committed (records read anew) ' +
  'nor once the loader has made it searchable (found anew).';

const SHORT_CACHE =
  'Read from the primary store (PostgreSQL), so every book is exactly its `GET /v1/books/{id}` record; a book removed or merged since it was indexed is left out. ' +
  'Kept briefly (30 seconds by default) in a short-lived cache under its canonical parameters, never in the 24-hour point-lookup cache (no `X-Cache` header). ' +
  SHORT_CACHE_ENDS;

/** What match_book answers, and match_books for each record. */
export const MATCH_ANSWER =
  `{match, confidence, signals, candidates}: match is the best book when confidence >= ${MATCH_THRESHOLD}, else null (the catalogue probably lacks the book; ` +
  `candidates show what came closest, each with its own confidence). A matching ISBN gives at least ${MATCH_THRESHOLD}; a title alone at most ${TITLE_ALONE}; ` +
  'title and author both right come near 1. signals show why: isbn (match, other_edition, mismatch, unknown, invalid, absent) and title/author/year/publisher likeness 0–1.';

const json = (value: unknown): { text: string } => ({ text: JSON.stringify(value) });

export const searchRoutes: readonly Route[] = [
  {
    name: 'searchBooks',
    method: 'GET',
    path: '/v1/books/search',
    access: 'key',
    cost: 'unit',
    cache: 'none',
    reuse: 'short',
    tag: 'search and match',
    query: bookSearchQuery,
    partial: { record: bookRecord, what: 'book', at: ['results', '*', 'book'] },
    tool: {
      name: 'search_books',
      title: 'Search books',
      description:
        'Search the catalogue by free text over title, subtitle, series and author names, typo tolerant; an ISBN in q puts that edition first. ' +
        'Use it to browse or to list candidates (several books by one author, a series, books about a word in the title). ' +
        'To resolve ONE reference (a citation, a title with author/year) to the single book it means, prefer match_book, which says how sure it is; with an ISBN alone use lookup_isbn. ' +
        'Answers {total, limit, offset, results: [{score, book}]}, best first; score only ranks results within one answer. By default one result per work (its best edition). ' +
        'Page with offset: the next page is offset + limit, while offset < total. ' +
        'sort orders otherwise (newest, oldest, rating, readers, title); facets (e.g. "subject,decade") adds value counts over all results, to narrow with subject, publisher, language, author_id or a year range.',
    },
    answer: async (services, _requestId, { query }) => json(await searchBooks(services, query)),
    doc: {
      summary: 'Search books',
      description:
        'Free text over title, subtitle, series and author names; case, diacritics and punctuation do not matter, and the last word also counts as the start of a word ' +
        '(search as you type). Typo tolerant: when the words as typed do not fill the page asked for, the search runs again reading each word up to its typos ' +
        '(one in a word of 3 to 5 letters, two from 6 letters, the first letter right), so a misspelt query finds what it meant and a well-spelt one is not diluted. ' +
        'A query of more than two words needs three in four of them to match; one that matches nothing even with typos runs once more, relaxed, before answering an empty page: ' +
        'half its words, typos in any letter (`dune paperback`, `catching xire`). A book matching only some of the words always ranks below every book matching all of them, ' +
        'and among such books the one the query names once the word it lacks is left out comes first. ' +
        "An ISBN-10 or ISBN-13 anywhere in `q` (hyphens allowed) puts that edition first. Ranking: how the book fits the query (its first author's name is the query: " +
        "an author's own books before a biography titled with their name, which `title:` asks for; then its title or its series is the query, then a co-author's name, then the query as a phrase of the title or of an author's name, then all its words in the title, anywhere, in the series); " +
        'a volume of a series the query names ranks a little above a book that only shares the name. Then popularity: readers who rated the book (`ratings_count`), ' +
        'Open Library readers who shelved or rated its work, and its number of editions, so among books that fit alike the most read comes first. ' +
        'By default one result per work, its best-scoring edition; `editions=all` lists every edition. ' +
        'Other orders with `sort` (newest, oldest, rating, readers, title); counts for a results page with `facets`, narrowed with the filters: ' +
        '`/v1/books/search?q=dune&sort=rating&facets=subject,decade&subject=Science%20fiction` lists the best-rated books matching dune about science fiction, ' +
        'with the subjects and decades of all of them. ' +
        '(The best matches are found first and only the first few hundred are ranked in full, so a deep page of a work with very many matching editions may come back short.) ' +
        SHORT_CACHE,
      responses: {
        '200': { description: 'A page of books.', headers: rateHeaders, content: { 'application/json': { schema: bookSearchPage } } },
        '400': errorResponse(
          '`q` missing (`q is required`) or too long, or a parameter invalid (an unknown `sort` or facet, `facet_limit` past 20); the message names it.',
        ),
      },
    },
  },
  {
    name: 'searchAuthors',
    method: 'GET',
    path: '/v1/authors/search',
    access: 'key',
    cost: 'unit',
    cache: 'none',
    reuse: 'short',
    tag: 'search and match',
    query: authorSearchQuery,
    partial: { record: authorSummary, what: 'author', at: ['results', '*', 'author'] },
    tool: {
      name: 'search_authors',
      title: 'Search authors',
      description:
        'Find authors by name, tolerant of initials ("JK Rowling"), surname-first order ("Rowling, J.K."), diacritics and typos; other spellings of a name match too. ' +
        'Answers {total, limit, offset, results: [{score, author: {id, name, alternate_names, work_count}}]}, best first. ' +
        'Then use get_author for their works, or search_books with author_id for their books.',
    },
    answer: async (services, _requestId, { query }) => json(await searchAuthors(services, query)),
    doc: {
      summary: 'Search authors',
      description:
        'Finds authors by name, tolerant of initials (`JK Rowling`, `J. K. Rowling`), order (`Rowling, J.K.`), diacritics (`Garcia Marquez`) and typos (as in book search); ' +
        'other spellings seen of a name (`alternate_names`) match too, and the last word also counts as the start of a word. ' +
        'An exact name (once initials, order, case and diacritics are set aside) ranks first; popular authors (by the readers, ratings and editions of their books) rank a little higher. ' +
        SHORT_CACHE.replace(
          'every book is exactly its `GET /v1/books/{id}` record; a book',
          'every author reads as in `GET /v1/authors/{id}` (without the works); an author',
        ),
      responses: {
        '200': { description: 'A page of authors.', headers: rateHeaders, content: { 'application/json': { schema: authorSearchPage } } },
        '400': errorResponse('`q` missing (`q is required`) or too long, or `limit`/`offset` invalid.'),
      },
    },
  },
  {
    name: 'suggest',
    method: 'GET',
    path: '/v1/suggest',
    access: 'key',
    cost: 'unit',
    cache: 'none',
    tag: 'search and match',
    query: suggestQuery,
    tool: {
      name: 'suggest_books',
      title: 'Suggest as typed',
      description:
        'Type-ahead: works, authors and series whose names start as typed (earlier words whole, the last as the start of a word, one typo from the fourth letter of a word), ' +
        'best fit first, then most read. One result per work. Use search_books for a full result list.',
    },
    answer: async (services, _requestId, { query }) => json(await suggestBooks(services, query)),
    doc: {
      summary: 'Suggest works, authors and series as a reader types',
      description:
        'Made for a search box. At most `limit` (default 5, at most 10) works, authors and series, mixed, best first: a name that is the typed text ' +
        '(once case, diacritics, punctuation and a leading article are set aside: `hobbit` suggests The Hobbit), then a name that starts with it, then a name holding its words; ' +
        "among equals the most read (a work's readers, an author's readers over all their books). Earlier words match whole, the last as the start of a word, from the first letter; " +
        'a word of four letters or more may hold one typo. One result per work, never two editions of it. ' +
        "Every call is one unit of the key's rate limit, like any `/v1` call: a search box should ask " +
        `once typing pauses for ${SUGGEST_DEBOUNCE_MS} ms (a debounce), not on every keystroke, and cancel a request still in flight when a newer one starts. ` +
        'Read from the search index alone (a book changed in the last second may show as it was); kept briefly in the short-lived cache. ' +
        SHORT_CACHE_ENDS,
      responses: {
        '200': { description: 'Suggestions.', headers: rateHeaders, content: { 'application/json': { schema: suggestions } } },
        '400': errorResponse('`q` missing (`q is required`) or longer than 100 characters, or `limit` out of range.'),
      },
    },
  },
  {
    name: 'matchBook',
    method: 'POST',
    path: '/v1/match',
    access: 'key',
    cost: 'unit',
    cache: 'none',
    tag: 'search and match',
    tool: {
      name: 'match_book',
      title: 'Match a reference to one book',
      description:
        'Resolve a messy reference (a title, maybe with author, year, publisher and/or an ISBN) to the ONE catalogue book it describes, with a confidence from 0 to 1. ' +
        'Prefer this over search_books when you want the single best book for a citation or a reading-list line; give every field you have: the author and year ' +
        'tell apart books of the same title and editions of one work. ' +
        `Answers ${MATCH_ANSWER}`,
    },
    answer: async (services, _requestId, { body }) => json(await matchBook(services, body)),
    doc: {
      summary: 'Match a record to a catalogue book',
      description:
        'Finds the catalogue book a (possibly messy) record describes. Candidates are the book with the given ISBN and the editions whose title is closest ' +
        '(as written first; read up to typos when that finds no match). ' +
        'Each is weighed on signals from 0 to 1 (`title`, `author`, `year`, `publisher`) and what the ISBN says about it (`isbn`). Titles are compared after taking out ' +
        'a series in parentheses, a subtitle (either side may lack it), a leading article, punctuation, case and diacritics, tolerating typos (a word matched only up to a typo, ' +
        "or a title matched only without the book's subtitle, counts a little less; a record title that says more than the book's, such as an imprint in parentheses, counts " +
        'clearly less, as it may name another book of that title); authors are compared ' +
        'tolerating initials, surname-first order and typos, and any credited author may match, so a translator or illustrator listed as well costs nothing. ' +
        `Confidence: the title likeness, times 0.6 + 0.4 × the author likeness when an author was given (0.8 when the book credits nobody); with no author given, ${TITLE_ALONE} × the title likeness to the power ${TITLE_ALONE_POWER}, as a near title alone is likelier another book; ` +
        `times 0.9 + 0.1 × year closeness and 0.95 + 0.05 × publisher likeness when known. A matching ISBN decides: ${MATCH_THRESHOLD} + ${1 - MATCH_THRESHOLD} × that. Otherwise an ISBN of another ` +
        'book (`mismatch`) or an ISBN no book has (`unknown`: the edition is not in the catalogue) multiplies by 0.8. ' +
        `The best candidate is the \`match\` when its confidence is at least ${MATCH_THRESHOLD} ` +
        '(tuned so that records of books not in the catalogue are almost never matched); otherwise `match` is null and the candidates show what came closest. ' +
        'Year and publisher mostly choose among editions of one work. ' +
        SHORT_CACHE,
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: matchRequest.meta({ id: 'MatchRequest' }),
            example: { title: 'The Hunger Games', author: 'Suzanne Collins', year: 2008 },
          },
        },
      },
      responses: {
        '200': {
          description: 'The best match (or null), its confidence and signals, and the closest candidates.',
          headers: rateHeaders,
          content: { 'application/json': { schema: matchResult } },
        },
        '400': errorResponse(
          'Neither `title` nor `isbn` (`title or isbn required`); malformed JSON (`malformed JSON body`) or a body that is not an object; a field of the wrong type ' +
            '(`year must be an integer such as 1997`), too long (500 characters) or unknown; or only an `isbn` that is not a valid ISBN.',
        ),
        '413': bodyTooLarge(JSON_BODY_LIMIT_BYTES),
        '415': unsupportedBody,
      },
    },
  },
  {
    name: 'recommendBooks',
    method: 'GET',
    path: '/v1/books/:id/recommendations',
    access: 'key',
    cost: 'unit',
    cache: 'none',
    reuse: 'short',
    tag: 'search and match',
    query: recommendQuery,
    tool: {
      name: 'recommend_books',
      title: 'Books to read next',
      description:
        'Books a reader of one book is likely to want next, best first, one edition per work and never another edition of the same work. ' +
        'Signals: what readers who liked it also liked, the same series, the same author, similar titles; popular books fill the list. ' +
        "Needs the book's bk_ id (from lookup_isbn, match_book or search_books). Answers {book_id, results: [{score, book}]}. " +
        MERGES,
    },
    answer: async (services, _requestId, { params, query }) => {
      const resolved = await recommendFor(services, params.id!, query.limit);
      return isMerged(resolved) ? resolved : json(resolved.record);
    },
    doc: {
      summary: 'Books to read next',
      description:
        "Books a reader of this one is likely to want next, best first, one edition per work and never an edition of this book's own work " +
        '(nor a book with nearly the same title and author that the catalogue keeps as another work). Signals, strongest first: co-reading (what readers who liked this book also liked, ' +
        'from Book-Crossing ratings), the same series, the same author, and content likeness of title, subtitle, series and author names; popular books rank a little higher and ' +
        'fill the list when few books are related. Subjects, which search matches, play no part. A merged id answers 301 to `/v1/books/<survivor>/recommendations`. ' +
        SHORT_CACHE,
      parameters: [idParameter('book')],
      responses: {
        '200': { description: 'Recommendations.', headers: rateHeaders, content: { 'application/json': { schema: recommendations } } },
        '301': merged('books'),
        '400': errorResponse('`limit` out of range.'),
        '404': errorResponse('No such book; the message names the id.'),
      },
    },
  },
];
