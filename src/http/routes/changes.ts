import { changePage, changesQuery, changesSince } from '../../services/changeFeed.js';
import { errorResponse, rateHeaders } from '../responseDocs.js';
import type { Route } from '../route.js';
import { queryParam, sendJson } from '../messages.js';

export const changeRoutes: readonly Route[] = [
  {
    name: 'listChanges',
    method: 'GET',
    path: '/v1/changes',
    access: 'key',
    cost: 'unit',
    cache: 'none',
    reuse: 'settled',
    tag: 'changes',
    query: changesQuery,
    tool: {
      name: 'list_changes',
      title: 'Change feed',
      description:
        "Follow the catalogue's change feed: every insert, update, delete and merge of a book, work or author, oldest first. " +
        'A cursor is an opaque position in the feed: pass since = "0" the first time, then the `next` cursor of the previous page; ' +
        'following `next` sees every change exactly once. has_more true means call again at once; false means you are at the head (come back later with the same `next`). ' +
        'A merge entry names the survivor in survivor_id. Use this to keep a copy in sync, not to find books. Answers {changes: [{seq, entity, id, operation, survivor_id, changed_at}], next, has_more}.',
    },
    answer: async ({ db, shortCache }, _requestId, { query }) => ({
      text: JSON.stringify(await changesSince(db, shortCache, query.since, query.limit)),
    }),
    doc: {
      summary: 'Changes since a cursor',
      description:
        'Every insert, update, delete and merge of a book, work or author, in sequence order, which is commit order: a consumer that ' +
        'keeps passing `next` back as `since` sees every change exactly once. Start with `since=0`. A merge names the survivor. ' +
        'Full pages never change: cached briefly here, and `Cache-Control: immutable` for clients; the page at the head of the feed is always fresh (`no-store`).',
      responses: {
        '200': { description: 'A page of changes.', headers: rateHeaders, content: { 'application/json': { schema: changePage } } },
        '400': errorResponse(
          '`since` missing (`since cursor is required`), malformed, or ahead of the feed (unknown); or `limit` out of range.',
        ),
      },
    },
    async handle(ctx, { db, shortCache }) {
      const page = await changesSince(db, shortCache, queryParam(ctx, 'since'), queryParam(ctx, 'limit'));
      // A full page can never change; the head page changes with the next commit.
      if (!page.has_more) ctx.state.reuse = 'never';
      sendJson(ctx, page);
    },
  },
];
