-- An alias swap a reindex has asked Elasticsearch for and not yet seen acknowledged: if the reindex
-- dies meanwhile, the swap may still take effect later, so sync and the next reindex complete it
-- before writing through the alias (loader/index/pendingSwaps.ts).
create table loader_pending_swaps (
  alias          text primary key,
  index          text not null,
  complete_up_to bigint not null,
  recorded_at    timestamptz not null default now()
);
