import { writeFile } from 'node:fs/promises';
import { format, resolveConfig } from 'prettier';
import { projectPath } from '../../src/paths.js';
import { indexDefinition } from '../../src/stores/elasticsearch/indexDeclaration.js';
import { INDEX_KINDS, INDICES } from '../../src/stores/elasticsearch/indices.js';

/** Writes mappings/<kind>.json from the declaration of each index (`npm run mappings`), formatted as the project formats JSON. */
for (const kind of INDEX_KINDS) {
  const path = projectPath('mappings', `${kind}.json`);
  const json = await format(JSON.stringify(indexDefinition(INDICES[kind]), null, 2), { ...(await resolveConfig(path)), filepath: path });
  await writeFile(path, json);
  console.log(`wrote ${path}`);
}
