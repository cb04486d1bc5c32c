import parsePrometheusTextFormat, { type ParsedFamily, type ParsedSample } from 'parse-prometheus-text-format';

/**
 * A scrape of a Prometheus endpoint, parsed: every family by name, and a histogram's series
 * (`_bucket`, `_sum`, `_count`) as families of their own. The parser folds the series of a labelled
 * histogram into one and loses their labels (yunyu/parse-prometheus-text-format#13), so histograms
 * are handed to it declared untyped, which parses each series as plain samples.
 */
export interface Scrape {
  families: Map<string, ParsedFamily>;
  /** The families the endpoint declared as histograms. */
  histograms: Set<string>;
}

export async function scrape(url: string): Promise<Scrape> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`scrape of ${url} answered ${response.status}`);
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/plain; version=0.0.4')) throw new Error(`scrape of ${url} is not Prometheus text: ${type}`);
  return parseScrape(await response.text());
}

export function parseScrape(text: string): Scrape {
  const histograms = new Set([...text.matchAll(/^# TYPE (\S+) histogram$/gm)].map((match) => match[1]!));
  const families = parsePrometheusTextFormat(text.replace(/^(# TYPE \S+) histogram$/gm, '$1 untyped'));
  return { families: new Map(families.map((family) => [family.name, family])), histograms };
}

/** The samples of a family (or a histogram's series) whose labels include `labels`. */
export function samples(scraped: Scrape, name: string, labels: Record<string, string> = {}): ParsedSample[] {
  return (scraped.families.get(name)?.metrics ?? []).filter((sample) =>
    Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value),
  );
}

/** The sum of the matching samples' values; null when none matches. */
export function value(scraped: Scrape, name: string, labels: Record<string, string> = {}): number | null {
  const found = samples(scraped, name, labels);
  return found.length === 0 ? null : found.reduce((total, sample) => total + Number(sample.value), 0);
}

/** How many series a metric has, a histogram's buckets, sum and count each one, as Prometheus stores them. */
export function seriesCount(scraped: Scrape, name: string): number {
  const names = scraped.histograms.has(name) ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
  return names.reduce((total, series) => total + samples(scraped, series).length, 0);
}
