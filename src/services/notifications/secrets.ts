import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { DatabaseHandle } from '../../db/database.js'
import { ValidationError } from '../../errors.js'

/**
 * Webhook signing secrets, and the key that keeps them encrypted in the database.
 *
 * A secret must be readable (the worker signs with it) but a dump of the database alone must not
 * let anyone forge signatures: secrets are stored encrypted with AES-256-GCM under a key that is
 * never in the database. That key comes from `SECRET_KEY`; lacking it, SQLite keeps one in a file
 * beside the database (`<database>.secret-key`, mode 0600, made on first need), and PostgreSQL,
 * whose instances share no disk, refuses to store a secret at all.
 */

const SECRET_PREFIX = 'whsec_'
const SECRET_BYTES = 32
const ENCRYPTED_PREFIX = 'v1'

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64')
}

/** The HMAC key of a `whsec_…` secret: its base64 part decoded, as Standard Webhooks says. */
function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')
}

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` for one secret. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secretBytes(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')
  return `v1,${mac}`
}

/** The `webhook-signature` header: one signature per secret in use, space-separated. */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): string {
  return secrets.map((secret) => signature(secret, id, timestamp, body)).join(' ')
}

/** Encrypts and decrypts secrets with one 256-bit key. */
export interface SecretBox {
  seal(plain: string): string
  open(sealed: string): string
}

export function secretBox(key: Buffer): SecretBox {
  return {
    seal(plain) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
      return [ENCRYPTED_PREFIX, iv, cipher.getAuthTag(), data]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64')))
        .join(':')
    },
    open(sealed) {
      const [version, iv, tag, data] = sealed.split(':')
      if (version !== ENCRYPTED_PREFIX || !iv || !tag || data === undefined)
        throw new Error('not an encrypted secret')
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'))
      decipher.setAuthTag(Buffer.from(tag, 'base64'))
      try {
        return Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString(
          'utf8',
        )
      } catch {
        throw new Error(
          'the secret cannot be decrypted with this key (was SECRET_KEY or the key file changed?)',
        )
      }
    },
  }
}

/** The 256-bit key derived from a `SECRET_KEY` setting. */
export function keyFromSetting(setting: string): Buffer {
  return Buffer.from(hkdfSync('sha256', setting, 'lectern', 'webhook signing secrets', 32))
}

/** Where SQLite keeps the key when `SECRET_KEY` is not set; undefined for PostgreSQL or memory. */
export function keyFilePath(database: Pick<DatabaseHandle, 'description'>): string | undefined {
  if (!database.description.startsWith('sqlite:')) return undefined
  const file = database.description.slice('sqlite:'.length)
  if (file === ':memory:' || file === '') return undefined
  return `${resolve(file)}.secret-key`
}

/**
 * A function that returns the key, finding or making it on first use: from `SECRET_KEY`, else from
 * SQLite's key file (created with mode 0600; `wx` so two processes making it at once agree on one),
 * else a `ValidationError` saying how to set one.
 */
export function keySource(
  database: Pick<DatabaseHandle, 'description' | 'dialect'>,
  setting: string | undefined,
): () => Buffer {
  let key: Buffer | undefined
  const memoryKey = randomBytes(32)
  const find = (): Buffer => {
    if (setting !== undefined) return keyFromSetting(setting)
    const file = keyFilePath(database)
    if (file === undefined) {
      if (database.dialect === 'sqlite') return memoryKey
      throw new ValidationError(
        'Webhook secrets need SECRET_KEY on PostgreSQL (at least 32 characters, the same on every instance): set it and try again',
      )
    }
    try {
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 })
      chmodSync(file, 0o600)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const read = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')
    if (read.length !== 32)
      throw new ValidationError(`The key file ${file} is damaged: it must hold 32 bytes in base64`)
    return read
  }
  return () => {
    key ??= find()
    return key
  }
}
