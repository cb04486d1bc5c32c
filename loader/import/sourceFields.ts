import { authorKey, cleanAuthorName, workAuthorKey } from '../../src/domain/names.js';
import { titleKey, workTitle } from '../../src/domain/titles.js';
import { foldText } from '../../src/domain/text.js';

/** Small parsers shared by the source formats. */

/** A whole number from text such as "2008", "2008.0" or "", or null. */
export function wholeNumber(text: string | undefined): number | null {
  if (text === undefined || text.trim() === '') return null;
  const value = Number(text);
  return Number.isFinite(value) ? Math.trunc(value) : null;
}

/** A decimal number from text, or null. */
export function decimal(text: string | undefined): number | null {
  if (text === undefined || text.trim() === '') return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

/** A publication year worth keeping: a positive year no later than next year. */
export function plausibleYear(year: number | null): number | null {
  return year !== null && year > 0 && year <= new Date().getUTCFullYear() + 1 ? year : null;
}

export const nonEmpty = (text: string | undefined): string | null => {
  const trimmed = text?.replace(/\s+/g, ' ').trim();
  return trimmed ? trimmed : null;
};

/** Cleaned names with their identity keys; names that clean to nothing are left out. */
export function authorEntries(names: readonly string[]): { name: string; key: string }[] {
  return names
    .map((raw) => cleanAuthorName(raw))
    .map((name) => ({ name, key: authorKey(name) }))
    .filter((author) => author.key !== '');
}

/**
 * The key that groups editions into one work: the normalized title (edition labels aside, see
 * workTitle) and the first author's initial and surname (see workAuthorKey).
 */
export function workKey(title: string, firstAuthorKey: string | undefined): string {
  const own = workTitle(title);
  return `${titleKey(own) || foldText(own)}|${firstAuthorKey === undefined ? '' : workAuthorKey(firstAuthorKey)}`;
}
