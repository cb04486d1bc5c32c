import test from 'ava';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { RunningServer } from '../src/server.js';
import { openSearchWorld, type SearchWorld } from './helpers/search.js';

let search: SearchWorld;
let server: RunningServer;
let document: { openapi: string; paths: Record<string, Record<string, unknown>> };
/** Validates JSON against the document's schemas, by JSON pointer into the document. */
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

test.before(async () => {
  search = await openSearchWorld();
  ({ server } = search);
  document = (await (await fetch(`${server.url}/openapi.json`)).json()) as typeof document;
  ajv.addSchema(document, 'openapi');
});
test.after.always(async () => {
  await search?.close();
});

test('/openapi.json is a valid OpenAPI 3.1 document', async (t) => {
  const validator = new Validator();
  const result = await validator.validate(document);
  t.deepEqual(result.errors ?? [], []);
  t.true(result.valid);
  t.is(validator.version, '3.1');
});

test('every authenticated operation documents 401, 429, 500 and 503 with the error schema', (t) => {
  for (const [path, operations] of Object.entries(document.paths)) {
    if (!path.startsWith('/v1')) continue;
    for (const [method, operation] of Object.entries(operations)) {
      const responses = (operation as { responses: Record<string, unknown> }).responses;
      for (const status of ['401', '429', '500', '503']) t.truthy(responses[status], `${method} ${path} ${status}`);
    }
  }
});

test('the Bearer scheme is declared and required by default', (t) => {
  const doc = document as unknown as { components: { securitySchemes: Record<string, { scheme: string }> }; security: unknown[] };
  t.is(doc.components.securitySchemes.bearer?.scheme, 'bearer');
  t.deepEqual(doc.security, [{ bearer: [] }]);
});

interface Operation {
  parameters?: {
    name: string;
    in: string;
    required?: boolean;
    // A path or query parameter's value is a scalar.
    example?: string | number | boolean;
    schema?: { maximum?: number; minimum?: number; example?: string | number | boolean };
  }[];
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

const operation = (template: string, method: string): Operation | undefined =>
  document.paths[template]?.[method.toLowerCase()] as Operation | undefined;

/** A JSON pointer into the document, as a URI fragment. */
const pointer = (...segments: string[]): string =>
  `openapi#/${segments.map((segment) => encodeURIComponent(segment.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/')}`;

/** The schema the document gives for an answer of `template` with `status`, or a failure saying it gives none. */
function answerSchema(template: string, method: string, status: number) {
  const documented = operation(template, method)?.responses[String(status)]?.content?.['application/json'];
  if (!documented) return null;
  return ajv.getSchema(
    pointer('paths', template, method.toLowerCase(), 'responses', String(status), 'content', 'application/json', 'schema'),
  )!;
}

const call = (path: string, init: { method?: string; body?: string } = {}) =>
  init.body === undefined ? search.get(path) : search.post(path, init.body);

test('real answers, found or not, have the shape the document gives for their route and status', async (t) => {
  const book = (await (await call('/v1/isbn/9780439023481')).json()) as { id: string; work_id: string; authors: { id: string }[] };
  const requests: [string, string, string, unknown?][] = [
    ['/v1/isbn/{isbn}', 'GET', '/v1/isbn/9780439023481'],
    ['/v1/isbn/{isbn}', 'GET', '/v1/isbn/12345'],
    ['/v1/isbn/{isbn}', 'GET', '/v1/isbn/9780306406157'],
    ['/v1/books/{id}', 'GET', `/v1/books/${book.id}`],
    ['/v1/books/{id}', 'GET', '/v1/books/bk_0000000000zz'],
    ['/v1/works/{id}', 'GET', `/v1/works/${book.work_id}`],
    ['/v1/authors/{id}', 'GET', `/v1/authors/${book.authors[0]!.id}`],
    ['/v1/authors/{id}', 'GET', '/v1/authors/wk_1'],
    ['/v1/changes', 'GET', '/v1/changes?since=0&limit=5'],
    ['/v1/changes', 'GET', '/v1/changes'],
    ['/v1/isbn/batch', 'POST', '/v1/isbn/batch', { isbns: ['9780439023481', '12345', '9780306406157'] }],
    ['/v1/isbn/batch', 'POST', '/v1/isbn/batch', { isbns: [] }],
    ['/v1/books/batch', 'POST', '/v1/books/batch', { ids: [book.id, 'bk_0000000000zz'] }],
    ['/v1/works/batch', 'POST', '/v1/works/batch', { ids: [book.work_id] }],
    ['/v1/authors/batch', 'POST', '/v1/authors/batch', { ids: [book.authors[0]!.id, 'x'] }],
    ['/v1/match/batch', 'POST', '/v1/match/batch', { records: 'none' }],
    ['/v1/books/search', 'GET', '/v1/books/search?q=hunger%20games&limit=3'],
    ['/v1/books/search', 'GET', '/v1/books/search?q=hunger&offset=990'],
    ['/v1/authors/search', 'GET', '/v1/authors/search?q=rowling'],
    ['/v1/books/{id}/recommendations', 'GET', `/v1/books/${book.id}/recommendations?limit=3`],
    ['/v1/books/{id}/recommendations', 'GET', '/v1/books/bk_0000000000zz/recommendations'],
  ];
  for (const [template, method, path, body] of requests) {
    const response = await call(path, body === undefined ? {} : { method, body: JSON.stringify(body) });
    const validate = answerSchema(template, method, response.status);
    if (!validate) {
      t.fail(`${method} ${path}: the document gives no schema for ${response.status}`);
      continue;
    }
    t.true(validate(await response.json()), `${method} ${path} ${response.status}: ${ajv.errorsText(validate.errors)}`);
  }
  const unauthorized = await fetch(`${server.url}/v1/changes?since=0`);
  t.true(answerSchema('/v1/changes', 'GET', 401)!(await unauthorized.json()));
});

/** A request that fills an operation's required parameters with their documented examples; null when one has none. */
function exampleRequest(template: string, op: Operation, query: Record<string, string>): string | null {
  const parameters = op.parameters ?? [];
  let path = template;
  const search = new URLSearchParams(query);
  for (const parameter of parameters) {
    const example = parameter.example ?? parameter.schema?.example;
    if (parameter.in === 'path') {
      if (example === undefined) return null;
      path = path.replace(`{${parameter.name}}`, encodeURIComponent(String(example)));
    } else if (parameter.in === 'query' && parameter.required && !(parameter.name in query)) {
      if (example === undefined) return null;
      search.set(parameter.name, String(example));
    }
  }
  return `${path}?${search}`;
}

test('every bound the document gives a query parameter is the one the route holds it to', async (t) => {
  let checked = 0;
  for (const [template, operations] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(operations as Record<string, Operation>)) {
      if (method !== 'get' || !template.startsWith('/v1/')) continue;
      for (const parameter of op.parameters ?? []) {
        const { maximum, minimum } = parameter.schema ?? {};
        for (const [value, allowed] of [
          [maximum, true],
          [maximum === undefined ? undefined : maximum + 1, false],
          [minimum, true],
          [minimum === undefined ? undefined : minimum - 1, false],
        ] as const) {
          if (value === undefined) continue;
          // The others that have a default at their least, so that a bound shared with them (offset + limit) is reachable.
          const others = (op.parameters ?? []).filter(
            (other) => other !== parameter && other.schema?.minimum !== undefined && 'default' in other.schema,
          );
          const path = exampleRequest(template, op, {
            ...Object.fromEntries(others.map((other) => [other.name, String(other.schema!.minimum)])),
            [parameter.name]: String(value),
          });
          if (path === null) continue;
          const response = await call(path);
          if (allowed) t.not(response.status, 400, `${path}: ${await response.text()}`);
          else {
            t.is(response.status, 400, path);
            t.regex(((await response.json()) as { error: { message: string } }).error.message, new RegExp(parameter.name), path);
          }
          checked += 1;
        }
      }
      for (const parameter of op.parameters ?? []) {
        if (!parameter.required || parameter.in !== 'query') continue;
        const path = exampleRequest(template, op, {});
        if (path === null) continue;
        const without = new URLSearchParams(path.split('?')[1]);
        without.delete(parameter.name);
        const response = await call(`${path.split('?')[0]}?${without}`);
        t.is(response.status, 400, `${template} without ${parameter.name}`);
        checked += 1;
      }
    }
  }
  t.log(`${checked} bounds checked`);
  t.true(checked >= 5);
});

test("every bound the document gives a batch body's list is the one the route holds it to", async (t) => {
  let checked = 0;
  for (const [template, operations] of Object.entries(document.paths)) {
    const body = (operations as Record<string, Operation>).post?.requestBody?.content['application/json']?.schema;
    if (!body?.$ref) continue;
    const schema = ajv.getSchema(`openapi${body.$ref}`)!.schema as {
      properties?: Record<string, { type?: string; minItems?: number; maxItems?: number }>;
    };
    for (const [field, list] of Object.entries(schema.properties ?? {})) {
      if (list.type !== 'array' || list.maxItems === undefined) continue;
      const items = (n: number) => Array.from({ length: n }, (_, i) => (field === 'records' ? { title: `Book ${i}` } : `k${i}`));
      const over = await call(template, { method: 'POST', body: JSON.stringify({ [field]: items(list.maxItems + 1) }) });
      t.is(over.status, 400, `${template} ${list.maxItems + 1} ${field}`);
      t.regex(((await over.json()) as { error: { message: string } }).error.message, new RegExp(`at most ${list.maxItems}`));
      const fewest = Math.max(0, (list.minItems ?? 1) - 1);
      const under = await call(template, { method: 'POST', body: JSON.stringify({ [field]: items(fewest) }) });
      t.is(under.status, 400, `${template} ${fewest} ${field}`);
      checked += 1;
    }
  }
  t.log(`${checked} lists checked`);
  t.true(checked >= 5);
});
