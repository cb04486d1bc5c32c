-- Authors and works an import changed, whose authors are yet to be resolved across sources
-- (loader/import/authors.ts). Each import batch adds its rows in its own transaction, so they are
-- there exactly when its writes are; the import ends by resolving them and deleting the rows it
-- resolved. An import killed before that leaves them for the next import (or `resolve-authors`).
-- A work stands for the authors credited or claimed on its books. Rows repeat an entity when
-- several batches touched it: appending never waits on another importer's row.
create table authors_to_resolve (
  id        bigserial primary key,
  kind      entity_kind not null check (kind in ('author', 'work')),
  entity_id text not null
);

-- Resolution finds the works an author is claimed on from the author (claims keep the ids as written).
create index claimed_credits_author on claimed_credits (author_id);
