import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import type { CookieSerializeOptions } from '@fastify/cookie'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ValidationError } from '../../errors.js'
import { url } from '../../html.js'
import { type KeyFilter, type KeySort, viewKeys } from '../../services/dashboard-lists.js'
import type { Services } from '../../services/index.js'
import { rolePermissions } from '../../services/key-scopes.js'
import type { ListView } from '../../services/listing.js'
import type { Permission } from '../../services/roles.js'
import { actorOf } from '../actor.js'
import { answerList } from '../list-view.js'
import { field, fields, flag, pathParam, redirectWithFlash, seeOther, signedIn } from '../requests.js'
import { SESSION_COOKIE } from '../security.js'
import {
  KEY_FORM_FIELDS,
  KEY_LIST,
  type KeyChoices,
  keyCreatedPage,
  keysPage,
  newKeyPage,
  revokeKeyPage,
} from '../views/keys.js'
import { sendPage } from '../views/layout.js'

type KeyView = ListView<KeyFilter, KeySort>

/** Organization → API keys: global admins only. */
export function registerKeyRoutes(app: FastifyInstance, services: Services): void {
  const access = { access: 'organization' } as const

  app.get('/keys', { config: access }, async (request, reply) => {
    const all = await services.keys.listApiKeys()
    const list = {
      request,
      reply,
      sessions: services.sessions,
      spec: KEY_LIST,
      list: async (view: KeyView) => viewKeys(all, view),
    }
    return answerList(list, ({ view, result, searchProblem }) =>
      keysPage({ session: signedIn(request), view, keys: result, anyKeys: all.length > 0, searchProblem }),
    )
  })

  /** The key form's choices for the signed-in admin: every permission of their role ticked, no form picked. */
  const keyChoices = async (
    request: FastifyRequest,
    picked?: { scopes: readonly Permission[]; forms: readonly string[]; formIds: string },
  ): Promise<KeyChoices> => {
    const offered = rolePermissions(signedIn(request).user.role)
    const { forms, more } = await services.keys.formChoices()
    return {
      offered,
      scopes: picked?.scopes ?? offered,
      forms,
      moreForms: more,
      picked: picked?.forms ?? [],
      formIds: picked?.formIds ?? '',
    }
  }

  app.get('/keys/new', { config: access }, async (request, reply) =>
    sendPage(reply, newKeyPage({ session: signedIn(request), choices: await keyChoices(request) })),
  )

  // Post/Redirect/Get, so that reloading the page cannot create a second key. The key travels to
  // the next page in a short-lived cookie for that page alone, encrypted with the session's token,
  // which only the browser holds: the server never stores the key, and the page shows it once.
  app.post('/keys', { config: access }, async (request, reply) => {
    const session = signedIn(request)
    const name = field(request, 'name')
    const expires = field(request, 'expires')
    const offered = rolePermissions(session.user.role)
    const ticked = fields(request, 'scopes')
    const picked = fields(request, 'forms')
    // Forms beyond the picker are typed as ids; both go to the same check as the CLI's --forms.
    const formIds = field(request, 'formIds')
    const forms = [...picked, ...formIdsIn(formIds)]
    try {
      const { key, plainKey } = await services.keys.createApiKey(
        {
          name,
          userEmail: session.user.email,
          expiresAt: expires === '' ? undefined : expires,
          // Every permission ticked is no narrowing: the key follows the role, as keys always have.
          // A post without the boxes (not from the form) asks for no narrowing either.
          scopes:
            !flag(request, 'scopesShown') || offered.every((permission) => ticked.includes(permission))
              ? undefined
              : ticked,
          forms: forms.length === 0 ? undefined : forms,
        },
        actorOf(request),
      )
      reply.setCookie(NEW_KEY_COOKIE, sealNewKey(request, key.id, plainKey), newKeyCookieOptions(request))
      return seeOther(reply, url`/admin/keys/created`)
    } catch (error) {
      if (error instanceof ValidationError)
        return sendPage(
          reply,
          newKeyPage({
            session,
            name,
            expires,
            problems: error.problems,
            fieldProblems: Object.fromEntries(
              KEY_FORM_FIELDS.filter((input) => input === error.field).map((input) => [input, error.message]),
            ),
            choices: await keyChoices(request, {
              scopes: offered.filter((permission) => ticked.includes(permission)),
              forms: picked,
              formIds,
            }),
          }),
          422,
        )
      throw error
    }
  })

  app.get('/keys/created', { config: access }, async (request, reply) => {
    const session = signedIn(request)
    const sealed = request.cookies[NEW_KEY_COOKIE]
    reply.clearCookie(NEW_KEY_COOKIE, newKeyCookieOptions(request))
    const opened = sealed === undefined ? undefined : openNewKey(request, sealed)
    const key = opened && (await services.keys.listApiKeys()).find((k) => k.id === opened.keyId)
    if (!opened || !key)
      return redirectWithFlash(services.sessions, request, reply, url`/admin/keys`, {
        kind: 'error',
        text: 'A new key is shown only once, and Lectern does not keep it. If it was not copied, revoke it and create another.',
      })
    const apiBase = `${request.protocol}://${request.host}`
    return sendPage(reply, keyCreatedPage({ session, key, plainKey: opened.plainKey, apiBase }))
  })

  for (const [action, change, done] of [
    [
      'deactivate',
      services.keys.deactivateApiKey,
      'deactivated: programs using it are refused until you activate it',
    ],
    ['activate', services.keys.activateApiKey, 'activated: programs can use it again'],
  ] as const) {
    app.post(`/keys/:id/${action}`, { config: access }, async (request, reply) => {
      const key = await services.keys.findApiKey(pathParam(request, 'id'))
      try {
        await change(key.id, actorOf(request))
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error
        return redirectWithFlash(services.sessions, request, reply, url`/admin/keys`, {
          kind: 'error',
          text: error.message,
        })
      }
      return redirectWithFlash(services.sessions, request, reply, url`/admin/keys`, {
        kind: 'success',
        text: `Key “${key.name}” ${done}.`,
      })
    })
  }

  app.get('/keys/:id/revoke', { config: access }, async (request, reply) =>
    sendPage(
      reply,
      revokeKeyPage({
        session: signedIn(request),
        key: await services.keys.findApiKey(pathParam(request, 'id')),
      }),
    ),
  )

  app.post('/keys/:id/revoke', { config: access }, async (request, reply) => {
    const key = await services.keys.findApiKey(pathParam(request, 'id'))
    await services.keys.revokeApiKey(key.id, actorOf(request))
    return redirectWithFlash(services.sessions, request, reply, url`/admin/keys`, {
      kind: 'success',
      text: `Key “${key.name}” revoked: it is refused from now on.`,
    })
  })
}

/** The form ids typed in the key form's field, separated by commas or white space. */
const formIdsIn = (text: string): string[] => text.split(/[\s,]+/).filter((id) => id !== '')

/** Carries a new key from its POST to the page that shows it, once. */
const NEW_KEY_COOKIE = 'lectern_new_key'

function newKeyCookieOptions(request: FastifyRequest): CookieSerializeOptions {
  return {
    path: '/admin/keys/created',
    httpOnly: true,
    sameSite: 'strict',
    secure: request.protocol === 'https' || request.headers['x-forwarded-proto'] === 'https',
    maxAge: 300,
  }
}

/** AES-256-GCM under a key derived from the session cookie: useless without the browser's session. */
function cookieKey(request: FastifyRequest): Buffer {
  return createHash('sha256')
    .update(`lectern new key|${request.cookies[SESSION_COOKIE] ?? ''}`)
    .digest()
}

function sealNewKey(request: FastifyRequest, keyId: string, plainKey: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', cookieKey(request), iv)
  const sealed = Buffer.concat([cipher.update(`${keyId} ${plainKey}`, 'utf8'), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')
}

/** The key sealed by `sealNewKey` in this session, or undefined for anything else. */
function openNewKey(request: FastifyRequest, value: string): { keyId: string; plainKey: string } | undefined {
  try {
    const raw = Buffer.from(value, 'base64url')
    const decipher = createDecipheriv('aes-256-gcm', cookieKey(request), raw.subarray(0, 12))
    decipher.setAuthTag(raw.subarray(12, 28))
    const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')
    const [keyId, plainKey] = text.split(' ')
    return keyId && plainKey ? { keyId, plainKey } : undefined
  } catch {
    return undefined
  }
}
