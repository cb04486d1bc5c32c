/** What `bookmeta import openlibrary` takes: shared by the record path and the first load. */

/** Records per transaction of the record path. */
export const OL_BATCH = 2_000;

/**
 * How records are applied. `set-based` (and `auto`, the same, the default): a first load into a catalogue
 * without Open Library records, a re-import of new and newer records into one with some.
 * `record-by-record`: every record through the record path.
 */
export const OL_METHODS = ['auto', 'set-based', 'record-by-record'] as const;
export type OlMethod = (typeof OL_METHODS)[number];

export interface OlImportOptions {
  batchSize?: number;
  /** A progress bar on a terminal, plain lines elsewhere (default true). */
  progress?: boolean;
  method?: OlMethod;
  /** Worker threads a first load reads and maps lines on (default: one per core, none for small dumps). */
  stageWorkers?: number;
}
