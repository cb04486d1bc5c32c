import test from 'ava';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { generateOpenLibrary } from '../scripts/dev/generate-openlibrary.js';

import { olKeyKind, parseOlLine, yearOf, type OlLine, type OlRecord } from '../src/domain/openlibrary.js';

// The first three lines are the published samples quoted in ../shared/data/openlibrary/SOURCE.md.
const EDITION =
  '/type/edition\t/books/OL10003949M\t7\t2019-11-11T06:22:33.558146\t{"publishers": ["Stationery Office Books"], "key": "/books/OL10003949M", "title": "Finance Bill", "isbn_13": ["9780109303950"], "physical_format": "Paperback", "isbn_10": ["0109303954"], "publish_date": "February 27, 1995", "oclc_numbers": ["316113477"], "works": [{"key": "/works/OL14903198W"}], "type": {"key": "/type/edition"}, "subjects": ["English law: financial law"], "revision": 7}';
const EDITION_WITHOUT_ISBN =
  '/type/edition\t/books/OL16791965M\t4\t2010-08-17T23:54:37.556294\t{"publishers": ["Thomas Nelson and Sons"], "title": "Old Mortality", "number_of_pages": 521, "languages": [{"key": "/languages/eng"}], "publish_date": "1906", "authors": [{"key": "/authors/OL75235A"}], "by_statement": "by Sir Walter Scott, Bart", "works": [{"key": "/works/OL15336690W"}], "key": "/books/OL16791965M", "type": {"key": "/type/edition"}, "revision": 4}';
const WORK =
  '/type/work\t/works/OL10002179W\t3\t2010-04-28T06:54:19.472104\t{"title": "H\\u00e9matologie et soins infirmiers", "covers": [3144815], "key": "/works/OL10002179W", "authors": [{"type": {"key": "/type/author_role"}, "author": {"key": "/authors/OL3967469A"}}], "type": {"key": "/type/work"}, "subjects": ["M\\u00e9decine"], "revision": 3}';

const line = (type: string, key: string, revision: number, json: object): string =>
  `${type}\t${key}\t${revision}\t2020-01-01T00:00:00\t${JSON.stringify(json)}`;

function record(parsed: OlLine | null): OlRecord {
  if (!parsed || !('record' in parsed)) throw new Error(`expected a record, got ${JSON.stringify(parsed)}`);
  return parsed.record;
}
function edition(parsed: OlLine | null) {
  const found = record(parsed);
  if (found.type !== 'edition') throw new Error(`expected an edition, got ${found.type}`);
  return found.edition;
}
function work(parsed: OlLine | null) {
  const found = record(parsed);
  if (found.type !== 'work') throw new Error(`expected a work, got ${found.type}`);
  return found.work;
}
function author(parsed: OlLine | null) {
  const found = record(parsed);
  if (found.type !== 'author') throw new Error(`expected an author, got ${found.type}`);
  return found.author;
}

test('a published edition line maps to its fields, identifiers and work', (t) => {
  const parsed = record(parseOlLine(EDITION));
  t.like(parsed, { type: 'edition', key: 'OL10003949M', kind: 'edition', revision: 7 });
  t.deepEqual(edition(parseOlLine(EDITION)), {
    title: 'Finance Bill',
    subtitle: null,
    isbn: { isbn13: '9780109303950', isbn10: '0109303954' },
    isbnRepaired: false,
    invalidIsbns: [],
    publisher: 'Stationery Office Books',
    year: 1995,
    pages: null,
    language: null,
    physicalFormat: 'Paperback',
    coverUrl: null,
    series: null,
    subjects: ['English law: financial law'],
    description: null,
    workKey: 'OL14903198W',
    authorKeys: [],
    identifiers: [
      { scheme: 'openlibrary', value: 'OL10003949M' },
      { scheme: 'oclc', value: '316113477' },
    ],
  });
});

test('an edition without any ISBN is still an edition, with pages, language and authors', (t) => {
  const found = edition(parseOlLine(EDITION_WITHOUT_ISBN));
  t.is(found.isbn, null);
  t.like(found, { title: 'Old Mortality', pages: 521, language: 'eng', year: 1906, workKey: 'OL15336690W', authorKeys: ['OL75235A'] });
});

test('a published work line maps title, authors from author roles, subjects and cover', (t) => {
  t.deepEqual(work(parseOlLine(WORK)), {
    title: 'Hématologie et soins infirmiers',
    subtitle: null,
    authorKeys: ['OL3967469A'],
    subjects: ['Médecine'],
    description: null,
    firstPublishYear: null,
    coverUrl: 'https://covers.openlibrary.org/b/id/3144815-M.jpg',
  });
});

test('every real author of the shared sample parses, with its key as an identifier', (t) => {
  const lines = readFileSync(new URL('../data/openlibrary/ol_dump_authors_sample.txt', import.meta.url), 'utf8')
    .split('\n')
    .filter(Boolean);
  t.is(lines.length, 4999);
  for (const text of lines) {
    const found = record(parseOlLine(text));
    t.is(found.type, 'author');
    if (found.type === 'author') t.deepEqual(found.author.identifiers[0], { scheme: 'openlibrary', value: found.key });
  }
});

test('the year is read from free-text publish dates and nonsense gives none', (t) => {
  t.is(yearOf('1906'), 1906);
  t.is(yearOf('February 27, 1995'), 1995);
  t.is(yearOf('c1998'), 1998);
  t.is(yearOf('[1985?]'), 1985);
  t.is(yearOf('1995-1998'), 1995);
  t.is(yearOf('19--'), null);
  t.is(yearOf('n.d.'), null);
  t.is(yearOf('3020'), null);
  t.is(yearOf('12345'), null);
});

test('description and bio are read from a string or from a /type/text object, paragraphs kept', (t) => {
  const asObject = work(
    parseOlLine(line('/type/work', '/works/OL1W', 1, { title: 'T', description: { type: '/type/text', value: 'One.\r\n\r\nTwo.' } })),
  );
  t.is(asObject.description, 'One.\n\nTwo.');
  const asString = work(parseOlLine(line('/type/work', '/works/OL1W', 1, { title: 'T', description: 'Plain.' })));
  t.is(asString.description, 'Plain.');
  const bioObject = author(
    parseOlLine(line('/type/author', '/authors/OL1A', 1, { name: 'N', bio: { type: '/type/text', value: 'Born.' } })),
  );
  t.is(bioObject.bio, 'Born.');
  const bioString = author(parseOlLine(line('/type/author', '/authors/OL1A', 1, { name: 'N', bio: 'Born.' })));
  t.is(bioString.bio, 'Born.');
});

test('author roles in either shape and repeated author keys give each author once, in order', (t) => {
  const found = work(
    parseOlLine(
      line('/type/work', '/works/OL1W', 1, {
        title: 'T',
        authors: [
          { type: '/type/author_role', author: { key: '/authors/OL2A' } },
          { type: { key: '/type/author_role' }, author: { key: '/authors/OL1A' } },
          { type: '/type/author_role', author: { key: '/authors/OL2A' } },
          { author: '/authors/OL3A' },
        ],
      }),
    ),
  );
  t.deepEqual(found.authorKeys, ['OL2A', 'OL1A', 'OL3A']);
  const repeated = edition(
    parseOlLine(line('/type/edition', '/books/OL1M', 1, { title: 'T', authors: [{ key: '/authors/OL5A' }, { key: '/authors/OL5A' }] })),
  );
  t.deepEqual(repeated.authorKeys, ['OL5A']);
});

test('cover -1 is no cover, and the first real cover id gives the URL', (t) => {
  t.is(edition(parseOlLine(line('/type/edition', '/books/OL1M', 1, { title: 'T', covers: [-1] }))).coverUrl, null);
  t.is(
    edition(parseOlLine(line('/type/edition', '/books/OL1M', 1, { title: 'T', covers: [-1, 42] }))).coverUrl,
    'https://covers.openlibrary.org/b/id/42-M.jpg',
  );
});

test('hyphenated ISBNs are repaired, invalid ones are reported and never used', (t) => {
  const hyphenated = edition(parseOlLine(line('/type/edition', '/books/OL1M', 1, { title: 'T', isbn_10: ['0-439-02348-3'] })));
  t.deepEqual(hyphenated.isbn, { isbn13: '9780439023481', isbn10: '0439023483' });
  t.true(hyphenated.isbnRepaired);
  const invalid = edition(
    parseOlLine(line('/type/edition', '/books/OL1M', 1, { title: 'T', isbn_10: ['0439023484'], isbn_13: ['97804390234'] })),
  );
  t.is(invalid.isbn, null);
  t.deepEqual(invalid.invalidIsbns, ['97804390234', '0439023484']);
  const oneGood = edition(
    parseOlLine(line('/type/edition', '/books/OL1M', 1, { title: 'T', isbn_13: ['9780439023482'], isbn_10: ['0439023483'] })),
  );
  t.is(oneGood.isbn?.isbn13, '9780439023481');
  t.false(oneGood.isbnRepaired);
});

test('goodreads, OCLC and LCCN identifiers are kept once each', (t) => {
  const found = edition(
    parseOlLine(
      line('/type/edition', '/books/OL1M', 1, {
        title: 'T',
        identifiers: { goodreads: ['123', '123'], librarything: ['9'] },
        oclc_numbers: ['77'],
        lccn: ['2001012345'],
      }),
    ),
  );
  t.deepEqual(found.identifiers, [
    { scheme: 'openlibrary', value: 'OL1M' },
    { scheme: 'goodreads', value: '123' },
    { scheme: 'oclc', value: '77' },
    { scheme: 'lccn', value: '2001012345' },
  ]);
});

test('author remote ids and alternate names are mapped', (t) => {
  const found = author(
    parseOlLine(
      line('/type/author', '/authors/OL23919A', 5, {
        name: 'J. K. Rowling',
        personal_name: 'Joanne Rowling',
        alternate_names: ['J.K. Rowling', 'J. K. Rowling'],
        birth_date: '31 July 1965',
        remote_ids: { viaf: '116796842', wikidata: 'Q34660' },
      }),
    ),
  );
  t.deepEqual(found.alternateNames, ['J.K. Rowling', 'Joanne Rowling']);
  t.is(found.birthDate, '31 July 1965');
  t.deepEqual(
    found.identifiers.map((id) => id.scheme),
    ['openlibrary', 'viaf', 'wikidata'],
  );
});

test('redirects and deletes are read with the key they name', (t) => {
  t.like(
    record(
      parseOlLine(
        line('/type/redirect', '/works/OL1W', 3, { key: '/works/OL1W', location: '/works/OL2W', type: { key: '/type/redirect' } }),
      ),
    ),
    {
      type: 'redirect',
      key: 'OL1W',
      kind: 'work',
      location: 'OL2W',
    },
  );
  t.like(record(parseOlLine(line('/type/delete', '/books/OL9M', 2, { key: '/books/OL9M', type: { key: '/type/delete' } }))), {
    type: 'delete',
    key: 'OL9M',
    kind: 'edition',
  });
});

test('text the database cannot store is cleaned: NUL and lone surrogates', (t) => {
  const found = edition(parseOlLine('/type/edition\t/books/OL1M\t1\t2020\t{"title": "Bad\\u0000 \\ud800text"}'));
  t.is(found.title, 'Bad \uFFFDtext');
});

test('broken lines are rejected with the reason, other types are skipped', (t) => {
  t.deepEqual(parseOlLine('/type/edition\t/books/OL1M\t1\t{"title": "T"}'), { rejected: 'expected 5 tab-separated columns, found 4' });
  t.regex((parseOlLine('/type/edition\t/books/OL1M\t1\t2020\t{"title": "T"') as { rejected: string }).rejected, /^invalid JSON: /);
  t.deepEqual(parseOlLine('/type/edition\t/books/OL1M\tseven\t2020\t{"title": "T"}'), {
    rejected: 'revision "seven" is not a whole number',
  });
  t.deepEqual(parseOlLine('/type/edition\t/works/OL1W\t1\t2020\t{"title": "T"}'), {
    rejected: 'a /type/edition record under the work key /works/OL1W',
  });
  t.deepEqual(parseOlLine('/type/edition\t/books/OL1A\t1\t2020\t{"title": "T"}'), {
    rejected: 'key "/books/OL1A" is not an Open Library author, work or edition key',
  });
  t.deepEqual(parseOlLine('/type/edition\t/books/OL1M\t1\t2020\t{"publishers": ["P"]}'), { rejected: 'edition has no title' });
  t.deepEqual(parseOlLine('/type/redirect\t/works/OL1W\t1\t2020\t{"location": "/authors/OL2A"}'), {
    rejected: 'redirect to "/authors/OL2A" is not a work key',
  });
  t.deepEqual(parseOlLine('/type/subject\t/subjects/x\t1\t2020\t{}'), { skipped: 'type /type/subject is not catalogued' });
  t.is(parseOlLine('   '), null);
});

test('a bare key tells its kind', (t) => {
  t.is(olKeyKind('OL7353617M'), 'edition');
  t.is(olKeyKind('OL45804W'), 'work');
  t.is(olKeyKind('OL23919A'), 'author');
  t.is(olKeyKind('OL0M'), null);
  t.is(olKeyKind('ol1m'), null);
});

test('the generator writes real-format dumps, the same bytes for a seed, in the proportions of the real ones', async (t) => {
  const dirs = [await mkdtemp(join(tmpdir(), 'bookmeta-olgen-')), await mkdtemp(join(tmpdir(), 'bookmeta-olgen-'))];
  try {
    const [first, second] = [
      await generateOpenLibrary({ editions: 3000, seed: 9 }, dirs[0]!),
      await generateOpenLibrary({ editions: 3000, seed: 9 }, dirs[1]!),
    ];
    const text = (path: string) => readFileSync(path, 'utf8');
    for (const kind of ['authors', 'works', 'editions'] as const) t.is(text(first.files[kind]), text(second.files[kind]), kind);
    const counts = new Map<string, number>();
    let withoutIsbn = 0;
    let rejected = 0;
    for (const kind of ['authors', 'works', 'editions'] as const) {
      for (const line of text(first.files[kind]).split('\n').filter(Boolean)) {
        const parsed = parseOlLine(line);
        if (!parsed || !('record' in parsed)) {
          rejected += 1;
          continue;
        }
        counts.set(parsed.record.type, (counts.get(parsed.record.type) ?? 0) + 1);
        if (parsed.record.type === 'edition' && !parsed.record.edition.isbn) withoutIsbn += 1;
      }
    }
    const editions = counts.get('edition')!;
    t.true(editions > 2950 && editions <= 3000);
    t.is(counts.get('work'), 2100);
    t.is(counts.get('author'), 750);
    t.true(withoutIsbn / editions > 0.3 && withoutIsbn / editions < 0.4, `${withoutIsbn} without ISBN`);
    t.true(counts.get('redirect')! >= 0.03 * 5850 && counts.get('delete')! > 0);
    t.true(rejected > 0 && rejected < 20, `${rejected} broken lines`);
  } finally {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
});
