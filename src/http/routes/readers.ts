import { SUMMARY_REFRESH_DEFAULT_S } from '../../config.js';
import { workListing } from '../../domain/records.js';
import { TRENDING_PERIOD_DAYS } from '../../domain/trending.js';
import {
  SUBJECT_MAX_LENGTH,
  subjectAnswer,
  subjectPage,
  subjectQuery,
  trendingAnswer,
  trendingPage,
  trendingQuery,
} from '../../services/readers.js';
import { errorResponse, rateHeaders } from '../responseDocs.js';
import type { Route } from '../route.js';

/** What readers read: a subject's works by readers, and trending works. */

const json = (value: unknown): { text: string } => ({ text: JSON.stringify(value) });

const WORK_FIELDS =
  'Each work: id (wk_…), kind, title, subtitle, original_year, cover_url, authors [{id, name}], edition_count, ' +
  'readers {want_to_read, currently_reading, already_read} (Open Library reading logs) and rating {average, count, stars, sources} ' +
  "(five-star ratings of Open Library and Goodreads together; each source apart in sources, Book-Crossing's on its 1-10 scale).";

const TOOL_FRESHNESS = `The ranking and counts are recomputed at most every ${SUMMARY_REFRESH_DEFAULT_S / 60} minutes by default: recent changes may not show yet.`;

const SUMMARY =
  'Kept as a summary under its canonical parameters and served as kept: its ranking, counts and works are refreshed at most every ' +
  `${SUMMARY_REFRESH_DEFAULT_S / 60} minutes (the default; the operator sets it, \`SUMMARY_REFRESH_S\`), in the background, once a request finds the kept page older than that. ` +
  `So a page asked for often shows a change to the catalogue within about ${SUMMARY_REFRESH_DEFAULT_S / 60} minutes; one no one asked for in a while is served ` +
  'once more as last computed (at most a day before) while it is refreshed. An unchanged page keeps its `ETag`: revalidating it answers 304.';

export const readerRoutes: readonly Route[] = [
  {
    name: 'subjectWorks',
    method: 'GET',
    path: '/v1/subjects/:subject',
    access: 'key',
    cost: 'unit',
    cache: 'none',
    reuse: 'short',
    tag: 'readers',
    query: subjectQuery,
    partial: { record: workListing, what: 'work', at: ['results', '*'] },
    tool: {
      name: 'subject_works',
      title: 'Works of a subject',
      description:
        'The works of a subject (e.g. "Dystopias", "science fiction"; any case, punctuation or word order) ranked by readers, most read first, ' +
        "with the subject's work_count, its most read authors and the subjects most often found with it (related_subjects: each a subject to call this with). " +
        `Answers {key, name, work_count, total, limit, offset, results: [work], authors: [{id, name, readers}], related_subjects: [{name, work_count}]}. ${WORK_FIELDS} ` +
        'Page with offset while offset < total. To search books of a subject by words, use search_books with subject. ' +
        TOOL_FRESHNESS,
    },
    answer: async (services, _requestId, { params, query }) => json(await subjectAnswer(services, params.subject!, query)),
    doc: {
      summary: 'Works of a subject, by readers',
      description:
        'The works with a subject, most read first, one entry per work, as `GET /v1/books/search?sort=readers&subject=…` orders them: by the readers of all ' +
        "a work's editions (Goodreads ratings, and Open Library readers who shelved or rated it). With them, the subject's work count, its most read authors " +
        "(by the readers of their books of the subject) and the subjects its works most often have besides it (as Open Library's Subjects API). " +
        'A subject is named in any spelling: case, diacritics, punctuation and word order do not matter (`FICTION / Fantasy` is `Fantasy fiction`), ' +
        'as for the `subject` filter and facet of search; `key` is that folded form, `name` the spelling most books use. ' +
        'A subject no book has answers 200 with no works (`work_count` 0, `name` null). Read from the search index (aggregations over every edition of the subject) ' +
        `and the works from PostgreSQL, so each reads as in \`GET /v1/works/{id}\` less its editions. ${SUMMARY}`,
      parameters: [
        {
          name: 'subject',
          in: 'path',
          required: true,
          description: `A subject in any spelling, at most ${SUBJECT_MAX_LENGTH} characters, URL-encoded.`,
          schema: { type: 'string' },
          example: 'Dystopias',
        },
      ],
      responses: {
        '200': {
          description: "The subject's works and what goes with them.",
          headers: rateHeaders,
          content: { 'application/json': { schema: subjectPage } },
        },
        '400': errorResponse(
          'A subject without a letter or digit or too long, or `limit`, `offset` or `related` invalid; the message names it.',
        ),
      },
    },
  },
  {
    name: 'trendingWorks',
    method: 'GET',
    path: '/v1/trending',
    access: 'key',
    cost: 'unit',
    cache: 'none',
    reuse: 'short',
    tag: 'readers',
    query: trendingQuery,
    partial: { record: workListing, what: 'work', at: ['results', '*', 'work'] },
    tool: {
      name: 'trending_works',
      title: 'Trending works',
      description:
        'The works most added to Open Library reading logs (any shelf) in the day, week (default), month or year up to the newest day of the data, with how many times each was added. ' +
        `Answers {period, from, to, total, limit, offset, results: [{added, work}]}. ${WORK_FIELDS} ${TOOL_FRESHNESS}`,
    },
    answer: async (services, _requestId, { query }) => json(await trendingAnswer(services, query)),
    doc: {
      summary: 'Works most added to reading logs lately',
      description:
        'The works most added to Open Library reading logs in a period, the most first, with `added`, their entries in the period on any shelf. ' +
        `The period ends at the newest day of the reading log imported (\`to\`) and is ${Object.entries(TRENDING_PERIOD_DAYS)
          .map(([period, days]) => `\`${period}\` ${days} day${days === 1 ? '' : 's'}`)
          .join(', ')} long; importing next month's dump moves it. ` +
        "A redirected work's key counts for the work it leads to. Ranked when the reading log is imported: the first 1,000 works of each period can be paged through. " +
        SUMMARY,
      responses: {
        '200': {
          description: 'A page of trending works.',
          headers: rateHeaders,
          content: { 'application/json': { schema: trendingPage } },
        },
        '400': errorResponse('`period` not one of day, week, month, year, or `limit`/`offset` invalid; the message names it.'),
      },
    },
  },
];
