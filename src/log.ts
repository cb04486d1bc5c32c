import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

// The API server's log gathers lines up to this many bytes before it writes them.
const BUFFER_BYTES = 4 * 1024;
// ...and writes what it has at least this often, so a quiet server's lines are not held back.
const FLUSH_EVERY_MS = 200;
// A log reader that stops reading (a stalled shipper) costs at most this much memory: later lines are dropped.
const MAX_WAITING_BYTES = 64 * 1024 * 1024;

/**
 * Structured JSON logs on stderr, so stdout stays free for command output (a CLI prints keys there).
 * Commands write each line as it is logged, so a command's log shows how far it got even if it is
 * killed. The API server's log is `buffered`: a write per request would cost the hot path a system
 * call. pino writes what is left when the process exits; `flushLog` waits for it before that.
 */
export function createLogger(level: string, { buffered = false } = {}): Logger {
  const destination = buffered
    ? pino.destination({ dest: 2, sync: false, minLength: BUFFER_BYTES, maxLength: MAX_WAITING_BYTES, periodicFlush: FLUSH_EVERY_MS })
    : pino.destination({ dest: 2, sync: true });
  return pino(loggerOptions(level), destination);
}

/** Resolves once every line logged so far has been written. */
export const flushLog = (log: Logger): Promise<void> => new Promise((resolve) => log.flush(() => resolve()));

/** What every logger of the project is, wherever it writes. */
export const loggerOptions = (level: string): LoggerOptions => ({
  name: 'bookmeta',
  level,
  // Belt and braces: no secret may reach a log line even if someone logs a raw request.
  redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'secret'], censor: '[redacted]' },
});
