import { spawn } from 'node:child_process';
import test from 'ava';
import { projectPath } from '../src/paths.js';
import { createWorld, newKey, type TestWorld } from './helpers/env.js';
import { spawnServer } from './helpers/processes.js';

let world: TestWorld;
test.before(async () => {
  world = await createWorld();
});
test.after.always(() => world?.destroy());

/** The text of a log line of every shape: short, non-ASCII, and one far longer than the buffer. */
const lineText = (index: number): string =>
  `${index % 7 === 0 ? 'Brontë ☃ 𝄞 ' : ''}${'x'.repeat(index % 300)}${index === 1_500 ? 'long '.repeat(12_000) : ''}`;

/**
 * Runs `body` in a child process with `log`, the API server's logger, in scope; resolves with the
 * lines it wrote to stderr, read only from `stallMs` after its start (so its writes meet a full
 * pipe first) until it has ended.
 */
async function childLogLines(body: string, stallMs: number): Promise<string[]> {
  const script = `import { createLogger } from ${JSON.stringify(projectPath('src', 'log.ts'))};\nconst log = createLogger('info', { buffered: true });\n${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr.pause();
  await new Promise((resolve) => setTimeout(resolve, stallMs));
  let received = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  child.stderr.resume();
  await new Promise((resolve) => child.on('close', resolve));
  return received.split('\n').filter(Boolean);
}

for (const [ending, code] of [
  ['its work ends', ''],
  ['it calls process.exit', 'process.exit(0);'],
] as const) {
  test(`the server's log writes every line whole and in order, after a reader that stalled, when ${ending}`, async (t) => {
    const lines = await childLogLines(
      `const lineText = ${lineText.toString()};\nfor (let i = 0; i < 5000; i++) log.info({ n: i, text: lineText(i) }, 'line');\n${code}`,
      500,
    );
    t.is(lines.length, 5_000);
    const entries = lines.map((line) => JSON.parse(line) as { n: number; text: string; msg: string });
    t.true(entries.every((entry, index) => entry.n === index && entry.text === lineText(index) && entry.msg === 'line'));
  });
}

test('a served request leaves a JSON line with its request id, route, status and kid, and the secret nowhere, even when the server stops at once', async (t) => {
  const { kid, key, auth } = await newKey(world, 'log');
  const server = await spawnServer(world.env);
  const response = await fetch(`${server.url}/v1/isbn/9780306406157`, { headers: { ...auth, 'X-Request-Id': 'log-test-1' } });
  t.is(response.status, 404);
  server.child.kill('SIGTERM');
  t.is(await server.exited, 0);

  const requestLines = server.log.filter((line) => line.includes('"log-test-1"'));
  t.is(requestLines.length, 1);
  const entry = JSON.parse(requestLines[0]!) as Record<string, unknown>;
  t.like(entry, {
    level: 30,
    name: 'bookmeta',
    pid: server.child.pid,
    msg: 'request',
    requestId: 'log-test-1',
    method: 'GET',
    path: '/v1/isbn/9780306406157',
    status: 404,
    kid,
  });
  t.is(typeof entry.ms, 'number');
  t.false(server.log.join('\n').includes(key.split('_')[3]!), 'the secret never reaches the log');
});
