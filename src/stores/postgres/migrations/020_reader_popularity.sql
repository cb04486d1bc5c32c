-- Readers' signals from Open Library's reading-log and ratings dumps, counted per work key (the dumps
-- have hundreds of millions of lines: what ranking needs is how many, never who or when). Each dump
-- is a whole snapshot, so importing one sets the counts of its kind to the file's.
create table openlibrary_reader_counts (
  -- as openlibrary_records keys it: "OL45804W"
  work_key          text primary key,
  want_to_read      integer not null default 0,
  currently_reading integer not null default 0,
  already_read      integer not null default 0,
  ratings           integer not null default 0,
  rating_sum        bigint not null default 0
);

-- Each work's popularity from its readers and its editions (see stores/postgres/readerPopularity.ts),
-- in the unit of books.popularity, which the book documents add it to. Works without any are absent.
create table work_popularity (
  work_id    text primary key,
  popularity bigint not null
);
