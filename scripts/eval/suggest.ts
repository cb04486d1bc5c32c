// Type-ahead quality on the shipped goodbooks catalogue: for each case, is the expected work or
// author among the first five suggestions of GET /v1/suggest (the service function it calls)?
//
//   node --import tsx scripts/eval/suggest.ts [--cases FILE.jsonl] [--sample 300] [--seed 7] [--fresh]
//
// Default cases come from a random sample of goodbooks books: the title as typed in full, its first
// 60 % of characters (expecting the work), and the first four letters of the first author's surname
// (expecting the author). A held-out set is a JSON-lines file of {"typed", "type": "work"|"author",
// "expect"} (a title or a name) read with --cases; a suggestion is the expected one when its title
// (titleKey) or name (authorKey) is the same as the expectation's.

import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { goodbooks } from '../../loader/import/goodbooks.js';
import { importCatalogue } from '../../loader/import/importer.js';
import { authorKey } from '../../src/domain/names.js';
import { splitTitle, titleKey } from '../../src/domain/titles.js';
import { createLogger } from '../../src/log.js';
import { suggestBooks } from '../../src/services/suggest.js';
import { Random } from '../dev/synthetic.js';
import { openEvalWorld } from './lib/evalWorld.js';
import { GOODBOOKS, readGoodbooks } from './lib/sources.js';

const { values: options } = parseArgs({
  options: {
    cases: { type: 'string' },
    sample: { type: 'string', default: '300' },
    seed: { type: 'string', default: '7' },
    fresh: { type: 'boolean', default: false },
  },
});

interface Case {
  typed: string;
  type: 'work' | 'author';
  expect: string;
  /** What the case tests, for the report. */
  kind: string;
}

async function defaultCases(): Promise<Case[]> {
  const random = new Random(Number(options.seed));
  const books = await readGoodbooks();
  const cases: Case[] = [];
  for (let i = 0; i < Number(options.sample); i++) {
    const book = random.pick(books);
    const title = splitTitle(book.rawTitle).title;
    cases.push({ typed: title, type: 'work', expect: title, kind: 'whole title' });
    cases.push({
      typed: title.slice(0, Math.max(1, Math.ceil(title.length * 0.6))),
      type: 'work',
      expect: title,
      kind: '60 % of the title',
    });
    const author = book.authors[0];
    if (author)
      cases.push({
        typed: (author.split(' ').at(-1) ?? author).slice(0, 4),
        type: 'author',
        expect: author,
        kind: 'four letters of the surname',
      });
  }
  return cases;
}

async function main(): Promise<void> {
  const cases = options.cases
    ? (await readFile(options.cases, 'utf8'))
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => ({ kind: 'held out', ...(JSON.parse(line) as Omit<Case, 'kind'>) }))
    : await defaultCases();
  const world = await openEvalWorld('bookmeta_eval_suggest', options.fresh, async (db) => {
    await importCatalogue(goodbooks, GOODBOOKS, { db, cache: null, log: createLogger('silent') });
  });
  try {
    const tally = new Map<string, { cases: number; top5: number }>();
    for (const test of cases) {
      const { results } = await suggestBooks(world.services, { q: test.typed, limit: '5' });
      const found = results.some((result) =>
        test.type === 'work'
          ? result.type === 'work' && titleKey(result.title) === titleKey(test.expect)
          : result.type === 'author' && authorKey(result.name) === authorKey(test.expect),
      );
      const counts = tally.get(test.kind) ?? { cases: 0, top5: 0 };
      counts.cases += 1;
      if (found) counts.top5 += 1;
      tally.set(test.kind, counts);
    }
    console.log('suggestions: the expected work or author in the top 5');
    for (const [kind, { cases: n, top5 }] of tally) console.log(`  ${kind.padEnd(28)} ${top5}/${n} (${((100 * top5) / n).toFixed(1)} %)`);
  } finally {
    await world.close();
  }
}

await main();
