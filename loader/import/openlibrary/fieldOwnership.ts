import type { OlEdition } from '../../../src/domain/openlibrary.js';
import { EDITION_FIELDS, type EditionField, type EditionFields } from '../../stores/postgres/editions.js';
import type { OlStoredBook } from '../../stores/postgres/openlibrary.js';

/**
 * Which fields of a book Open Library writes: every field of a book it created, and on a book
 * another source created only the fields no other source has (subjects, description, format),
 * filling the others' gaps.
 */

// The fields only Open Library supplies: it owns them on every book.
const OPEN_LIBRARY_OWNS: ReadonlySet<EditionField> = new Set(['subjects', 'description', 'physical_format']);

type OfferedFields = Pick<
  EditionFields,
  | 'title'
  | 'subtitle'
  | 'series'
  | 'publisher'
  | 'year'
  | 'language'
  | 'pages'
  | 'cover_url'
  | 'subjects'
  | 'description'
  | 'physical_format'
>;

/** The book fields an edition offers (what the record path writes on a book of its own). */
export function editionFields(edition: OlEdition): OfferedFields {
  return {
    title: edition.title,
    subtitle: edition.subtitle,
    series: edition.series,
    publisher: edition.publisher,
    year: edition.year,
    language: edition.language,
    pages: edition.pages,
    cover_url: edition.coverUrl,
    subjects: edition.subjects.length > 0 ? edition.subjects : null,
    description: edition.description,
    physical_format: edition.physicalFormat,
  };
}

export function blankFields(): EditionFields {
  return Object.fromEntries(EDITION_FIELDS.map((field) => [field, field === 'popularity' ? 0 : null])) as unknown as EditionFields;
}

/** The fields a book should have after this record, and whether any differs from what it has. */
export function revise(book: OlStoredBook, offered: OfferedFields, ownsAll: boolean): { fields: EditionFields; changed: boolean } {
  const fields = { ...blankFields(), ...pick(book) };
  let changed = false;
  for (const field of Object.keys(offered) as (keyof OfferedFields)[]) {
    const value = offered[field] ?? null;
    const current = book[field] ?? null;
    // A null offer means Open Library does not know, never that the value should go.
    const wanted = value !== null && (ownsAll || OPEN_LIBRARY_OWNS.has(field) || current === null) ? value : current;
    if (JSON.stringify(wanted) !== JSON.stringify(current)) {
      changed = true;
      (fields as Record<string, unknown>)[field] = wanted;
    }
  }
  return { fields, changed };
}

function pick(book: OlStoredBook): EditionFields {
  return Object.fromEntries(EDITION_FIELDS.map((field) => [field, book[field]])) as unknown as EditionFields;
}
