-- The web origins whose browser pages may use a key (bookmeta keys create --origin, keys origins):
-- empty for a server-side key, which answers no CORS. A constant default: no table rewrite.
alter table api_keys add column origins text[] not null default '{}';
