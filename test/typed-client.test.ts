import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import test from 'ava';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { projectPath } from '../src/paths.js';
import { GENEROUS_STORE_WAIT, newKey } from './helpers/env.js';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';

// A typed client comes for free: types generated from /openapi.json by openapi-typescript, a small
// client written with openapi-fetch against them, type-checked strictly, then run on a live server.
// A description a generator cannot type (or types wrongly) fails here.

let search: SearchWorld;
let dir: string;

test.before(async () => {
  // The generated client under test does not retry a 503: the wait is the generous one.
  search = await openSearchWorld(undefined, GENEROUS_STORE_WAIT);
  // Inside the project, so the client resolves openapi-fetch from its node_modules.
  dir = await mkdtemp(projectPath('.typed-client-'));
});
test.after.always(async () => {
  await search?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The client an app would write: every call typed by the generated `paths`, no cast anywhere. */
const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

export async function tour(baseUrl: string, key: string, isbn: string) {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${key}\` } });

  const lookup = await client.GET('/v1/isbn/{isbn}', { params: { path: { isbn } } });
  const title: string | undefined = lookup.data?.title;

  const found = await client.GET('/v1/books/search', { params: { query: { q: 'hunger games', facets: 'language', limit: 5 } } });
  const firstHit: string | undefined = found.data?.results[0]?.book.id;
  const languages: number | undefined = found.data?.facets?.language?.length;

  const matched = await client.POST('/v1/match', { body: { title: 'The Hunger Games', author: 'Suzanne Collins' } });
  const confidence: number | undefined = matched.data?.confidence;

  const bulk = await client.POST('/v1/isbn/batch', { body: { isbns: [isbn, '12345'] }, params: { query: { fields: 'title' } } });
  const statuses: number[] = bulk.data?.results.map((item) => item.status) ?? [];

  let since = '0';
  let pages = 0;
  let changes = 0;
  for (;;) {
    const page = await client.GET('/v1/changes', { params: { query: { since, limit: 500 } } });
    if (!page.data) throw new Error(\`changes: \${page.response.status}\`);
    changes += page.data.changes.length;
    pages += 1;
    since = page.data.next;
    if (!page.data.has_more) break;
  }

  const missing = await client.GET('/v1/isbn/{isbn}', { params: { path: { isbn: '9780306406157' } } });
  const missingCode: string | undefined = missing.error?.error.code;

  return { title, firstHit, languages, confidence, statuses, pages, changes, missingCode };
}
`;

test('a client generated from /openapi.json with openapi-typescript type-checks with openapi-fetch and runs against the live server', async (t) => {
  const document = await (await fetch(`${search.server.url}/openapi.json`)).text();
  const schema = astToString(await openapiTS(document));
  await writeFile(path.join(dir, 'schema.ts'), schema);
  await writeFile(path.join(dir, 'client.ts'), CLIENT);

  const program = ts.createProgram([path.join(dir, 'client.ts')], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  });
  const problems = ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => `${diagnostic.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
  t.deepEqual(problems, []);

  const { key } = await newKey(search.world, 'typed client');
  const { rows } = await search.world.db.query<{ isbn_13: string }>(`select isbn_13 from books where title = 'The Hunger Games' limit 1`);
  const { tour } = (await import(pathToFileURL(path.join(dir, 'client.ts')).href)) as {
    tour: (baseUrl: string, key: string, isbn: string) => Promise<Record<string, unknown>>;
  };
  const { rows: counted } = await search.world.db.query<{ n: number }>('select count(*)::int as n from changes');
  const answers = await tour(search.server.url, key, rows[0]!.isbn_13);
  t.like(answers, { title: 'The Hunger Games', statuses: [200, 400], changes: counted[0]!.n, missingCode: 'not_found' });
  t.regex(String(answers.firstHit), /^bk_/);
  t.true(Number(answers.languages) > 0);
  t.true(Number(answers.confidence) > 0.5);
  t.true(Number(answers.pages) > 1);
});
