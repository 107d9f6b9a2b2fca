import type { DatabaseHandle } from '../db/database.js'
import { formChoices } from '../db/repositories/forms.js'
import type { Actor } from './audit.js'
import { renameApiKey, revokeApiKey, setApiKeyActive } from './keys/changes.js'
import { createKeyChecker } from './keys/check.js'
import { createApiKey, type NewApiKey } from './keys/create.js'
import { countKeysByCreator, findApiKey, findKeyAccess, listApiKeys } from './keys/views.js'

export { hasExpired, hashApiKey, KEY_PREFIX, keyDisplayPrefix } from './key-format.js'
export type { KeyCheck, KindVersions } from './keys/check.js'
export type { NewApiKey } from './keys/create.js'
export {
  type ApiKeyView,
  type KeyAccess,
  type KeyCounts,
  type KeyState,
  type KeyStatus,
  keyStatus,
} from './keys/views.js'

/** The most forms the key form's picker lists: a page stays light however many forms a site has. */
const FORM_CHOICES = 1000

/**
 * API keys: created once and shown once, stored as a SHA-256 hash plus a display prefix. The rules
 * are in `keys/` (the read path's check, creating, changing, listing); the SQL in
 * `db/repositories/api-keys.ts`. There is deliberately no cache in front of `checkApiKey` (see
 * `keys/check.ts`): a revoke from any process is effective on the next request.
 */
export function createKeyService(database: DatabaseHandle) {
  const db = database.db
  return {
    /** Creates a key for a global admin and returns it with its plain key, shown once (see `keys/create.ts`). */
    createApiKey: (input: NewApiKey, actor: Actor = 'cli') => createApiKey(db, input, actor),
    listApiKeys: () => listApiKeys(db),
    /** One key by id, as the list shows it; a `NotFoundError` when there is none. */
    findApiKey: (id: string) => findApiKey(db, id),
    /** What key `id` may do now, and the forms its submissions are narrowed to, with their titles. */
    findKeyAccess: (id: string) => findKeyAccess(db, id),
    /**
     * The first forms by title a new key may be narrowed to, for the dashboard's picker, and whether
     * there are more (then the dashboard takes any form's id as text, as the CLI's `--forms` does).
     */
    formChoices: () => formChoices(db, FORM_CHOICES),
    /** How many keys each creator holds (by email), and how many of those work now. */
    countKeysByCreator: () => countKeysByCreator(db),
    /** Gives a key a new name; audited as `key.renamed`. */
    renameApiKey: (id: string, newName: string, actor: Actor = 'cli') => renameApiKey(db, id, newName, actor),
    deactivateApiKey: (id: string, actor: Actor = 'cli') => setApiKeyActive(db, id, false, actor),
    activateApiKey: (id: string, actor: Actor = 'cli') => setApiKeyActive(db, id, true, actor),
    /** Revokes a key for good; only the first revocation is audited. */
    revokeApiKey: (id: string, actor: Actor = 'cli') => revokeApiKey(db, id, actor),
    /** Decides what a presented key is worth right now (the read path; see `keys/check.ts`). */
    checkApiKey: createKeyChecker(database),
  }
}

export type KeyService = ReturnType<typeof createKeyService>
