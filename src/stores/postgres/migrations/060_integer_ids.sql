-- Entity ids as 64-bit integers (issue 31): a public id ("bk_5n1x7q0c2r9a") is a prefix and 12
-- characters of Crockford's base32, 60 bits, so it fits a bigint with its kind in the top bits. Stored
-- as text an id cost 16 bytes in each of some nine columns and seven indexes per edition; as a key it
-- costs 8. Clients, Redis, Elasticsearch and the TypeScript code still see only public ids: SQL turns
-- keys into public ids where it hands them out (public_id) and public ids into keys where it takes
-- them in (entity_key, entity_keys), so every id ever issued keeps answering.

-- A key is the kind's tag << 60 | the 60 bits of the public id's body. Tags follow the prefixes'
-- alphabetical order (au 1, bk 2, wk 3) and the alphabet is in ASCII order, so keys sort as the public
-- ids did: an `order by id` answers in the same order as before.

-- The public id of a key. Written as one expression so that PostgreSQL inlines it into the query.
create function public_id(key bigint) returns text language sql immutable parallel safe as $$
  select (case key >> 60 when 1 then 'au_' when 2 then 'bk_' when 3 then 'wk_' end)
    || substr('0123456789abcdefghjkmnpqrstvwxyz', ((key >> 55) & 31)::int + 1, 1)
    || substr('0123456789abcdefghjkmnpqrstvwxyz', ((key >> 50) & 31)::int + 1, 1)
    || substr('0123456789abcdefghjkmnpqrstvwxyz', ((key >> 45) & 31)::int + 1, 1)
    || substr('0123456789abcdefghjkmnpqrstvwxyz', ((key >> 40) & 31)::int + 1, 1)
    || substr('0123456789abcdefghjkmnpqrstvwxyz', ((key >> 35) & 31)::int + 1, 1)
    || substr('0123456789abcdefghjkmnpqrstvwxyz', ((key >> 30) & 31)::int + 1, 1)
    || substr('0123456789abcdefghjkmnpqrstvwxyz', ((key >> 25) & 31)::int + 1, 1)
    || substr('0123456789abcdefghjkmnpqrstvwxyz', ((key >> 20) & 31)::int + 1, 1)
    || substr('0123456789abcdefghjkmnpqrstvwxyz', ((key >> 15) & 31)::int + 1, 1)
    || substr('0123456789abcdefghjkmnpqrstvwxyz', ((key >> 10) & 31)::int + 1, 1)
    || substr('0123456789abcdefghjkmnpqrstvwxyz', ((key >> 5) & 31)::int + 1, 1)
    || substr('0123456789abcdefghjkmnpqrstvwxyz', ((key >> 0) & 31)::int + 1, 1)
$$;

-- The key of a public id; null for any text that is not an id of this service, so a lookup of it
-- finds nothing.
create function entity_key(id text) returns bigint language sql immutable parallel safe as $$
  select case when id ~ '^(au|bk|wk)_[0123456789abcdefghjkmnpqrstvwxyz]{12}$' then
    ((case left(id, 2) when 'au' then 1::bigint when 'bk' then 2::bigint else 3::bigint end) << 60)
    | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, 4, 1)) - 1)::bigint << 55)
    | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, 5, 1)) - 1)::bigint << 50)
    | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, 6, 1)) - 1)::bigint << 45)
    | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, 7, 1)) - 1)::bigint << 40)
    | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, 8, 1)) - 1)::bigint << 35)
    | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, 9, 1)) - 1)::bigint << 30)
    | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, 10, 1)) - 1)::bigint << 25)
    | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, 11, 1)) - 1)::bigint << 20)
    | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, 12, 1)) - 1)::bigint << 15)
    | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, 13, 1)) - 1)::bigint << 10)
    | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, 14, 1)) - 1)::bigint << 5)
    | ((strpos('0123456789abcdefghjkmnpqrstvwxyz', substr(id, 15, 1)) - 1)::bigint << 0)
  end
$$;

-- The keys of public ids, in their order (null for those that are not ids). In PL/pgSQL, which keeps
-- its plan for the session: as an SQL function (a subquery, so never inlined) it was planned again at
-- each call, which doubled the time of a point lookup.
create function entity_keys(ids text[]) returns bigint[] language plpgsql immutable parallel safe as $$
begin
  return array(select entity_key(i.id) from unnest(ids) with ordinality as i(id, n) order by i.n);
end
$$;

-- A new random key of the kind whose prefix is given ('au', 'bk', 'wk'), for set-based writes that
-- create entities (a first load's placeholder works and authors). Its 60 bits are the last 60 of a
-- random UUID, all random (the version and variant bits are in the bytes before).
create function new_entity_key(prefix text) returns bigint language sql volatile as $$
  select ((case prefix when 'au' then 1 when 'bk' then 2 when 'wk' then 3 end)::bigint << 60)
    | (('x' || encode(substr(uuid_send(gen_random_uuid()), 9, 8), 'hex'))::bit(64)::bigint & ((1::bigint << 60) - 1))
$$;
drop function new_entity_id(text);

-- Foreign keys are dropped while both of their sides change type, then made again.
alter table authors drop constraint authors_merged_into_fkey;
alter table author_names drop constraint author_names_author_id_fkey;
alter table works drop constraint works_merged_into_fkey;
alter table books drop constraint books_work_id_fkey, drop constraint books_merged_into_fkey;
alter table book_authors drop constraint book_authors_book_id_fkey, drop constraint book_authors_author_id_fkey;
alter table book_also_liked drop constraint book_also_liked_book_id_fkey;
alter table ratings drop constraint ratings_book_id_fkey;
alter table claimed_credits drop constraint claimed_credits_book_id_fkey, drop constraint claimed_credits_author_id_fkey;

-- Each table is rewritten once, with its indexes.
alter table authors
  alter column id type bigint using entity_key(id),
  alter column merged_into type bigint using entity_key(merged_into);
alter table author_names alter column author_id type bigint using entity_key(author_id);
alter table works
  alter column id type bigint using entity_key(id),
  alter column merged_into type bigint using entity_key(merged_into);
alter table books
  alter column id type bigint using entity_key(id),
  alter column work_id type bigint using entity_key(work_id),
  alter column merged_into type bigint using entity_key(merged_into);
alter table book_authors
  alter column book_id type bigint using entity_key(book_id),
  alter column author_id type bigint using entity_key(author_id);
alter table book_also_liked
  alter column book_id type bigint using entity_key(book_id),
  alter column liked type bigint[] using entity_keys(liked);
alter table ratings alter column book_id type bigint using entity_key(book_id);
alter table claimed_credits
  alter column book_id type bigint using entity_key(book_id),
  alter column author_id type bigint using entity_key(author_id);
-- The change feed is written again with its 8-byte columns first: in the old order each 4-byte enum
-- would be padded to 8 before a key, and a row would grow from 40 bytes to 48 instead of shrinking to
-- 32. Its sequence goes with it, so seq goes on where it was.
create table changes_by_key (
  seq         bigint not null,
  entity_id   bigint not null,
  survivor_id bigint,
  changed_at  timestamptz not null default clock_timestamp(),
  entity      entity_kind not null,
  operation   change_operation not null,
  constraint changes_check check ((operation = 'merge') = (survivor_id is not null))
);
insert into changes_by_key (seq, entity_id, survivor_id, changed_at, entity, operation)
select seq, entity_key(entity_id), entity_key(survivor_id), changed_at, entity, operation from changes order by seq;
alter sequence changes_seq_seq owned by changes_by_key.seq;
alter table changes_by_key alter column seq set default nextval('changes_seq_seq');
drop table changes;
alter table changes_by_key rename to changes;
alter table changes add constraint changes_pkey primary key (seq) with (fillfactor = 100);
alter table external_ids alter column entity_id type bigint using entity_key(entity_id);
-- The trigger of migration 041 names the column in its condition: it is made again below.
drop trigger openlibrary_key_keeps_entity on openlibrary_records;
alter table openlibrary_records alter column entity_id type bigint using entity_key(entity_id);
alter table work_popularity alter column work_id type bigint using entity_key(work_id);
alter table work_readers alter column work_id type bigint using entity_key(work_id);
alter table trending_works alter column work_id type bigint using entity_key(work_id);
alter table authors_to_resolve alter column entity_id type bigint using entity_key(entity_id);

alter table authors add constraint authors_merged_into_fkey foreign key (merged_into) references authors (id);
alter table author_names add constraint author_names_author_id_fkey foreign key (author_id) references authors (id);
alter table works add constraint works_merged_into_fkey foreign key (merged_into) references works (id);
alter table books
  add constraint books_work_id_fkey foreign key (work_id) references works (id),
  add constraint books_merged_into_fkey foreign key (merged_into) references books (id);
alter table book_authors
  add constraint book_authors_book_id_fkey foreign key (book_id) references books (id),
  add constraint book_authors_author_id_fkey foreign key (author_id) references authors (id);
alter table book_also_liked add constraint book_also_liked_book_id_fkey foreign key (book_id) references books (id);
alter table ratings add constraint ratings_book_id_fkey foreign key (book_id) references books (id);
alter table claimed_credits
  add constraint claimed_credits_book_id_fkey foreign key (book_id) references books (id),
  add constraint claimed_credits_author_id_fkey foreign key (author_id) references authors (id);

-- The refusal names the entities by their public ids.
create or replace function openlibrary_key_keeps_entity() returns trigger language plpgsql as $$
begin
  raise exception 'Open Library key % is % already, not %', new.key, public_id(old.entity_id), public_id(new.entity_id)
    using errcode = 'unique_violation';
end
$$;
create trigger openlibrary_key_keeps_entity before update of entity_id on openlibrary_records
  for each row when (old.entity_id is not null and new.entity_id is distinct from old.entity_id)
  execute function openlibrary_key_keeps_entity();

-- The functions of a work's readers and ratings take its key (bodies as in migrations 047 and 052).
drop function readers_of_work(text);
create function readers_of_work(work bigint) returns json language sql stable parallel safe as $$
  select json_build_object(
    'want_to_read', coalesce(r.want_to_read, 0),
    'currently_reading', coalesce(r.currently_reading, 0),
    'already_read', coalesce(r.already_read, 0))
    from (select 1) one left join work_readers r on r.work_id = work
$$;
drop function rating_of_work(text);
-- Goodreads works are told apart by their number, editions without one by their key.
create function rating_of_work(work bigint) returns json language sql stable parallel safe as $$
  with editions as (
    select id, popularity, average_rating, goodreads_work, goodreads_rated
      from books where work_id = work and merged_into is null and deleted_at is null
  ), goodreads_works as (
    select distinct on (goodreads_work, case when goodreads_work is null then id end) goodreads_rated as rated
      from editions where goodreads_rated is not null
     order by goodreads_work, case when goodreads_work is null then id end,
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
