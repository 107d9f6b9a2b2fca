import type { Kysely } from 'kysely'
import type { Database, Flag } from '../src/db/tables.js'
import { newId, randomBase62 } from '../src/ids.js'
import { hashApiKey, KEY_PREFIX, keyDisplayPrefix } from '../src/services/keys.js'
import type { Role } from '../src/services/roles.js'
import { now } from '../src/time.js'

/**
 * Test factories that write rows straight into a real database. Users get an unusable password
 * hash unless given one: hashing with production scrypt parameters would make every test slow.
 */
const flag = (value: boolean): Flag => (value ? 1 : 0)

export async function buildUser(
  db: Kysely<Database>,
  input: {
    email?: string
    role?: Role
    disabled?: boolean
    /** A stored password hash computed once by the caller, for users who must be able to sign in. */
    passwordHash?: string
  } = {},
) {
  const timestamp = now()
  const row = {
    id: newId('user'),
    email: input.email ?? `user-${randomBase62(8).toLowerCase()}@example.com`,
    password_hash: input.passwordHash ?? 'unusable',
    role: input.role ?? 'global_admin',
    is_disabled: flag(input.disabled ?? false),
    created_at: timestamp,
    updated_at: timestamp,
  }
  await db.insertInto('users').values(row).execute()
  return row
}

/** A key for `userId` (or a new user of `role`); returns the plain key as a client would hold it. */
export async function buildApiKey(
  db: Kysely<Database>,
  input: {
    userId?: string
    role?: Role
    active?: boolean
    revoked?: boolean
    name?: string
    /** Stored as given, unchecked: a test may give a key scopes its creator's role lacks. */
    scopes?: readonly string[] | null
    forms?: readonly string[] | null
  } = {},
) {
  const userId = input.userId ?? (await buildUser(db, { role: input.role ?? 'global_admin' })).id
  const plainKey = KEY_PREFIX + randomBase62(40)
  const row = {
    id: newId('key'),
    name: input.name ?? 'test key',
    prefix: keyDisplayPrefix(plainKey),
    key_hash: hashApiKey(plainKey),
    created_by: userId,
    is_active: flag(input.active ?? true),
    revoked_at: input.revoked ? now() : null,
    created_at: now(),
    last_used_at: null,
    scopes: input.scopes == null ? null : JSON.stringify(input.scopes),
    forms: input.forms == null ? null : JSON.stringify(input.forms),
  }
  await db.insertInto('api_keys').values(row).execute()
  return { ...row, plainKey, userId, authorization: `Bearer ${plainKey}` }
}

export async function buildForm(
  db: Kysely<Database>,
  input: {
    id?: string
    title?: string
    description?: string | null
    active?: boolean
    createdAt?: string
  } = {},
) {
  const createdAt = input.createdAt ?? now()
  const row = {
    id: input.id ?? newId('form'),
    title: input.title ?? 'Contact us',
    description: input.description === undefined ? null : input.description,
    is_active: flag(input.active ?? true),
    created_at: createdAt,
    updated_at: createdAt,
  }
  await db.insertInto('forms').values(row).execute()
  return row
}

export async function buildSubmission(
  db: Kysely<Database>,
  input: {
    formId: string
    id?: string
    data?: Record<string, unknown>
    createdAt?: string
    isRead?: boolean
    isStarred?: boolean
    notes?: string | null
    ipAddress?: string | null
    userAgent?: string | null
    referrer?: string | null
    submittedBy?: string | null
  },
) {
  const createdAt = input.createdAt ?? now()
  const row = {
    id: input.id ?? newId('submission'),
    form_id: input.formId,
    data: JSON.stringify(input.data ?? { email: 'ada@example.com', message: 'Hello' }),
    ip_address: input.ipAddress ?? null,
    user_agent: input.userAgent ?? null,
    referrer: input.referrer ?? null,
    submitted_by: input.submittedBy ?? null,
    is_read: flag(input.isRead ?? false),
    is_starred: flag(input.isStarred ?? false),
    notes: input.notes ?? null,
    created_at: createdAt,
    updated_at: createdAt,
  }
  await db.insertInto('submissions').values(row).execute()
  return row
}

export async function buildPage(
  db: Kysely<Database>,
  input: {
    id?: string
    title?: string
    path?: string
    published?: boolean
    createdAt?: string
    pageType?: string
  } = {},
) {
  const createdAt = input.createdAt ?? now()
  const path = input.path ?? `/page-${randomBase62(8).toLowerCase()}`
  const published = input.published ?? true
  const row = {
    id: input.id ?? newId('page'),
    title: input.title ?? 'About us',
    slug: path.split('/').pop() || 'home',
    path,
    page_type: input.pageType ?? 'page',
    is_published: flag(published),
    published_at: published ? createdAt : null,
    created_at: createdAt,
    updated_at: createdAt,
  }
  await db.insertInto('pages').values(row).execute()
  return row
}

export async function buildRedirect(
  db: Kysely<Database>,
  input: {
    id?: string
    fromPath?: string
    toPath?: string
    type?: 'permanent' | 'temporary'
    active?: boolean
    createdAt?: string
  } = {},
) {
  const createdAt = input.createdAt ?? now()
  const row = {
    id: input.id ?? newId('redirect'),
    from_path: input.fromPath ?? `/old-${randomBase62(8).toLowerCase()}`,
    to_path: input.toPath ?? '/new',
    type: input.type ?? 'permanent',
    is_active: flag(input.active ?? true),
    created_at: createdAt,
    updated_at: createdAt,
  }
  await db.insertInto('redirects').values(row).execute()
  return row
}
