import test, { type ExecutionContext } from 'ava';
import { MATCH_THRESHOLD } from '../src/domain/matching.js';
import { matchRecord, openSearchWorld, type SearchWorld } from './helpers/search.js';
import { assertBadRequest } from './helpers/assertions.js';
import { shortCacheKeys, shortCached } from './helpers/cache.js';

let search: SearchWorld;

test.before(async () => {
  search = await openSearchWorld();
});
test.after.always(async () => {
  await search?.close();
});

const match = (body: Record<string, unknown>) => matchRecord(search, body);

const badRequest = async (t: ExecutionContext, body: string, message: string) =>
  assertBadRequest(t, await search.post('/v1/match', body), message, body);

test('a body without title or isbn is a 400 "title or isbn required"', async (t) => {
  await badRequest(t, '{}', 'title or isbn required');
  await badRequest(t, '{"title": "  ", "isbn": ""}', 'title or isbn required');
  await badRequest(t, '{"author": "Suzanne Collins"}', 'title or isbn required');
});

test('malformed JSON and bodies that are not objects are 400s', async (t) => {
  await badRequest(t, '{"title": ', 'malformed JSON body');
  await badRequest(t, '', 'request body must be a JSON object');
  await badRequest(t, '["The Hunger Games"]', 'request body must be a JSON object');
});

test('fields of the wrong type, unknown fields and an unusable lone ISBN are 400s naming the field', async (t) => {
  await badRequest(t, '{"title": 5}', 'title must be a string');
  await badRequest(t, '{"title": "Mort", "year": "1987"}', 'year must be an integer such as 1997');
  await badRequest(t, '{"title": "Mort", "year": 1987.5}', 'year must be an integer such as 1997');
  await badRequest(t, '{"title": "Mort", "author": ["Terry Pratchett"]}', 'author must be a string');
  await badRequest(t, '{"titel": "Mort"}', 'unknown field "titel": the fields are title, isbn, author, year, publisher');
  await badRequest(t, '{"isbn": "12345"}', 'isbn "12345" is not a valid ISBN-10 or ISBN-13, and there is no title to match instead');
});

test('a known ISBN decides, in any spelling', async (t) => {
  for (const isbn of ['0439023483', '978-0-439-02348-1']) {
    const result = await match({ isbn });
    t.is(result.match?.isbn_13, '9780439023481');
    t.is(result.confidence, 1);
    t.deepEqual(result.signals, { isbn: 'match', title: null, author: null, year: null, publisher: null });
  }
});

test('messy records find their book: series in parentheses, typos, case, a dropped article, surname-first initials, an illustrator credited', async (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [
      { title: 'harry poter and the sorcerers stone (Harry Potter, #1)', author: 'Rowling, JK; Mary GrandPre' },
      "Harry Potter and the Sorcerer's Stone",
    ],
    [{ title: 'Hunger Games', author: 'Collins, Suzanne', year: 2008 }, 'The Hunger Games'],
    [{ title: 'THE PERKS OF BEING A WALLFLOWER', author: 'S. Chbosky' }, 'The Perks of Being a Wallflower'],
    [{ title: 'Catching Fire', author: 'Suzanne Collins, Jane Illustrator' }, 'Catching Fire'],
    [{ title: 'Mockingjay' }, 'Mockingjay'],
  ];
  for (const [body, title] of cases) {
    const result = await match(body);
    t.is(result.match?.title, title, JSON.stringify(body));
    t.true(result.confidence >= MATCH_THRESHOLD);
  }
});

test('a dropped subtitle still matches, and the title signal says how close it is', async (t) => {
  const result = await match({ title: 'Wicked', author: 'Gregory Maguire' });
  t.is(result.match?.title, 'Wicked');
  t.is(result.signals.title, 0.97); // the title without its subtitle: a little less than the whole title
  t.is(result.signals.author, 1);
  t.is(result.signals.isbn, 'absent');
});

test("an ISBN that contradicts the title still decides, with lowered confidence, and the title's book is a mismatching candidate", async (t) => {
  const result = await match({ isbn: '0439023483', title: 'Catching Fire', author: 'Suzanne Collins' });
  t.is(result.match?.isbn_13, '9780439023481');
  t.is(result.signals.isbn, 'match');
  t.true(result.confidence >= MATCH_THRESHOLD && result.confidence < 0.9, String(result.confidence));
  const titled = result.candidates.find((candidate) => candidate.book.title === 'Catching Fire');
  t.is(titled?.signals.isbn, 'mismatch');
});

test('an ISBN no book has leaves the title to decide and is reported unknown; an invalid one is reported invalid', async (t) => {
  const unknown = await match({ isbn: '9780306406157', title: 'Catching Fire', author: 'Suzanne Collins' });
  t.is(unknown.match?.title, 'Catching Fire');
  t.is(unknown.signals.isbn, 'unknown');
  t.true(unknown.confidence < 1);
  const invalid = await match({ isbn: '9780306406158', title: 'Catching Fire', author: 'Suzanne Collins' });
  t.is(invalid.match?.title, 'Catching Fire');
  t.is(invalid.signals.isbn, 'invalid');
});

test('a book that is not in the catalogue matches nothing, even under a title the catalogue has', async (t) => {
  const madeUp = await match({ title: 'The Silent Orchard of Vellmar', author: 'Mirela Odenkirk' });
  t.is(madeUp.match, null);
  t.true(madeUp.confidence < MATCH_THRESHOLD);
  const sameTitleOtherAuthor = await match({ title: 'Catching Fire', author: 'Jane Austen' });
  t.is(sameTitleOtherAuthor.match, null);
  t.is(sameTitleOtherAuthor.candidates[0]?.book.title, 'Catching Fire');
  t.is(sameTitleOtherAuthor.signals.author, 0);
});

test('a title alone that is only near a catalogue title is no match; the title itself, or the near one with its author, is', async (t) => {
  const near = await match({ title: "The Prince's Bride" });
  t.is(near.match, null);
  t.is(near.candidates[0]?.book.title, 'The Princess Bride');
  t.is((await match({ title: 'the princess bride' })).match?.title, 'The Princess Bride');
  t.is((await match({ title: "The Prince's Bride", author: 'William Goldman' })).match?.title, 'The Princess Bride');
});

test('a title alone misspelt into words no catalogue title holds is its book', async (t) => {
  t.is((await match({ title: 'Catchng Fier' })).match?.title, 'Catching Fire');
  t.is((await match({ title: 'Alleigant' })).match?.title, 'Allegiant');
});

test('the answer carries the best match, its confidence and signals, and up to five candidates of distinct works, best first', async (t) => {
  const result = await match({ title: 'Harry Potter', author: 'J.K. Rowling' });
  t.deepEqual(Object.keys(result).sort(), ['candidates', 'confidence', 'match', 'signals']);
  t.true(result.candidates.length > 1 && result.candidates.length <= 5);
  const works = result.candidates.map((candidate) => candidate.book.work_id);
  t.is(new Set(works).size, works.length);
  const confidences = result.candidates.map((candidate) => candidate.confidence);
  t.deepEqual(
    confidences,
    [...confidences].sort((a, b) => b - a),
  );
  t.is(result.confidence, confidences[0]!);
  t.deepEqual(result.signals, result.candidates[0]!.signals);
  const record: unknown = await (await search.get(`/v1/books/${result.candidates[0]!.book.id}`)).json();
  t.deepEqual(result.candidates[0]!.book, record);
});

test('a match answer is kept in the short cache, for the short cache lifetime', async (t) => {
  await match({ title: 'Into the Wild', author: 'Jon Krakauer' });
  t.true(await shortCached(search.world, 'match:*Into the Wild*'));
  const keys = await shortCacheKeys(search.world, 'match:*Into the Wild*');
  t.is(keys.length, 1);
  const ttl = await search.world.redis.ttl(keys[0]!);
  t.true(ttl > search.world.config.shortCacheTtlS - 10 && ttl <= search.world.config.shortCacheTtlS, `TTL ${ttl} s`);
});

test("the author's books that share a title word are candidates when another word has more typos than the index tolerates", async (t) => {
  const result = await match({ title: 'Gone Grli', author: 'Gillian Flynn' });
  t.is(result.match?.title, 'Gone Girl');
});

test('over the index, the typo case matches and the other ending does not', async (t) => {
  t.is((await match({ title: 'Ecilpes', author: 'Meyer' })).match?.title, 'Eclipse');
  t.is((await match({ title: 'Breaking Dusk', author: 'Stephenie Meyer' })).match, null);
});
