/**
 * How an index is declared (see booksIndex.ts and authorsIndex.ts), after MusicBrainz's `sir`
 * (SearchEntity, SearchField): each field once, with its mapping, where its value comes from, and
 * the names queries use for it and its subfields. The loader builds documents from the sources, the
 * queries name fields through `fieldNames`, and mappings/<index>.json is generated from the
 * declaration (`npm run mappings`).
 *
 * The JSON is generated rather than hand-kept and checked: a field is then written in one place,
 * and the JSON stays what an operator reads or applies by hand, while test/mappings.test.ts fails
 * when the committed file is not what the declaration generates.
 */

/** A field's mapping, as Elasticsearch takes it (the subset the indices use). */
export interface Mapping {
  readonly type: 'text' | 'keyword' | 'integer' | 'long' | 'float' | 'object' | 'completion';
  readonly analyzer?: string;
  readonly search_analyzer?: string;
  readonly normalizer?: string;
  readonly copy_to?: readonly string[];
  readonly ignore_above?: number;
  readonly index?: boolean;
  readonly doc_values?: boolean;
  /** Objects: false keeps the value in _source only, indexing nothing of it. */
  readonly enabled?: boolean;
  /** Completion fields: the longest input kept (longer ones are cut). */
  readonly max_input_length?: number;
  /** Subfields: the same value analysed another way, named `<field>.<subfield>`. */
  readonly fields?: Readonly<Record<string, Mapping>>;
  readonly properties?: Readonly<Record<string, Mapping>>;
}

/**
 * Where a field's value comes from: an SQL expression over the tables of the loader's document
 * statement (loader/stores/elasticsearch/documents.ts names them), and, when the value needs
 * code of src/domain, the function that finishes it. `$1` is the change-sequence number the
 * document is built at.
 */
export interface Source {
  readonly sql: string;
  readonly finish?: (value: unknown) => unknown;
}

export interface FieldDeclaration {
  readonly mapping: Mapping;
  /** Absent: the field is filled by Elasticsearch itself (copy_to). */
  readonly from?: Source;
}

export interface IndexDeclaration<Fields extends Readonly<Record<string, FieldDeclaration>>> {
  /** Index settings and text analysis, as mappings/<index>.json has them. */
  readonly settings: Readonly<Record<string, unknown>> & { readonly index: Readonly<Record<string, unknown>> };
  readonly fields: Fields;
}

/** The value of `sql`, finished by `finish`, which takes what PostgreSQL returns for it. */
export const finished = <Value>(sql: string, finish: (value: Value) => unknown): Source => ({
  sql,
  finish: finish as (value: unknown) => unknown,
});

export const declareIndex = <const Fields extends Readonly<Record<string, FieldDeclaration>>>(
  declaration: IndexDeclaration<Fields>,
): IndexDeclaration<Fields> => declaration;

type SubfieldNames<Name extends string, M extends Mapping> = M extends { readonly fields: infer Subfields }
  ? { readonly [Sub in keyof Subfields & string]: `${Name}.${Sub}` }
  : unknown;

/** Each field's name (`path`) and its subfields' (`title.key`), for queries to name them by. */
export type FieldNames<Fields extends Readonly<Record<string, FieldDeclaration>>> = {
  readonly [Name in keyof Fields & string]: { readonly path: Name } & SubfieldNames<Name, Fields[Name]['mapping']>;
};

export function fieldNames<Fields extends Readonly<Record<string, FieldDeclaration>>>(
  declaration: IndexDeclaration<Fields>,
): FieldNames<Fields> {
  const names = Object.entries(declaration.fields).map(([name, field]) => [
    name,
    { path: name, ...Object.fromEntries(Object.keys(field.mapping.fields ?? {}).map((sub) => [sub, `${name}.${sub}`])) },
  ]);
  return Object.fromEntries(names) as FieldNames<Fields>;
}

/** Settings and mappings of an index, as Elasticsearch's create-index request and mappings/<index>.json take them. */
export interface IndexDefinition {
  settings: { index: Record<string, unknown> } & Record<string, unknown>;
  mappings: Record<string, unknown>;
}

/** The index's definition, a copy the caller may change. */
export function indexDefinition(declaration: IndexDeclaration<Readonly<Record<string, FieldDeclaration>>>): IndexDefinition {
  const properties = Object.fromEntries(Object.entries(declaration.fields).map(([name, field]) => [name, field.mapping]));
  return structuredClone({ settings: declaration.settings, mappings: { dynamic: 'strict', properties } });
}
