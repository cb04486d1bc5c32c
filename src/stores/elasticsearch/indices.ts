import { AUTHORS_INDEX } from './authorsIndex.js';
import { BOOKS_INDEX } from './booksIndex.js';

/** The declared indices, by kind: mappings/<kind>.json is generated from each (scripts/dev/mappings.ts). */
export const INDICES = { books: BOOKS_INDEX, authors: AUTHORS_INDEX } as const;

export type IndexKind = keyof typeof INDICES;
export const INDEX_KINDS: readonly IndexKind[] = ['books', 'authors'];
