import { z } from 'zod/v4';
import { authorRef, workListing } from '../domain/records.js';
import { subjectKey } from '../domain/subjects.js';
import { TRENDING_PERIODS } from '../domain/trending.js';
import { collapseWhitespace } from '../domain/text.js';
import { badRequest, parseInput } from '../errors.js';
import { subjectWorks } from '../stores/elasticsearch/subjects.js';
import { workListings } from '../stores/postgres/catalogue.js';
import { trendingWorks } from '../stores/postgres/trending.js';
import type { Services } from './context.js';
import { integerWithDefault, type QueryText } from './queryParams.js';
import { paging, withinWindow, WINDOW } from './search.js';

/**
 * What readers read: the works of a subject ranked by readers, and the works most added to reading
 * logs lately. Shared by the HTTP routes and the MCP tools; the works come from PostgreSQL, so each
 * reads as in `GET /v1/works/{id}`. Both aggregate a large part of the catalogue: they are kept as
 * summaries, refreshed in the background (see SummaryCache), not dropped when the catalogue changes.
 */

export type ReadersServices = Pick<Services, 'db' | 'elastic' | 'indices' | 'summaryCache'>;

export const SUBJECT_MAX_LENGTH = 200;
export const RELATED_DEFAULT = 10;
export const RELATED_MAX = 50;

/** The subject of GET /v1/subjects/{subject}, as its path gives it: any spelling, whose key is what counts. */
export function requireSubject(text: string): { key: string; asked: string } {
  const asked = collapseWhitespace(text);
  if (asked.length > SUBJECT_MAX_LENGTH) throw badRequest(`subject must be at most ${SUBJECT_MAX_LENGTH} characters`);
  const key = subjectKey(asked);
  if (key === '') throw badRequest('subject must have a letter or digit');
  return { key, asked };
}

export const subjectQuery = z
  .object({
    ...paging('Works'),
    related: integerWithDefault(1, RELATED_MAX, RELATED_DEFAULT, `related must be an integer from 1 to ${RELATED_MAX}`).meta({
      description: 'Authors, and subjects found with it, shown.',
    }),
  })
  .refine(withinWindow, WINDOW);

export const subjectPage = z
  .object({
    key: z.string().meta({
      description: "The subject's key: its words folded and in alphabetical order, as search's `subject` filter and facet count it.",
      example: 'dystopias',
    }),
    name: z
      .string()
      .nullable()
      .meta({ description: 'The spelling most of its books use; null when no book has the subject.', example: 'Dystopias' }),
    work_count: z.int().meta({ description: 'Works with the subject (exact up to 40,000, within a few percent past it).' }),
    total: z.int().meta({ description: 'Works to page through: `work_count`.' }),
    limit: z.int(),
    offset: z.int(),
    results: z.array(workListing).meta({
      description:
        "Its works, most read first: by the readers of all a work's editions (Goodreads ratings and Open Library readers who shelved or rated it), as search's `sort=readers` orders them.",
    }),
    authors: z
      .array(
        authorRef.extend({
          readers: z.int().meta({ description: "Readers of their books of the subject, in the unit of search's `sort=readers`." }),
        }),
      )
      .meta({ description: 'Its most read authors, most read first.' }),
    related_subjects: z
      .array(z.object({ name: z.string(), work_count: z.int().meta({ description: 'Works of this subject that also have that one.' }) }))
      .meta({ description: 'The subjects most often found with it, the most first: each `name` is a subject of this route.' }),
  })
  .meta({ id: 'SubjectPage' });
export type SubjectPage = z.output<typeof subjectPage>;

/** GET /v1/subjects/{subject}. */
export async function subjectAnswer(
  services: ReadersServices,
  subject: string,
  params: QueryText<typeof subjectQuery>,
): Promise<SubjectPage> {
  const { key } = requireSubject(subject);
  const { limit, offset, related } = parseInput(subjectQuery, params);
  return services.summaryCache.through('subject', JSON.stringify([key, limit, offset, related]), async (): Promise<SubjectPage> => {
    const page = await subjectWorks(services.elastic, services.indices.books, { key, offset, limit, related });
    return {
      key,
      name: page.name,
      work_count: page.works,
      total: page.works,
      limit,
      offset,
      results: await workListings(services.db, page.workIds),
      authors: page.authors,
      related_subjects: page.subjects.map((found) => ({ name: found.value, work_count: found.count })),
    };
  });
}

export const trendingQuery = z
  .object({
    period: z
      .enum(TRENDING_PERIODS, { error: `period must be one of ${TRENDING_PERIODS.join(', ')}` })
      .default('week')
      .meta({
        description:
          'How far back from the newest day of the reading log: `day` that day, `week` 7 days, `month` 30 days, `year` 365 days.',
      }),
    ...paging('Works'),
  })
  .refine(withinWindow, WINDOW);

export const trendingPage = z
  .object({
    period: z.enum(TRENDING_PERIODS),
    from: z
      .string()
      .nullable()
      .meta({ description: 'First day of the period (`YYYY-MM-DD`); null before any reading log was imported.', format: 'date' }),
    to: z.string().nullable().meta({ description: 'Last day: the newest day of the reading log imported.', format: 'date' }),
    total: z.int().meta({ description: 'Works added to reading logs in the period (the first 1,000 can be paged through).' }),
    limit: z.int(),
    offset: z.int(),
    results: z
      .array(
        z.object({
          added: z.int().meta({ description: 'Entries of the work made in reading logs in the period, on any shelf.' }),
          work: workListing,
        }),
      )
      .meta({ description: 'The most added first (ties by work id).' }),
  })
  .meta({ id: 'TrendingPage' });
export type TrendingPage = z.output<typeof trendingPage>;

/** GET /v1/trending. */
export async function trendingAnswer(services: ReadersServices, params: QueryText<typeof trendingQuery>): Promise<TrendingPage> {
  const { period, limit, offset } = parseInput(trendingQuery, params);
  return services.summaryCache.through('trending', JSON.stringify([period, limit, offset]), async (): Promise<TrendingPage> => {
    const { from, to, works, entries } = await trendingWorks(services.db, period, offset, limit);
    return { period, from, to, total: works, limit, offset, results: entries };
  });
}
