// Deciding whether a catalogue book is the one a messy record describes: signals from the ISBN,
// title, author, year and publisher, combined into one confidence from 0 to 1.

import { z } from 'zod/v4';
import type { Isbn } from './isbn.js';
import type { BookRecord } from './records.js';
import { authorSimilarity, publisherSimilarity, titleLikeness, yearCloseness, type Misspelt, type TitleLikeness } from './similarity.js';

/** A record to match, validated: at least a title or an ISBN. */
export interface MatchProbe {
  title: string | null;
  /** The ISBN as given, when one was. */
  isbnText: string | null;
  /** The ISBN when the given one is valid. */
  isbn: Isbn | null;
  author: string | null;
  year: number | null;
  publisher: string | null;
}

const ISBN_SIGNALS = ['match', 'other_edition', 'mismatch', 'unknown', 'invalid', 'absent'] as const;
export type IsbnSignal = (typeof ISBN_SIGNALS)[number];

const likeness = (description: string) => z.number().min(0).max(1).nullable().meta({ description });

/** The signals of one candidate, each from 0 to 1 (null when the record or the book lacks it), and what the ISBN says. */
export const matchSignals = z
  .object({
    isbn: z.enum(ISBN_SIGNALS).meta({
      description:
        "`match`: the book carries the ISBN; `other_edition`: the ISBN is another edition of this book's work; `mismatch`: the ISBN is a book of another work; " +
        '`unknown`: no catalogue book has the ISBN; `invalid`: not a valid ISBN, ignored; `absent`: none given.',
    }),
    title: likeness('Title likeness; null when no title was given.'),
    author: likeness('Likeness of the best pair of a given and a credited name; null when no author was given or the book credits none.'),
    year: likeness("1 for the same year, fading over ten years; null when no year was given or the book's is unknown."),
    publisher: likeness("Publisher likeness; null when none was given or the book's is unknown."),
  })
  .meta({ id: 'MatchSignals' });

export type MatchSignals = z.output<typeof matchSignals>;

export interface Assessment {
  confidence: number;
  signals: MatchSignals;
}

/**
 * At or above this confidence the best candidate is the match. Tuned with scripts/eval/match.ts:
 * lower, books that are not in the catalogue get matched to a namesake (mostly when only a short
 * title is given); higher, messy records of books that are stop matching.
 */
export const MATCH_THRESHOLD = 0.75;

// Weight of the title when an author confirms or denies it: a right title with a wrong author is
// another book of the same name, a right author with a wrong title another book of that author.
const AUTHOR_SHARE = 0.4;
// A title alone, or with an author the book does not credit anyone as, proves less.
export const TITLE_ALONE = 0.85;
const AUTHOR_UNCHECKABLE = 0.8;
// With no author given the title is the only evidence, so a title that is only near the book's (a
// word more or less, or another word a typo apart: "The Prince's Bride" for "The Princess Bride")
// counts as its cube: it is likelier another book of a like name. Books not in the catalogue, given
// by title alone, matched such namesakes (scripts/eval/match.ts). A title that differs only in
// misspelt words (words no catalogue title holds: "The First Vcitim") names no other book, so it
// counts as it is.
export const TITLE_ALONE_POWER = 3;
// A matching ISBN decides: the confidence starts at the threshold and the rest of the record only adds to it.
const ISBN_FLOOR = MATCH_THRESHOLD;
const ISBN_FACTOR: Record<IsbnSignal, number> = {
  match: 1,
  other_edition: 1,
  // The record names another book by ISBN: either the ISBN or the title is wrong.
  mismatch: 0.8,
  // The edition is not in the catalogue; this may be another edition of it, or another book.
  unknown: 0.8,
  invalid: 1,
  absent: 1,
};

/** How the given ISBN relates to a candidate, knowing which catalogue book (if any) carries it. */
export function isbnSignal(probe: MatchProbe, isbnBook: { id: string; work_id: string } | null, candidate: BookRecord): IsbnSignal {
  if (probe.isbnText === null) return 'absent';
  if (probe.isbn === null) return 'invalid';
  if (candidate.isbn_13 === probe.isbn.isbn13 || candidate.id === isbnBook?.id) return 'match';
  if (isbnBook === null) return 'unknown';
  return isbnBook.work_id === candidate.work_id ? 'other_edition' : 'mismatch';
}

const round = (value: number): number => Math.round(value * 1000) / 1000;

/**
 * The signals of one candidate and the confidence they add up to. The title given may be the
 * candidate's own or the one its work is known by (`workTitle`: the original title, or another
 * edition's): "Harry Potter and the Philosopher's Stone" is the Sorcerer's Stone. `misspelt` says
 * which words of the given title no catalogue title holds, when that is known.
 */
export function assess(
  probe: MatchProbe,
  candidate: BookRecord,
  isbn: IsbnSignal,
  workTitle: string | null = null,
  misspelt?: Misspelt,
): Assessment {
  const credited = candidate.authors.map((author) => author.name);
  const title = probe.title === null ? null : bestTitleLikeness(probe.title, candidate, workTitle, misspelt);
  const signals: MatchSignals = {
    isbn,
    title: title === null ? null : round(title.likeness),
    author: probe.author === null || credited.length === 0 ? null : round(authorSimilarity(probe.author, credited)),
    year: probe.year === null || candidate.year === null ? null : yearCloseness(probe.year, candidate.year),
    publisher:
      probe.publisher === null || candidate.publisher === null ? null : round(publisherSimilarity(probe.publisher, candidate.publisher)),
  };

  const titleAlone = probe.author === null;
  const authorWeight =
    signals.author !== null ? 1 - AUTHOR_SHARE + AUTHOR_SHARE * signals.author : probe.author !== null ? AUTHOR_UNCHECKABLE : TITLE_ALONE;
  // Without a title only the ISBN found this candidate; the author, if any, is all that can confirm it.
  let record =
    signals.title !== null
      ? (titleAlone && !title?.misspeltOnly ? signals.title ** TITLE_ALONE_POWER : signals.title) * authorWeight
      : (signals.author ?? 1);
  // Year and publisher tell editions apart more than works, so they weigh little.
  if (signals.year !== null) record *= 0.9 + 0.1 * signals.year;
  if (signals.publisher !== null) record *= 0.95 + 0.05 * signals.publisher;
  const confidence = isbn === 'match' ? ISBN_FLOOR + (1 - ISBN_FLOOR) * record : record * ISBN_FACTOR[isbn];
  return { confidence: round(confidence), signals };
}

/** The likeness of the given title to the candidate's own or to the one its work is known by, whichever is closer. */
function bestTitleLikeness(given: string, candidate: BookRecord, workTitle: string | null, misspelt: Misspelt | undefined): TitleLikeness {
  const own = titleLikeness(given, candidate, misspelt);
  if (workTitle === null) return own;
  const work = titleLikeness(given, { title: workTitle, subtitle: null }, misspelt);
  return work.likeness > own.likeness ? work : own;
}
