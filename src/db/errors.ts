import type {
  CompiledQuery,
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely'
import { UnavailableError, ValidationError } from '../errors.js'

/** A write hit a unique or primary-key constraint: the value is taken. Callers say by whom. */
export class UniqueViolationError extends Error {
  constructor(options: { cause: unknown }) {
    super('A unique value is already taken', options)
    this.name = 'UniqueViolationError'
  }
}

/** How one dialect's driver reports the failures the rest of the code must tell apart. */
export interface DriverErrorCodes {
  /** The database cannot be reached or cannot answer now: a 503, retried later. */
  unavailable: ReadonlySet<string>
  /** A unique or primary-key constraint already holds the value. */
  unique: ReadonlySet<string>
  /** Text the database cannot store (PostgreSQL refuses NUL characters). */
  invalidText: ReadonlySet<string>
}

/** Socket-level failures, the same whichever driver met them. */
const NETWORK_CODES = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']
// pg reports a lost or timed-out connection by message only.
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout/i

/**
 * Maps a driver error to the project's error types: connection loss becomes `UnavailableError`
 * (503), a taken unique value `UniqueViolationError`, text the database cannot hold a
 * `ValidationError`; anything else stays as it is and is reported as a 500.
 */
export function translateDatabaseError(error: unknown, codes: DriverErrorCodes): unknown {
  if (error instanceof UnavailableError || error instanceof UniqueViolationError) return error
  if (error instanceof ValidationError) return error
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string') {
    if (codes.unique.has(code)) return new UniqueViolationError({ cause: error })
    if (codes.invalidText.has(code))
      return new ValidationError('Text must not contain NUL characters or invalid UTF-8')
    if (codes.unavailable.has(code) || NETWORK_CODES.includes(code))
      return new UnavailableError('Database unavailable', { cause: error })
  }
  const message = error instanceof Error ? error.message : String(error)
  if (UNAVAILABLE_MESSAGES.test(message))
    return new UnavailableError('Database unavailable', { cause: error })
  return error
}

/**
 * Wraps a Kysely dialect so that every driver error is translated where queries execute: no
 * service, repository or face can forget to do it, and a lost database is a 503 everywhere.
 */
export class TranslatingDialect implements Dialect {
  constructor(
    private readonly inner: Dialect,
    private readonly codes: DriverErrorCodes,
  ) {}

  createDriver(): Driver {
    return new TranslatingDriver(this.inner.createDriver(), this.codes)
  }

  createQueryCompiler(): QueryCompiler {
    return this.inner.createQueryCompiler()
  }

  createAdapter(): DialectAdapter {
    return this.inner.createAdapter()
  }

  // biome-ignore lint/suspicious/noExplicitAny: Kysely's own Dialect interface takes Kysely<any> here.
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return this.inner.createIntrospector(db)
  }
}

class TranslatingConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly codes: DriverErrorCodes,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(query)
    } catch (error) {
      throw translateDatabaseError(error, this.codes)
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize)
    } catch (error) {
      throw translateDatabaseError(error, this.codes)
    }
  }
}

class TranslatingDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly codes: DriverErrorCodes,
  ) {}

  private async translated<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      throw translateDatabaseError(error, this.codes)
    }
  }

  private unwrap(connection: DatabaseConnection): DatabaseConnection {
    return connection instanceof TranslatingConnection ? connection.inner : connection
  }

  init(): Promise<void> {
    return this.translated(() => this.inner.init())
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.translated(() => this.inner.acquireConnection())
    return new TranslatingConnection(connection, this.codes)
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.translated(() => this.inner.beginTransaction(this.unwrap(connection), settings))
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.translated(() => this.inner.commitTransaction(this.unwrap(connection)))
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.translated(() => this.inner.rollbackTransaction(this.unwrap(connection)))
  }

  savepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    return this.translated(async () => this.inner.savepoint?.(this.unwrap(connection), name, compile))
  }

  rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    return this.translated(async () =>
      this.inner.rollbackToSavepoint?.(this.unwrap(connection), name, compile),
    )
  }

  releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    return this.translated(async () => this.inner.releaseSavepoint?.(this.unwrap(connection), name, compile))
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(this.unwrap(connection))
  }

  destroy(): Promise<void> {
    return this.inner.destroy()
  }
}
