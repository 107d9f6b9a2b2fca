/**
 * Verifying the webhooks Lectern sends, as the Standard Webhooks specification says: the
 * `webhook-signature` header holds `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed by
 * the endpoint secret's decoded bytes. Web Crypto does the HMAC, so it runs in Node.js, browsers
 * and edge runtimes alike, and is therefore asynchronous.
 */

/** Why a delivery was refused. */
export type WebhookVerificationFailure =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'stale_timestamp'
  | 'invalid_signature'
  | 'invalid_secret'
  | 'invalid_payload'

/** A delivery that is not provably from Lectern, or not from now: answer it with a 4xx and drop it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError'

  constructor(
    /** Why it was refused. */
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(message)
  }
}

/** An event as Lectern delivers it (`submission.created`, `content.changed`). */
export interface WebhookEvent<Data = Record<string, unknown>> {
  /** The event id, also in `webhook-id` and the same on every attempt: de-duplicate by it. */
  id: string
  type: string
  createdAt: string
  data: Data
}

/** A request's headers: a `Headers` (fetch), or an object of them (Node's `req.headers`), names in any case. */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Record<string, string | readonly string[] | undefined>

export interface VerifyWebhookOptions {
  /** How far the `webhook-timestamp` may be from now, before or after, in seconds (default 300). */
  toleranceSeconds?: number
  /** The time to check the timestamp against: a fixed clock in tests. The real time by default. */
  now?: Date
}

/** How far a delivery's timestamp may be from now unless `toleranceSeconds` says otherwise. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300

const SECRET_PREFIX = 'whsec_'
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

function header(headers: WebhookHeaders, name: string): string {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? ''
  }
  for (const [key, value] of Object.entries(
    headers as Record<string, string | readonly string[] | undefined>,
  )) {
    if (key.toLowerCase() !== name) continue
    return (typeof value === 'string' ? value : value?.[0]) ?? ''
  }
  return ''
}

function secretKey(secret: string): Uint8Array<ArrayBuffer> {
  const encoded =
    typeof secret === 'string' && secret.startsWith(SECRET_PREFIX)
      ? secret.slice(SECRET_PREFIX.length)
      : secret
  if (typeof encoded !== 'string' || encoded === '' || !BASE64.test(encoded))
    throw new WebhookVerificationError(
      'invalid_secret',
      'The webhook secret is not `whsec_` followed by base64',
    )
  return Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0))
}

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/** Compares two strings in a time that depends on their length only, not on where they differ. */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return difference === 0
}

/**
 * Checks that a webhook delivery comes from Lectern (its signature, by the endpoint's secret) and
 * is recent (its timestamp within `toleranceSeconds` of now), then returns its event. `payload` is
 * the raw request body, exactly as received: parsing and re-serialising it breaks the signature.
 * Throws a {@link WebhookVerificationError} otherwise.
 *
 * ```ts
 * const event = await verifyWebhook(await request.text(), request.headers, process.env.LECTERN_WEBHOOK_SECRET!)
 * ```
 */
export async function verifyWebhook<Event = WebhookEvent>(
  payload: string | Uint8Array | ArrayBuffer,
  headers: WebhookHeaders,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<Event> {
  const { toleranceSeconds = DEFAULT_WEBHOOK_TOLERANCE_SECONDS, now = new Date() } = options
  if (!(Number.isFinite(toleranceSeconds) && toleranceSeconds >= 0))
    throw new TypeError(
      `verifyWebhook: toleranceSeconds must be a number of at least 0 (got ${toleranceSeconds})`,
    )
  const id = header(headers, 'webhook-id')
  const timestamp = header(headers, 'webhook-timestamp')
  const signatures = header(headers, 'webhook-signature')
  for (const [name, value] of [
    ['webhook-id', id],
    ['webhook-timestamp', timestamp],
    ['webhook-signature', signatures],
  ] as const) {
    if (value === '') throw new WebhookVerificationError('missing_header', `The ${name} header is missing`)
  }
  const key = secretKey(secret)
  if (!/^[0-9]{1,15}$/.test(timestamp))
    throw new WebhookVerificationError(
      'invalid_timestamp',
      'The webhook-timestamp header is not a Unix time in seconds',
    )
  const age = Math.floor(now.getTime() / 1000) - Number(timestamp)
  if (Math.abs(age) > toleranceSeconds)
    throw new WebhookVerificationError(
      'stale_timestamp',
      `The webhook-timestamp is ${Math.abs(age)} seconds ${age > 0 ? 'old' : 'ahead'}, more than the ${toleranceSeconds} allowed`,
    )

  const subtle = globalThis.crypto?.subtle
  if (!subtle) throw new TypeError('verifyWebhook: this runtime has no Web Crypto (globalThis.crypto.subtle)')
  const body = typeof payload === 'string' ? new TextEncoder().encode(payload) : new Uint8Array(payload)
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`)
  const signed = new Uint8Array(prefix.length + body.length)
  signed.set(prefix)
  signed.set(body, prefix.length)
  const hmacKey = await subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const expected = toBase64(new Uint8Array(await subtle.sign('HMAC', hmacKey, signed)))

  // Several signatures may be sent at once (a secret being rotated): any valid `v1` one passes.
  let valid = false
  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',')
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue
    if (constantTimeEqual(entry.slice(comma + 1), expected)) valid = true
  }
  if (!valid)
    throw new WebhookVerificationError('invalid_signature', 'No webhook-signature matches the payload')
  try {
    return JSON.parse(new TextDecoder().decode(body)) as Event
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The webhook payload is not JSON')
  }
}
