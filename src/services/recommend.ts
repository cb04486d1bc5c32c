import { z } from 'zod/v4';
import { parseInput } from '../errors.js';
import { likelySameWork } from '../domain/similarity.js';
import { recommendationHits } from '../stores/elasticsearch/recommendations.js';
import { booksByIds } from '../stores/postgres/catalogue.js';
import { alsoLikedOf, authorAlsoLikedOf } from '../stores/postgres/ratings.js';
import { limitParam } from './queryParams.js';
import { bookById, type Resolved } from './lookups.js';
import { bookHit, hydrate, type SearchServices } from './search.js';

/**
 * GET /v1/books/:id/recommendations: books a reader of this one is likely to want next, one
 * edition per work and never an edition of its own work (see stores/elasticsearch/recommendations.ts
 * for the signals). Records come from PostgreSQL; answers are kept in the short cache.
 */

export const RECOMMEND_DEFAULT_LIMIT = 10;
export const RECOMMEND_MAX_LIMIT = 50;
// Hits fetched beyond the limit, to make up for those dropped as likely editions of the same work.
const SPARE_HITS = 10;

/** The query of GET /v1/books/:id/recommendations (and the arguments of recommend_books besides the id). */
export const recommendQuery = z.object({
  limit: limitParam(RECOMMEND_DEFAULT_LIMIT, RECOMMEND_MAX_LIMIT).meta({ description: 'Books to recommend.' }),
});

export const recommendations = z
  .object({ book_id: z.string(), results: z.array(bookHit).meta({ description: 'Best first, at most `limit`.' }) })
  .meta({ id: 'Recommendations' });

export type Recommendations = z.output<typeof recommendations>;

export async function recommendFor(
  services: SearchServices,
  id: string,
  limitText: string | undefined,
): Promise<Resolved<Recommendations>> {
  const { limit } = parseInput(recommendQuery, { limit: limitText });
  const found = await bookById(services.reads, id);
  if ('mergedInto' in found) {
    // The survivor's recommendations, asked the same way: the redirect keeps the limit.
    const query = limitText === undefined ? '' : `?limit=${encodeURIComponent(limitText)}`;
    return { mergedInto: found.mergedInto, location: `${found.location}/recommendations${query}` };
  }
  const book = found.record;
  const record = await services.shortCache.through(`recommend:${id}:${limit}`, async () => {
    // From PostgreSQL, where the ratings import derives it: the copy in the index may lag behind.
    const [alsoLiked, authorAlsoLiked] = await Promise.all([
      alsoLikedOf(services.db, id),
      authorAlsoLikedOf(
        services.db,
        book.authors.map((author) => author.id),
        book.work_id,
      ),
    ]);
    const hits = await recommendationHits(
      services.elastic,
      services.indices.books,
      { book, alsoLiked, authorAlsoLiked },
      limit + SPARE_HITS,
    );
    const found = await hydrate(
      hits,
      (found) =>
        booksByIds(
          services.db,
          found.map((one) => one.id),
        ),
      (score, other) => ({ score, book: other }),
    );
    const results = found.filter((hit) => hit.book.work_id !== book.work_id && !likelySameWork(book, hit.book)).slice(0, limit);
    return { value: { book_id: id, results }, cacheable: true };
  });
  return { record, shows: [] };
}
