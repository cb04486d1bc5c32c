-- Usage batches made cheaper for PostgreSQL to take in, from about 1.5 to 0.35 µs of CPU a call
-- (1,000-call batches of real-looking values):
-- - A batch's calls are grouped by what they repeat: one element per (kid, method, route, status),
--   with the calls' times and latencies as two arrays, instead of one object per call. A quarter of
--   the size.
-- - Batches are stored uncompressed: the default compression (pglz) made little of these digits
--   and was most of the remaining cost.
-- The view `usage` is unchanged: still one row per call.
alter table usage_batches alter column records set storage external;

update usage_batches b
   set records = (
     select json_agg(json_build_object('kid', g.kid, 'method', g.method, 'route', g.route, 'status', g.status,
                                       'at', g.at, 'latencyMs', g.latency_ms))
       from (select r.kid, r.method, r.route, r.status,
                    json_agg(r.at order by r.at) as at, json_agg(r."latencyMs" order by r.at) as latency_ms
               from json_to_recordset(b.records) as r(kid text, method text, route text, status smallint, at float8, "latencyMs" real)
              group by 1, 2, 3, 4) g);

create or replace view usage as
select g.kid, g.method, g.route, g.status, to_timestamp(c.at / 1000.0) as at, c.latency_ms,
       b.first_at as batch_first_at, b.last_at as batch_last_at
  from usage_batches b
 cross join lateral json_to_recordset(b.records) as g(kid text, method text, route text, status smallint, at float8[], "latencyMs" real[])
 cross join lateral unnest(g.at, g."latencyMs") as c(at, latency_ms);
