import { Client } from '@elastic/elasticsearch';

export type Elastic = Client;

/** `url` names one node, or several comma-separated: the client spreads requests over them and skips a node that is down. */
export function createElastic(url: string): Elastic {
  return new Client({ nodes: url.split(','), requestTimeout: 30_000, maxRetries: 2 });
}

/** The aliases clients query; each points at one versioned physical index (see loader/index). */
export interface IndexAliases {
  books: string;
  authors: string;
}

export function indexAliases(prefix: string): IndexAliases {
  return { books: `${prefix}books`, authors: `${prefix}authors` };
}
