import { pino, type Logger } from 'pino';

export type { Logger };

// A chunked logger writes in chunks of this many bytes, or after FLUSH_EVERY_MS at the latest.
const CHUNK_BYTES = 4096;
const FLUSH_EVERY_MS = 200;

/**
 * Structured JSON logs on stderr, so stdout stays free for command output (a CLI prints keys there).
 * Lines are written as they are logged, so a command's log shows how far it got even if it is
 * killed; `chunked` is for the API server, where one write per request would cost the hot path a
 * system call.
 */
export function createLogger(level: string, { chunked = false } = {}): Logger {
  const destination = chunked ? pino.destination({ dest: 2, sync: false, minLength: CHUNK_BYTES }) : pino.destination({ dest: 2, sync: true });
  if (chunked) {
    setInterval(() => destination.flush(), FLUSH_EVERY_MS).unref();
    // Whatever is still buffered when the process ends normally is written then.
    process.once('exit', () => destination.flushSync());
  }
  return pino(
    {
      name: 'bookmeta',
      level,
      // Belt and braces: no secret may reach a log line even if someone logs a raw request.
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'secret'], censor: '[redacted]' },
    },
    destination,
  );
}
