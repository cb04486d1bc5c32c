import { pino, type Logger } from 'pino';

export type { Logger };

// Lines are written in chunks of this many bytes, or after FLUSH_EVERY_MS at the latest:
// one write per request would cost the hot path a system call.
const CHUNK_BYTES = 4096;
const FLUSH_EVERY_MS = 200;

/** Structured JSON logs on stderr, so stdout stays free for command output (a CLI prints keys there). */
export function createLogger(level: string, name = 'bookmeta'): Logger {
  const destination = pino.destination({ dest: 2, sync: false, minLength: CHUNK_BYTES });
  setInterval(() => destination.flush(), FLUSH_EVERY_MS).unref();
  // Whatever is still buffered when the process ends normally is written then.
  process.once('exit', () => destination.flushSync());
  return pino(
    {
      name,
      level,
      // Belt and braces: no secret may reach a log line even if someone logs a raw request.
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'secret'], censor: '[redacted]' },
    },
    destination,
  );
}
