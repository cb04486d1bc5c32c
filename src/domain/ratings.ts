/**
 * Ranking by rating must not put a book rated five by one reader above one rated four by a million:
 * a book's rating for sorting is a damped (Bayesian) average, its readers' ratings together with
 * PRIOR_RATINGS imagined ratings of PRIOR_MEAN (the middle of the 1 to 5 scale):
 *
 *   (PRIOR_RATINGS × PRIOR_MEAN + sum of ratings) / (PRIOR_RATINGS + number of ratings)
 *
 * so a few ratings barely move a book from the middle, and many ratings speak for themselves. A
 * book nobody rated has no rating and sorts last.
 */
export const PRIOR_MEAN = 3;
export const PRIOR_RATINGS = 50;

/** The damped average of `count` ratings summing to `sum`; null without any rating. */
export function dampedRating(count: number, sum: number): number | null {
  return count > 0 ? (PRIOR_RATINGS * PRIOR_MEAN + sum) / (PRIOR_RATINGS + count) : null;
}
