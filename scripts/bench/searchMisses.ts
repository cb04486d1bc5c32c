// What a query that matches nothing as typed costs book search: p50/p95 of the search service (short
// cache off, one call at a time) over the search evaluation's catalogue (scripts/eval/search.ts builds
// it), for three sets of 50 queries made from goodbooks titles, each asked twice:
//  - miss: a two-word title with the first letter of its second word mistyped ("catching xire"), which
//    typo tolerance does not repair, so nothing matches every word even with typos;
//  - extra word: a title of four words or more with "paperback" added, which matches three words in four;
//  - title: a title of four words or more as it is.
// Run it at two commits to see what a change costs each kind.
//
//   ELASTICSEARCH_URL=… node --import tsx scripts/bench/searchMisses.ts

import { searchBooks } from '../../src/services/search.js';
import { splitTitle } from '../../src/domain/titles.js';
import { openEvalWorld } from '../eval/lib/evalWorld.js';
import { readGoodbooks } from '../eval/lib/sources.js';
import { timedSequentially } from '../lib/bench.js';
import { percentile } from '../lib/percentile.js';

const PER_SET = 50;
const ROUNDS = 2;

const world = await openEvalWorld('bookmeta_eval_search', false, () => {
  throw new Error('the search evaluation catalogue is missing: run scripts/eval/search.ts first');
});
try {
  const titles = (await readGoodbooks()).map((row) => splitTitle(row.rawTitle).title);
  const words = (title: string) => title.split(' ');
  const lettersOnly = (title: string, least: number) => words(title).every((word) => new RegExp(`^\\p{L}{${least},}$`, 'u').test(word));
  const long = titles.filter((title) => words(title).length >= 4 && lettersOnly(title, 1)).slice(0, PER_SET);
  const sets: [string, string[]][] = [
    [
      'miss',
      titles
        .filter((title) => words(title).length === 2 && lettersOnly(title, 4))
        .slice(0, PER_SET)
        .map((title) => {
          const [first, second] = words(title) as [string, string];
          return `${first} x${second.slice(1)}`;
        }),
    ],
    ['extra word', long.map((title) => `${title} paperback`)],
    ['title', long],
  ];
  for (const [name, queries] of sets) {
    let found = 0;
    const calls = Array.from({ length: ROUNDS }, () => queries).flatMap((round, at) =>
      round.map((q) => async () => {
        const page = await searchBooks(world.services, { q, limit: '10' });
        if (at === 0 && page.results.length > 0) found++;
      }),
    );
    const ms = await timedSequentially(calls);
    console.log(
      `${name}: ${queries.length} queries × ${ROUNDS}, ${found} found something; p50 ${percentile(ms, 50).toFixed(1)} ms, p95 ${percentile(ms, 95).toFixed(1)} ms`,
    );
  }
} finally {
  await world.close();
}
