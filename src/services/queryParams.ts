import { z } from 'zod/v4';
import type { ZodOpenApiOverrideMeta } from 'zod-openapi';
import { parseInput } from '../errors.js';

/**
 * Query parameters that are numbers: they arrive as text and are read strictly (decimal digits
 * only, so "1e3" or " 5" is refused rather than guessed at). The OpenAPI document shows each as
 * the integer it is, with the bounds it is checked against.
 */

/** A `limit` from 1 to `max`, `fallback` when absent. */
export function limitParam(fallback: number, max: number) {
  const message = `limit must be an integer from 1 to ${max}`;
  const asInteger: ZodOpenApiOverrideMeta = ({ jsonSchema }) => {
    delete jsonSchema.pattern;
    Object.assign(jsonSchema, { type: 'integer', minimum: 1, maximum: max, default: fallback });
  };
  return z
    .string({ error: message })
    .regex(/^\d+$/, message)
    .transform(Number)
    .pipe(z.number().min(1, message).max(max, message))
    .default(fallback)
    .meta({ override: asInteger });
}

/** A `limit` given as text, read as limitParam reads it. */
export const parseLimit = (text: string | undefined, fallback: number, max: number): number => parseInput(limitParam(fallback, max), text);
