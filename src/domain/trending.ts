/**
 * Trending: the works most added to reading logs in a period ending at the newest day of the
 * reading log imported. A period is that many days up to that day.
 */
export const TRENDING_PERIOD_DAYS = { day: 1, week: 7, month: 30, year: 365 } as const;
export type TrendingPeriod = keyof typeof TRENDING_PERIOD_DAYS;
export const TRENDING_PERIODS = Object.keys(TRENDING_PERIOD_DAYS) as [TrendingPeriod, ...TrendingPeriod[]];

/** How many works of each period's ranking are kept: as far as a list may page (services/search.ts SEARCH_MAX_WINDOW). */
export const TRENDING_KEPT = 1_000;
