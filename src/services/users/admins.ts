import type { Transaction } from 'kysely'
import { takeLock } from '../../db/locks.js'
import { countOtherEnabledAdmins } from '../../db/repositories/users.js'
import type { Database } from '../../db/tables.js'
import { ValidationError } from '../../errors.js'

/**
 * Takes the `setup` lock, which guards who the global admins are: the first admin's creation and
 * every change that could take one away. Without it, two admins demoting each other at once each
 * count the other (PostgreSQL's read committed lets both see the old rows) and both succeed. It is
 * the transaction's first statement, so the row read after it is the one the change applies to.
 */
export const guardAdmins = (trx: Transaction<Database>) => takeLock(trx, 'setup')

/**
 * Refuses a change to `userId` that would leave no enabled global admin. The caller holds the
 * `setup` lock (see {@link guardAdmins}), so the count cannot go stale before the change commits.
 */
export async function assertNotLastAdmin(trx: Transaction<Database>, userId: string, action: string) {
  if ((await countOtherEnabledAdmins(trx, userId)) === 0) {
    throw new ValidationError(`Cannot ${action} the last enabled global admin`)
  }
}
