import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectPath } from '../../src/paths.js';

/**
 * The W3C Reconciliation Service API 0.2 schemas and examples (test/fixtures/reconciliation-0.2,
 * copied unchanged from the community group's repository), compiled with Ajv: the manifest's
 * security scheme refers to the Swagger 2.0 schema by its URL, which is the copy in
 * schemas/openapi.json.
 */
export const RECONCILIATION_SPEC: string = projectPath('test', 'fixtures', 'reconciliation-0.2');

const readJson = async (path: string): Promise<unknown> => JSON.parse(await readFile(path, 'utf8')) as unknown;

// The schemas name their dialect "http://json-schema.org/schema#" (the latest draft, 7 for Ajv 8),
// which Ajv knows by another URL; the dialect mark is dropped and Ajv's default (draft 7) applies.
function withoutDialect(schema: unknown): object {
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  return rest;
}

export interface ReconciliationSchemas {
  manifest: ValidateFunction;
  queryBatch: ValidateFunction;
  resultBatch: ValidateFunction;
}

export async function reconciliationSchemas(): Promise<ReconciliationSchemas> {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const schema = async (name: string) => withoutDialect(await readJson(join(RECONCILIATION_SPEC, 'schemas', name)));
  ajv.addSchema(await schema('openapi.json'));
  ajv.addSchema(await schema('type.json'));
  return {
    manifest: ajv.compile(await schema('manifest.json')),
    queryBatch: ajv.compile(await schema('reconciliation-query-batch.json')),
    resultBatch: ajv.compile(await schema('reconciliation-result-batch.json')),
  };
}

/** The example documents of one schema that must (`valid`) or must not (`invalid`) validate, by file name. */
export async function reconciliationExamples(kind: string, verdict: 'valid' | 'invalid'): Promise<[string, unknown][]> {
  const folder = join(RECONCILIATION_SPEC, 'examples', kind, verdict);
  const names = (await readdir(folder)).filter((name) => name.endsWith('.json')).sort();
  return Promise.all(names.map(async (name): Promise<[string, unknown]> => [name, await readJson(join(folder, name))]));
}
