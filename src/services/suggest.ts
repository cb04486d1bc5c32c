import { z } from 'zod/v4';
import { authorKey } from '../domain/names.js';
import { titleKey } from '../domain/titles.js';
import { collapseWhitespace } from '../domain/text.js';
import { parseInput } from '../errors.js';
import { suggest, type Suggestion, type SuggestQuery } from '../stores/elasticsearch/suggestions.js';
import { limitParam, type QueryText } from './queryParams.js';
import type { Services } from './context.js';

/**
 * Type-ahead for a search box: works, authors and series as a reader types, answered from the
 * search indices alone (no PostgreSQL read), so that it keeps up with every keystroke.
 */

export const SUGGEST_DEFAULT_LIMIT = 5;
export const SUGGEST_MAX_LIMIT = 10;
export const SUGGEST_MAX_LENGTH = 100;
/** What a client should wait after the last keystroke before asking. */
export const SUGGEST_DEBOUNCE_MS = 150;

const Q_REQUIRED = 'q is required';

export const suggestQuery = z.object({
  q: z
    .string({ error: Q_REQUIRED })
    .overwrite(collapseWhitespace)
    .min(1, Q_REQUIRED)
    .max(SUGGEST_MAX_LENGTH, `q must be at most ${SUGGEST_MAX_LENGTH} characters`)
    .meta({ description: 'What has been typed so far, from the first letter.', example: 'hobb' }),
  limit: limitParam(SUGGEST_DEFAULT_LIMIT, SUGGEST_MAX_LIMIT).meta({ description: 'Suggestions at most.' }),
});
export type SuggestParams = QueryText<typeof suggestQuery>;

const credit = z.object({ id: z.string(), name: z.string() }).nullable().meta({ description: 'The first author credited.' });
const text = z.string().meta({ description: 'What to show.' });

export const suggestion = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('work'),
      text,
      id: z.string().meta({ description: 'The work (`wk_`): `GET /v1/works/{id}`.' }),
      title: z.string(),
      author: credit,
      year: z.int().nullable().meta({ description: 'First published.' }),
      cover_url: z.string().nullable(),
    }),
    z.object({
      type: z.literal('author'),
      text,
      id: z.string().meta({ description: 'The author (`au_`).' }),
      name: z.string(),
      work_count: z.int(),
    }),
    z.object({
      type: z.literal('series'),
      text,
      name: z.string(),
      author: credit,
      volumes: z.int().meta({ description: 'Works of the series.' }),
    }),
  ])
  .meta({ id: 'Suggestion' });

export const suggestions = z.object({ results: z.array(suggestion).meta({ description: 'Best first.' }) }).meta({
  id: 'Suggestions',
  example: {
    results: [
      {
        type: 'work',
        text: 'The Hobbit',
        id: 'wk_0q8v2mr4w5x1',
        title: 'The Hobbit',
        author: { id: 'au_7d2k9r1p3s8t', name: 'J.R.R. Tolkien' },
        year: 1937,
        cover_url: null,
      },
    ],
  },
});
export type Suggestions = z.output<typeof suggestions>;

const shown = (found: Suggestion): z.output<typeof suggestion> => {
  switch (found.type) {
    case 'work': {
      const { score: _score, ...work } = found;
      return { ...work, text: work.author ? `${work.title} (${work.author.name})` : work.title };
    }
    case 'author': {
      const { score: _score, ...author } = found;
      return { ...author, text: author.name };
    }
    case 'series': {
      const { score: _score, ...series } = found;
      return { ...series, text: series.author ? `${series.name} (series, ${series.author.name})` : `${series.name} (series)` };
    }
  }
};

/** The store's query for text as typed: its title key (or the text lowered, when all of it folds away) and its name key. */
export const typedSuggestQuery = (q: string, limit: number): SuggestQuery => ({
  key: titleKey(q) || q.toLowerCase(),
  nameKey: authorKey(q),
  limit,
});

/** GET /v1/suggest. */
export async function suggestBooks(
  services: Pick<Services, 'elastic' | 'indices' | 'shortCache'>,
  params: SuggestParams,
): Promise<Suggestions> {
  const { q, limit } = parseInput(suggestQuery, params);
  const query = typedSuggestQuery(q, limit);
  return services.shortCache.through(`suggest:${JSON.stringify(query)}`, async () => {
    const found = await suggest(services.elastic, services.indices, query, titleKey, authorKey);
    return { value: { results: found.map(shown) }, cacheable: true };
  });
}
