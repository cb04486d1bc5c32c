-- What a work is: one book, or a boxset, omnibus or companion (see domain/titles.ts workKind). Those
-- are works of their own that search ranks below, and recommendations never offer for, the books
-- they gather. `bookmeta regroup` sets the kind of works made before this column.
alter table works add column kind text not null default 'book' check (kind in ('book', 'boxset', 'omnibus', 'companion'));
