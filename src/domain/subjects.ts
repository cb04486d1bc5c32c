import { foldText } from './text.js';

/**
 * Subjects as the sources write them are messy: "Fiction", "fiction", "Fiction." and "FICTION /
 * Fantasy / Epic" beside "Epic fantasy fiction". A subject's key sets aside case, diacritics,
 * punctuation and the order of its words, so the spellings of one subject share one key; where a
 * subject is shown, it is shown in the spelling most books use.
 */

/** The key of a subject: its folded words, each once, in alphabetical order ("FICTION / Fantasy" → "fantasy fiction"). Empty when it has no word. */
export function subjectKey(subject: string): string {
  const words = foldText(subject)
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '');
  return [...new Set(words)].sort().join(' ');
}

/** The subjects of one book, one per key (the first spelling it gives), without those that have no word. */
export function distinctSubjects(subjects: readonly string[]): { key: string; spelling: string }[] {
  const byKey = new Map<string, string>();
  for (const spelling of subjects) {
    const key = subjectKey(spelling);
    if (key !== '' && !byKey.has(key)) byKey.set(key, spelling.trim());
  }
  return [...byKey].map(([key, spelling]) => ({ key, spelling }));
}
