-- "Readers of X also liked Y": derived from ratings by stores/postgres/ratings.ts (deriveAlsoLiked)
-- and copied into the book documents of the search index by loader/index. Up to ~20 book ids per
-- book, best first. Ids may go stale when books are merged; documents filter them at build time.
create table book_also_liked (
  book_id     text primary key references books (id),
  liked       text[] not null,
  computed_at timestamptz not null default now()
);
