// Where a service call's time goes in Elasticsearch: the requests it sent with the time each took
// in the cluster (`took`), and, for the slowest calls, each search re-run with the profile API,
// summed per query clause, rescore, aggregation and fetch over the shards.

import type { Elastic } from '../../src/stores/elasticsearch/client.js';
import { percentile } from './percentile.js';

/** One search a call sent: its index and body, and the cluster's time for it. */
interface SentSearch {
  index: string;
  body: Record<string, unknown>;
  took: number;
}

export interface TracedCall {
  label: string;
  ms: number;
  searches: SentSearch[];
}

/**
 * Records the searches each call sends through `elastic` (its _search and _msearch requests, an
 * _msearch as its searches), with the call's own time.
 */
export function searchTracer(elastic: Elastic): { traced: <T>(label: string, call: () => Promise<T>) => Promise<T>; calls: TracedCall[] } {
  const calls: TracedCall[] = [];
  let current: SentSearch[] | null = null;
  elastic.diagnostic.on('response', (error, result) => {
    if (error || !result || current === null) return;
    // What the transport sent: an _msearch's searches are in bulkBody, which the declared type omits.
    const { path, body, bulkBody } = result.meta.request.params as { path: string; body?: unknown; bulkBody?: unknown };
    const index = decodeURIComponent(path.split('/')[1] ?? '');
    const parse = (text: unknown): Record<string, unknown> => {
      const parsed: unknown = typeof text === 'string' ? JSON.parse(text) : text;
      return parsed as Record<string, unknown>;
    };
    if (path.endsWith('/_search')) {
      current.push({ index, body: parse(body), took: (result.body as { took: number }).took });
    } else if (path.endsWith('/_msearch')) {
      // Sent as one NDJSON string (in body or bulkBody), or as its lines.
      const sent = bulkBody ?? body;
      const lines = Array.isArray(sent) ? sent.map(parse) : String(sent).trim().split('\n').map(parse);
      const answers = (result.body as { responses: { took?: number }[] }).responses;
      for (let at = 0; at + 1 < lines.length; at += 2) {
        const header = lines[at] as { index?: string };
        current.push({ index: header.index ?? index, body: lines[at + 1]!, took: answers[at / 2]?.took ?? 0 });
      }
    }
  });
  const traced = async <T>(label: string, call: () => Promise<T>): Promise<T> => {
    current = [];
    const started = performance.now();
    try {
      return await call();
    } finally {
      calls.push({ label, ms: performance.now() - started, searches: current });
      current = null;
    }
  };
  return { traced, calls };
}

/** The call's time against its searches' time in the cluster (summed), and how many searches it sent. */
export function tookSummary(label: string, calls: TracedCall[]): string {
  const took = calls.map((call) => call.searches.reduce((sum, search) => sum + search.took, 0));
  const sent = calls.reduce((sum, call) => sum + call.searches.length, 0) / Math.max(1, calls.length);
  const typos = calls.filter((call) => call.searches.some((search) => JSON.stringify(search.body).includes('"fuzziness"'))).length;
  return (
    `${label.padEnd(7)} call p50 ${percentile(
      calls.map((call) => call.ms),
      50,
    ).toFixed(1)} / p95 ${percentile(
      calls.map((call) => call.ms),
      95,
    ).toFixed(1)} ms; ` +
    `Elasticsearch took p50 ${percentile(took, 50).toFixed(0)} / p95 ${percentile(took, 95).toFixed(0)} ms; ${sent.toFixed(2)} searches per call; ` +
    `${typos} of ${calls.length} calls ran a query with typos`
  );
}

interface ProfiledQuery {
  type: string;
  description: string;
  time_in_nanos: number;
  children?: ProfiledQuery[];
}

const ms = (nanos: number): number => nanos / 1e6;
const short = (text: string, length = 110): string => (text.length > length ? `${text.slice(0, length)}…` : text);

/**
 * Each search of a call re-run with `profile: true`: its took, and its time summed over the shards
 * by the query's top-level clauses (their first two levels), the rescore queries, the collectors,
 * the aggregations and the fetch phase.
 */
export async function profileCall(elastic: Elastic, call: TracedCall): Promise<string[]> {
  const lines = [`${call.label}: ${call.ms.toFixed(1)} ms in the call; took ${call.searches.map((search) => search.took).join(' + ')} ms`];
  for (const [at, search] of call.searches.entries()) {
    const response = await elastic.search({ index: search.index, ...search.body, profile: true });
    const clauses = new Map<string, number>();
    let rewrite = 0;
    let collect = 0;
    let aggregations = 0;
    let fetch = 0;
    const add = (key: string, nanos: number) => clauses.set(key, (clauses.get(key) ?? 0) + nanos);
    for (const shard of response.profile?.shards ?? []) {
      for (const profiled of shard.searches) {
        for (const [position, query] of (profiled.query as ProfiledQuery[]).entries()) {
          // The first query is the search's; the next are its rescore queries, in order.
          const role = position === 0 ? 'query' : `rescore ${position}`;
          add(`${role}: ${query.type}`, query.time_in_nanos);
          for (const child of query.children ?? []) {
            add(`${role}  > ${child.type} ${short(child.description)}`, child.time_in_nanos);
            for (const grandchild of child.children ?? [])
              add(`${role}  >> ${grandchild.type} ${short(grandchild.description)}`, grandchild.time_in_nanos);
          }
        }
        rewrite += profiled.rewrite_time;
        for (const collector of profiled.collector) collect += collector.time_in_nanos;
      }
      for (const aggregation of shard.aggregations) aggregations += aggregation.time_in_nanos;
      fetch += (shard as { fetch?: { time_in_nanos: number } }).fetch?.time_in_nanos ?? 0;
    }
    lines.push(
      `  search ${at + 1} (took ${response.took} ms profiled, ${search.took} ms in the call): rewrite ${ms(rewrite).toFixed(1)} ms, ` +
        `collectors ${ms(collect).toFixed(1)} ms, aggregations ${ms(aggregations).toFixed(1)} ms, fetch ${ms(fetch).toFixed(1)} ms`,
    );
    const top = [...clauses].sort((a, b) => b[1] - a[1]).slice(0, 12);
    for (const [clause, nanos] of top) lines.push(`    ${ms(nanos).toFixed(1).padStart(7)} ms  ${clause}`);
  }
  return lines;
}
