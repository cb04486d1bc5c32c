import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { pino } from 'pino';
import { loggerOptions, requestLogger, type RequestLogEntry } from '../src/log.js';
import { ChunkedDestination } from '../src/logDestination.js';
import { projectPath } from '../src/paths.js';
import { createWorld, newKey, type TestWorld } from './helpers/env.js';
import { spawnServer } from './helpers/processes.js';

let world: TestWorld;
test.before(async () => {
  world = await createWorld();
});
test.after.always(() => world?.destroy());

/** Lines of every shape a log holds: short, non-ASCII, and one far longer than a chunk. */
const sampleLines = (): string[] =>
  Array.from({ length: 3_000 }, (_, index) => {
    if (index === 1_500) return `${'long '.repeat(12_000)}\n`;
    return `line ${index} ${index % 7 === 0 ? 'Brontë ☃ 𝄞 ' : ''}${'x'.repeat(index % 300)}\n`;
  });

/** Runs `body` in a child process whose stdout is a non-blocking pipe (touching process.stdout makes it one). */
function childWriting(body: string) {
  const script = `import { ChunkedDestination } from ${JSON.stringify(projectPath('src', 'logDestination.ts'))};\nvoid process.stdout;\n${body}`;
  return spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', script], { stdio: ['ignore', 'pipe', 'inherit'] });
}

/** The lines a child writes to stdout, read only from `stallMs` after its start, once it has ended. */
async function linesReadAfter(child: ReturnType<typeof childWriting>, stallMs: number): Promise<string[]> {
  child.stdout.pause();
  await new Promise((resolve) => setTimeout(resolve, stallMs));
  let received = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  child.stdout.resume();
  await new Promise((resolve) => child.on('close', resolve));
  return received.split('\n').filter(Boolean);
}

test('the request line is the one pino would write, for any path and with or without a kid', (t) => {
  const written: string[] = [];
  const log = pino(loggerOptions('info'), { write: (line: string) => written.push(line) });
  const entries: RequestLogEntry[] = [
    { requestId: 'abc-1', method: 'GET', path: '/v1/isbn/9780306406157', status: 200, ms: 0.4, kid: 'k1a2b3c4d5e6' },
    { requestId: 'abc-2', method: 'POST', path: '/v1/"quoted"\\back/Brontë/☃', status: 404, ms: 12.5, kid: undefined },
  ];
  const logRequest = requestLogger(log);
  for (const entry of entries) {
    logRequest(entry);
    log.info({ ...entry }, 'request');
  }
  t.is(written.length, 4);
  const withoutTime = (line: string) => ({ ...(JSON.parse(line) as object), time: 0 });
  for (let index = 0; index < written.length; index += 2) {
    t.true(written[index]!.endsWith('\n'));
    t.deepEqual(withoutTime(written[index]!), withoutTime(written[index + 1]!));
  }
  t.false('kid' in (JSON.parse(written[2]!) as object), 'an absent kid is left out, as pino leaves out undefined');
});

test('no request line is written when the level is above info', (t) => {
  const written: string[] = [];
  requestLogger(pino(loggerOptions('warn'), { write: (line: string) => written.push(line) }))({ requestId: 'r', method: 'GET', path: '/', status: 200, ms: 1, kid: undefined });
  t.deepEqual(written, []);
});

test('the chunked destination writes every line whole and in order, including one longer than a chunk', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'bookmeta-log-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'log');
  const fd = openSync(file, 'w');
  const destination = new ChunkedDestination(fd);
  const lines = sampleLines();
  for (const line of lines) destination.write(line);
  destination.flush();
  const expected = lines.join('');
  const deadline = Date.now() + 5_000;
  let content = '';
  while (Date.now() < deadline && content.length < expected.length) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    content = await readFile(file, 'utf8');
  }
  closeSync(fd);
  t.is(content, expected);
});

test('a reader that stops reading for a while loses no line: writes wait while the pipe is full', async (t) => {
  // The child's pipe is left unread at first, so its writes meet a full pipe.
  const child = childWriting(`
    const destination = new ChunkedDestination(1);
    for (let i = 0; i < 20000; i++) destination.write('line ' + i + ' ' + 'x'.repeat(i % 100) + '\\n');
    destination.flush();
    setTimeout(() => {}, 3000);
  `);
  const lines = await linesReadAfter(child, 500);
  t.is(lines.length, 20_000);
  t.true(lines.every((line, index) => line === `line ${index} ${'x'.repeat(index % 100)}`));
});

test('a reader that never catches up costs bounded memory: later lines are dropped and counted in a line of their own', async (t) => {
  // 2,000 lines of 100 bytes against a bound of 64 KB, while nobody reads: most must be dropped.
  const child = childWriting(`
    const destination = new ChunkedDestination(1, 64 * 1024);
    for (let i = 0; i < 2000; i++) destination.write('line ' + String(i).padStart(4, '0') + ' ' + 'x'.repeat(89) + '\\n');
    destination.flush();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    destination.write('after the stall\\n');
    destination.flush();
    setTimeout(() => {}, 500);
  `);
  const lines = await linesReadAfter(child, 1_000);
  const kept = lines.filter((line) => line.startsWith('line '));
  t.true(kept.length > 0 && kept.length < 2_000);
  t.true(kept.every((line, index) => line.startsWith(`line ${String(index).padStart(4, '0')} `)), 'the earliest lines are the ones kept, in order');
  const report = JSON.parse(lines.at(-2)!) as { level: number; dropped: number };
  t.is(report.level, 40);
  t.is(report.dropped, 2_000 - kept.length);
  t.is(lines.at(-1), 'after the stall');
});

test('the last flush at exit gives up on a pipe nobody reads instead of holding the process', async (t) => {
  const child = childWriting(`
    const destination = new ChunkedDestination(1);
    for (let i = 0; i < 20000; i++) destination.write('x'.repeat(99) + '\\n');
    destination.flushSync();
    process.exit(0);
  `);
  child.stdout.pause(); // never read
  const started = Date.now();
  const code = await new Promise((resolve) => child.on('exit', resolve));
  t.is(code, 0);
  t.true(Date.now() - started < 10_000);
  child.stdout.destroy();
});

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
  t.like(entry, { level: 30, name: 'bookmeta', pid: server.child.pid, msg: 'request', requestId: 'log-test-1', method: 'GET', path: '/v1/isbn/9780306406157', status: 404, kid });
  t.is(typeof entry.ms, 'number');
  t.false(server.log.join('\n').includes(key.split('_')[3]!), 'the secret never reaches the log');
});
