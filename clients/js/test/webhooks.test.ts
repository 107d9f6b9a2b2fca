import { readFileSync } from 'node:fs'
import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { verifyWebhook, type WebhookVerificationError } from '../src/index.js'
import { REPOSITORY_ROOT } from './launcher.js'

// Runs spec/webhook-vectors.json, the deliveries every official client verifies, and checks that
// this verifier and the Standard Webhooks reference library agree both ways.

interface Vector {
  name: string
  secret: string
  payload: string
  headers: Record<string, string>
  now: number
  tolerance?: number
  expect: { event: unknown } | { error: string }
}

const { vectors } = JSON.parse(readFileSync(`${REPOSITORY_ROOT}spec/webhook-vectors.json`, 'utf8')) as {
  vectors: Vector[]
}
const valid = vectors.filter((vector) => 'event' in vector.expect)

const verify = (
  vector: Vector,
  payload: string | Uint8Array = vector.payload,
  headers: object = vector.headers,
) =>
  verifyWebhook(payload, headers as Record<string, string>, vector.secret, {
    now: new Date(vector.now * 1000),
    ...(vector.tolerance !== undefined ? { toleranceSeconds: vector.tolerance } : {}),
  })

describe('verifyWebhook on the shared vectors (spec/webhook-vectors.json)', () => {
  it('has valid and refused deliveries of every kind', () => {
    expect(valid.length).toBeGreaterThan(5)
    expect(
      new Set(vectors.flatMap((vector) => ('error' in vector.expect ? [vector.expect.error] : []))),
    ).toEqual(
      new Set([
        'missing_header',
        'invalid_timestamp',
        'stale_timestamp',
        'invalid_signature',
        'invalid_secret',
        'invalid_payload',
      ]),
    )
  })

  it.each(vectors.map((vector) => [vector.name, vector] as const))('%s', async (_, vector) => {
    if ('event' in vector.expect) {
      expect(await verify(vector)).toStrictEqual(vector.expect.event)
      // The raw bytes of the body verify the same as its text.
      expect(await verify(vector, new TextEncoder().encode(vector.payload))).toStrictEqual(
        vector.expect.event,
      )
    } else {
      const error = (await verify(vector).catch((caught: unknown) => caught)) as WebhookVerificationError
      expect(error).toMatchObject({ name: 'WebhookVerificationError', reason: vector.expect.error })
      expect(error.message).not.toBe('')
    }
  })

  it('reads the headers from a fetch Headers object, whatever the case of their names', async () => {
    const [vector] = valid as [Vector]
    const headers = new Headers(
      Object.entries(vector.headers).map(([name, value]) => [name.toUpperCase(), value]),
    )
    expect(await verify(vector, vector.payload, headers)).toStrictEqual(
      (vector.expect as { event: unknown }).event,
    )
  })

  it('reads the first value of a header given as a list, as Node gives repeated headers', async () => {
    const [vector] = valid as [Vector]
    const headers = { ...vector.headers, 'webhook-id': [vector.headers['webhook-id'], 'evt_other'] }
    expect(await verify(vector, vector.payload, headers)).toStrictEqual(
      (vector.expect as { event: unknown }).event,
    )
  })

  it('refuses a negative tolerance as a programming error', async () => {
    const [vector] = valid as [Vector]
    await expect(
      verifyWebhook(vector.payload, vector.headers, vector.secret, { toleranceSeconds: -1 }),
    ).rejects.toBeInstanceOf(TypeError)
  })
})

describe('verifyWebhook and the Standard Webhooks reference library (standardwebhooks)', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it.each(valid.map((vector) => [vector.name, vector] as const))('the library verifies "%s"', (_, vector) => {
    // The library reads the clock itself: stop it at the vector's time. Its tolerance is fixed at
    // five minutes, so a vector with a tolerance of its own is checked at the time it was signed.
    const now = vector.tolerance === undefined ? vector.now : Number(vector.headers['webhook-timestamp'])
    vi.useFakeTimers({ now: now * 1000, toFake: ['Date'] })
    expect(new Webhook(vector.secret).verify(vector.payload, vector.headers)).toStrictEqual(
      (vector.expect as { event: unknown }).event,
    )
  })

  it.each([
    ['a content.changed event', { id: 'evt_1', type: 'content.changed', data: { kinds: ['pages'] } }],
    [
      'a body with non-ASCII characters',
      { id: 'evt_2', type: 'submission.created', data: { name: 'Zoë ✓ 日本' } },
    ],
  ])('verifies %s the library signed', async (_, event) => {
    const secret = `whsec_${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))}`
    const payload = JSON.stringify(event)
    const now = new Date()
    const headers = {
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(event.id, now, payload),
    }
    expect(await verifyWebhook(payload, headers, secret)).toStrictEqual(event)
    // And only with that secret.
    const other = `whsec_${btoa('another secret of 32 bytes......')}`
    await expect(verifyWebhook(payload, headers, other)).rejects.toMatchObject({
      reason: 'invalid_signature',
    })
  })
})
