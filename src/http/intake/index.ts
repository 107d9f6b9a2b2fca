import type { Socket } from 'node:net'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ERROR_TYPES, type ErrorStyle, type ErrorType, ValidationError } from '../../errors.js'
import { isSafeId } from '../../ids.js'
import type { IntakeLimiter } from '../../ratelimit/intake.js'
import { asOrigin, fieldProblems, INTAKE_LIMITS } from '../../resources/form.js'
import {
  FormReadStale,
  type IntakeForm,
  type IntakeService,
  type PostingForm,
  takesPosts,
} from '../../services/intake.js'
import { toApiError } from '../errors.js'
import { BodyCutOff, BodyError, bodyKind, type PostedFields, readPostedFields } from './body.js'
import { problemPage, thankYouPage } from './pages.js'

export interface IntakeFaceOptions {
  intake: IntakeService
  limiter: IntakeLimiter
  style: ErrorStyle
}

/**
 * The errors only the intake answers, beside the API's own (a 404, a 429, a 503). Kept out of the
 * API's table: `/api/v1` never answers them, and its document lists that table.
 */
const INTAKE_ERRORS = {
  origin_not_allowed: { status: 403, phrase: 'Origin not allowed' },
  payload_too_large: { status: 413, phrase: 'Payload too large' },
  unsupported_media_type: { status: 415, phrase: 'Unsupported media type' },
  validation_failed: { status: 422, phrase: 'Validation failed' },
} as const satisfies Record<string, { status: number; phrase: string }>

type RefusalType = ErrorType | keyof typeof INTAKE_ERRORS

const errorKind = (type: RefusalType) =>
  type in INTAKE_ERRORS ? INTAKE_ERRORS[type as keyof typeof INTAKE_ERRORS] : ERROR_TYPES[type as ErrorType]

/** A refusal of a post, answered in the request's mode; `fields` only for `validation_failed`. */
class IntakeRefusal extends Error {
  constructor(
    readonly type: RefusalType,
    message: string,
    readonly fields: Record<string, string> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
  }
}

/** What the handler learnt about a request, which its answer (success or refusal) depends on. */
interface PostContext {
  json: boolean
  /** The origin to answer with CORS headers: the request's, when the form allows it. */
  corsOrigin: string | null
}

/** What the attempts at one post share (see the POST handler). */
interface Once {
  posted?: PostedFields
  /** The post was counted against its address's limit. */
  counted?: boolean
  /** The body was refused part read: the post is refused, whatever a fresh read of its form says. */
  bodyRefused?: boolean
}

/** Refusals that depend on the form's settings: decided again on a fresh read when made on a remembered one. */
const SETTINGS_REFUSALS: ReadonlySet<RefusalType> = new Set([
  'resource_not_found',
  'origin_not_allowed',
  'validation_failed',
])

/** Fresh reads of its form one post may take after the first read (see the POST handler). */
const MAX_FRESH_READS = 2

const CONTEXT = Symbol('intake context')
type WithContext = FastifyRequest & { [CONTEXT]?: PostContext }

/**
 * The public face of form intake: `POST /f/{formId}` takes a post from a site's own HTML form
 * (or its script) with no API key, and `OPTIONS` answers the browser's CORS preflight. It has its
 * own body reading (urlencoded, multipart text parts, JSON; 64 KiB, read as it arrives) and its
 * own answers, in JSON or as small pages; `/api/v1` stays read-only.
 */
export async function intakeFace(app: FastifyInstance, options: IntakeFaceOptions): Promise<void> {
  const { intake, limiter, style } = options

  // The body is read by the handler itself, as it arrives, with the intake's own limits: every
  // content type reaches it unread, and an unreadable one is refused there.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined))

  app.setErrorHandler((error, request, reply) => {
    const context = (request as WithContext)[CONTEXT] ?? {
      json: prefersJson(request, false),
      corsOrigin: null,
    }
    if (error instanceof IntakeRefusal) return refuse(reply, request, context, error)
    // A Content-Type header Fastify cannot parse is refused before the handler runs: still a
    // content type the intake does not take.
    if ((error as { code?: unknown }).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
      return refuse(
        reply,
        request,
        context,
        new IntakeRefusal('unsupported_media_type', UNSUPPORTED_MEDIA_TYPE),
      )
    if (error instanceof ValidationError)
      return refuse(reply, request, context, new IntakeRefusal('validation_failed', error.message))
    const apiError = toApiError(error, request)
    return refuse(
      reply,
      request,
      context,
      new IntakeRefusal(apiError.type, apiError.message, {}, apiError.headers),
    )
  })

  function refuse(
    reply: FastifyReply,
    request: FastifyRequest,
    context: PostContext,
    refusal: IntakeRefusal,
  ) {
    // A body refused before it was read whole is not read on: the connection closes after the answer.
    if (!request.raw.complete) {
      reply.header('Connection', 'close')
      lingerBeforeClosing(request.raw.socket)
    }
    // Refused before the handler ran too (an unreadable Content-Type): the answer still depends on Origin.
    reply.code(errorKind(refusal.type).status).headers(refusal.headers).header('Vary', 'Origin')
    cors(reply, context)
    if (context.json) {
      // A validation failure always names its fields, empty when the body as a whole was at fault.
      const hasFields = refusal.type === 'validation_failed'
      return reply.type('application/json; charset=utf-8').send({
        error: style === 'phrase' ? errorKind(refusal.type).phrase : refusal.type,
        message: refusal.message,
        ...(hasFields ? { fields: refusal.fields } : {}),
      })
    }
    return reply
      .type('text/html; charset=utf-8')
      .send(problemPage(heading(refusal.type), refusal.message, refusal.fields, header(request, 'referer')))
  }

  app.options<{ Params: { formId: string } }>('/:formId', async (request, reply) => {
    const origin = requestOrigin(request)
    const form = await enabledForm(request.params.formId)
    if (form === null) throw new IntakeRefusal('resource_not_found', notFoundMessage(request.params.formId))
    if (origin === null || origin === OPAQUE_ORIGIN || !originAllowed(form, origin))
      throw new IntakeRefusal('origin_not_allowed', 'This origin may not post to this form')
    return reply
      .code(204)
      .header('Access-Control-Allow-Origin', origin)
      .header('Vary', 'Origin')
      .header('Access-Control-Allow-Methods', 'POST')
      .header('Access-Control-Allow-Headers', 'content-type, accept')
      .header('Access-Control-Max-Age', '600')
      .send()
  })

  app.post<{ Params: { formId: string } }>('/:formId', async (request, reply) => {
    const kind = bodyKind(request.headers['content-type'])
    const context: PostContext = { json: prefersJson(request, kind?.kind === 'json'), corsOrigin: null }
    ;(request as WithContext)[CONTEXT] = context
    reply.header('Vary', 'Origin')

    const { formId } = request.params
    // What the attempts share: the body is read once and the post counted against the limit once.
    const once: Once = {}
    let read = isSafeId(formId) ? await intake.formForPost(formId) : null
    for (let reads = 1; ; reads++) {
      try {
        return await takePost(request, reply, context, kind, read, once)
      } catch (error) {
        // A post decided on a remembered form, or on one that changed before the post was stored,
        // is decided again on a fresh read. Twice at most: a form is not edited that fast.
        const again =
          error instanceof FormReadStale ||
          (read?.remembered === true &&
            once.bodyRefused !== true &&
            error instanceof IntakeRefusal &&
            SETTINGS_REFUSALS.has(error.type))
        if (!again) throw error
        if (reads > MAX_FRESH_READS)
          throw new IntakeRefusal(
            'service_unavailable',
            'The form is being changed, please retry',
            {},
            {
              'Retry-After': '1',
            },
          )
        read = await intake.formForPost(formId, { fresh: true })
      }
    }
  })

  /**
   * Decides one post on `read` (the form, or null when there is none) and answers it: refused, or
   * stored and answered in its mode.
   */
  async function takePost(
    request: FastifyRequest<{ Params: { formId: string } }>,
    reply: FastifyReply,
    context: PostContext,
    kind: ReturnType<typeof bodyKind>,
    read: PostingForm | null,
    once: Once,
  ) {
    const { formId } = request.params
    const found = read?.form ?? null
    const origin = requestOrigin(request)
    // A page of an allowed origin may read every answer, a form switched off included.
    // Never `Access-Control-Allow-Origin: null`: every sandboxed frame of every site would match it.
    context.corsOrigin =
      found !== null && origin !== null && origin !== OPAQUE_ORIGIN && originAllowed(found, origin)
        ? origin
        : null
    const taking = read !== null && takesPosts(read.form) ? read : null
    if (taking === null) throw new IntakeRefusal('resource_not_found', notFoundMessage(formId))
    const { form, listeners } = taking
    if (origin !== null && !originAllowed(form, origin))
      throw new IntakeRefusal('origin_not_allowed', 'This origin may not post to this form')

    if (kind === null) throw new IntakeRefusal('unsupported_media_type', UNSUPPORTED_MEDIA_TYPE)
    const declared = Number(request.headers['content-length'] ?? 0)
    if (declared > INTAKE_LIMITS.bodyBytes)
      throw new IntakeRefusal(
        'payload_too_large',
        `The request body is over ${INTAKE_LIMITS.bodyBytes} bytes`,
      )

    if (once.posted === undefined) {
      try {
        once.posted = await readPostedFields(request.raw, kind.kind, kind.boundary)
      } catch (error) {
        if (error instanceof BodyError) {
          // Refused while reading: the rest of the body is not read, so no attempt may read it again.
          once.bodyRefused = true
          throw new IntakeRefusal(error.type, error.message, error.fields)
        }
        if (error instanceof BodyCutOff) {
          // No one is left to answer; the socket is gone.
          request.log.info('a form post was cut off before its body ended')
          return reply.hijack()
        }
        throw error
      }
    }
    const posted = once.posted

    const spam = (posted.control._gotcha ?? '') !== ''
    if (!spam) {
      const problems = fieldProblems(form.settings.fields, posted.data)
      if (Object.keys(problems).length > 0)
        throw new IntakeRefusal(
          'validation_failed',
          'Some fields are not filled in as the form asks',
          problems,
        )
    }

    // Only posts that would be accepted count; a honeypot post counts, since it looks accepted.
    if (once.counted !== true) {
      const { allowed, retryAfter } = await limiter.take(`${request.ip}\n${form.id}`)
      if (!allowed)
        throw new IntakeRefusal(
          'rate_limit_exceeded',
          'Too many posts from this address, please wait',
          {},
          {
            'Retry-After': String(retryAfter),
          },
        )
      once.counted = true
    }

    const keepAddress = form.settings.storeIpAddress
    const id = await intake.accept(
      form.id,
      {
        data: posted.data,
        ipAddress: keepAddress ? request.ip : null,
        userAgent: keepAddress ? (header(request, 'user-agent') ?? null) : null,
        referrer: header(request, 'referer'),
        spam,
      },
      listeners,
      taking,
    )

    cors(reply, context)
    if (context.json) return reply.code(201).type('application/json; charset=utf-8').send({ id })
    const redirect = form.settings.redirectUrl
    if (redirect !== null)
      return reply.code(303).header('Location', redirectLocation(redirect, origin)).send()
    return reply
      .code(200)
      .type('text/html; charset=utf-8')
      .send(thankYouPage(header(request, 'referer')))
  }

  /** The form, when it takes posts now: it exists, is active and its intake is enabled. */
  async function enabledForm(formId: string): Promise<IntakeForm | null> {
    // No form has an id outside the id alphabet: answered without a query.
    if (!isSafeId(formId)) return null
    const form = await intake.form(formId)
    return form !== null && takesPosts(form) ? form : null
  }
}

/** How long a connection whose body was refused unread stays half-open after the answer. */
const LINGER_MS = 2_000

/**
 * Closing a socket while the client is still sending makes the kernel answer with a reset, and a
 * reset can discard the refusal the client has not read yet. Node closes a `Connection: close`
 * socket at once after the answer (`destroySoon`); this one instead sends its end (so the client
 * stops) and is destroyed a little later, reading nothing more meanwhile.
 */
function lingerBeforeClosing(socket: Socket | null): void {
  if (socket === null) return
  socket.destroySoon = function lingeringClose(this: Socket) {
    this.end()
    const timer = setTimeout(() => this.destroy(), LINGER_MS)
    timer.unref()
    this.once('close', () => clearTimeout(timer))
  }
}

const HEADINGS: Partial<Record<RefusalType, string>> = {
  resource_not_found: 'This form is not taking submissions',
  origin_not_allowed: 'This site may not post to this form',
  payload_too_large: 'The submission is too large',
  unsupported_media_type: 'The submission could not be read',
  validation_failed: 'Please check the form',
  rate_limit_exceeded: 'Too many submissions',
}

function heading(type: RefusalType): string {
  return HEADINGS[type] ?? 'The submission could not be taken'
}

const UNSUPPORTED_MEDIA_TYPE =
  'Post application/x-www-form-urlencoded, multipart/form-data or application/json'

const notFoundMessage = (formId: string) => `Form '${formId}' not found or not taking submissions`

function cors(reply: FastifyReply, context: PostContext): void {
  if (context.json && context.corsOrigin !== null)
    reply.header('Access-Control-Allow-Origin', context.corsOrigin)
}

function header(request: FastifyRequest, name: string): string | null {
  const value = request.headers[name]
  return typeof value === 'string' && value !== '' ? value : null
}

/**
 * `Origin: null`: the browser hides where the post came from (a sandboxed frame, a `file:` page, a
 * redirect across sites). It is an origin all the same, which no form can list.
 */
const OPAQUE_ORIGIN = 'null'

/**
 * The origin a request came from: its `Origin` (`null` included), else its `Referer`'s origin;
 * null when neither says.
 */
function requestOrigin(request: FastifyRequest): string | null {
  const origin = header(request, 'origin')
  if (origin !== null) return origin
  const referrer = header(request, 'referer')
  if (referrer === null) return null
  try {
    const url = new URL(referrer)
    return url.origin === 'null' ? null : url.origin
  } catch {
    return null
  }
}

function originAllowed(form: IntakeForm, origin: string): boolean {
  const allowed = form.settings.allowedOrigins
  // `null` is in no list: only origins such as `https://www.example.com` are saved there.
  return allowed.length === 0 || allowed.includes(origin) || allowed.includes(asOrigin(origin) ?? '')
}

/**
 * JSON mode: the body is JSON, or `Accept` rates `application/json` above `text/html` (a browser's
 * plain form post asks for HTML first; `fetch` with `Accept: application/json` asks for JSON).
 */
function prefersJson(request: FastifyRequest, jsonBody: boolean): boolean {
  if (jsonBody) return true
  const accept = header(request, 'accept')
  if (accept === null) return false
  let json = 0
  let htmlQuality = 0
  for (const range of accept.split(',')) {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase())
    const q = parameters.find((parameter) => parameter.startsWith('q='))
    const quality = q === undefined ? 1 : Number(q.slice(2)) || 0
    if (type === 'application/json') json = Math.max(json, quality)
    else if (type === 'text/html') htmlQuality = Math.max(htmlQuality, quality)
  }
  return json > 0 && json > htmlQuality
}

/**
 * Where a successful HTML post is sent: `redirectUrl` as given when absolute; a path is on the
 * site the form was posted from (its origin), so a thank-you page of the site's own can be named.
 * Without a web origin to put it on (none, `null`, or a header that is no origin), the path as given.
 */
function redirectLocation(redirect: string, origin: string | null): string {
  const site = origin === null ? null : asOrigin(origin)
  if (!redirect.startsWith('/') || site === null) return redirect
  return new URL(redirect, site).toString()
}
