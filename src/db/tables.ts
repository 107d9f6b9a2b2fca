/**
 * Row types of every table. Booleans are stored as integers 0/1 and timestamps as canonical UTC
 * text (`2024-01-05T10:00:00Z`) so that both dialects store, compare and sort them identically:
 * the canonical form sorts lexically in time order, and needs no conversion on the way out.
 */
export type Flag = 0 | 1

export interface FormsTable {
  id: string
  title: string
  description: string | null
  is_active: Flag
  created_at: string
  updated_at: string
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
}

export interface Database {
  forms: FormsTable
  submissions: SubmissionsTable
  pages: PagesTable
  redirects: RedirectsTable
  users: UsersTable
  api_keys: ApiKeysTable
}
