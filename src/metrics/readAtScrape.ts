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
  if (type === 'counter') {
    new Counter<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const samples = await read();
        this.reset();
        for (const sample of samples) this.inc(sample.labels ?? {}, sample.value);
      },
    });
    return;
  }
  new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      const samples = await read();
      this.reset();
      for (const sample of samples) this.set(sample.labels ?? {}, sample.value);
    },
  });
}
