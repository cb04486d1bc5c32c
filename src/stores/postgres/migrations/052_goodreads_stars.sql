-- Goodreads' stars (issue 29): goodbooks-10k gives, for each row, the Goodreads work it is the best
-- edition of (`work_id`) and how many of that work's readers gave each star (`ratings_1` to
-- `ratings_5`, which add up to its `work_ratings_count` and average to its `average_rating` in every
-- row of the file). The goodbooks importer keeps them on the row's book (loader/import/goodbooks.ts).

-- Null on every book until goodbooks is imported (again), and on other sources' books: adding them
-- rewrites no row. goodreads_rated holds the five counts or nothing (the importer's starCounts); a
-- check saying so would read every book under this migration's lock.
alter table books
  add column goodreads_work bigint,
  add column goodreads_rated integer[];

-- What a work's record, and each of its books', shows of its ratings (domain/records.ts `rating`):
-- the five-star ratings of Open Library's readers and of Goodreads' together, and each source apart,
-- Book-Crossing's on its own scale of 1 to 10 (its 0 says a reader had the book, not what they
-- thought of it).
-- Goodreads' counts are of its work, not of the edition that carries them: each Goodreads work counts
-- once, however many of the work's editions carry a copy (the largest: ratings only grow), and
-- Goodreads works grouped into one work add up. An edition rated on Goodreads whose stars are not
-- known (imported before this migration, or from a file without them) counts as before: its own
-- ratings_count at its average_rating; Goodreads' stars are then not known, and the work's `stars`
-- are Open Library's alone.
-- The counts are worked out once (materialized) and their sums written out: a subquery over each
-- array at each use made the function two to three times slower than migration 047's.
create or replace function rating_of_work(work text) returns json language sql stable parallel safe as $$
  with editions as (
    select id, popularity, average_rating, goodreads_work, goodreads_rated
      from books where work_id = work and merged_into is null and deleted_at is null
  ), goodreads_works as (
    select distinct on (coalesce(goodreads_work::text, id)) goodreads_rated as rated
      from editions where goodreads_rated is not null
     order by coalesce(goodreads_work::text, id),
              goodreads_rated[1] + goodreads_rated[2] + goodreads_rated[3] + goodreads_rated[4] + goodreads_rated[5] desc, id
  ), goodreads_unknown as (
    select coalesce(sum(popularity), 0)::bigint as count, coalesce(sum(popularity * average_rating), 0)::numeric as total
      from editions where goodreads_rated is null and average_rating is not null
  ), stars as materialized (
    select coalesce(r.rated, array[0, 0, 0, 0, 0]) as ol,
           (select array[coalesce(sum(rated[1]), 0), coalesce(sum(rated[2]), 0), coalesce(sum(rated[3]), 0),
                         coalesce(sum(rated[4]), 0), coalesce(sum(rated[5]), 0)]::int[] from goodreads_works) as gr
      from (select 1) one left join work_readers r on r.work_id = work
  ), counts as materialized (
    -- Each source's number of ratings and sum of stars; Goodreads' stars only when all are known.
    select s.ol, case when u.count = 0 then s.gr end as gr,
           s.ol[1]::bigint + s.ol[2] + s.ol[3] + s.ol[4] + s.ol[5] as ol_count,
           (s.ol[1]::bigint + 2 * s.ol[2] + 3 * s.ol[3] + 4 * s.ol[4] + 5 * s.ol[5])::numeric as ol_total,
           s.gr[1]::bigint + s.gr[2] + s.gr[3] + s.gr[4] + s.gr[5] + u.count as gr_count,
           (s.gr[1]::bigint + 2 * s.gr[2] + 3 * s.gr[3] + 4 * s.gr[4] + 5 * s.gr[5])::numeric + u.total as gr_total
      from stars s, goodreads_unknown u
  ), book_crossing as (
    select count(*)::bigint as count, coalesce(sum(r.rating), 0)::numeric as total
      from editions b join ratings r on r.book_id = b.id
     where r.rating > 0
  )
  select json_build_object(
    'average', case when c.ol_count + c.gr_count > 0 then round((c.ol_total + c.gr_total) / (c.ol_count + c.gr_count), 2)::float8 end,
    'count', c.ol_count + c.gr_count,
    'stars', source_rating(0, 0, case when c.gr is null then c.ol else
      array[c.ol[1] + c.gr[1], c.ol[2] + c.gr[2], c.ol[3] + c.gr[3], c.ol[4] + c.gr[4], c.ol[5] + c.gr[5]] end)->'stars',
    'sources', json_build_object(
      'openlibrary', source_rating(c.ol_count, c.ol_total, c.ol),
      'goodreads', source_rating(c.gr_count, c.gr_total, c.gr),
      'book_crossing', source_rating(x.count, x.total, null)))
    from counts c, book_crossing x
$$;
