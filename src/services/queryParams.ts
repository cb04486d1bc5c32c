import { z } from 'zod/v4';
import type { ZodOpenApiOverrideMeta } from 'zod-openapi';

/**
 * Query parameters that are numbers: they arrive as text and are read strictly (decimal digits,
 * a sign only where negatives make sense, so "1e3" or " 5" is refused rather than guessed at). The
 * OpenAPI document shows each as the integer it is, with the bounds it is checked against.
 */

const integerText = (min: number, max: number, message: string) =>
  z
    .string({ error: message })
    .regex(min < 0 ? /^-?\d+$/ : /^\d+$/, message)
    .transform(Number)
    .pipe(z.number().min(min, message).max(max, message));

const shownAsInteger = (min: number, max: number, fallback?: number): { override: ZodOpenApiOverrideMeta } => ({
  override: ({ jsonSchema }) => {
    delete jsonSchema.pattern;
    Object.assign(jsonSchema, { type: 'integer', minimum: min, maximum: max }, fallback === undefined ? {} : { default: fallback });
  },
});

/** An integer from `min` to `max`, or absent. */
export const optionalInteger = (min: number, max: number, message: string) =>
  integerText(min, max, message).optional().meta(shownAsInteger(min, max));

/** An integer from `min` to `max`, `fallback` when absent. */
export const integerWithDefault = (min: number, max: number, fallback: number, message: string) =>
  integerText(min, max, message)
    .default(fallback)
    .meta(shownAsInteger(min, max, fallback));

/** A `limit` from 1 to `max`, `fallback` when absent. */
export const limitParam = (fallback: number, max: number) =>
  integerWithDefault(1, max, fallback, `limit must be an integer from 1 to ${max}`);

/** The parameters of a query schema as text (absent: undefined), as a URL or a tool call gives them. */
export type QueryText<Query extends { shape: object }> = Partial<Record<keyof Query['shape'], string>>;
