-- An Open Library key keeps the entity it got for good: a record after a delete or a redirect is
-- that entity again (see loader/import/openlibrary/apply.ts). Since migration 040 no unique index
-- holds an Open Library book's source key or work's work key, so a second entity made for one key
-- would go unnoticed; instead, pointing a key that has an entity at another one is refused. Nothing
-- on disk, and nothing per row but the trigger's condition, checked without calling the function.
create function openlibrary_key_keeps_entity() returns trigger language plpgsql as $$
begin
  raise exception 'Open Library key % is % already, not %', new.key, old.entity_id, new.entity_id using errcode = 'unique_violation';
end
$$;
create trigger openlibrary_key_keeps_entity before update of entity_id on openlibrary_records
  for each row when (old.entity_id is not null and new.entity_id is distinct from old.entity_id)
  execute function openlibrary_key_keeps_entity();
