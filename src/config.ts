import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { ValidationError } from './errors.js'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

const PositiveInt = (description: string, defaultValue: number, maximum = 1_000_000_000) =>
  Type.Integer({ minimum: 1, maximum, default: defaultValue, description })

/**
 * Every setting Lectern reads from the environment, with its default. The README's configuration
 * table is this schema; `loadConfig` is the only reader of `process.env`.
 */
export const ConfigSchema = Type.Object({
  DATABASE_URL: Type.String({
    minLength: 1,
    default: 'sqlite:./data/lectern.db',
    description: '`sqlite:<file>` or `postgres://…`',
  }),
  REDIS_URL: Type.Optional(Type.String({ minLength: 1, description: 'shared rate limits across instances' })),
  PORT: PositiveInt('TCP port to listen on', 3000, 65535),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1', description: 'interface to bind' }),
  LOG_LEVEL: Type.Union(
    LOG_LEVELS.map((l) => Type.Literal(l)),
    { default: 'info', description: 'pino log level' },
  ),
  ERROR_STYLE: Type.Union([Type.Literal('code'), Type.Literal('phrase')], {
    default: 'code',
    description: 'form of the `error` field',
  }),
  RATE_LIMIT_PER_HOUR: PositiveInt('requests per key per hour', 1000),
  RATE_LIMIT_PER_SECOND: PositiveInt('requests per key in any rolling second', 10),
  INTAKE_RATE_LIMIT_PER_MINUTE: PositiveInt(
    'accepted public form posts per client address per form in any rolling minute',
    5,
  ),
  PUBLIC_URL: Type.Optional(
    Type.String({
      pattern: '^https?://[^/?#\\s]+(/[^?#\\s]*)?$',
      description:
        "the server's public base URL (`https://forms.example.com`), for the address forms post to",
    }),
  ),
  // Its value holds the mail password: no pattern, so that no start-up error ever prints it.
  SMTP_URL: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        'outgoing mail server (`smtp://user:pass@host:port` or `smtps://…`); unset, no mail is sent',
    }),
  ),
  TRUST_PROXY: Type.Optional(
    Type.String({
      pattern: '^(true|false|[0-9]{1,2}|[0-9a-fA-F.:/]+(,[0-9a-fA-F.:/]+)*)$',
      description:
        'which proxies to believe for the client address: `true`, a hop count, or addresses/CIDRs (comma-separated)',
    }),
  ),
  ADMIN_DASHBOARD: Type.Union([Type.Literal('on'), Type.Literal('off')], {
    default: 'on',
    description: 'serve the dashboard at /admin; `off` for API-only instances',
  }),
  API_REFERENCE: Type.Union([Type.Literal('on'), Type.Literal('off')], {
    default: 'on',
    description: 'serve the API reference page at /docs',
  }),
  METRICS_PORT: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 65535,
      description: 'serve /metrics on this port (at METRICS_HOST) instead of the API port',
    }),
  ),
  METRICS_HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description: 'interface the METRICS_PORT listener binds',
  }),
  METRICS_TOKEN: Type.Optional(
    Type.String({
      minLength: 16,
      description: '/metrics requires `Authorization: Bearer <METRICS_TOKEN>` (at least 16 characters)',
    }),
  ),
  SECRET_KEY: Type.Optional(
    Type.String({
      minLength: 32,
      description:
        'the key webhook signing secrets are encrypted under (at least 32 characters, the same on every instance; required on PostgreSQL to add endpoints)',
    }),
  ),
  WEBHOOK_ALLOW_PRIVATE: Type.Union([Type.Literal('true'), Type.Literal('false')], {
    default: 'false',
    description: 'let webhooks go to loopback, private and link-local addresses',
  }),
  MAIL_FROM: Type.Optional(
    Type.String({
      pattern: '^[^\\r\\n]{3,300}$',
      description: 'the From of notification emails (`Lectern <forms@example.com>`)',
    }),
  ),
  SHUTDOWN_GRACE_MS: Type.Integer({
    minimum: 0,
    maximum: 60_000,
    default: 0,
    description: 'after SIGTERM, how long /readyz fails while requests are still served, before closing',
  }),
})

export type Config = Static<typeof ConfigSchema>

/** Fastify's `trustProxy` for a `TRUST_PROXY` setting: off unless set, since trusting a forged
 * `X-Forwarded-For` would let a client pick its own address (and dodge per-IP limits). */
export function trustProxySetting(
  value: string | undefined,
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (value === undefined || value === 'false') return false
  if (value === 'true') return true
  if (/^[0-9]+$/.test(value)) {
    const hops = Number(value)
    return (_address, hop) => hop < hops
  }
  return value.split(',')
}

const NUMERIC_KEYS = [
  'PORT',
  'RATE_LIMIT_PER_HOUR',
  'RATE_LIMIT_PER_SECOND',
  'INTAKE_RATE_LIMIT_PER_MINUTE',
  'SHUTDOWN_GRACE_MS',
  'METRICS_PORT',
] as const

/**
 * Parses settings from `env` (and overrides such as CLI flags), applying defaults. Throws a
 * `ValidationError` naming every bad setting at once, so a misconfigured deploy fails on start.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Record<keyof Config, string | number | undefined>> = {},
): Config {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(ConfigSchema.properties) as (keyof Config)[]) {
    const value = overrides[key] ?? env[key]
    if (value !== undefined && value !== '') raw[key] = value
  }
  for (const key of NUMERIC_KEYS) {
    const value = raw[key]
    // Only plain decimal digits count as numbers: "1e3" or "10.5" must be refused, not coerced.
    if (typeof value === 'string' && /^[0-9]{1,10}$/.test(value)) raw[key] = Number(value)
  }
  const withDefaults = Value.Default(ConfigSchema, raw)
  // A union reports once per member it failed; one line per setting is what a person can act on.
  const problems = [
    ...new Map(
      [...Value.Errors(ConfigSchema, withDefaults)].map((e) => {
        const key = e.path.slice(1) || 'config'
        return [key, `${key} ${expectation(key, e.message)} (got ${JSON.stringify(e.value)})`]
      }),
    ).values(),
  ]
  if (problems.length > 0) {
    throw new ValidationError(`Invalid configuration: ${problems.join('; ')}`, problems)
  }
  return withDefaults as Config
}

/**
 * What a setting accepts, said so that the reader can fix it: the allowed values of a choice, the
 * range of a number. Settings the schema does not describe that way keep TypeBox's own message.
 */
function expectation(key: string, fallback: string): string {
  const schema = (ConfigSchema.properties as Record<string, TSchema | undefined>)[key]
  if (!schema) return `: ${fallback}`
  const choices = (schema.anyOf as TSchema[] | undefined)?.map((member) => member.const)
  if (choices?.every((choice) => typeof choice === 'string')) return `must be one of ${choices.join(', ')}`
  if (schema.type === 'integer') {
    const { minimum, maximum } = schema as { minimum?: number; maximum?: number }
    if (minimum === 1 && maximum === 1_000_000_000) return 'must be a positive integer'
    return `must be an integer from ${minimum} to ${maximum}`
  }
  if (schema.type === 'string' && schema.minLength !== undefined && schema.pattern === undefined)
    return `must be at least ${schema.minLength} characters long`
  return `must be ${schema.description}`
}
