-- Authors a source names on a book whose credits another source keeps (an Open Library edition of a
-- goodbooks ISBN names its own author record): evidence, for author resolution
-- (loader/import/authors.ts), that the two credits are one person. The ids are as written; readers
-- follow merged_into to the survivors.
create table claimed_credits (
  book_id   text not null references books (id),
  author_id text not null references authors (id),
  primary key (book_id, author_id)
);
