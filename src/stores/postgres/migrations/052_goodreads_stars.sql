-- Goodreads' stars (issue 29): goodbooks-10k gives, for each row, the Goodreads work it is the best
-- edition of (`work_id`) and how many of that work's readers gave each star (`ratings_1` to
-- `ratings_5`, which add up to its `work_ratings_count` and average to its `average_rating` in every
-- row of the file). The goodbooks importer keeps them on the row's book (loader/import/goodbooks.ts).

-- Null on every book until goodbooks is imported (again), and on other sources' books: adding them
-- rewrites no row, and the check has no existing row to read.
alter table books
  add column goodreads_work bigint,
  add column goodreads_rated integer[];
alter table books add constraint books_goodreads_rated_five check (cardinality(goodreads_rated) = 5) not valid;

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
create or replace function rating_of_work(work text) returns json language sql stable parallel safe as $$
  with ol as (
    select coalesce(r.rated, array[0, 0, 0, 0, 0]) as stars from (select 1) one left join work_readers r on r.work_id = work
  ), ol_sum as (
    select stars, (select sum(n) from unnest(stars) n)::bigint as count,
           (select sum(n * star) from unnest(stars) with ordinality as s(n, star))::numeric as total
      from ol
  ), editions as (
    select id, popularity, average_rating, goodreads_work, goodreads_rated
      from books where work_id = work and merged_into is null and deleted_at is null
  ), goodreads_works as (
    select distinct on (coalesce(goodreads_work::text, id)) goodreads_rated as rated
      from editions where goodreads_rated is not null
     order by coalesce(goodreads_work::text, id), (select sum(n) from unnest(goodreads_rated) n) desc, id
  ), goodreads_stars as (
    select array[coalesce(sum(rated[1]), 0), coalesce(sum(rated[2]), 0), coalesce(sum(rated[3]), 0),
                 coalesce(sum(rated[4]), 0), coalesce(sum(rated[5]), 0)]::int[] as stars
      from goodreads_works
  ), goodreads_unknown as (
    select coalesce(sum(popularity), 0)::bigint as count, coalesce(sum(popularity * average_rating), 0)::numeric as total
      from editions where goodreads_rated is null and average_rating is not null
  ), goodreads as (
    select case when u.count = 0 then k.stars end as stars,
           (select sum(n) from unnest(k.stars) n)::bigint + u.count as count,
           (select sum(n * star) from unnest(k.stars) with ordinality as s(n, star))::numeric + u.total as total
      from goodreads_stars k, goodreads_unknown u
  ), book_crossing as (
    select count(*)::bigint as count, coalesce(sum(r.rating), 0)::numeric as total
      from editions b join ratings r on r.book_id = b.id
     where r.rating > 0
  )
  select json_build_object(
    'average', case when o.count + g.count > 0 then round((o.total + g.total) / (o.count + g.count), 2)::float8 end,
    'count', o.count + g.count,
    'stars', source_rating(o.count, o.total, case when g.stars is null then o.stars else
      (select array_agg(a + b order by star) from unnest(o.stars, g.stars) with ordinality as s(a, b, star)) end)->'stars',
    'sources', json_build_object(
      'openlibrary', source_rating(o.count, o.total, o.stars),
      'goodreads', source_rating(g.count, g.total, g.stars),
      'book_crossing', source_rating(x.count, x.total, null)))
    from ol_sum o, goodreads g, book_crossing x
$$;
