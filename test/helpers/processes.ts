import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { projectPath } from '../../src/paths.js';

/** Real processes of the CLI, run from source through tsx, as an operator would run `bookmeta`. */

const CLI = projectPath('loader', 'cli.ts');
const NODE_ARGS = ['--import', 'tsx', CLI];

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, collecting what it printed. */
export function runProcess(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function runCli(env: NodeJS.ProcessEnv, args: string[]): Promise<CliResult> {
  return runProcess(process.execPath, [...NODE_ARGS, ...args], { env, cwd: projectPath() });
}

/** A command left running, its output ignored: for a test that signals it (a kill -9 mid-way). */
export function spawnCli(env: NodeJS.ProcessEnv, args: string[]): { child: ChildProcess; exited: Promise<NodeJS.Signals | null> } {
  const child = spawn(process.execPath, [...NODE_ARGS, ...args], { env, cwd: projectPath(), stdio: 'ignore' });
  return { child, exited: new Promise((resolve) => child.on('exit', (_code, signal) => resolve(signal))) };
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Every line the server has written to stderr so far (its log). */
  log: string[];
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/** `bookmeta serve` in its own process; resolves once it logs the address it listens on. */
export function spawnServer(env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...NODE_ARGS, 'serve'], {
    env: { ...env, PORT: env.PORT ?? '0', LOG_LEVEL: 'info' },
    cwd: projectPath(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const log: string[] = [];
  // Exit is reported once stderr is read to its end, so `log` then holds every line.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stderr });
    // Generous: a loaded 2-core machine compiling the source with tsx can take tens of seconds.
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // so a failed start leaves no process behind to keep the test file alive
      reject(new Error(`server did not start within 60 s; its log:\n${log.slice(-10).join('\n')}`));
    }, 60_000);
    lines.on('line', (line) => {
      log.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'listening' && entry.url) {
          clearTimeout(timer);
          resolve({ url: entry.url, child, log, exited });
        }
      } catch {
        // not a log line
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening`));
    });
  });
}
