-- Usage is written in batches, and now stored as them: one row per batch, its calls a JSON array
-- of {kid, method, route, status, at (epoch milliseconds), latencyMs}. A row per call cost
-- PostgreSQL 3 to 4 µs of CPU each (parsing, a heap tuple, its WAL), measured at about 13 % of
-- cached-lookup throughput on a 2-core machine; a row per batch costs about 1 µs a call and ~1 %.
-- The view `usage` still shows one row per call. Its batch_first_at and batch_last_at let a query
-- by time skip whole batches (BRIN) before unpacking any.
create table usage_batches (
  first_at timestamptz not null,
  last_at  timestamptz not null,
  records  json not null
);
create index usage_batches_time on usage_batches using brin (first_at, last_at);

insert into usage_batches (first_at, last_at, records)
select min(at), max(at),
       json_agg(json_build_object('kid', kid, 'method', method, 'route', route, 'status', status,
                                  'at', extract(epoch from at) * 1000, 'latencyMs', latency_ms) order by at)
  from usage
 group by date_trunc('hour', at);
drop table usage;

create view usage as
select r.kid, r.method, r.route, r.status, to_timestamp(r.at / 1000.0) as at, r."latencyMs" as latency_ms,
       b.first_at as batch_first_at, b.last_at as batch_last_at
  from usage_batches b
 cross join lateral json_to_recordset(b.records) as r(kid text, method text, route text, status smallint, at float8, "latencyMs" real);
