-- What readers read (issue 29): the counts of each star of Open Library's ratings, the reading log's
-- entries by day, and what the API reads of them, derived per work with the works' popularity
-- (loader/stores/postgres/readerSignals.ts).

-- Readers who gave a work each of the five stars; `ratings` and `rating_sum` are their total and sum.
alter table openlibrary_reader_counts
  add column rated_1 integer not null default 0,
  add column rated_2 integer not null default 0,
  add column rated_3 integer not null default 0,
  add column rated_4 integer not null default 0,
  add column rated_5 integer not null default 0;

-- Entries of the last reading-log dump per work key and day they were made, for the days trending
-- can ask for (a year before the dump's newest date): one row per work and day, never per reader.
create table openlibrary_reading_log_days (
  work_key text not null,
  day      date not null,
  added    integer not null,
  primary key (work_key, day)
);

-- Each work's readers as the API shows them: Open Library's shelves and stars, its keys resolved to
-- the work as for work_popularity. Works no reader logged or rated are absent.
create table work_readers (
  work_id           text primary key,
  want_to_read      integer not null,
  currently_reading integer not null,
  already_read      integer not null,
  rated             integer[] not null check (cardinality(rated) = 5)
);

-- The works most added to reading logs in the day, week, month and year up to the newest day of the
-- reading log: the first entries of each period's ranking (as far as a list may page), and how many
-- works had any entry in it.
create table trending_works (
  period text not null check (period in ('day', 'week', 'month', 'year')),
  work_id text not null,
  added   integer not null,
  primary key (period, work_id)
);
create index trending_works_rank on trending_works (period, added desc, work_id);

create table trending_periods (
  period    text primary key check (period in ('day', 'week', 'month', 'year')),
  from_day  date not null,
  to_day    date not null,
  works     bigint not null
);

-- What a work's record, and each of its books', shows of its readers (domain/records.ts `readers`).
create function readers_of_work(work text) returns json language sql stable parallel safe as $$
  select json_build_object(
    'want_to_read', coalesce(r.want_to_read, 0),
    'currently_reading', coalesce(r.currently_reading, 0),
    'already_read', coalesce(r.already_read, 0))
    from (select 1) one left join work_readers r on r.work_id = work
$$;

-- One source's ratings: their number, their average to two decimals (null when none) and, where the
-- source tells them, how many of each star (an array of five counts, or null).
create function source_rating(how_many bigint, total numeric, stars int[]) returns json language sql immutable parallel safe as $$
  select json_build_object(
    'average', case when how_many > 0 then round(total / how_many, 2)::float8 end,
    'count', how_many,
    'stars', case when stars is not null then json_build_object('1', stars[1], '2', stars[2], '3', stars[3], '4', stars[4], '5', stars[5]) end)
$$;

-- What a work's record, and each of its books', shows of its ratings (domain/records.ts `rating`):
-- the five-star ratings of Open Library's readers and of Goodreads' (goodbooks: each live edition's
-- ratings_count at its average_rating) together, and each source apart, Book-Crossing's on its own
-- scale of 1 to 10 (its 0 says a reader had the book, not what they thought of it).
create function rating_of_work(work text) returns json language sql stable parallel safe as $$
  with ol as (
    select coalesce(r.rated, array[0, 0, 0, 0, 0]) as stars from (select 1) one left join work_readers r on r.work_id = work
  ), ol_sum as (
    select stars, (select sum(n) from unnest(stars) n)::bigint as count,
           (select sum(n * star) from unnest(stars) with ordinality as s(n, star))::numeric as total
      from ol
  ), goodreads as (
    select coalesce(sum(popularity) filter (where average_rating is not null), 0)::bigint as count,
           coalesce(sum(popularity * average_rating), 0)::numeric as total
      from books where work_id = work and merged_into is null and deleted_at is null
  ), book_crossing as (
    select count(*)::bigint as count, coalesce(sum(r.rating), 0)::numeric as total
      from books b join ratings r on r.book_id = b.id
     where b.work_id = work and b.merged_into is null and b.deleted_at is null and r.rating > 0
  )
  select json_build_object(
    'average', case when o.count + g.count > 0 then round((o.total + g.total) / (o.count + g.count), 2)::float8 end,
    'count', o.count + g.count,
    'stars', source_rating(o.count, o.total, o.stars)->'stars',
    'sources', json_build_object(
      'openlibrary', source_rating(o.count, o.total, o.stars),
      'goodreads', source_rating(g.count, g.total, null),
      'book_crossing', source_rating(x.count, x.total, null)))
    from ol_sum o, goodreads g, book_crossing x
$$;
