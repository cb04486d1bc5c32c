import { z } from 'zod/v4';
import { WORK_KINDS } from './titles.js';

/**
 * The JSON records the API returns (snake_case; unknown fields are null, never missing). The
 * schemas are the records' one description: the types below derive from them, and the OpenAPI
 * document renders them (their `id` names the component).
 */

export const WORK_EDITIONS_SHOWN = 100;
export const AUTHOR_WORKS_SHOWN = 100;

const timestamp = z.string().meta({ format: 'date-time' });

/** A record's identifiers in other catalogues, by scheme ("openlibrary", "goodreads", "oclc", "lccn", "viaf", "wikidata", "isni"); empty when none is known. */
const identifiers = (what: string) =>
  z.record(z.string(), z.array(z.string())).meta({
    description: `The ${what}'s identifiers in other catalogues, by scheme: \`openlibrary\` (keys, see \`GET /v1/openlibrary/{key}\`), \`goodreads\`, \`oclc\`, \`lccn\`, \`viaf\`, \`wikidata\`, \`isni\`; only the schemes known appear, \`{}\` when none.`,
    example: { openlibrary: ['OL24224410M'], goodreads: ['2767052'], oclc: ['181516947'] },
  });

export type Identifiers = z.output<ReturnType<typeof identifiers>>;

export const workKind = z.enum(WORK_KINDS).meta({
  id: 'WorkKind',
  description:
    'What the work is: `book`, one book; `boxset`, several books sold together; `omnibus`, several books in one volume; `companion`, a book about or after books (a guide, a summary, study notes, a screenplay or graphic-novel retelling, the world of a series). ' +
    'A boxset, omnibus or companion is a work of its own: search ranks it below the books it gathers and recommendations never offer it for one of them.',
});

/** Readers who put a work on each shelf of their reading log (Open Library's, the one source of shelves). */
export const readers = z
  .object({
    want_to_read: z.int().min(0),
    currently_reading: z.int().min(0),
    already_read: z.int().min(0),
  })
  .meta({
    id: 'Readers',
    description:
      "Open Library readers who have the work on each shelf of their reading log (`0` when none), from the last reading-log dump imported. Other sources' readers only rated: see `rating`.",
  });

const stars = z
  .object({ '1': z.int().min(0), '2': z.int().min(0), '3': z.int().min(0), '4': z.int().min(0), '5': z.int().min(0) })
  .meta({ id: 'StarCounts', description: 'How many readers gave each number of stars.' });

const sourceRating = (meta: { id: string; description: string }) =>
  z
    .object({
      average: z.number().nullable().meta({ description: 'To two decimals; null when nobody rated.' }),
      count: z.int().min(0),
      stars: stars.nullable().meta({ description: 'How many gave each star; null where the source does not say.' }),
    })
    .meta(meta);

/** What readers think of a work: every source's ratings, those on one scale together. */
export const rating = z
  .object({
    average: z
      .number()
      .nullable()
      .meta({ description: 'Of all five-star ratings (Open Library and Goodreads), to two decimals; null when nobody rated.' }),
    count: z.int().min(0).meta({ description: 'Five-star ratings, Open Library and Goodreads together.' }),
    stars: stars.meta({
      description:
        "How many gave each star: Open Library's and Goodreads' counts of each star added up (both rate 1 to 5 stars; Book-Crossing's 1 to 10 stay apart in `sources`), " +
        "so they sum to `count`. Where Goodreads' stars are not known (`sources.goodreads.stars` null), Open Library's alone.",
    }),
    sources: z.object({
      openlibrary: sourceRating({
        id: 'OpenLibraryRating',
        description: "Open Library readers' ratings of the work, 1 to 5 stars (the ratings dump).",
      }),
      goodreads: sourceRating({
        id: 'GoodreadsRating',
        description:
          "Goodreads readers' ratings, 1 to 5 stars, from goodbooks-10k: the ratings of each Goodreads work among the work's editions (its ratings_1 to ratings_5, " +
          'which add up to its work_ratings_count), each Goodreads work counted once however many editions carry it, and added up where the catalogue ' +
          "groups several into one work. `stars` is null while an edition's stars are not known (a catalogue imported before they were kept, " +
          'until goodbooks is imported again): such an edition counts its own ratings_count at its average_rating.',
      }),
      book_crossing: sourceRating({
        id: 'BookCrossingRating',
        description:
          "Book-Crossing readers' ratings of the work's editions on a scale of 1 to 10 (not 1 to 5, so kept out of the average above); stars not known. Its implicit 0s (a reader had the book) are not ratings.",
      }),
    }),
  })
  .meta({ id: 'Rating', description: 'What readers think of the work, from every source imported.' });

export const authorRef = z.object({ id: z.string(), name: z.string() }).meta({ id: 'AuthorRef' });

export const bookRecord = z
  .object({
    id: z.string().meta({ example: 'bk_5n1x7q0c2r9a' }),
    work_id: z.string(),
    kind: workKind.meta({ description: 'The kind of its work: one book, or a boxset, omnibus or companion.' }),
    isbn_13: z
      .string()
      .regex(/^97[89][0-9]{10}$/)
      .nullable(),
    isbn_10: z
      .string()
      .regex(/^[0-9]{9}[0-9X]$/)
      .nullable(),
    title: z.string(),
    subtitle: z.string().nullable(),
    series: z.string().nullable(),
    series_number: z.string().nullable().meta({ description: 'As printed: "1", "0.5", "1-3".' }),
    authors: z.array(authorRef).meta({ description: 'In credited order; may include illustrators and translators.' }),
    publisher: z.string().nullable(),
    year: z.int().nullable(),
    language: z.string().nullable(),
    pages: z.int().nullable(),
    cover_url: z.string().nullable(),
    physical_format: z.string().nullable().meta({ description: 'As the source writes it: "Paperback", "Hardcover", "E-book"...' }),
    subjects: z.array(z.string()).meta({ description: 'Subjects of this edition (Open Library); `[]` when none is known.' }),
    description: z.string().nullable(),
    ratings_count: z.int(),
    average_rating: z.number().nullable(),
    readers: readers.meta({ description: "Its work's readers (the same as the work's record shows)." }),
    rating: rating.meta({
      description:
        "What readers think of its work (the same as the work's record shows). `ratings_count` is this edition's own Goodreads ratings (goodbooks-10k's ratings_count); " +
        "`average_rating` is Goodreads' average as goodbooks-10k gives it, that of the Goodreads work (see `rating.sources.goodreads`).",
    }),
    identifiers: identifiers('edition'),
    updated_at: timestamp,
  })
  .meta({ id: 'Book', description: 'One edition.' });

/** An edition as listed inside its work. */
export const editionSummary = bookRecord
  .pick({ id: true, isbn_13: true, title: true, publisher: true, year: true, language: true })
  .meta({ id: 'EditionSummary' });

export const workRecord = z
  .object({
    id: z.string(),
    kind: workKind,
    title: z.string(),
    subtitle: z.string().nullable(),
    original_year: z.int().nullable(),
    cover_url: z.string().nullable(),
    authors: z.array(authorRef),
    readers,
    rating,
    edition_count: z.int(),
    subjects: z.array(z.string()).meta({ description: '`[]` when none is known.' }),
    description: z.string().nullable(),
    identifiers: identifiers('work'),
    editions: z.array(editionSummary).max(WORK_EDITIONS_SHOWN).meta({ description: 'The most popular editions first.' }),
    updated_at: timestamp,
  })
  .meta({ id: 'Work' });

/** A work as lists of works show it: who wrote it, how many editions, its readers and rating, without its editions. */
export const workListing = workRecord
  .pick({
    id: true,
    kind: true,
    title: true,
    subtitle: true,
    original_year: true,
    cover_url: true,
    authors: true,
    readers: true,
    rating: true,
    edition_count: true,
  })
  .meta({
    id: 'WorkListing',
    description: 'A work as `GET /v1/works/{id}` shows it, without its subjects, description, identifiers and editions.',
  });

export const workSummary = workRecord.pick({ id: true, title: true, original_year: true }).meta({ id: 'WorkSummary' });

export const authorRecord = z
  .object({
    id: z.string(),
    name: z.string(),
    alternate_names: z.array(z.string()).meta({ description: 'Other spellings of the name seen in the sources.' }),
    work_count: z.int(),
    bio: z.string().nullable(),
    birth_date: z.string().nullable().meta({ description: 'As the source writes it ("1965", "31 July 1965").' }),
    death_date: z.string().nullable(),
    identifiers: identifiers('author'),
    works: z.array(workSummary).max(AUTHOR_WORKS_SHOWN).meta({ description: 'The most popular works first.' }),
    updated_at: timestamp,
  })
  .meta({ id: 'Author' });

/** An author as search results list them: the author record without its works. */
export const authorSummary = authorRecord
  .omit({ works: true, updated_at: true })
  .meta({ id: 'AuthorSummary', description: 'An author as `GET /v1/authors/{id}` shows it, without the works.' });

export type AuthorRef = z.output<typeof authorRef>;
export type BookRecord = z.output<typeof bookRecord>;
export type EditionSummary = z.output<typeof editionSummary>;
export type WorkRecord = z.output<typeof workRecord>;
export type WorkSummary = z.output<typeof workSummary>;
export type WorkListing = z.output<typeof workListing>;
export type AuthorRecord = z.output<typeof authorRecord>;
export type AuthorSummary = z.output<typeof authorSummary>;

/** A point lookup finds a live record, finds that the id was merged into another or deleted, or finds nothing. */
export type Lookup<T> = { found: T } | { mergedInto: string } | { deleted: true } | null;
