/** The JSON records the API returns (snake_case; unknown fields are null, never missing). */

import type { WorkKind } from './titles.js';

/** A record's identifiers in other catalogues, by scheme ("openlibrary", "goodreads", "oclc", "lccn", "viaf", "wikidata", "isni"); empty when none is known. */
export type Identifiers = Record<string, string[]>;

export interface AuthorRef {
  id: string;
  name: string;
}

export interface BookRecord {
  id: string;
  work_id: string;
  /** The kind of its work: one book, or a boxset, omnibus or companion. */
  kind: WorkKind;
  isbn_13: string | null;
  isbn_10: string | null;
  title: string;
  subtitle: string | null;
  series: string | null;
  series_number: string | null;
  authors: AuthorRef[];
  publisher: string | null;
  year: number | null;
  language: string | null;
  pages: number | null;
  cover_url: string | null;
  physical_format: string | null;
  subjects: string[];
  description: string | null;
  ratings_count: number;
  average_rating: number | null;
  identifiers: Identifiers;
  updated_at: string;
}

/** An edition as listed inside its work. */
export interface EditionSummary {
  id: string;
  isbn_13: string | null;
  title: string;
  publisher: string | null;
  year: number | null;
  language: string | null;
}

export interface WorkRecord {
  id: string;
  kind: WorkKind;
  title: string;
  subtitle: string | null;
  original_year: number | null;
  subjects: string[];
  description: string | null;
  cover_url: string | null;
  identifiers: Identifiers;
  authors: AuthorRef[];
  edition_count: number;
  /** The most popular editions first, at most WORK_EDITIONS_SHOWN of them. */
  editions: EditionSummary[];
  updated_at: string;
}

export interface WorkSummary {
  id: string;
  title: string;
  original_year: number | null;
}

export interface AuthorRecord {
  id: string;
  name: string;
  alternate_names: string[];
  work_count: number;
  bio: string | null;
  birth_date: string | null;
  death_date: string | null;
  identifiers: Identifiers;
  /** The most popular works first, at most AUTHOR_WORKS_SHOWN of them. */
  works: WorkSummary[];
  updated_at: string;
}

/** An author as search results list them: the author record without its works. */
export type AuthorSummary = Pick<AuthorRecord, 'id' | 'name' | 'alternate_names' | 'work_count' | 'bio' | 'birth_date' | 'death_date' | 'identifiers'>;

export const WORK_EDITIONS_SHOWN = 100;
export const AUTHOR_WORKS_SHOWN = 100;

/** A point lookup finds a live record, finds that the id was merged into another or deleted, or finds nothing. */
export type Lookup<T> = { found: T } | { mergedInto: string } | { deleted: true } | null;
