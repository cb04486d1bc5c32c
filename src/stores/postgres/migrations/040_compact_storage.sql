-- Fewer bytes per edition on disk, nothing a client reads changed (issue 21). The figures in
-- parentheses are what each part saves in bytes per edition of a 200,000-edition Open Library first
-- load (scripts/bench/openlibrary.ts), from the sizes of the tables and indexes: 1,443 before, 1,188
-- with these and the first load's own part (rows in key order, popularity derived before its commit).

-- Names of a fixed few values as enums (4 bytes, were text of 5 to 9): an entity's kind and an
-- operation on every change, an Open Library key's state. Enums read and compare as their labels,
-- and their labels are declared in alphabetical order, so they sort as the text did. The change feed
-- rows go from 72 to 64 bytes (-20 per edition).
create type entity_kind as enum ('author', 'book', 'work');
create type change_operation as enum ('delete', 'insert', 'merge', 'update');
create type openlibrary_state as enum ('delete', 'pending', 'record', 'redirect');

-- The feed is appended in seq order: pages of its index fill up and are never split again (-5).
alter index changes_pkey set (fillfactor = 100);
alter table changes
  drop constraint changes_entity_check,
  drop constraint changes_operation_check,
  drop constraint changes_check;
alter table changes
  alter column entity type entity_kind using entity::entity_kind,
  alter column operation type change_operation using operation::change_operation,
  add check ((operation = 'merge') = (survivor_id is not null));

-- A record's digest only tells whether a newer revision maps to the same fields as the stored one:
-- 64 bits of its md5 are as good for that as 128 (a wrong "unchanged" once in 2^64 revisions), and
-- an 8-byte integer instead of 24 characters of base64 takes the row from 88 to 72 bytes (-32).
alter table openlibrary_records drop constraint openlibrary_records_state_check;
alter table openlibrary_records
  alter column state type openlibrary_state using state::openlibrary_state,
  alter column digest type bigint using ('x' || encode(substr(decode(digest, 'base64'), 1, 8), 'hex'))::bit(64)::bigint;

-- Source keys are unique per source; Open Library's ("openlibrary:OL…M", one for each book an
-- edition key made) are unique as those keys are in openlibrary_records, and nothing looks them up:
-- the index keeps the other sources' keys only (-51).
alter table books drop constraint books_source_key_key;
create unique index books_source_key on books (source_key) where source_key not like 'openlibrary:%';

-- A work is keyed one of two ways: the editions of other sources are grouped by title and author
-- ("title|a smith", see loader/import/sourceFields.ts workKey; unique, so that concurrent importers
-- agree), Open Library's works by its keys ("ol:OL…W", "ol-edition:OL…M"; unique as those are in
-- openlibrary_records, and read by id only). Only the grouping keys, which always hold a "|", are
-- indexed (-31).
alter table works drop constraint works_work_key_key;
create unique index works_grouping_key on works (work_key) where work_key like '%|%';

-- An ISBN-10 is derived from the ISBN-13 (domain/isbn.ts), so two books with one ISBN-10 have one
-- ISBN-13, which is unique already: the ISBN-10's own unique index goes (-27), and a check holds it
-- to its ISBN-13.
alter table books
  drop constraint books_isbn_10_key,
  add constraint books_isbn_10_of_isbn_13 check (isbn_10 is null or (isbn_13 like '978%' and substr(isbn_13, 4, 9) = left(isbn_10, 9)));

-- When a book or work was created is the time of its insert in the change feed; nothing read the
-- columns that repeated it (-14). Dropped columns keep their bytes in rows written before, until
-- those rows are written again.
alter table books drop column created_at;
alter table works drop column created_at;

-- A cover of Open Library's is stored as its number (see loader/stores/postgres/covers.ts), the
-- rest of its URL being the same for all (-30). Every read of a cover_url goes through this.
create function cover_url_of(stored text) returns text language sql immutable parallel safe as $$
  select case when stored ~ '^[0-9]+$' then 'https://covers.openlibrary.org/b/id/' || stored || '-M.jpg' else stored end
$$;
update books set cover_url = substring(cover_url from '^https://covers\.openlibrary\.org/b/id/([1-9][0-9]*)-M\.jpg$')
 where cover_url ~ '^https://covers\.openlibrary\.org/b/id/[1-9][0-9]*-M\.jpg$';
update works set cover_url = substring(cover_url from '^https://covers\.openlibrary\.org/b/id/([1-9][0-9]*)-M\.jpg$')
 where cover_url ~ '^https://covers\.openlibrary\.org/b/id/[1-9][0-9]*-M\.jpg$';
