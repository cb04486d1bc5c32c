import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stderr, so stdout stays free for command output (a CLI prints keys there). */
export function createLogger(level: string, name = 'bookmeta'): Logger {
  return pino(
    {
      name,
      level,
      // Belt and braces: no secret may reach a log line even if someone logs a raw request.
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'secret'], censor: '[redacted]' },
    },
    // Buffered writes keep logging off the hot path; server.ts flushes on exit.
    pino.destination({ dest: 2, sync: false }),
  );
}
