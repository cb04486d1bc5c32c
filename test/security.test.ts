import { createConnection } from 'node:net';
import test from 'ava';
import { loadConfig } from '../src/config.js';
import { useApi } from './helpers/env.js';

/**
 * What a key holder, or anyone, can get out of the service beyond what the contract allows (issue
 * 34), each finding closed and held closed by a test.
 */

const PUBLIC_URL = 'https://books.example.org/catalogue';
const api = useApi(test, { server: { publicUrl: PUBLIC_URL } });

/** The raw answer to raw bytes, as Node's parser refuses them before the app sees them. */
function rawAnswer(url: string, request: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = createConnection({ host: '127.0.0.1', port: Number(port) }, () => socket.write(request));
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

test('every answer says X-Content-Type-Options: nosniff, from the app, the docs page and the HTTP parser alike', async (t) => {
  const answers = [
    await fetch(`${api.server.url}/health`),
    await fetch(`${api.server.url}/openapi.json`),
    await fetch(`${api.server.url}/docs`),
    await fetch(`${api.server.url}/v1/isbn/9780439023481`),
    await api.get('/v1/isbn/9780439023481'),
    await api.get('/v1/isbn/123'),
    await api.get('/no/such/route'),
  ];
  for (const answer of answers) {
    await answer.arrayBuffer();
    t.is(answer.headers.get('x-content-type-options'), 'nosniff', `${answer.url}: ${answer.status}`);
  }
  t.deepEqual(
    answers.map((answer) => answer.status),
    [200, 200, 200, 401, 404, 400, 404],
  );
  const malformed = await rawAnswer(api.server.url, 'BREW / HTCPCP/1.0\r\n\r\n');
  t.regex(malformed, /^HTTP\/1\.1 400 /);
  t.regex(malformed, /\r\nX-Content-Type-Options: nosniff\r\n/i);
});

test('the reconciliation manifest builds its URLs from PUBLIC_URL, whatever Host the request names', async (t) => {
  const manifest = (await (await fetch(`${api.server.url}/reconcile`, { headers: { Host: 'attacker.example' } })).json()) as {
    identifierSpace: string;
    view: { url: string };
    documentation: string;
    suggest: { property: { service_url: string } };
  };
  t.is(manifest.identifierSpace, `${PUBLIC_URL}/v1/`);
  t.is(manifest.view.url, `${PUBLIC_URL}/v1/books/{{id}}`);
  t.is(manifest.documentation, `${PUBLIC_URL}/docs`);
  t.is(manifest.suggest.property.service_url, PUBLIC_URL);
  t.notRegex(JSON.stringify(manifest), /attacker/);
});

test('PUBLIC_URL is an http(s) base URL, taken without its trailing slash; anything else stops the start', (t) => {
  t.is(loadConfig({ PUBLIC_URL: 'https://books.example.org/catalogue/' }).publicUrl, PUBLIC_URL);
  t.is(loadConfig({}).publicUrl, null);
  for (const wrong of ['books.example.org', 'ftp://books.example.org', 'https://books.example.org/?a=1'])
    t.throws(() => loadConfig({ PUBLIC_URL: wrong }), { message: /PUBLIC_URL must be an http\(s\) URL/ });
});
