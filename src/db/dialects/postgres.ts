import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { type Compilable, Kysely, PostgresDialect, sql } from 'kysely'
import type pg from 'pg'
import { type DriverErrorCodes, TranslatingDialect, translateDatabaseError } from '../errors.js'
import type { DatabaseHandle } from '../handle.js'
import { bindValues, type PreparedQuery } from '../prepared.js'
import type { Database } from '../tables.js'

// The driver is loaded only when this dialect is used: an instance on SQLite does not pay for it.
const require = createRequire(import.meta.url)

export const POSTGRES_ERROR_CODES: DriverErrorCodes = {
  unavailable: new Set([
    '57P01', // admin_shutdown
    '57014', // query_canceled: statement_timeout hit while the database is locked or overloaded
    '57P03', // cannot_connect_now
    '08000',
    '08003',
    '08006',
  ]),
  unique: new Set(['23505']),
  // character_not_in_repertoire (a NUL in text) and untranslatable_character.
  invalidText: new Set(['22021', '22P05']),
}

/**
 * Opens a pool to the PostgreSQL database at `url`. `description` is the URL without credentials;
 * a statement running longer than `statementTimeoutMs` fails (as unavailable).
 */
export function openPostgres(url: string, description: string, statementTimeoutMs: number): DatabaseHandle {
  const { Pool } = require('pg') as typeof pg
  const pool = new Pool({
    connectionString: url,
    max: 10,
    // Short connect and query timeouts turn an unreachable database into a quick 503 instead of a
    // request that hangs until the client gives up.
    connectionTimeoutMillis: 2000,
    query_timeout: statementTimeoutMs,
    statement_timeout: statementTimeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
  })
  // A client losing its connection must not crash the process, whether idle in the pool or checked
  // out between queries: its query fails (and becomes a 503) and the pool replaces the client.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = new Kysely<Database>({
    dialect: new TranslatingDialect(new PostgresDialect({ pool }), POSTGRES_ERROR_CODES),
  })
  return {
    db,
    dialect: 'postgres',
    description,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    prepare<Row>(query: Compilable<Row>): PreparedQuery<Row> {
      const compiled = query.compile()
      // Named, so each connection parses the statement once and reuses its plan.
      const name = `lectern_${createHash('sha1').update(compiled.sql).digest('hex').slice(0, 16)}`
      return async (values = {}) => {
        try {
          const result = await pool.query({
            name,
            text: compiled.sql,
            values: bindValues(compiled.parameters, values),
          })
          return result.rows as Row[]
        } catch (error) {
          throw translateDatabaseError(error, POSTGRES_ERROR_CODES)
        }
      }
    },
    // No `joined`: a page's items come one row each. One `string_agg` value per page cost
    // PostgreSQL several times the CPU of the same rows sent as they are: the aggregate's text
    // grows by doubling to the page's size, and each backend gives that memory back to the system
    // after every statement and faults it in again on the next.
    json: {},
    ping: async () => {
      await sql`select 1`.execute(db)
    },
    close: () => db.destroy(),
  }
}
