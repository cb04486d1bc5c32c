-- The baseline of scripts/bench/openlibrary.ts: a hand-written SQL load of the same dump files into the
-- same catalogue tables, as an operator who knows PostgreSQL would write it. The lines are already
-- in bench_lines (copied as they are, one text column); in one transaction, the catalogue's indexes
-- and foreign keys are dropped, the newest revision of each key is parsed and mapped by SQL alone,
-- written with one INSERT ... SELECT per table (with the change feed), and the indexes and keys are
-- built again. Its mapping is a sketch of the first load's (the first ISBN-13 as given, no redirects
-- followed, no repeated ISBN merged, no kinds of work): what PostgreSQL alone costs for such rows.
\set ON_ERROR_STOP on
begin;
set local maintenance_work_mem = '1GB';
set local work_mem = '64MB';
set local synchronous_commit = off;

create temp table catalogue on commit drop as
  select c.oid, c.relname from pg_class c
   where c.relnamespace = 'public'::regnamespace
     and c.relname in ('authors', 'works', 'books', 'book_authors', 'external_ids', 'openlibrary_records', 'author_names', 'claimed_credits', 'ratings', 'book_also_liked');
create temp table definitions on commit drop as
  select 1 as step, format('alter table %I add constraint %I %s', c.relname, k.conname, pg_get_constraintdef(k.oid)) as statement,
         format('alter table %I drop constraint %I', c.relname, k.conname) as dropping
    from pg_constraint k join catalogue c on c.oid = k.conrelid where k.contype in ('p', 'u')
  union all
  select 2, pg_get_indexdef(i.indexrelid), format('drop index %s', i.indexrelid::regclass)
    from pg_index i join catalogue c on c.oid = i.indrelid where not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
  union all
  select 3, format('alter table %I add constraint %I %s', c.relname, k.conname, pg_get_constraintdef(k.oid)),
         format('alter table %I drop constraint %I', c.relname, k.conname)
    from pg_constraint k join catalogue c on c.oid = k.conrelid where k.contype = 'f';
do $$ declare d record; begin
  for d in select dropping from definitions order by step desc loop execute d.dropping; end loop;
end $$;

create temp table records on commit drop as
  select distinct on (key) type, key, substring(key from '[^/]+$') as short, revision, data
    from (select split_part(line, E'\t', 1) as type, split_part(line, E'\t', 2) as key,
                 split_part(line, E'\t', 3)::integer as revision, split_part(line, E'\t', 5)::jsonb as data
            from bench_lines where line ~ '^/type/\w+\t/(authors|works|books)/OL[0-9]+[AWM]\t[0-9]+\t[^\t]*\t\{.*\}$') parsed
   order by key, revision desc;
truncate bench_lines;
create function pg_temp.texts(value jsonb) returns text[] language sql immutable as $$
  select case when jsonb_typeof(value) = 'array' then array(select jsonb_array_elements_text(value)) else '{}' end
$$;
create function pg_temp.prose(value jsonb) returns text language sql immutable as $$
  select case jsonb_typeof(value) when 'object' then value ->> 'value' when 'string' then value #>> '{}' end
$$;

-- Keys of the catalogue's shape, made as the service makes them (new_entity_key).
create temp table ids on commit drop as
  select key, new_entity_key(case type when '/type/author' then 'au' when '/type/work' then 'wk' else 'bk' end) as id
    from records where type in ('/type/author', '/type/work', '/type/edition');
alter table ids add primary key (key);
analyze records, ids;

insert into authors (id, name_key, name, bio, birth_date, death_date, alternate_names)
select i.id, 'ol:' || r.short, coalesce(r.data ->> 'name', r.data ->> 'personal_name', r.short), pg_temp.prose(r.data -> 'bio'),
       r.data ->> 'birth_date', r.data ->> 'death_date', pg_temp.texts(r.data -> 'alternate_names')
  from records r join ids i using (key) where r.type = '/type/author';

insert into works (id, work_key, title, subtitle, subjects, description, cover_url)
select i.id, 'ol:' || r.short, coalesce(r.data ->> 'title', r.short), r.data ->> 'subtitle', pg_temp.texts(r.data -> 'subjects'),
       pg_temp.prose(r.data -> 'description'), r.data -> 'covers' ->> 0
  from records r join ids i using (key) where r.type = '/type/work';

create temp table editions on commit drop as
  select i.id, r.short, r.data, r.data -> 'works' -> 0 ->> 'key' as work_key,
         case when row_number() over (partition by r.data -> 'isbn_13' ->> 0 order by r.key) = 1 then r.data -> 'isbn_13' ->> 0 end as isbn_13
    from records r join ids i using (key) where r.type = '/type/edition';
-- Works named and not given, and editions naming none: a work of their own.
insert into works (id, work_key, title)
select new_entity_key('wk'), 'ol:' || substring(e.work_key from '[^/]+$'), min(e.data ->> 'title')
  from editions e where e.work_key is not null and not exists (select 1 from ids i where i.key = e.work_key) group by e.work_key;
insert into works (id, work_key, title)
select new_entity_key('wk'), 'ol-edition:' || e.short, coalesce(e.data ->> 'title', e.short) from editions e where e.work_key is null;
create temp table work_ids on commit drop as select work_key, id from works;
analyze editions, work_ids;

insert into books (id, work_id, isbn_13, source_key, title, subtitle, publisher, year, language, pages, cover_url, subjects, description, physical_format)
select e.id, w.id, case when e.isbn_13 ~ '^97[89][0-9]{10}$' then e.isbn_13 end, 'openlibrary:' || e.short, coalesce(e.data ->> 'title', e.short),
       e.data ->> 'subtitle', e.data -> 'publishers' ->> 0, substring(e.data ->> 'publish_date' from '[0-9]{4}')::integer,
       substring(e.data -> 'languages' -> 0 ->> 'key' from '[^/]+$'),
       case when jsonb_typeof(e.data -> 'number_of_pages') = 'number' then (e.data ->> 'number_of_pages')::numeric::integer end,
       e.data -> 'covers' ->> 0, pg_temp.texts(e.data -> 'subjects'), pg_temp.prose(e.data -> 'description'), e.data ->> 'physical_format'
  from editions e join work_ids w on w.work_key = coalesce('ol:' || substring(e.work_key from '[^/]+$'), 'ol-edition:' || e.short);

insert into book_authors (book_id, author_id, position)
select distinct on (e.id, a.id) e.id, a.id, (named.n - 1)::smallint
  from editions e cross join jsonb_array_elements(case when jsonb_typeof(e.data -> 'authors') = 'array' then e.data -> 'authors' end) with ordinality as named(value, n)
  join authors a on a.name_key = 'ol:' || substring(named.value ->> 'key' from '[^/]+$')
 order by e.id, a.id, named.n;

insert into openlibrary_records (key, revision, state, entity_id, redirect_to)
select r.key, r.revision, (case r.type when '/type/redirect' then 'redirect' when '/type/delete' then 'delete' else 'record' end)::openlibrary_state,
       i.id, case when r.type = '/type/redirect' then r.data ->> 'location' end
  from records r left join ids i using (key);

insert into changes (entity, entity_id, operation)
select entity, id, 'insert'
  from (select 'author'::entity_kind as entity, id from authors union all select 'work', id from works union all select 'book', id from books) made;

do $$ declare d record; begin
  for d in select statement from definitions order by step loop execute d.statement; end loop;
end $$;
analyze authors, works, books, book_authors, openlibrary_records;
commit;
