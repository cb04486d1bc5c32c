import { Client } from '@elastic/elasticsearch';

export type Elastic = Client;

export function createElastic(url: string): Elastic {
  return new Client({ node: url, requestTimeout: 30_000, maxRetries: 2 });
}

/** The aliases clients query; each points at one versioned physical index (see loader/index). */
export interface IndexAliases {
  books: string;
  authors: string;
}

export function indexAliases(prefix: string): IndexAliases {
  return { books: `${prefix}books`, authors: `${prefix}authors` };
}
