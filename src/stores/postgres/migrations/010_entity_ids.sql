-- A new entity id minted by PostgreSQL, shaped as domain/ids.ts newId makes them ("wk_5n1x7q0c2r9a":
-- a prefix and 12 characters of Crockford's base32, 60 random bits), for set-based writes that
-- create entities (a first load's placeholder works and authors). The 12 bytes are those of a
-- random UUID whose low five bits are all random (bytes 6 and 8 carry the version and variant).
create function new_entity_id(prefix text) returns text language sql volatile as $$
  select prefix || '_' || string_agg(substr('0123456789abcdefghjkmnpqrstvwxyz', (get_byte(r.b, u.i) & 31) + 1, 1), '' order by u.n)
    from (select uuid_send(gen_random_uuid()) as b) r,
         unnest(array[0, 1, 2, 3, 4, 5, 7, 9, 10, 11, 12, 13]) with ordinality as u(i, n)
$$;
