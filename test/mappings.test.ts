import { readFile } from 'node:fs/promises';
import test from 'ava';
import { authorKey } from '../src/domain/names.js';
import { projectPath } from '../src/paths.js';
import { indexDefinition, type FieldDeclaration } from '../src/stores/elasticsearch/indexDeclaration.js';
import { INDEX_KINDS, INDICES } from '../src/stores/elasticsearch/indices.js';
import { allDocuments, useIndexedWorld } from './helpers/indexing.js';

const { deps } = useIndexedWorld(test, { reindex: true });

test('mappings/*.json is what the index declarations generate (npm run mappings writes it)', async (t) => {
  for (const kind of INDEX_KINDS) {
    const committed: unknown = JSON.parse(await readFile(projectPath('mappings', `${kind}.json`), 'utf8'));
    t.deepEqual(committed, indexDefinition(INDICES[kind]), `mappings/${kind}.json: run npm run mappings`);
  }
});

test('every document holds exactly the declared fields that have a source, finished ones included', async (t) => {
  for (const kind of INDEX_KINDS) {
    const fields: Readonly<Record<string, FieldDeclaration>> = INDICES[kind].fields;
    const sourced = Object.entries(fields).flatMap(([name, field]) => (field.from ? [name] : []));
    const documents = [...(await allDocuments(deps.es, deps.aliases[kind])).values()];
    t.true(documents.length > 0);
    for (const document of documents) t.deepEqual(Object.keys(document).sort(), sourced.sort(), kind);
  }
  const authors = [...(await allDocuments<{ name: string; name_key: string }>(deps.es, deps.aliases.authors)).values()];
  t.deepEqual(
    authors.map((author) => author.name_key),
    authors.map((author) => authorKey(author.name)),
  );
});
