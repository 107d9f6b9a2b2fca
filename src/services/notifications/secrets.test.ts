import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { keySource, newSigningSecret, secretBox, signature } from './secrets.js'

describe('signing secrets at rest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lectern-secrets-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('keeps SQLite’s key in a file beside the database that only its owner can read, the same for every process', () => {
    const database = { description: `sqlite:${join(dir, 'lectern.db')}`, dialect: 'sqlite' as const }
    const key = keySource(database, undefined)()
    const file = join(dir, 'lectern.db.secret-key')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(keySource(database, undefined)()).toEqual(key)
    const sealed = secretBox(key).seal('whsec_abc')
    expect(sealed).not.toContain('abc')
    expect(secretBox(keySource(database, undefined)()).open(sealed)).toBe('whsec_abc')
  })

  it('refuses on PostgreSQL without SECRET_KEY, and derives one key from it on every instance', () => {
    const database = { description: 'postgres://db/lectern', dialect: 'postgres' as const }
    expect(() => keySource(database, undefined)()).toThrow(/SECRET_KEY/)
    const setting = 'a shared secret key of at least thirty-two characters'
    const sealed = secretBox(keySource(database, setting)()).seal('whsec_x')
    expect(secretBox(keySource(database, setting)()).open(sealed)).toBe('whsec_x')
    expect(() => secretBox(keySource(database, `${setting}!`)()).open(sealed)).toThrow(/cannot be decrypted/)
  })

  it('makes secrets of 32 random bytes and signs with their decoded bytes', () => {
    const secret = newSigningSecret()
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32)
    // The Standard Webhooks specification's own example.
    expect(
      signature(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
  })
})
