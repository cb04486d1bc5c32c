-- The catalogue: authors, works (a creation), books (its editions) and the links between them.
-- A merged entity keeps its row with merged_into pointing at the final survivor, so its id
-- (and, for a book, its ISBN) keeps answering; merged rows are excluded from every live query.

create table authors (
  id          text primary key,
  name        text not null,
  -- identity key of the name the author was created under; unique so concurrent importers agree
  name_key    text not null unique,
  merged_into text references authors (id),
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now(),
  check (merged_into is null or merged_into <> id)
);
create index authors_merged_into on authors (merged_into) where merged_into is not null;

-- Every spelling seen of an author with its identity key ("J.K. Rowling" and "J. K. Rowling" share
-- one key). Importers resolve names here; a merge moves the names to the survivor.
create table author_names (
  name      text primary key,
  name_key  text not null,
  author_id text not null references authors (id)
);
create index author_names_key on author_names (name_key);
create index author_names_author on author_names (author_id);

create table works (
  id             text primary key,
  -- grouping key of editions: normalized title and first author (see domain/titles, domain/names)
  work_key       text not null unique,
  title          text not null,
  original_year  integer,
  merged_into    text references works (id),
  created_at     timestamptz not null default now(),
  updated_at     timestamptz not null default now(),
  check (merged_into is null or merged_into <> id)
);
create index works_merged_into on works (merged_into) where merged_into is not null;

create table books (
  id             text primary key,
  work_id        text not null references works (id),
  isbn_13        text unique check (isbn_13 ~ '^97[89][0-9]{10}$'),
  isbn_10        text unique check (isbn_10 ~ '^[0-9]{9}[0-9X]$'),
  -- identity of a row that has no ISBN, in its source ("goodreads:2767052")
  source_key     text unique,
  title          text not null,
  subtitle       text,
  series         text,
  series_number  text,
  publisher      text,
  year           integer,
  language       text,
  pages          integer,
  cover_url      text,
  popularity     bigint not null default 0,
  average_rating numeric(4, 2),
  merged_into    text references books (id),
  created_at     timestamptz not null default now(),
  updated_at     timestamptz not null default now(),
  check (isbn_13 is not null or source_key is not null),
  check (merged_into is null or merged_into <> id)
);
create index books_work on books (work_id);
create index books_merged_into on books (merged_into) where merged_into is not null;

create table book_authors (
  book_id   text not null references books (id),
  author_id text not null references authors (id),
  position  smallint not null,
  primary key (book_id, author_id)
);
create index book_authors_author on book_authors (author_id);

-- The one change sequence: every insert, update, delete and merge of a book, work or author,
-- written in the same transaction as the change. Writers take a transaction-scoped advisory lock
-- before appending (see stores/postgres/changes.ts), so seq order is commit order.
create table changes (
  seq         bigserial primary key,
  entity      text not null check (entity in ('book', 'work', 'author')),
  entity_id   text not null,
  operation   text not null check (operation in ('insert', 'update', 'delete', 'merge')),
  survivor_id text,
  changed_at  timestamptz not null default clock_timestamp(),
  check ((operation = 'merge') = (survivor_id is not null))
);

create table api_keys (
  kid         text primary key,
  name        text not null,
  secret_hash text not null,
  created_at  timestamptz not null default now(),
  revoked_at  timestamptz
);

create table usage (
  id          bigserial primary key,
  kid         text not null,
  method      text not null,
  route       text not null,
  status      smallint not null,
  at          timestamptz not null,
  latency_ms  real not null
);
create index usage_kid_at on usage (kid, at);

-- Reader ratings (Book-Crossing): the co-reading signal behind recommendations.
create table ratings (
  user_id integer not null,
  book_id text not null references books (id),
  rating  smallint not null check (rating between 0 and 10),
  primary key (user_id, book_id)
);
create index ratings_book on ratings (book_id);

-- Where each loader stands in the change sequence; advanced only after Elasticsearch acknowledged.
create table loader_checkpoints (
  name       text primary key,
  seq        bigint not null,
  updated_at timestamptz not null default now()
);
