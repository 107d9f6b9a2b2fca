import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../../../errors.js'
import type { RateLimiter } from '../../../ratelimit/limiter.js'
import type { KeyService } from '../../../services/keys.js'
import { type Permission, roleAllows } from '../../../services/roles.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The permission a `/api/v1` route needs; routes without one only need a valid key. */
    permission?: Permission
  }
  interface FastifyRequest {
    /** The authenticated key of an `/api/v1` request. */
    apiKey: { keyId: string; role: string; contentVersion: number } | null
  }
}

const READ_METHODS = new Set(['GET', 'HEAD'])
const BEARER = /^([A-Za-z]+)[ \t]+([^ \t]+)$/

function methodNotAllowed(method: string): ApiError {
  return new ApiError('method_not_allowed', `Method ${method} is not allowed: this API is read-only`, {
    Allow: 'GET, HEAD',
  })
}

/** Extracts the token of `Authorization: Bearer <token>`, or says what is wrong with the header. */
export function readBearerToken(header: string | undefined): string {
  const value = header?.trim() ?? ''
  if (value === '') {
    throw new ApiError(
      'missing_authorization_header',
      "Provide an API key in the Authorization header as 'Bearer <API_KEY>'",
      { 'WWW-Authenticate': 'Bearer' },
    )
  }
  const [, scheme, token] = BEARER.exec(value) ?? []
  if (scheme?.toLowerCase() !== 'bearer' || token === undefined) {
    throw new ApiError(
      'invalid_authorization_format',
      "Authorization header must be in the format 'Bearer <API_KEY>'",
      {
        'WWW-Authenticate': 'Bearer',
      },
    )
  }
  return token
}

/**
 * The `/api/v1` request pipeline, in order: authenticate → rate-limit → method → permission.
 * Unsupported methods answer 405 whatever the credentials, but a valid key is still authenticated
 * and counted, so every response to a valid key carries its rate-limit headers.
 */
export function registerApiPipeline(
  app: FastifyInstance,
  deps: { keys: KeyService; limiter: RateLimiter; onRateLimited?: () => void },
): void {
  app.decorateRequest('apiKey', null)

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const readMethod = READ_METHODS.has(request.method)
    let key: { keyId: string; role: string; contentVersion: number }
    try {
      key = await authenticate(request, deps.keys)
    } catch (error) {
      if (!readMethod && error instanceof ApiError) throw methodNotAllowed(request.method)
      throw error
    }
    const decision = await deps.limiter.consume(key.keyId)
    reply.headers({
      'X-RateLimit-Limit': decision.limit,
      'X-RateLimit-Remaining': decision.remaining,
      'X-RateLimit-Reset': decision.resetAt,
    })
    if (!decision.allowed) {
      deps.onRateLimited?.()
      throw new ApiError(
        'rate_limit_exceeded',
        'Rate limit exceeded: too many requests, please try again later',
        {
          'Retry-After': String(decision.retryAfter ?? 1),
        },
      )
    }
    if (!readMethod) throw methodNotAllowed(request.method)
    request.apiKey = key
  })

  app.addHook('preHandler', async (request: FastifyRequest) => {
    const permission = request.routeOptions.config.permission
    if (permission && !roleAllows(request.apiKey?.role ?? '', permission)) {
      throw new ApiError(
        'insufficient_permissions',
        `This API key does not have the '${permission}' permission`,
      )
    }
  })
}

async function authenticate(request: FastifyRequest, keys: KeyService) {
  const token = readBearerToken(request.headers.authorization)
  const check = await keys.checkApiKey(token)
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
  return { keyId: check.keyId, role: check.role, contentVersion: check.contentVersion }
}
