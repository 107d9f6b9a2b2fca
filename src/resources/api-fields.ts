import { Type } from '@sinclair/typebox'

/**
 * The field shapes the resources' API schemas share. Field order in a schema is the order on the
 * wire: the HTTP layer compiles the schemas into the response serializers, and the OpenAPI
 * document is generated from them.
 */

/** A timestamp as every resource shows it. */
export const Timestamp = Type.String({
  format: 'date-time',
  description: 'UTC, second precision',
  examples: ['2024-01-05T10:00:00Z'],
})

// `type: [string, null]` rather than `anyOf`: the serializer compiles it to a plain check instead of a
// schema validation per field, and OpenAPI 3.1 reads it the same way.
/** A string that may be null. */
export const NullableString = (description: string) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], description })

/** A resource's id, with an example of its prefix. */
export const Id = (prefix: string) =>
  Type.String({ description: 'opaque identifier', examples: [`${prefix}_8mXqz1Lr0aT2kVb9PcW4`] })

/** A path of the site: it starts with `/`. */
export const SitePath = (description: string, example: string) =>
  Type.String({ pattern: '^/', description, examples: [example] })
