import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import type { FormState } from '../../../db/content-version.js'
import { ApiError } from '../../../errors.js'
import { isSafeId } from '../../../ids.js'
import type { RateLimitDecision, RateLimiter } from '../../../ratelimit/limiter.js'
import { type KeyScope, refusal } from '../../../services/key-scopes.js'
import { hashApiKey, type KeyCheck, type KeyService, type KindVersions } from '../../../services/keys.js'
import type { Permission } from '../../../services/roles.js'
import { encodeUriComponentSafely, firstCodePoints } from '../../../text.js'
import { readBearerToken } from './authorization.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The permission a `/api/v1` route needs; routes without one only need a valid key. */
    permission?: Permission
    /** The path parameter naming a form whose state the route reads: read with the key. */
    formParam?: string
  }
  interface FastifyRequest {
    /** The authenticated key of an `/api/v1` request. */
    apiKey: AuthenticatedKey | null
  }
}

const READ_METHODS = new Set(['GET', 'HEAD'])

/** What the pipeline reads of the matched route. */
type RouteOptions = FastifyRequest['routeOptions']

function methodNotAllowed(method: string): ApiError {
  return new ApiError('method_not_allowed', `Method ${method} is not allowed: this API is read-only`, {
    Allow: 'GET, HEAD',
  })
}

/**
 * The request's `Authorization` header. Node keeps the first of several and drops the rest, while a
 * proxy in front may keep the last: the two would authenticate different keys, so a header sent
 * more than once is refused as malformed (HTTP allows one `Authorization` field line), whatever
 * the values.
 */
function authorizationHeader(request: FastifyRequest): string | undefined {
  const raw = request.raw.rawHeaders
  let seen = 0
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string
    if (name.length === 13 && name.toLowerCase() === 'authorization') seen++
  }
  if (seen > 1) {
    throw new ApiError(
      'invalid_authorization_format',
      "The Authorization header was sent more than once: send it once, in the format 'Bearer <API_KEY>'",
      { 'WWW-Authenticate': 'Bearer' },
    )
  }
  return request.headers.authorization
}

/**
 * What the pipeline offers the app: counting a request that was refused before it reached the
 * pipeline's routes (a URL too long or malformed, a missing `Host`).
 */
export interface ApiPipeline {
  /**
   * Authenticates a refused request's key and, when it is valid and active, counts the request and
   * writes its rate-limit headers, as on every other answer to a valid key. The refusal stands
   * whatever the key: an invalid key, a limit reached or an unreachable database only leave the
   * headers out.
   */
  countRefused(request: FastifyRequest, reply: FastifyReply): Promise<void>
}

/**
 * The `/api/v1` request pipeline, in order: authenticate → rate-limit → method → permission.
 * Unsupported methods answer 405 whatever the credentials, but a valid key is still authenticated
 * and counted, so every response to a valid key carries its rate-limit headers.
 */
export function registerApiPipeline(
  app: FastifyInstance,
  deps: {
    keys: KeyService
    limiter: RateLimiter
    /** The per-second limit, for the `RateLimit-Policy` header and the 429 message. */
    perSecond?: number
    onRateLimited?: () => void
    /** Counts each request of a valid key, and its 429s, in memory (see `services/usage.ts`). */
    usage?: { count(keyId: string, rejected: boolean): void }
  },
): ApiPipeline {
  app.decorateRequest('apiKey', null)
  const authenticateAndCount = keyCheckAndCount(deps.keys, deps.limiter)
  let policy = { limit: -1, value: '' }

  /**
   * Writes a counted request's rate-limit headers; the limits never change, so the policy is written
   * once. Header names on the read path are given in lower case, as Fastify keeps them: a name it
   * lower-cases is a new string on every request, which V8 must look up before using it as a key.
   */
  const writeRateLimitHeaders = (reply: FastifyReply, decision: RateLimitDecision) => {
    if (policy.limit !== decision.limit)
      policy = { limit: decision.limit, value: rateLimitPolicy(decision.limit, deps.perSecond) }
    reply.headers({
      'x-ratelimit-limit': decision.limit,
      'x-ratelimit-remaining': decision.remaining,
      'x-ratelimit-reset': decision.resetAt,
      'ratelimit-policy': policy.value,
      ratelimit: rateLimitItems(decision),
    })
  }

  // One hook for the whole pipeline: each further hook costs every request a turn through
  // Fastify's hook runner. Routing is done before `onRequest`, so the route's permission and its
  // query are known here.
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const readMethod = READ_METHODS.has(request.method)
    // Read once: Fastify builds this object anew on every read.
    const route = request.routeOptions
    let checked: { key: AuthenticatedKey; decision: RateLimitDecision }
    try {
      checked = await authenticateAndCount(authorizationHeader(request), formToRead(request, route))
    } catch (error) {
      if (!readMethod && error instanceof ApiError) throw methodNotAllowed(request.method)
      throw error
    }
    const { key, decision } = checked
    deps.usage?.count(key.keyId, !decision.allowed)
    writeRateLimitHeaders(reply, decision)
    if (!decision.allowed) {
      deps.onRateLimited?.()
      throw new ApiError('rate_limit_exceeded', rateLimitMessage(decision, deps.perSecond), {
        'Retry-After': String(decision.retryAfter ?? 1),
      })
    }
    if (!readMethod) throw methodNotAllowed(request.method)
    request.apiKey = key
    const warning = unknownParametersWarning(request, route)
    if (warning) reply.header('lectern-warning', warning)
    const permission = route.config.permission
    if (permission) {
      // Decided before the handler runs, so no cached response of a wider key is ever reached.
      const formId = (request.params as { id?: string } | undefined)?.id
      const refused = refusal(key.role, key.scope, permission, formId)
      if (refused !== null) throw new ApiError('insufficient_permissions', refused)
    }
  })

  return {
    async countRefused(request, reply) {
      try {
        const { key, decision } = await authenticateAndCount(authorizationHeader(request), undefined)
        writeRateLimitHeaders(reply, decision)
        // Answered with the refusal, not a 429, so it is counted as a request of the key.
        deps.usage?.count(key.keyId, false)
      } catch {
        // No headers: the key is not valid, or could not be checked; the refusal is answered alone.
      }
    },
  }
}

/**
 * Which limit refused a request. The hourly limit is checked first, so a refusal that leaves hourly
 * quota (`remaining > 0`) came from the per-second limit.
 */
function refusedBy(decision: RateLimitDecision): 'hour' | 'burst' | undefined {
  if (decision.allowed) return undefined
  return decision.remaining === 0 ? 'hour' : 'burst'
}

function rateLimitMessage(decision: RateLimitDecision, perSecond: number | undefined): string {
  if (refusedBy(decision) === 'hour')
    return `Rate limit exceeded: this API key has made its ${decision.limit} requests for this hour; please try again later`
  return `Rate limit exceeded: more than ${perSecond ?? 'the allowed'} requests in one second for this API key; please try again later`
}

/** The `RateLimit-Policy` value: both policies, the same on every response of one pipeline. */
/** The windows, in seconds, of the two policies (`w`), which no `t` may exceed. */
const HOUR_WINDOW_S = 3600
const BURST_WINDOW_S = 1

function rateLimitPolicy(perHour: number, perSecond: number | undefined): string {
  const hour = `"hour";q=${perHour};w=${HOUR_WINDOW_S}`
  return perSecond === undefined ? hour : `${hour}, "burst";q=${perSecond};w=${BURST_WINDOW_S}`
}

/**
 * The IETF draft's `RateLimit` field (draft-ietf-httpapi-ratelimit-headers): what is left of the
 * hourly policy; a refusal by the burst limit adds the exhausted burst item, so a 429 beside plenty
 * of hourly quota explains itself.
 */
function rateLimitItems(decision: RateLimitDecision): string {
  const refused = refusedBy(decision)
  const retryAfter = decision.retryAfter ?? 1
  // `resetAt` is rounded up to a whole second and "now" down, so a window that has just begun would
  // show 3601 s: `t` is capped at the policy's window `w`, as the draft requires.
  const hourReset = Math.min(
    HOUR_WINDOW_S,
    refused === 'hour' ? retryAfter : Math.max(0, decision.resetAt - Math.floor(Date.now() / 1000)),
  )
  const items = `"hour";r=${decision.remaining};t=${hourReset}`
  return refused === 'burst' ? `${items}, "burst";r=0;t=${Math.min(BURST_WINDOW_S, retryAfter)}` : items
}

const MAX_NAMED_PARAMETERS = 5
/** Code points of each name repeated in the warning; an emoji is kept whole or left out. */
const MAX_NAMED_LENGTH = 64

/**
 * The `Lectern-Warning` for query parameters the route does not know: the API ignores them,
 * and this makes a typo (`pagesize`) visible. Names are percent-encoded, so whatever a client sends
 * stays a valid header value, and at most a few are named.
 */
function unknownParametersWarning(request: FastifyRequest, route: RouteOptions): string | undefined {
  const schema = route.schema?.querystring as { properties?: object } | undefined
  if (!schema?.properties) return undefined
  const known = knownParameters(schema.properties)
  const query = request.query as object
  // Every request asks; nearly every answer is no, found without making an array of the names.
  let any = false
  for (const name in query) {
    if (!known.has(name)) {
      any = true
      break
    }
  }
  if (!any) return undefined
  const unknown = Object.keys(query).filter((name) => !known.has(name))
  const named = unknown
    .slice(0, MAX_NAMED_PARAMETERS)
    // `'` is encoded too, as it quotes each name.
    .map(
      (name) =>
        `'${encodeUriComponentSafely(firstCodePoints(name, MAX_NAMED_LENGTH)).replaceAll("'", '%27')}'`,
    )
  const more =
    unknown.length > MAX_NAMED_PARAMETERS ? ` and ${unknown.length - MAX_NAMED_PARAMETERS} more` : ''
  return unknown.length === 1
    ? `unknown query parameter ${named[0]} ignored`
    : `unknown query parameters ${named.join(', ')}${more} ignored`
}

/** The parameter names of a route's query schema, collected once per route rather than per request. */
const parameterNames = new WeakMap<object, Set<string>>()
function knownParameters(properties: object): Set<string> {
  let names = parameterNames.get(properties)
  if (names === undefined) {
    names = new Set(Object.keys(properties))
    parameterNames.set(properties, names)
  }
  return names
}

type AuthenticatedKey = {
  keyId: string
  role: string
  scope: KeyScope
  versions: KindVersions
  /** The state of the form the route names, read with the key (see `formParam`). */
  form?: FormState
}

/**
 * The form whose state a request reads with its key: the route's `formParam`, when it is an id of
 * the id alphabet (any other names no form, and is answered without a query).
 */
function formToRead(request: FastifyRequest, route: RouteOptions): string | undefined {
  const name = route.config.formParam
  if (name === undefined) return undefined
  const id = (request.params as Record<string, string | undefined> | undefined)?.[name]
  return id !== undefined && isSafeId(id) ? id : undefined
}

/** How many tokens' key ids are remembered for counting early (~150 bytes each). */
const KNOWN_TOKENS = 10_000

/**
 * Authenticates a request and counts it against its key's limits. With a shared store (Redis) the
 * two are network round trips, and a token that was valid the last time this instance saw it is
 * counted *while* its key is looked up, under the key id it had — one wait instead of two in a row.
 * Every guarantee of doing them in turn holds:
 * - the answer still waits for a lookup that started after the request arrived, so a revoked,
 *   deactivated, expired or demoted key is refused (or narrowed) on the very next request;
 * - a request the lookup refuses is taken back (`refund`) before it is answered, so a refused
 *   request uses no quota; until then the extra count can only make another request *of the same
 *   refused key* wait, and that key is refused anyway;
 * - only tokens seen valid are counted early, so an unknown token never creates a key in Redis;
 * - the count itself is the same single atomic script, so shared limits stay exact.
 * A token's key id never changes (a key is found by its hash), so a remembered id is never wrong,
 * only possibly of a key since revoked — which the lookup decides. With the in-memory store,
 * counting costs no wait and the two run in turn as before.
 */
function keyCheckAndCount(keys: KeyService, limiter: RateLimiter) {
  const knownKeyIds = new LRUCache<string, string>({ max: KNOWN_TOKENS })
  // A store that answers at once counts without a promise (a turn of the microtask queue, and
  // its allocations, on every request).
  const consumeNow = limiter.consumeSync?.bind(limiter)
  return async (authorization: string | undefined, formId: string | undefined) => {
    const token = readBearerToken(authorization)
    if (limiter.status().store !== 'redis') {
      const key = authenticated(await keys.checkApiKey(token, undefined, formId))
      return { key, decision: consumeNow ? consumeNow(key.keyId) : await limiter.consume(key.keyId) }
    }
    const hash = hashApiKey(token)
    const known = knownKeyIds.get(hash)
    if (known === undefined) {
      const key = authenticated(await keys.checkApiKey(token, hash, formId))
      knownKeyIds.set(hash, key.keyId)
      return { key, decision: await limiter.consume(key.keyId) }
    }
    const [checked, counted] = await Promise.allSettled([
      keys.checkApiKey(token, hash, formId).then(authenticated),
      limiter.consume(known),
    ])
    const charge = counted.status === 'fulfilled' ? counted.value.charge : undefined
    if (checked.status === 'rejected') {
      knownKeyIds.delete(hash)
      if (charge) await limiter.refund(known, charge)
      throw checked.reason
    }
    const key = checked.value
    if (counted.status === 'rejected') throw counted.reason
    return { key, decision: counted.value }
  }
}

/** The key a check found valid, or the refusal of one it did not. */
function authenticated(check: KeyCheck): AuthenticatedKey {
  if (check.status === 'invalid') {
    throw new ApiError('invalid_api_key', 'The provided API key is invalid or has been revoked', {
      'WWW-Authenticate': 'Bearer error="invalid_token"',
    })
  }
  if (check.status === 'inactive') {
    throw new ApiError('api_key_inactive', 'The provided API key has been deactivated', {
      'WWW-Authenticate': 'Bearer error="invalid_token"',
    })
  }
  if (check.status === 'expired') {
    throw new ApiError('api_key_inactive', `The provided API key has expired (at ${check.expiresAt})`, {
      'WWW-Authenticate': 'Bearer error="invalid_token"',
    })
  }
  // The valid check itself, not a copy: every field the pipeline hands on is one of its own.
  return check
}
