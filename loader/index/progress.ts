/**
 * Progress of a long load: on a terminal one line that updates in place (count, documents/s, ETA);
 * anywhere else (logs, CI, a pipe) a plain line every few seconds, so logs stay readable.
 */

export interface ProgressReporter {
  /** `done` more documents were acknowledged. */
  add(done: number): void;
  /** A better estimate of the total (a file read so far tells how many records the rest holds). */
  setTotal(total: number): void;
  /** Prints the final line. */
  finish(): void;
}

export interface ProgressOptions {
  label: string;
  /** Expected total, for the percentage and the ETA; 0 when unknown. */
  total: number;
  stream?: NodeJS.WriteStream;
  /** Seconds between plain lines when not on a terminal (default 5). */
  plainEverySeconds?: number;
  /** What is counted (default "docs"). */
  unit?: string;
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(r).padStart(2, '0')}s` : `${r}s`;
}

export function progressLine(
  label: string,
  done: number,
  total: number,
  elapsedS: number,
  width = 24,
  unit = 'docs',
): { line: string; bar: string } {
  const rate = elapsedS > 0 ? done / elapsedS : 0;
  const eta = total > 0 && rate > 0 ? (total - done) / rate : NaN;
  const fraction = total > 0 ? Math.min(1, done / total) : 0;
  const filled = Math.round(fraction * width);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
  const of = total > 0 ? `/${total} (${(fraction * 100).toFixed(1)}%)` : '';
  return {
    line: `${label}: ${done}${of} ${Math.round(rate)} ${unit}/s ETA ${formatDuration(eta)} elapsed ${formatDuration(elapsedS)}`,
    bar,
  };
}

export function createProgress(options: ProgressOptions): ProgressReporter {
  const stream = options.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  const started = performance.now();
  const plainEveryMs = (options.plainEverySeconds ?? 5) * 1000;
  let done = 0;
  let total = options.total;
  let lastPrint = -Infinity;
  const elapsed = () => (performance.now() - started) / 1000;
  const print = (final: boolean) => {
    const { line, bar } = progressLine(options.label, done, total, elapsed(), 24, options.unit);
    if (tty) stream.write(`\r\x1b[2K${bar} ${line}${final ? '\n' : ''}`);
    else stream.write(`${line}${final ? ' done' : ''}\n`);
  };
  return {
    add(count: number) {
      done += count;
      const now = performance.now();
      if (now - lastPrint >= (tty ? 200 : plainEveryMs)) {
        lastPrint = now;
        print(false);
      }
    },
    setTotal(estimate: number) {
      total = estimate;
    },
    finish() {
      print(true);
    },
  };
}
