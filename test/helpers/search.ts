import { readFile } from 'node:fs/promises';
import { createElastic, indexAliases, type Elastic } from '../../src/stores/elasticsearch/client.js';
import { projectPath } from '../../src/paths.js';
import type { Queryable } from '../../src/stores/postgres/pool.js';

/**
 * TEMPORARY: indexes a world's PostgreSQL catalogue into Elasticsearch until the indexer's reindex
 * (loader/index/reindex.ts) lands; then this file calls that instead.
 */
export interface IndexTarget {
  db: Queryable;
  config: { elasticsearchUrl: string; indexPrefix: string };
}

async function mapping(name: 'books' | 'authors'): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(projectPath('mappings', `${name}.json`), 'utf8')) as Record<string, unknown>;
}

const BOOK_DOCUMENTS = `
  select b.id, b.work_id, b.isbn_13, b.isbn_10, b.title, b.subtitle, b.series, b.series_number,
    coalesce((select json_agg(json_build_object('id', a.id, 'name', a.name) order by ba.position)
                from book_authors ba join authors a on a.id = ba.author_id where ba.book_id = b.id), '[]'::json) as authors,
    b.publisher, b.year, b.language, b.pages, b.cover_url, b.popularity, b.average_rating,
    coalesce((select json_agg(r2.book_id) from (
       select o.book_id, count(*) as n from ratings mine join ratings o on o.user_id = mine.user_id and o.book_id <> mine.book_id
        where mine.book_id = b.id group by o.book_id order by n desc, o.book_id limit 50) r2), '[]'::json) as also_liked
  from books b where b.merged_into is null`;

const AUTHOR_DOCUMENTS = `
  select a.id, a.name, a.name_key,
    coalesce((select json_agg(n.name) from author_names n where n.author_id = a.id and n.name <> a.name), '[]'::json) as alternate_names,
    (select count(distinct b.work_id)::int from book_authors ba join books b on b.id = ba.book_id
      where ba.author_id = a.id and b.merged_into is null) as work_count,
    coalesce((select sum(b.popularity)::bigint from book_authors ba join books b on b.id = ba.book_id
      where ba.author_id = a.id and b.merged_into is null), 0) as popularity
  from authors a where a.merged_into is null`;

async function fill(elastic: Elastic, alias: string, body: Record<string, unknown>, documents: Record<string, unknown>[]): Promise<void> {
  const index = `${alias}-v1`;
  await elastic.indices.delete({ index, ignore_unavailable: true });
  await elastic.indices.create({ index, ...body, aliases: { [alias]: {} } });
  for (let start = 0; start < documents.length; start += 2000) {
    const operations = documents.slice(start, start + 2000).flatMap((document) => [{ index: { _index: index, _id: String(document.id) } }, document]);
    const response = await elastic.bulk({ operations });
    if (response.errors) throw new Error(`bulk indexing failed: ${JSON.stringify(response.items.find((item) => item.index?.error))}`);
  }
  await elastic.indices.refresh({ index });
}

export async function indexCatalogue(target: IndexTarget): Promise<void> {
  const elastic = createElastic(target.config.elasticsearchUrl);
  const aliases = indexAliases(target.config.indexPrefix);
  try {
    const { rows: books } = await target.db.query<{ authors: { id: string; name: string }[] }>(BOOK_DOCUMENTS);
    await fill(
      elastic,
      aliases.books,
      await mapping('books'),
      books.map((book) => ({
        ...book,
        author_ids: book.authors.map((author) => author.id),
        author_names: book.authors.map((author) => author.name),
        updated_seq: 0,
      })),
    );
    const { rows: authors } = await target.db.query<Record<string, unknown>>(AUTHOR_DOCUMENTS);
    await fill(elastic, aliases.authors, await mapping('authors'), authors.map((author) => ({ ...author, updated_seq: 0 })));
  } finally {
    await elastic.close();
  }
}

/** Drops the indices of a world. */
export async function dropIndices(config: { elasticsearchUrl: string; indexPrefix: string }): Promise<void> {
  const elastic = createElastic(config.elasticsearchUrl);
  try {
    await elastic.indices.delete({ index: `${config.indexPrefix}*`, ignore_unavailable: true, allow_no_indices: true });
  } finally {
    await elastic.close();
  }
}
