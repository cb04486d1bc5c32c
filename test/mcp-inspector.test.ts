import test from 'ava';
import { projectPath } from '../src/paths.js';
import { loadSampleCatalogue } from './helpers/catalogue.js';
import { useApi } from './helpers/env.js';
import { runProcess, type CliResult } from './helpers/processes.js';

/**
 * The MCP Inspector's command-line mode against a running server, as a developer would point it at
 * the service. The installed devDependency is run directly: no download at test time.
 */
const INSPECTOR = projectPath('node_modules', '.bin', 'mcp-inspector');

const api = useApi(test, { prepare: loadSampleCatalogue });

function inspector(args: string[]): Promise<CliResult> {
  return runProcess(INSPECTOR, ['--cli', `${api.server.url}/mcp`, '--transport', 'http', ...args]);
}

const withKey = (): string[] => ['--header', `Authorization: ${api.auth.Authorization}`];

test('the Inspector CLI lists the tools, sending the key as an Authorization header', async (t) => {
  const run = await inspector([...withKey(), '--method', 'tools/list']);
  t.is(run.code, 0, run.stderr);
  const { tools } = JSON.parse(run.stdout) as { tools: { name: string; description: string; inputSchema: { type: string } }[] };
  t.true(tools.length >= 5);
  t.true(['lookup_isbn', 'get_book', 'get_work', 'get_author', 'list_changes'].every((name) => tools.some((tool) => tool.name === name)));
  t.true(tools.every((tool) => tool.description.length > 0 && tool.inputSchema.type === 'object'));
});

test('the Inspector CLI calls lookup_isbn and gets the JSON GET /v1/isbn answers', async (t) => {
  const run = await inspector([
    ...withKey(),
    '--method',
    'tools/call',
    '--tool-name',
    'lookup_isbn',
    '--tool-arg',
    'isbn=978-0-439-02348-1',
  ]);
  t.is(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout) as { content: { type: string; text: string }[]; isError?: boolean };
  t.falsy(result.isError);
  const expected = await (await api.get('/v1/isbn/9780439023481')).text();
  t.is(result.content[0]!.text, expected);
});

test("without a key the Inspector CLI cannot connect, and shows the API's 401 body", async (t) => {
  const run = await inspector(['--method', 'tools/list']);
  t.is(run.code, 1);
  t.true(
    run.stderr.includes('{"error":{"code":"unauthorized","message":"Authorization header is required: Bearer <API key>"}}'),
    run.stderr,
  );
});
