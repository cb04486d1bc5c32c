import { Counter, Gauge, type Registry } from 'prom-client';

/** One value of a metric, under its label values (none for a metric without labels). */
export interface Sample<L extends string> {
  labels?: Partial<Record<L, string>>;
  value: number;
}

/**
 * A metric whose values are counts and states the process already keeps (a guard's timeouts, a
 * pool's clients), read when Prometheus scrapes: the request path pays nothing for it. A `counter`
 * reads a count that only grows; a `gauge` a value that goes both ways.
 */
export function readAtScrape<L extends string = never>(
  registry: Registry,
  type: 'counter' | 'gauge',
  name: string,
  help: string,
  read: () => Sample<L>[] | Promise<Sample<L>[]>,
  labelNames: readonly L[] = [],
): void {
  const configuration = {
    name,
    help,
    labelNames,
    registers: [registry],
    // Reset, then add each value: a gauge and a counter then both show what `read` says.
    async collect(this: Counter<L> | Gauge<L>) {
      const samples = await read();
      this.reset();
      for (const sample of samples) this.inc(sample.labels ?? {}, sample.value);
    },
  };
  if (type === 'counter') new Counter<L>(configuration);
  else new Gauge<L>(configuration);
}
