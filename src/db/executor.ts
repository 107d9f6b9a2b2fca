import type { Kysely, Transaction } from 'kysely'
import type { Database } from './tables.js'

/**
 * What a repository function runs its statements on: the database itself, or the transaction a
 * service began, so the service decides which statements commit together.
 */
export type Executor = Kysely<Database> | Transaction<Database>
