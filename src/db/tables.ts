import type { Generated, GeneratedAlways } from 'kysely'

/**
 * Row types of every table. Booleans are stored as integers 0/1 and timestamps as canonical UTC
 * text (`2024-01-05T10:00:00Z`) so that both dialects store, compare and sort them identically:
 * the canonical form sorts lexically in time order, and needs no conversion on the way out.
 */
export type Flag = 0 | 1

/** The rows of `locks` (made by migration 002); see `locks.ts`. */
export type LockName = 'setup' | 'redirects' | 'retention' | 'notifications'

/** The tables whose rows the API serves; any change to them moves the content version. */
export const CONTENT_TABLES = ['forms', 'submissions', 'pages', 'redirects'] as const

export interface FormsTable {
  id: string
  title: string
  description: string | null
  is_active: Flag
  created_at: string
  updated_at: string
  /** The intake settings as JSON text (migration 011); null: the defaults, intake off. */
  intake: string | null
}

/** A submission the honeypot caught (migration 011): kept apart, never listed with submissions. */
export interface SpamSubmissionsTable {
  id: string
  form_id: string
  data: string
  ip_address: string | null
  user_agent: string | null
  referrer: string | null
  created_at: string
}

export interface SubmissionsTable {
  id: string
  form_id: string
  /** The submitted fields as JSON text; always an object. */
  data: string
  ip_address: string | null
  user_agent: string | null
  referrer: string | null
  submitted_by: string | null
  is_read: Flag
  is_starred: Flag
  notes: string | null
  created_at: string
  updated_at: string
}

/** The columns a submission is written with, in table order (`json` is the database's own). */
export const SUBMISSION_COLUMNS = [
  'id',
  'form_id',
  'data',
  'ip_address',
  'user_agent',
  'referrer',
  'submitted_by',
  'is_read',
  'is_starred',
  'notes',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof SubmissionsTable)[]

export interface PagesTable {
  id: string
  title: string
  slug: string
  path: string
  page_type: string
  is_published: Flag
  published_at: string | null
  created_at: string
  updated_at: string
}

export interface RedirectsTable {
  id: string
  from_path: string
  to_path: string
  type: 'permanent' | 'temporary'
  is_active: Flag
  created_at: string
  updated_at: string
}

export interface UsersTable {
  id: string
  email: string
  password_hash: string
  role: string
  is_disabled: Flag
  created_at: string
  updated_at: string
}

export interface ApiKeysTable {
  id: string
  name: string
  prefix: string
  /** Hex SHA-256 of the whole key; the key itself is never stored. */
  key_hash: string
  created_by: string | null
  is_active: Flag
  revoked_at: string | null
  created_at: string
  last_used_at: string | null
  /** When the key stops working (migration 006); null: never. */
  expires_at: string | null
  /** When the first use after expiry was audited (`key.expired`), so that it is recorded once. */
  expiry_recorded_at: string | null
  /** The permissions the key is narrowed to, a JSON array (migration 013); null: all of its creator's. */
  scopes: string | null
  /** The forms its `submissions:read` is narrowed to, a JSON array of ids; null: every form. */
  forms: string | null
}

/** A kind of content whose version `content_versions` keeps (migration 010). */
export type ContentKind = 'forms' | 'pages' | 'redirects'

/** One row per kind whose `version` moves forward on every write to that kind's table (migration 010). */
export interface ContentVersionsTable {
  kind: ContentKind
  version: number | string
}

/**
 * One row per form (kept after the form is deleted): the version of its submissions, moved on every
 * write to them and when the form is created or deleted, and their total and unread count, kept
 * exact by the same triggers (migration 010).
 */
export interface FormSubmissionCountsTable {
  form_id: string
  version: number | string
  total: number | string
  unread: number | string
}

/** A dashboard session; the cookie holds a token whose SHA-256 is `id`. */
export interface AdminSessionsTable {
  id: string
  user_id: string
  /** The synchronizer token every state-changing dashboard request must carry. */
  csrf_token: string
  /** A one-time message (JSON `{ kind, text }`) shown on the next page, then cleared. */
  flash: string | null
  created_at: string
  last_seen_at: string
}

/** A dashboard sign-in attempt; successful ones are deleted, so the rows left are failures. */
export interface LoginAttemptsTable {
  id: string
  /** The email as typed (trimmed, lower-cased), whether or not such a user exists. */
  email: string
  ip_address: string
  attempted_at: string
}

/** A failed current-password check of a signed-in user (migration 010), kept for the throttle's window. */
export interface PasswordChecksTable {
  id: string
  user_id: string
  /** The session that asked (the stored id, a hash of its token). */
  session_id: string
  checked_at: string
}

/** A named row that writers update first to serialize one kind of change (see `db/locks.ts`). */
export interface LocksTable {
  name: string
  acquired_at: string | null
}

/** One entry of the audit log (migration 005): who did what to what, in the change's transaction. */
export interface AuditLogTable {
  /** Increases with every entry: the log's order, newest first by descending id. */
  id: Generated<number>
  at: string
  /** The signed-in user's email, or `cli` for the command line. */
  actor: string
  action: string
  target: string
  /** JSON text with what else is worth knowing; never a secret. */
  detail: string | null
}

/** Requests per API key and hour (migration 007), added to by each instance about once a minute. */
export interface KeyUsageHourlyTable {
  key_id: string
  /** The hour's start, canonical UTC (`2024-01-05T10:00:00Z`). */
  hour: string
  /** Requests made with the key (PostgreSQL's bigint arrives as a string). */
  requests: number | string
  /** Of those, the ones refused with 429. */
  rejected: number | string
}

/** A webhook endpoint (migration 014); `secret` is encrypted (see `services/notifications/secrets.ts`). */
export interface WebhookEndpointsTable {
  id: string
  url: string
  /** The event types it receives, as a JSON array. */
  events: string
  form_id: string | null
  status: 'active' | 'disabled'
  secret: string
  previous_secret: string | null
  previous_secret_until: string | null
  consecutive_failures: number
  last_failure_at: string | null
  last_success_at: string | null
  created_at: string
}

export type NotificationEventType = 'submission.created' | 'content.changed'

/** Something to notify of (migration 014): `data` is the event's `data` member as JSON text. */
export interface NotificationEventsTable {
  id: string
  type: NotificationEventType
  form_id: string | null
  submission_id: string | null
  data: string
  created_at: string
}

/** One event to one target (migration 014); see the migration for the lease and the ids. */
export interface NotificationDeliveriesTable {
  id: string
  event_id: string
  endpoint_id: string | null
  channel: 'webhook' | 'email'
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  last_status: string | null
  response_code: number | null
  duration_ms: number | null
  last_error: string | null
  next_attempt_at: string
  delivered_at: string | null
  claimed_until: string | null
  expires_at: string
  created_at: string
  updated_at: string
}

/** The content versions the last `content.changed` event covered (migration 014). */
export interface NotificationCursorsTable {
  kind: ContentKind
  version: number | string
}

export interface Database {
  forms: FormsTable
  /**
   * `json` (migration 009) is the submission as the API writes it, generated by the database from
   * the other columns: read by the API's pages, never written, and left out of reads that present
   * rows themselves (`SUBMISSION_COLUMNS`), since SQLite computes it on every read.
   */
  submissions: SubmissionsTable & { json: GeneratedAlways<string> }
  spam_submissions: SpamSubmissionsTable
  pages: PagesTable
  redirects: RedirectsTable
  users: UsersTable
  api_keys: ApiKeysTable
  admin_sessions: AdminSessionsTable
  login_attempts: LoginAttemptsTable
  password_checks: PasswordChecksTable
  locks: LocksTable
  content_versions: ContentVersionsTable
  form_submission_counts: FormSubmissionCountsTable
  audit_log: AuditLogTable
  key_usage_hourly: KeyUsageHourlyTable
  webhook_endpoints: WebhookEndpointsTable
  notification_events: NotificationEventsTable
  notification_deliveries: NotificationDeliveriesTable
  notification_cursors: NotificationCursorsTable
}
