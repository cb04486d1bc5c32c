import test, { type ExecutionContext } from 'ava';
import type { RunningServer } from '../src/server.js';
import type { Candidate } from '../src/services/reconcile.js';
import { GENEROUS_STORE_WAIT, newKey, startTestServer } from './helpers/env.js';
import { reconciliationExamples, reconciliationSchemas, type ReconciliationSchemas } from './helpers/reconciliation.js';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';
import { meteredCalls } from './helpers/usage.js';

// /reconcile as OpenRefine meets it: the manifest without a key, query batches with one, checked
// against the W3C 0.2 schemas and answered by the same matching as /v1/match.

let search: SearchWorld;
let schemas: ReconciliationSchemas;
let auth: { Authorization: string };

test.before(async () => {
  // Its requests are OpenRefine's, which do not retry a 503 (and its budget and metering tests count
  // each one): the wait is the generous one.
  [search, schemas] = await Promise.all([openSearchWorld(undefined, GENEROUS_STORE_WAIT), reconciliationSchemas()]);
  ({ auth } = await newKey(search.world, 'openrefine'));
});
test.after.always(async () => {
  await search?.close();
});

type ResultBatch = Record<string, { result: Candidate[] }>;

/** A query batch as OpenRefine posts it: the form field `queries`. */
const postForm = (server: RunningServer, batch: unknown, headers: Record<string, string> = auth): Promise<Response> =>
  fetch(`${server.url}/reconcile`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ queries: JSON.stringify(batch) }),
  });

async function reconcile(t: ExecutionContext, batch: unknown): Promise<ResultBatch> {
  const response = await postForm(search.server, batch);
  t.is(response.status, 200, await response.clone().text());
  const results = (await response.json()) as ResultBatch;
  t.true(schemas.resultBatch(results), JSON.stringify(schemas.resultBatch.errors));
  return results;
}

test('the manifest is public, valid against the 0.2 schema, and asks for the Bearer key in the Authorization header', async (t) => {
  const response = await fetch(`${search.server.url}/reconcile`);
  t.is(response.status, 200);
  t.is(response.headers.get('access-control-allow-origin'), '*');
  t.is(response.headers.get('ratelimit-limit'), null);
  const manifest = (await response.json()) as Record<string, unknown>;
  t.true(schemas.manifest(manifest), JSON.stringify(schemas.manifest.errors));
  t.deepEqual(manifest.versions, ['0.2']);
  t.deepEqual(manifest.authentication, {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'Your bookmeta API key, written as "Bearer svc_live_<kid>_<secret>" (the same key and budget as /v1).',
  });
  t.deepEqual(manifest.view, { url: `${search.server.url}/v1/books/{{id}}` });
  t.deepEqual(
    (manifest.defaultTypes as { id: string }[]).map((type) => type.id),
    ['book', 'work', 'author'],
  );
  t.is(manifest.batchSize, 50);
  // The validator is the real one: the schema's own invalid manifests fail it.
  for (const [name, invalid] of await reconciliationExamples('manifest', 'invalid')) t.false(schemas.manifest(invalid), name);

  const suggest = manifest.suggest as { property: { service_url: string; service_path: string } };
  const properties = await fetch(`${suggest.property.service_url}${suggest.property.service_path}?prefix=pub`);
  t.is(properties.status, 200);
  t.deepEqual(
    ((await properties.json()) as { result: { id: string }[] }).result.map((property) => property.id),
    ['publisher'],
  );
  const all = (await (await fetch(`${suggest.property.service_url}${suggest.property.service_path}`)).json()) as {
    result: { id: string }[];
  };
  t.deepEqual(
    all.result.map((property) => property.id),
    ['author', 'isbn', 'year', 'publisher'],
  );
});

test('queries need the key, in every form, and a browser on another origin may send it (preflight answered without a key)', async (t) => {
  const batch = { q0: { query: 'The Hunger Games' } };
  const refused = await postForm(search.server, batch, {});
  t.is(refused.status, 401);
  t.is(refused.headers.get('access-control-allow-origin'), '*');
  t.is(((await refused.json()) as { error: { code: string } }).error.code, 'unauthorized');
  t.is((await fetch(`${search.server.url}/reconcile?queries=${encodeURIComponent(JSON.stringify(batch))}`)).status, 401);
  t.is((await postForm(search.server, batch, { Authorization: 'svc_live_notakey' })).status, 401);

  const preflight = await fetch(`${search.server.url}/reconcile`, {
    method: 'OPTIONS',
    headers: {
      Origin: 'http://127.0.0.1:3333',
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization',
    },
  });
  t.is(preflight.status, 204);
  t.is(preflight.headers.get('access-control-allow-origin'), '*');
  t.regex(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/);
  t.regex(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
});

test('a batch is answered alike from the form field, a JSON body and GET ?queries=', async (t) => {
  const batch = {
    q0: { query: 'Mockingjay', properties: [{ pid: 'author', v: 'Suzanne Collins' }] },
    q1: { query: 'Suzanne Collins', type: 'author' },
  };
  const fromForm = await reconcile(t, batch);
  const fromJson = await fetch(`${search.server.url}/reconcile`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify(batch),
  });
  t.is(fromJson.status, 200);
  t.deepEqual(await fromJson.json(), fromForm);
  const fromGet = await fetch(`${search.server.url}/reconcile?queries=${encodeURIComponent(JSON.stringify(batch))}`, { headers: auth });
  t.is(fromGet.status, 200);
  t.deepEqual(await fromGet.json(), fromForm);
});

test('a query with a word split at its apostrophe is reconciled as the word written whole', async (t) => {
  const results = await reconcile(t, {
    q0: { query: 'the handmaid s tale', properties: [{ pid: 'author', v: 'margaret atwood' }] },
    q1: { query: 'madeleine l engle', type: 'author' },
  });
  t.like(results.q0?.result[0], { name: "The Handmaid's Tale", match: true });
  t.is(results.q1?.result[0]?.name, "Madeleine L'Engle");
});

test('every valid example query batch of the 0.2 schemas gets a 200 and a valid result batch; every invalid one a 400 naming the problem', async (t) => {
  const valid = await reconciliationExamples('reconciliation-query-batch', 'valid');
  t.true(valid.length >= 4);
  for (const [name, batch] of valid) {
    t.true(schemas.queryBatch(batch), name);
    const results = await reconcile(t, batch);
    t.deepEqual(Object.keys(results).sort(), Object.keys(batch as object).sort(), name);
  }
  const messages: Record<string, string> = {
    'empty-properties.json': 'queries.q1: query or a non-empty properties is required',
    'empty-query.json': 'queries.q1: query or a non-empty properties is required',
    'misnamed-property.json': 'queries.q0: Unrecognized key: "props"',
  };
  for (const [name, batch] of await reconciliationExamples('reconciliation-query-batch', 'invalid')) {
    t.false(schemas.queryBatch(batch), name);
    const response = await postForm(search.server, batch);
    t.is(response.status, 400, name);
    t.deepEqual(await response.json(), { error: { code: 'bad_request', message: messages[name] } }, name);
  }
  for (const [body, message] of [
    ['queries=%7B', 'queries is not valid JSON'],
    ['q=1', 'form field queries is required: queries=<JSON query batch>'],
    [`queries=${encodeURIComponent('[1]')}`, 'queries: must be a JSON object of queries {"q0": {"query": "..."}}'],
    [`queries=${encodeURIComponent('{"q0": {"query": "x", "limit": 0}}')}`, 'queries.q0.limit: Too small: expected number to be >0'],
  ]) {
    const response = await fetch(`${search.server.url}/reconcile`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/x-www-form-urlencoded' },
      body,
    });
    t.is(response.status, 400, body);
    t.deepEqual(await response.json(), { error: { code: 'bad_request', message } }, body);
  }
});

test('books are matched as /v1/match matches them: score is its confidence out of 100, match only where it matches, its signals as features', async (t) => {
  const records = {
    hunger: { title: 'The Hunger Games', author: 'Suzanne Collins', year: 2008 },
    potter: { title: "harry potter and the sorcerer's stone", author: 'Rowling, J.K.' },
    isbnOnly: { isbn: '0439023483' },
    absent: { title: 'The Collected Letters of Nobody in Particular' },
  };
  const results = await reconcile(t, {
    hunger: {
      query: records.hunger.title,
      type: 'book',
      limit: 3,
      properties: [
        { pid: 'author', v: records.hunger.author },
        { pid: 'year', v: '2008' },
      ],
    },
    potter: { query: records.potter.title, properties: [{ pid: 'Author', v: [records.potter.author] }] },
    isbnOnly: { properties: [{ pid: 'isbn', v: records.isbnOnly.isbn }] },
    absent: { query: records.absent.title },
  });
  for (const [id, record] of Object.entries(records)) {
    const single = (await (await search.post('/v1/match', JSON.stringify(record))).json()) as {
      match: { id: string } | null;
      confidence: number;
      candidates: { book: { id: string }; confidence: number }[];
    };
    const result = results[id]!.result;
    t.deepEqual(
      result.map((candidate) => candidate.id),
      single.candidates.slice(0, 3).map((candidate) => candidate.book.id),
      id,
    );
    t.deepEqual(
      result.map((candidate) => candidate.score),
      single.candidates.slice(0, 3).map((candidate) => Math.round(candidate.confidence * 1000) / 10),
      id,
    );
    t.deepEqual(
      result.map((candidate) => candidate.match),
      result.map((_, index) => index === 0 && single.match !== null),
      id,
    );
    for (const candidate of result) t.deepEqual(candidate.type, [{ id: 'book', name: 'Book' }]);
  }
  t.true(results.hunger!.result[0]!.match);
  t.is(results.hunger!.result[0]!.name, 'The Hunger Games');
  t.regex(results.hunger!.result[0]!.description ?? '', /Suzanne Collins · 2008/);
  t.deepEqual(
    results.hunger!.result[0]!.features.map((feature) => feature.id),
    ['confidence', 'title', 'author', 'year'],
  );
  t.true(results.potter!.result[0]!.match);
  t.true(results.isbnOnly!.result[0]!.match);
  t.true(results.isbnOnly!.result[0]!.features.some((feature) => feature.id === 'isbn' && feature.value === true));
  t.false(results.absent!.result.some((candidate) => candidate.match));
});

test('works and authors are types of their own; a type the service does not have gets no candidates', async (t) => {
  const results = await reconcile(t, {
    work: { query: 'Catching Fire', type: 'work', properties: [{ pid: 'author', v: { id: 'x', name: 'Suzanne Collins' } }] },
    author: { query: 'Collins, Suzanne', type: ['author'], limit: 2 },
    initials: { query: 'JK Rowling', type: 'author' },
    person: { query: 'Suzanne Collins', type: 'DifferentiatedPerson' },
  });
  const work = results.work!.result[0]!;
  t.regex(work.id, /^wk_/);
  t.is(work.name, 'Catching Fire');
  t.true(work.match);
  t.deepEqual(work.type, [{ id: 'work', name: 'Work' }]);
  const author = results.author!.result;
  t.true(author.length >= 1 && author.length <= 2);
  t.is(author[0]!.name, 'Suzanne Collins');
  t.regex(author[0]!.id, /^au_/);
  t.true(author[0]!.match);
  t.is(author[0]!.score, 100);
  t.true(results.initials!.result[0]!.match);
  t.regex(results.initials!.result[0]!.name, /Rowling/);
  t.deepEqual(results.person!.result, []);
});

test("each query draws one unit of the key's budget; a batch the budget cannot cover is refused whole with 429 and Retry-After; queries are metered like /v1", async (t) => {
  const server = await startTestServer(search.world, { rateLimitMax: 10 });
  t.teardown(() => server.stop());
  const { kid, auth: budgeted } = await newKey(search.world, 'budget');
  const queries = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`q${i}`, { query: `Mockingjay ${i}` }]));

  const four = await postForm(server, queries(4), budgeted);
  t.is(four.status, 200);
  t.is(four.headers.get('ratelimit-remaining'), '6');
  const seven = await postForm(server, queries(7), budgeted);
  t.is(seven.status, 429);
  t.true(Number(seven.headers.get('retry-after')) >= 1);
  t.is(seven.headers.get('access-control-allow-origin'), '*');
  t.regex(((await seven.json()) as { error: { message: string } }).error.message, /a batch of 7 items needs 7 requests/);
  const manifest = await fetch(`${server.url}/reconcile`);
  t.is(manifest.status, 200);
  // The refused batch took nothing: six units are still there, for six queries.
  const six = await postForm(server, queries(6), budgeted);
  t.is(six.status, 200);
  t.is(six.headers.get('ratelimit-remaining'), '0');
  t.is((await postForm(server, queries(1), budgeted)).status, 429);

  await server.services.meter?.flush();
  t.deepEqual(await meteredCalls(search.world.db, kid), [
    { method: 'POST', route: '/reconcile', status: 200 },
    { method: 'POST', route: '/reconcile', status: 429 },
    { method: 'POST', route: '/reconcile', status: 200 },
    { method: 'POST', route: '/reconcile', status: 429 },
  ]);
});

test("a batch larger than the manifest's batchSize is a 413", async (t) => {
  const batch = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`q${i}`, { query: 'Mockingjay' }]));
  const response = await postForm(search.server, batch);
  t.is(response.status, 413);
  t.deepEqual(await response.json(), {
    error: { code: 'payload_too_large', message: "51 queries in one batch; at most 50 (the manifest's batchSize)" },
  });
});

test('a batch that names no query is a 400 saying so, in every form, and is one request of the budget like any batch that cannot be read', async (t) => {
  const server = await startTestServer(search.world, { rateLimitMax: 10 });
  t.teardown(() => server.stop());
  const { auth: budgeted } = await newKey(search.world, 'empty');
  const answers = [
    await postForm(server, {}, budgeted),
    await fetch(`${server.url}/reconcile`, { method: 'POST', headers: { ...budgeted, 'Content-Type': 'application/json' }, body: '{}' }),
    await fetch(`${server.url}/reconcile?queries=${encodeURIComponent('{}')}`, { headers: budgeted }),
  ];
  for (const [index, response] of answers.entries()) {
    t.is(response.status, 400, String(index));
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    t.is(error.code, 'bad_request');
    t.regex(error.message, /names no query/);
    t.is(response.headers.get('ratelimit-remaining'), String(9 - index));
  }
});
