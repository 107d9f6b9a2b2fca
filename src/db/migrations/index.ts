import type { Migration, MigrationProvider } from 'kysely'
import * as initial from './001-initial.js'
import * as admin from './002-admin.js'
import * as contentVersion from './003-content-version.js'
import * as redirectDestinations from './004-redirect-destinations.js'
import * as audit from './005-audit.js'
import * as keyExpiry from './006-key-expiry.js'
import * as keyUsage from './007-key-usage.js'
import * as submissionInbox from './008-submission-inbox.js'
import * as submissionJson from './009-submission-json.js'
import * as passwordChecks from './010-password-checks.js'
import * as scopedContentVersions from './011-scoped-content-versions.js'
import * as formIntake from './012-form-intake.js'
import * as keyScopes from './013-key-scopes.js'
import * as notifications from './014-notifications.js'
import * as dropInboxPartialIndexes from './015-drop-inbox-partial-indexes.js'

/** Migrations are listed here rather than read from disk so that source and build run the same set. */
export const migrationProvider: MigrationProvider = {
  async getMigrations(): Promise<Record<string, Migration>> {
    return {
      '001-initial': initial,
      '002-admin': admin,
      '003-content-version': contentVersion,
      '004-redirect-destinations': redirectDestinations,
      '005-audit': audit,
      '006-key-expiry': keyExpiry,
      '007-key-usage': keyUsage,
      '008-submission-inbox': submissionInbox,
      '009-submission-json': submissionJson,
      '010-password-checks': passwordChecks,
      '011-scoped-content-versions': scopedContentVersions,
      '012-form-intake': formIntake,
      '013-key-scopes': keyScopes,
      '014-notifications': notifications,
      '015-drop-inbox-partial-indexes': dropInboxPartialIndexes,
    }
  },
}
