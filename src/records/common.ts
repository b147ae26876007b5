import { Type, type TSchema } from '@sinclair/typebox';

/**
 * Shared wire primitives (TypeBox). Each record is described once, as a JSON Schema: its
 * TypeScript type is derived from it, and the routes hand it to Fastify as the response schema,
 * which compiles a serialiser per record shape (fast-json-stringify). The compiled serialiser
 * writes exactly these properties, in this order, so each schema must match its mapper field for
 * field; test/records/perf-serialisers.test.ts checks it does, byte for byte. Nullable and mixed fields
 * use a type list (not anyOf, which the serialiser resolves by running a validator per value).
 */

export const Str = () => Type.String();
export const Int = () => Type.Integer();
/** A string or null (e.g. Blocked_Date). */
export const NullableStr = () => Type.Unsafe<string | null>({ type: ['string', 'null'] });

/** API.md §4 error body, keys in order. */
export const ErrorBodySchema = Type.Object({ name: Str(), message: Str(), code: Int(), status: Int() });
/** API.md §4.4 422 body: the first error of each field. */
export const ValidationErrorsSchema = Type.Array(Type.Object({ field: Str(), message: Str() }));

/** The `id` query parameter (API.md §4: PHP FILTER_VALIDATE_INT). */
export const IdQuery = Type.Object({ id: Type.String({ description: 'Record id, an integer' }) });
/** Query parameters of every paginated list (API.md §5). */
export const PageQuery = Type.Object({
  page: Type.Optional(Type.String({ description: '1-based page number; clamped, never rejected' })),
  'per-page': Type.Optional(Type.String({ description: 'page size, clamped to 1..100 (default 100)' })),
});

/** An integer that clients may send quoted (API.md §9). */
export const IntOrString = (description?: string) =>
  Type.Union([Type.Integer(), Type.String({ pattern: '^[+-]?\\d+$' })], description ? { description } : {});

/** A list response of `item` records. */
export const ListOf = <T extends TSchema>(item: T) => Type.Array(item);
