-- Usage is an append-only ledger, written on every request and read by time range (a bill covers
-- a period). Each row used to pay for a sequence value and two B-trees, more than for the row
-- itself; a BRIN index on the time costs next to nothing. A report for one key scans its period.
alter table usage drop column id;
drop index usage_kid_at;
create index usage_at on usage using brin (at);
