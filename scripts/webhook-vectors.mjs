#!/usr/bin/env node
/**
 * Writes spec/webhook-vectors.json: signed webhook deliveries, each with the answer every official
 * client's `verifyWebhook` must give (the event, or the reason it refuses). Run once; the file is
 * checked in, so that a change of this script shows in review as a change of the vectors.
 *
 *   node scripts/webhook-vectors.mjs
 *
 * Everything is fixed (secrets, ids, times): running it again writes the same file.
 */
import { execFileSync } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const target = new URL('../spec/webhook-vectors.json', import.meta.url)

// Secrets as Lectern prints them: `whsec_` and the base64 of 32 bytes.
const secretOf = (seed) =>
  `whsec_${Buffer.from(Array.from({ length: 32 }, (_, i) => (seed * 31 + i * 7) % 256)).toString('base64')}`
const SECRET = secretOf(1)
const OTHER_SECRET = secretOf(2)
const TIMESTAMP = 1_767_225_600 // 2026-01-01T00:00:00Z

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{payload}" keyed by the secret's decoded bytes>`. */
function sign(secret, id, timestamp, payload) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${payload}`).digest('base64')}`
}

const submission = {
  id: 'evt_2bq7RkdXcX1pLm0aVwN3Tz',
  type: 'submission.created',
  createdAt: '2026-01-01T00:00:00Z',
  data: {
    id: 'submission_8kD2mQp4Zr7TnX1c',
    data: { name: 'Ada Lovelace', email: 'ada@example.com', message: 'Hello!' },
    ipAddress: '203.0.113.10',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64)',
    referrer: 'https://example.com/contact',
    submittedBy: null,
    isRead: false,
    isStarred: false,
    notes: null,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    formId: 'form_contact',
  },
}
const changed = {
  id: 'evt_5Hc0uYq9LwR2sVn8bJe4Kf',
  type: 'content.changed',
  createdAt: '2026-01-01T00:00:00Z',
  data: { kinds: ['forms', 'redirects'] },
}
const unicode = {
  ...submission,
  id: 'evt_9Mt3vPz6QaW1xEo7cHs2Ng',
  data: { ...submission.data, data: { name: 'Zoë Ünal', message: 'Grüße ✓ — 日本語 🎉' } },
}

const body = (event) => JSON.stringify(event)

/** A delivery as Lectern sends it, and what verifying it at `now` must give. */
function delivery(name, event, overrides = {}) {
  const payload = overrides.payload ?? body(event)
  const id = overrides.id ?? event.id
  const timestamp = overrides.timestamp ?? TIMESTAMP
  const signature =
    overrides.signature ??
    sign(overrides.signedWith ?? SECRET, id, timestamp, overrides.signedPayload ?? payload)
  const headers = overrides.headers ?? {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signature,
  }
  return {
    name,
    secret: overrides.secret ?? SECRET,
    payload,
    headers,
    now: overrides.now ?? TIMESTAMP,
    ...(overrides.tolerance !== undefined ? { tolerance: overrides.tolerance } : {}),
    expect: overrides.error ? { error: overrides.error } : { event: JSON.parse(payload) },
  }
}

const valid = sign(SECRET, submission.id, TIMESTAMP, body(submission))
const withoutHeader = (name) => {
  const headers = {
    'webhook-id': submission.id,
    'webhook-timestamp': String(TIMESTAMP),
    'webhook-signature': valid,
  }
  delete headers[name]
  return headers
}

const vectors = [
  delivery('a submission.created event, signed with the endpoint secret', submission),
  delivery('a content.changed event', changed),
  delivery('a body with non-ASCII characters, signed over its UTF-8 bytes', unicode),
  delivery('a body of other JSON than Lectern sends, byte for byte as signed', submission, {
    payload: '{ "id" : "evt_x",\n  "type": "test.spaced", "data": {"n": 1.50} }',
  }),
  delivery('header names in upper and mixed case', submission, {
    headers: {
      'Webhook-Id': submission.id,
      'WEBHOOK-TIMESTAMP': String(TIMESTAMP),
      'Webhook-Signature': valid,
    },
  }),
  delivery('several signatures, one of them valid', submission, {
    signature: `v1,${Buffer.alloc(32, 7).toString('base64')} v1a,c2lnbmVkIHdpdGggYW4gYXN5bW1ldHJpYyBrZXk= ${valid}`,
  }),
  delivery('a secret given without its whsec_ prefix', submission, { secret: SECRET.slice('whsec_'.length) }),
  delivery('a timestamp exactly five minutes old', submission, { now: TIMESTAMP + 300 }),
  delivery('a timestamp exactly five minutes ahead', submission, { now: TIMESTAMP - 300 }),
  delivery('a tampered body', submission, {
    payload: body({ ...submission, data: { ...submission.data, formId: 'form_other' } }),
    signedPayload: body(submission),
    error: 'invalid_signature',
  }),
  delivery('a signature made with another secret', submission, {
    signedWith: OTHER_SECRET,
    error: 'invalid_signature',
  }),
  delivery('the right signature checked with another secret', submission, {
    secret: OTHER_SECRET,
    error: 'invalid_signature',
  }),
  delivery('a signature over another message id', submission, {
    signature: sign(SECRET, 'evt_other', TIMESTAMP, body(submission)),
    error: 'invalid_signature',
  }),
  delivery('a signature over another timestamp', submission, {
    signature: sign(SECRET, submission.id, TIMESTAMP + 1, body(submission)),
    error: 'invalid_signature',
  }),
  delivery('several signatures, none valid', submission, {
    signature: `v1,${Buffer.alloc(32, 7).toString('base64')} v2,${valid.slice(3)}`,
    error: 'invalid_signature',
  }),
  delivery('a signature without its version', submission, {
    signature: valid.slice(3),
    error: 'invalid_signature',
  }),
  delivery('a timestamp more than five minutes old', submission, {
    now: TIMESTAMP + 301,
    error: 'stale_timestamp',
  }),
  delivery('a timestamp more than five minutes ahead', submission, {
    now: TIMESTAMP - 301,
    error: 'stale_timestamp',
  }),
  delivery('a timestamp outside a tolerance of one minute', submission, {
    now: TIMESTAMP + 61,
    tolerance: 60,
    error: 'stale_timestamp',
  }),
  delivery('a timestamp inside a tolerance of one hour', submission, {
    now: TIMESTAMP + 3600,
    tolerance: 3600,
  }),
  delivery('a timestamp that is not a number', submission, {
    timestamp: 'soon',
    error: 'invalid_timestamp',
  }),
  delivery('no webhook-id header', submission, {
    headers: withoutHeader('webhook-id'),
    error: 'missing_header',
  }),
  delivery('no webhook-timestamp header', submission, {
    headers: withoutHeader('webhook-timestamp'),
    error: 'missing_header',
  }),
  delivery('no webhook-signature header', submission, {
    headers: withoutHeader('webhook-signature'),
    error: 'missing_header',
  }),
  delivery('an empty webhook-signature header', submission, { signature: '', error: 'missing_header' }),
  delivery('a secret that is not base64', submission, {
    secret: 'whsec_not base64!',
    error: 'invalid_secret',
  }),
  delivery('an empty secret', submission, { secret: 'whsec_', error: 'invalid_secret' }),
  delivery('a validly signed body that is not JSON', submission, {
    payload: 'not json',
    error: 'invalid_payload',
  }),
]

const file = {
  about:
    'Standard Webhooks deliveries as Lectern signs them, run by every official client: verifying `payload` with `headers` and `secret` at Unix time `now` (with `tolerance` seconds when given, else 300) gives `expect.event`, the parsed body, or fails with the reason `expect.error`: missing_header, invalid_timestamp, stale_timestamp, invalid_signature, invalid_secret or invalid_payload. Written by scripts/webhook-vectors.mjs.',
  vectors,
}
writeFileSync(target, `${JSON.stringify(file, null, 2)}\n`)
// In the repository's JSON style, so that writing it again changes nothing.
execFileSync('npx', ['biome', 'format', '--write', fileURLToPath(target)], { stdio: 'ignore' })
process.stdout.write(`wrote ${vectors.length} vectors to spec/webhook-vectors.json\n`)
