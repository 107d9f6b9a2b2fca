import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.js'
import { SQLITE_ERROR_CODES } from '../../src/db/dialects/sqlite.js'
import { openSqliteConnection } from '../../src/db/dialects/sqlite-driver.js'
import { translateDatabaseError } from '../../src/db/errors.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import { UnavailableError } from '../../src/errors.js'
import { createServices, type Services } from '../../src/services/index.js'
import { TcpProxy } from '../cluster/support.js'
import { buildApiKey, buildForm, buildUser } from '../factories.js'
import { createTestDatabase, TEST_DIALECT, TEST_POSTGRES_URL, type TestDatabase } from '../harness.js'

/**
 * Service calls that reach the database, for a database that has just gone away. Each must fail
 * with `UnavailableError` (a 503 on every face), never with the driver's own error (a 500). On
 * SQLite only writes can fail that way (WAL readers are never blocked), so only the calls that
 * write there are checked: `WRITES` lists them.
 */
function callsThatQuery(
  services: Services,
  ids: { formId: string; keyId: string; email: string },
  file: string,
) {
  const page = { page: 1, pageSize: 10 }
  return {
    'content.listForms': () => services.content.listForms(page),
    'content.listSubmissionsForForm': () => services.content.listSubmissionsForForm(ids.formId, page),
    'content.listPages': () => services.content.listPages(page),
    'content.listRedirects': () => services.content.listRedirects(page),
    'keys.checkApiKey': () => services.keys.checkApiKey(`lk_live_${'a'.repeat(40)}`),
    'keys.listApiKeys': () => services.keys.listApiKeys(),
    'keys.createApiKey': () => services.keys.createApiKey({ name: 'k', userEmail: ids.email }),
    'keys.revokeApiKey': () => services.keys.revokeApiKey(ids.keyId),
    'users.listUsers': () => services.users.listUsers(),
    'users.hasUsers': () => services.users.hasUsers(),
    'users.setRole': () => services.users.setRole(ids.email, 'viewer'),
    'users.deleteUser': () => services.users.deleteUser(ids.email),
    'sessions.authenticate': () => services.sessions.authenticate('a'.repeat(43)),
    'lists.forms': () =>
      services.lists.forms({ search: '', filter: 'all', sort: 'oldest', size: 20, page: 1 }),
    'contentAdmin.setFormActive': () => services.contentAdmin.setFormActive(ids.formId, false),
    'redirects.createRedirect': () => services.redirects.createRedirect({ fromPath: '/a', toPath: '/b' }),
    'redirects.exportCsv': () => services.redirects.exportCsv(),
    'importer.importFile': () => services.importer.importFile(file),
  }
}

const WRITES = new Set([
  'keys.createApiKey',
  'keys.revokeApiKey',
  'users.setRole',
  'users.deleteUser',
  'contentAdmin.setFormActive',
  'redirects.createRedirect',
  'importer.importFile',
])
const CALLS = Object.keys(callsThatQuery({} as Services, { formId: '', keyId: '', email: '' }, '')).filter(
  (name) => TEST_DIALECT === 'postgres' || WRITES.has(name),
)

describe('the database error boundary', () => {
  let dir: string
  let testDatabase: TestDatabase
  let handle: DatabaseHandle
  let services: Services
  let ids: { formId: string; keyId: string; email: string }
  let file: string
  let breakDatabase: () => Promise<void>
  let cleanup: () => Promise<void> = async () => {}

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lectern-boundary-'))
    testDatabase = await createTestDatabase(dir)
    // Set the schema up directly, then reach the same database through a connection that can fail.
    const setup = openDatabase(testDatabase.url)
    await migrateToLatest(setup)
    const user = await buildUser(setup.db, { role: 'global_admin' })
    // A second admin, so that demoting or deleting the first reaches its write.
    await buildUser(setup.db, { role: 'global_admin' })
    const key = await buildApiKey(setup.db, { userId: user.id })
    const form = await buildForm(setup.db)
    ids = { formId: form.id, keyId: key.id, email: user.email }
    await setup.close()
    file = join(dir, 'content.json')
    writeFileSync(file, JSON.stringify({ forms: [{ title: 'Imported' }] }))

    if (TEST_DIALECT === 'postgres') {
      const target = new URL(TEST_POSTGRES_URL)
      const proxy = await new TcpProxy(target.hostname, Number(target.port || 5432)).start()
      const viaProxy = new URL(testDatabase.url)
      viaProxy.host = `127.0.0.1:${proxy.port}`
      handle = openDatabase(viaProxy.toString())
      breakDatabase = async () => proxy.cut()
      cleanup = () => proxy.close()
    } else {
      handle = openDatabase(testDatabase.url)
      // Another process holding the write lock makes every statement here fail at once with SQLITE_BUSY.
      await sql`pragma busy_timeout = 0`.execute(handle.db)
      const locker = openSqliteConnection(testDatabase.url.slice('sqlite:'.length))
      breakDatabase = async () => {
        locker.exec('begin exclusive')
      }
      cleanup = async () => {
        locker.exec('rollback')
        locker.close()
      }
    }
    services = createServices(handle)
    await services.users.listUsers()
    await breakDatabase()
  })

  afterAll(async () => {
    await cleanup()
    await handle.close()
    await testDatabase.drop()
    rmSync(dir, { recursive: true, force: true })
  })

  it.each(CALLS)('turns a lost database under %s into UnavailableError', async (name) => {
    const call = callsThatQuery(services, ids, file)[name as keyof ReturnType<typeof callsThatQuery>]
    const error = await (async () => {
      const result: unknown = await call()
      // A streamed answer (an export) meets the database only as it is read.
      if (typeof result === 'object' && result !== null && Symbol.asyncIterator in result)
        for await (const _ of result as AsyncIterable<unknown>);
    })().then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(error).toBeInstanceOf(UnavailableError)
  })

  it.runIf(TEST_DIALECT === 'sqlite')(
    'reads every way SQLite says "database is locked" as unavailable, whichever driver names it',
    () => {
      for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_TIMEOUT'])
        expect(
          translateDatabaseError(
            Object.assign(new Error('database is locked'), { code }),
            SQLITE_ERROR_CODES,
          ),
        ).toBeInstanceOf(UnavailableError)
    },
  )

  it.runIf(TEST_DIALECT === 'postgres')('answers ping with UnavailableError too', async () => {
    await expect(handle.ping()).rejects.toBeInstanceOf(UnavailableError)
  })
})
