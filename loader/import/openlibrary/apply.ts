import { newId, type EntityKind } from '../../../src/domain/ids.js';
import { MAX_REDIRECT_HOPS, olKeyKind, type OlEdition, type OlKind, type OlRecord } from '../../../src/domain/openlibrary.js';
import { recordChanges, type Change } from '../../../src/stores/postgres/changes.js';
import { mergeInTransaction } from '../../../src/stores/postgres/merges.js';
import { withTransaction, type Pool, type PoolClient } from '../../../src/stores/postgres/pool.js';
import { claimCredits, noteToResolve } from '../../stores/postgres/authors.js';
import { creditAuthors } from '../../stores/postgres/editions.js';
import {
  addExternalIds,
  booksByIdOrIsbn,
  booksOfKindChanges,
  insertKeyed,
  insertOlBooks,
  markDeleted,
  olRecords,
  priceIndexProbesAsCached,
  redirectsTo,
  replaceCredits,
  saveOlRecords,
  survivors,
  updateKeyed,
  updateOlBooks,
  workKeys,
  type ExternalId,
  type OlAuthorRow,
  type OlBookRow,
  type OlBookUpdate,
  type OlRecordRow,
  type OlStoredBook,
  type OlWorkRow,
} from '../../stores/postgres/openlibrary.js';
import { blankFields, editionFields, revise } from './fieldOwnership.js';
import { bookSourceKey, digestOf, olNameKey, olWorkKey, olWorkKind, ownWorkKey } from './keys.js';

/**
 * How a batch of Open Library records enters the catalogue, in one transaction:
 * - A record is applied only if its revision is newer than the one stored for its key; one whose
 *   fields map to what the key already gave (same digest) writes nothing and records no change.
 * - Authors and works are keyed by their Open Library key. An edition that names a work or author not
 *   seen yet credits a placeholder (a work titled as the edition, of its kind, an author named by its
 *   key) that the record fills when it comes, so files may come in any order.
 * - One book, one row: an edition is the book its key already made, else the book with its ISBN (from
 *   any source), else a new book. Open Library owns every field of a book it created, and on a book
 *   another source created only the fields no other source has (subjects, description, format); it
 *   fills the others' gaps. Its work grouping wins: a book of one of our works moves to Open Library's
 *   work by merging ours into theirs (old work ids answer 301).
 * - /type/redirect merges the key's entity into the target's (now, or when the target first gets
 *   one); /type/delete marks deleted what Open Library alone knew, and unlinks the key from the rest.
 * - A key keeps its entity for good: a record after a delete revives it, one after a redirect is
 *   the merged entity still (a merge is not undone; nothing is written to a redirect, as for every
 *   source) or, if the merge still waited for its target, its own entity again and not merged.
 */

export interface OlBatchOutcome {
  inserted: number;
  updated: number;
  unchanged: number;
  changes: Change[];
  /** Every entity whose cached answers are stale now. */
  touched: Set<string>;
}

const ENTITY: Record<OlKind, EntityKind> = { author: 'author', work: 'work', edition: 'book' };
const TABLE = { author: 'authors', work: 'works', edition: 'books' } as const;

/** The newest record of each key in the batch. */
function newestByKey(records: readonly OlRecord[]): Map<string, OlRecord> {
  const newest = new Map<string, OlRecord>();
  for (const record of records) {
    const other = newest.get(record.key);
    if (!other || record.revision >= other.revision) newest.set(record.key, record);
  }
  return newest;
}

const isNewer = (record: OlRecord, stored: OlRecordRow | undefined): boolean =>
  stored === undefined || stored.state === 'pending' || record.revision > stored.revision;

export async function applyOlRecords(pool: Pool, records: readonly OlRecord[]): Promise<OlBatchOutcome> {
  return withTransaction(pool, (client) => applyOlRecordsIn(client, records));
}

/** The same inside the caller's transaction (a first load hands over what it cannot decide). */
export async function applyOlRecordsIn(client: PoolClient, records: readonly OlRecord[]): Promise<OlBatchOutcome> {
  return new OlBatch(client).apply(records);
}

class OlBatch {
  private readonly outcome: OlBatchOutcome = { inserted: 0, updated: 0, unchanged: 0, changes: [], touched: new Set() };
  private known = new Map<string, OlRecordRow>();
  private readonly saved = new Map<string, OlRecordRow>();
  /** Keys that got an entity in this batch: redirects waiting for them are merged at the end. */
  private readonly newKeys: string[] = [];
  private readonly newAuthors: (OlAuthorRow & { name_key: string })[] = [];
  private readonly newWorks: (OlWorkRow & { work_key: string })[] = [];
  private readonly newBooks: OlBookRow[] = [];
  /** Revised books, written after the new works and authors: a book may move to a work new in this batch. */
  private readonly bookUpdates: OlBookUpdate[] = [];
  /** Credits of the books new in this batch, and the replaced credits of books that had some. */
  private readonly credits: { bookId: string; authorIds: string[] }[] = [];
  private readonly recredits: { bookId: string; authorIds: string[] }[] = [];
  /** Credits of books that kept (or lost) them to another source's: evidence for author resolution. */
  private readonly claims: { bookId: string; authorIds: string[] }[] = [];
  private readonly externalIds: ExternalId[] = [];
  private readonly merges: { kind: EntityKind; from: string; into: string }[] = [];

  constructor(private readonly client: PoolClient) {}

  async apply(records: readonly OlRecord[]): Promise<OlBatchOutcome> {
    await priceIndexProbesAsCached(this.client);
    const newest = newestByKey(records);
    this.outcome.unchanged += records.length - newest.size;
    const referenced = [...newest.values()].flatMap((record) =>
      record.type === 'edition'
        ? [...(record.edition.workKey ? [record.edition.workKey] : []), ...record.edition.authorKeys]
        : record.type === 'redirect'
          ? [record.location]
          : [],
    );
    this.known = await olRecords(this.client, [...new Set([...newest.keys(), ...referenced])]);
    await this.followRedirects(referenced);

    const fresh = [...newest.values()].filter((record) => {
      if (isNewer(record, this.known.get(record.key))) return true;
      this.outcome.unchanged += 1;
      return false;
    });
    const ofType = <T extends OlRecord['type']>(type: T) =>
      fresh.filter((record): record is Extract<OlRecord, { type: T }> => record.type === type);

    await this.authors(ofType('author'));
    await this.works(ofType('work'));
    await this.editions(ofType('edition'));
    await insertKeyed(this.client, 'authors', this.newAuthors);
    await insertKeyed(this.client, 'works', this.newWorks);
    await insertOlBooks(this.client, this.newBooks);
    await updateOlBooks(this.client, this.bookUpdates);
    await creditAuthors(this.client, this.credits);
    await replaceCredits(this.client, this.recredits);
    await claimCredits(this.client, this.claims);
    await addExternalIds(this.client, this.externalIds);
    this.redirects(ofType('redirect'));
    await this.deletes(ofType('delete'));
    await saveOlRecords(this.client, [...this.saved.values()]);
    await this.merge();
    // The authors and works it changed are resolved across sources when the import ends.
    await noteToResolve(this.client, this.outcome.touched);
    await recordChanges(this.client, this.outcome.changes);
    return this.outcome;
  }

  private remember(row: OlRecordRow): void {
    this.known.set(row.key, row);
    this.saved.set(row.key, row);
  }

  private change(entity: EntityKind, id: string, operation: Change['operation']): void {
    this.outcome.changes.push({ entity, id, operation });
    this.outcome.touched.add(id);
  }

  /** Loads the targets of redirected keys among `keys`, hop by hop. */
  private async followRedirects(keys: readonly string[]): Promise<void> {
    let pending = keys;
    for (let hop = 0; hop < MAX_REDIRECT_HOPS && pending.length > 0; hop++) {
      const targets = pending.flatMap((key) => {
        const target = this.known.get(key)?.redirect_to;
        return target && !this.known.has(target) ? [target] : [];
      });
      for (const [key, row] of await olRecords(this.client, targets)) this.known.set(key, row);
      pending = targets;
    }
  }

  /** The key a reference lands on after redirects. */
  private landing(key: string): string {
    let current = key;
    for (let hop = 0; hop < MAX_REDIRECT_HOPS; hop++) {
      const target = this.known.get(current)?.redirect_to;
      if (!target) break;
      current = target;
    }
    return current;
  }

  private async authors(records: Extract<OlRecord, { type: 'author' }>[]): Promise<void> {
    const updates: OlAuthorRow[] = [];
    const merged = await this.mergedEntities('authors', records);
    for (const record of records) {
      const { author } = record;
      const fields = {
        name: author.name,
        bio: author.bio,
        birth_date: author.birthDate,
        death_date: author.deathDate,
        alternate_names: author.alternateNames,
      };
      const id = this.keyed(
        'author',
        record,
        digestOf(author),
        merged,
        (id) => updates.push({ id, ...fields }),
        (id) => this.newAuthors.push({ id, name_key: olNameKey(record.key), ...fields }),
      );
      this.identifiers(id, author.identifiers);
    }
    await updateKeyed(this.client, 'authors', updates);
  }

  private async works(records: Extract<OlRecord, { type: 'work' }>[]): Promise<void> {
    const updates: OlWorkRow[] = [];
    const merged = await this.mergedEntities('works', records);
    for (const record of records) {
      const { work } = record;
      const fields = {
        title: work.title,
        subtitle: work.subtitle,
        kind: olWorkKind(work),
        subjects: work.subjects,
        description: work.description,
        original_year: work.firstPublishYear,
        cover_url: work.coverUrl,
      };
      this.keyed(
        'work',
        record,
        digestOf(work),
        merged,
        (id) => updates.push({ id, ...fields }),
        (id) => this.newWorks.push({ id, work_key: olWorkKey(record.key), ...fields }),
      );
    }
    // A book's record shows its work's kind: a new kind changes the books too.
    for (const id of await booksOfKindChanges(this.client, updates)) this.change('book', id, 'update');
    await updateKeyed(this.client, 'works', updates);
  }

  /** The entities the keys of `records` had that are merged into others now. */
  private async mergedEntities(table: 'authors' | 'works', records: readonly OlRecord[]): Promise<Set<string>> {
    const ids = records.flatMap((record) => this.known.get(record.key)?.entity_id ?? []);
    const survivorOf = await survivors(this.client, table, ids);
    return new Set(ids.filter((id) => survivorOf.get(id) !== id));
  }

  /**
   * An author or work record: the entity its key already has (a placeholder, a deleted or a
   * redirected one included) is updated unless the record maps to the same fields or the entity is
   * merged; a key without one gets a new entity. Answers its id.
   */
  private keyed(
    kind: 'author' | 'work',
    record: OlRecord,
    digest: string,
    merged: ReadonlySet<string>,
    update: (id: string) => void,
    insert: (id: string) => void,
  ): string {
    const prior = this.known.get(record.key);
    let id = prior?.entity_id ?? null;
    if (id && (prior?.digest === digest || merged.has(id))) this.outcome.unchanged += 1;
    else if (id) {
      update(id);
      this.outcome.updated += 1;
      this.change(kind, id, 'update');
    } else {
      id = newId(kind);
      insert(id);
      this.newKeys.push(record.key);
      this.outcome.inserted += 1;
      this.change(kind, id, 'insert');
    }
    this.remember({ key: record.key, revision: record.revision, state: 'record', entity_id: id, digest, redirect_to: null });
    return id;
  }

  /**
   * The entity a work or author reference of `edition` stands for, creating a placeholder for a key
   * not seen yet: a work as the edition describes it (its title; its kind from its title and
   * subtitle), an author named by its key.
   */
  private reference(kind: 'work' | 'author', key: string, edition: OlEdition): string {
    const landing = this.landing(key);
    const row = this.known.get(landing);
    if (row?.entity_id) return row.entity_id;
    const id = newId(kind);
    if (kind === 'work')
      this.newWorks.push({
        id,
        work_key: olWorkKey(landing),
        title: edition.title,
        subtitle: null,
        kind: olWorkKind(edition),
        subjects: [],
        description: null,
        original_year: null,
        cover_url: null,
      });
    else
      this.newAuthors.push({
        id,
        name_key: olNameKey(landing),
        name: landing,
        bio: null,
        birth_date: null,
        death_date: null,
        alternate_names: [],
      });
    // A deleted key keeps its state and revision: only a newer record may bring it back.
    this.remember({
      key: landing,
      revision: row?.revision ?? 0,
      state: row?.state === 'delete' ? 'delete' : 'pending',
      entity_id: id,
      digest: null,
      redirect_to: null,
    });
    this.newKeys.push(landing);
    this.change(kind, id, 'insert');
    return id;
  }

  private identifiers(entityId: string, identifiers: OlEdition['identifiers']): void {
    for (const { scheme, value } of identifiers)
      if (scheme !== 'openlibrary') this.externalIds.push({ entity_id: entityId, scheme, value });
  }

  private async editions(records: Extract<OlRecord, { type: 'edition' }>[]): Promise<void> {
    if (records.length === 0) return;
    const priorIds = records.flatMap((record) => this.known.get(record.key)?.entity_id ?? []);
    const stored = await booksByIdOrIsbn(
      this.client,
      priorIds,
      records.flatMap((record) => (record.edition.isbn ? [record.edition.isbn.isbn13] : [])),
    );
    const byId = new Map(stored.map((book) => [book.id, book]));
    const byIsbn = new Map(stored.flatMap((book) => (book.isbn_13 ? [[book.isbn_13, book] as const] : [])));

    // References first, so that every work and author a book points at exists and is its survivor.
    const references = records.map((record) => ({
      workId: record.edition.workKey ? this.reference('work', record.edition.workKey, record.edition) : null,
      authorIds: record.edition.authorKeys.map((key) => this.reference('author', key, record.edition)),
    }));
    const workSurvivor = await survivors(
      this.client,
      'works',
      references.flatMap((ref) => (ref.workId ? [ref.workId] : [])),
    );
    const authorSurvivor = await survivors(
      this.client,
      'authors',
      references.flatMap((ref) => ref.authorIds),
    );
    const currentWorkKeys = await workKeys(
      this.client,
      stored.map((book) => book.work_id),
    );

    for (const [index, record] of records.entries()) {
      const { edition } = record;
      const digest = digestOf(edition);
      const prior = this.known.get(record.key);
      const reference = references[index]!;
      const workId = reference.workId ? (workSurvivor.get(reference.workId) ?? reference.workId) : null;
      const authorIds = [...new Set(reference.authorIds.map((id) => authorSurvivor.get(id) ?? id))];
      const fields = editionFields(edition);
      // The book the key had, deleted or merged as it may be, else the book of its ISBN.
      const book =
        (prior?.entity_id ? byId.get(prior.entity_id) : undefined) ?? (edition.isbn ? byIsbn.get(edition.isbn.isbn13) : undefined);

      if (!book) {
        const id = newId('book');
        let ownWork = workId;
        if (!ownWork) {
          ownWork = newId('work');
          this.newWorks.push({
            id: ownWork,
            work_key: ownWorkKey(record.key),
            title: edition.title,
            subtitle: edition.subtitle,
            kind: olWorkKind(edition),
            subjects: [],
            description: null,
            original_year: edition.year,
            cover_url: null,
          });
          this.change('work', ownWork, 'insert');
        }
        const row: OlBookRow = {
          id,
          work_id: ownWork,
          isbn_13: edition.isbn?.isbn13 ?? null,
          isbn_10: edition.isbn?.isbn10 ?? null,
          source_key: bookSourceKey(record.key),
          ...fields,
        };
        this.newBooks.push(row);
        this.credits.push({ bookId: id, authorIds });
        const added: OlStoredBook = {
          id,
          work_id: ownWork,
          isbn_13: row.isbn_13 ?? null,
          source_key: row.source_key,
          merged_into: null,
          deleted_at: null,
          author_ids: authorIds,
          ...blankFields(),
          ...fields,
        };
        byId.set(id, added);
        if (added.isbn_13) byIsbn.set(added.isbn_13, added);
        this.newKeys.push(record.key);
        this.outcome.inserted += 1;
        this.change('book', id, 'insert');
        this.outcome.touched.add(ownWork);
        for (const authorId of authorIds) this.outcome.touched.add(authorId);
        this.identifiers(id, edition.identifiers);
        this.remember({ key: record.key, revision: record.revision, state: 'record', entity_id: id, digest, redirect_to: null });
        continue;
      }

      this.remember({ key: record.key, revision: record.revision, state: 'record', entity_id: book.id, digest, redirect_to: null });
      this.identifiers(book.id, edition.identifiers);
      if (book.merged_into || (prior?.entity_id === book.id && prior.digest === digest)) {
        // Nothing is written to a redirect; and a revision that maps to the same fields changes nothing.
        this.outcome.unchanged += 1;
        continue;
      }
      const ownsAll = book.source_key === bookSourceKey(record.key);
      const revised = revise(book, fields, ownsAll);
      let changed = revised.changed;
      let movedWork = book.work_id;
      if (workId && workId !== book.work_id) {
        const currentKey = currentWorkKeys.get(book.work_id) ?? '';
        // Open Library's grouping wins: our work (or the book's own) becomes theirs; between two of
        // theirs, the book moves.
        if (currentKey.startsWith('ol:')) {
          movedWork = workId;
          changed = true;
        } else this.merges.push({ kind: 'work', from: book.work_id, into: workId });
      }
      const creditsWanted = authorIds.length > 0 && (ownsAll || book.author_ids.length === 0) ? authorIds : book.author_ids;
      const creditsChanged = creditsWanted.join() !== book.author_ids.join();
      this.claims.push({ bookId: book.id, authorIds: [...authorIds, ...book.author_ids].filter((id) => !creditsWanted.includes(id)) });
      const revive = ownsAll && book.deleted_at !== null;
      if (!changed && !creditsChanged && !revive) {
        // A merge of the book's work is its change, recorded by the merge.
        if (this.merges.some((merge) => merge.from === book.work_id)) this.outcome.updated += 1;
        else this.outcome.unchanged += 1;
        continue;
      }
      this.bookUpdates.push({ id: book.id, work_id: movedWork, ...revised.fields, deleted_at: revive ? null : book.deleted_at });
      if (creditsChanged) {
        this.recredits.push({ bookId: book.id, authorIds: creditsWanted });
        for (const id of [...book.author_ids, ...creditsWanted]) this.outcome.touched.add(id);
      }
      Object.assign(book, revised.fields, { work_id: movedWork, author_ids: creditsWanted, deleted_at: revive ? null : book.deleted_at });
      this.outcome.updated += 1;
      this.change('book', book.id, 'update');
      this.outcome.touched.add(book.work_id).add(movedWork);
    }
  }

  private redirects(records: Extract<OlRecord, { type: 'redirect' }>[]): void {
    for (const record of records) {
      const prior = this.known.get(record.key);
      const from = prior?.entity_id ?? null;
      const into = this.known.get(this.landing(record.location))?.entity_id;
      if (from && into && from !== into) this.merges.push({ kind: ENTITY[record.kind], from, into });
      this.remember({
        key: record.key,
        revision: record.revision,
        state: 'redirect',
        entity_id: from,
        digest: null,
        redirect_to: record.location,
      });
      this.outcome.updated += 1;
    }
  }

  private async deletes(records: Extract<OlRecord, { type: 'delete' }>[]): Promise<void> {
    const byKind = new Map<OlKind, string[]>();
    const bookIds = records.flatMap((record) =>
      record.kind === 'edition' && this.known.get(record.key)?.entity_id ? [this.known.get(record.key)!.entity_id!] : [],
    );
    const books = new Map((await booksByIdOrIsbn(this.client, bookIds, [])).map((book) => [book.id, book]));
    for (const record of records) {
      const entityId = this.known.get(record.key)?.entity_id ?? null;
      // A book another source knows too stays: only Open Library's link to it goes.
      const ownedByOpenLibrary = record.kind !== 'edition' || books.get(entityId ?? '')?.source_key === bookSourceKey(record.key);
      if (entityId && ownedByOpenLibrary) byKind.set(record.kind, [...(byKind.get(record.kind) ?? []), entityId]);
      this.remember({ key: record.key, revision: record.revision, state: 'delete', entity_id: entityId, digest: null, redirect_to: null });
      this.outcome.updated += 1;
    }
    for (const [kind, ids] of byKind)
      for (const id of await markDeleted(this.client, TABLE[kind], ids)) this.change(ENTITY[kind], id, 'delete');
  }

  /** Merges decided in this batch, then those of redirects that were waiting for a key that got its entity now. */
  private async merge(): Promise<void> {
    for (const waiting of await redirectsTo(this.client, this.newKeys)) {
      const into = this.known.get(waiting.redirect_to!)?.entity_id;
      const kind = olKeyKind(waiting.key);
      if (into && kind && waiting.entity_id !== into) this.merges.push({ kind: ENTITY[kind], from: waiting.entity_id!, into });
    }
    for (const { kind, from, into } of this.merges) {
      const outcome = await mergeInTransaction(this.client, kind, from, into);
      if (outcome.merged) for (const id of outcome.touched) this.outcome.touched.add(id);
    }
  }
}
