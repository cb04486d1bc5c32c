-- Open Library: the fields its records bring, identifiers in other catalogues, deleted records, and
-- the bookkeeping that lets a newer dump write only what changed (see loader/import/openlibrary/).

-- New fields. Null is "no source knows", as for every other field.
alter table books
  add column subjects        text[],
  add column description     text,
  add column physical_format text,
  -- A record its source deleted: its id answers 410 and it is left out of every live query.
  add column deleted_at      timestamptz;
alter table works
  add column subtitle    text,
  add column subjects    text[],
  add column description text,
  add column cover_url   text,
  add column deleted_at  timestamptz;
alter table authors
  add column bio             text,
  add column birth_date      text,
  add column death_date      text,
  -- Names an author record lists. author_names holds the spellings importers resolve names by, one
  -- author per spelling; catalogues such as Open Library have many authors of one name.
  add column alternate_names text[],
  add column deleted_at      timestamptz;

-- Identifiers of a book, work or author in other catalogues (Goodreads, OCLC, LCCN, VIAF, Wikidata,
-- ISNI). Open Library keys live in openlibrary_records. One value may name several of our records
-- (an OCLC number covers several printings), so the value is not unique.
create table external_ids (
  entity_id text not null,
  scheme    text not null,
  value     text not null,
  primary key (entity_id, scheme, value)
);

-- Every Open Library key the importer has met, and what it is here:
-- - record:   a record was imported; entity_id is the book, work or author it is (several edition
--             keys may be one book: one ISBN, one row), digest is the md5 of what it mapped to, so a
--             newer revision that maps to the same fields writes nothing.
-- - pending:  named by another record (an edition's work or author) before its own record came: a
--             placeholder entity holds the links until it does (revision 0, so any record wins).
-- - redirect: merged into redirect_to; entity_id, if the key had one, was merged into that key's.
-- - delete:   deleted; entity_id, if any, is deleted too when Open Library alone knew it.
-- A record is applied only when its revision is newer than the one stored here, so re-reading a dump
-- skips every line with one index probe.
create table openlibrary_records (
  key         text primary key,
  revision    integer not null,
  state       text not null check (state in ('record', 'pending', 'redirect', 'delete')),
  entity_id   text,
  digest      text,
  redirect_to text
);
create index openlibrary_records_entity on openlibrary_records (entity_id) where entity_id is not null;
create index openlibrary_records_redirect_to on openlibrary_records (redirect_to) where redirect_to is not null;
