import { z } from 'zod/v4';
import { badRequest } from '../errors.js';

/**
 * Partial responses: `fields=id,title,authors` keeps only those top-level fields of each record an
 * answer carries, for clients that list many records and show a few fields of each. `id` always
 * comes back, so a partial record can still be fetched whole. A field the record does not have
 * is a 400 naming it, never silently dropped.
 */

/** The fields asked for, `id` among them; null when the request asks for whole records. */
export type Fields = ReadonlySet<string> | null;

/** The fields of `text` (a `fields` parameter) that `record` has; a 400 naming the first it has not. */
export function parseFields(text: string | undefined, record: z.ZodObject, what: string): Fields {
  if (text === undefined) return null;
  const known = Object.keys(record.shape);
  const asked = text
    .split(',')
    .map((field) => field.trim())
    .filter((field) => field !== '');
  if (asked.length === 0) throw badRequest(`fields names no field: give a comma-separated list such as fields=id,${known[1]}`);
  const unknown = asked.find((field) => !known.includes(field));
  if (unknown !== undefined) throw badRequest(`unknown field "${unknown}" in fields: a ${what} has ${known.join(', ')}`);
  return new Set(['id', ...asked]);
}

/** `record` with only `fields`, in the record's own order. */
export const pickFields = (record: Record<string, unknown>, fields: ReadonlySet<string>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(record).filter(([field]) => fields.has(field)));

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `value` with the records at `at` (field names, `*` for each item of a list; none: `value` itself) cut to `fields`. */
export function projectRecords(value: unknown, at: readonly string[], fields: ReadonlySet<string>): unknown {
  const [step, ...rest] = at;
  if (step === undefined) return isObject(value) ? pickFields(value, fields) : value;
  if (step === '*') return Array.isArray(value) ? value.map((item) => projectRecords(item, rest, fields)) : value;
  // An item without the record (a bulk lookup's 404) stays as it is.
  if (!isObject(value) || !(step in value)) return value;
  return { ...value, [step]: projectRecords(value[step], rest, fields) };
}
