import type { Pool } from '../../../src/stores/postgres/pool.js';
import { analyzeOlTables } from '../../stores/postgres/openlibrary.js';

/**
 * Keeps the planner's statistics of the tables an import grows in step with them. A batch looks its
 * keys up with `= any(array)`; planned with the statistics of a table a fraction of its size (or with
 * none: autovacuum analyzes late during a bulk load, or not at all where it is off), those lookups
 * become sequential scans, and the import slows down as the catalogue grows. So the tables are
 * analyzed after the first batch and then each time the records applied in this run have doubled:
 * a few dozen times at most, however large the dump.
 */
export class OlStatistics {
  private applied = 0;
  private next = 1;

  constructor(private readonly db: Pool) {}

  async recordsApplied(count: number): Promise<void> {
    this.applied += count;
    if (this.applied < this.next) return;
    await analyzeOlTables(this.db);
    this.next = this.applied * 2;
  }
}
