import { html, type SafeHtml, url } from '../../html.js'
import type { AdminSession } from '../../services/sessions.js'
import type { UserView } from '../../services/users.js'
import { confirmation, csrfField, errorSummary, textField } from './components.js'
import { layout, ROLE_LABELS } from './layout.js'

/** Your account: who you are, and changing your own password (the current one is required). */
export function accountPage(input: { session: AdminSession; problems?: string[] }): SafeHtml {
  const { session } = input
  return layout({
    title: 'Your account',
    session,
    section: 'account',
    body: html`<section class="panel narrow">
  <h1>Your account</h1>
  <p><strong>${session.user.email}</strong>, ${ROLE_LABELS[session.user.role]}.</p>
  <h2>Change your password</h2>
  <p class="muted">Every session you have open (on other devices too) ends; this browser is signed in again with the new password.</p>
  ${errorSummary(input.problems ?? [])}
  <form method="post" action="/admin/account/password" class="stack">
    ${csrfField(session.csrfToken)}
    ${textField({ name: 'current', label: 'Current password', type: 'password', required: true, autocomplete: 'current-password' })}
    ${textField({ name: 'password', label: 'New password', type: 'password', required: true, autocomplete: 'new-password', hint: 'At least 12 characters; a passphrase of a few words is easiest.' })}
    ${textField({ name: 'confirm', label: 'New password again', type: 'password', required: true, autocomplete: 'new-password' })}
    <div class="actions"><button type="submit" class="button primary">Change password</button></div>
  </form>
</section>`,
  })
}

/** Confirms resetting another user's password: a new one is generated and shown once. */
export function resetPasswordPage(input: { session: AdminSession; user: UserView }): SafeHtml {
  const { session, user } = input
  return layout({
    title: `Reset the password of ${user.email}`,
    session,
    section: 'users',
    body: confirmation({
      heading: `Reset the password of ${user.email}?`,
      consequences: html`<p>A new password is generated and shown to you once, to pass on to them in a private
      channel. Their current password stops working, and every dashboard session they have ends at once.
      Their API keys are not affected.</p>`,
      action: url`/admin/users/${user.id}/password`,
      csrf: session.csrfToken,
      confirmLabel: 'Reset password',
      cancelHref: url`/admin/users`,
    }),
  })
}

/** The generated password, shown once. */
export function passwordResetPage(input: {
  session: AdminSession
  user: UserView
  password: string
  sessionsEnded: number
}): SafeHtml {
  const { user } = input
  return layout({
    title: 'Password reset',
    session: input.session,
    section: 'users',
    body: html`<section class="panel">
  <h1>New password for ${user.email}</h1>
  <div class="alert warning" role="alert"><strong>Copy this password now: it is shown only once.</strong>
  Give it to ${user.email} in a private channel. ${input.sessionsEnded === 1 ? '1 session was' : `${input.sessionsEnded} sessions were`} ended.</div>
  <label for="new-password">Password for ${user.email}</label>
  <div class="copy-row">
    <input id="new-password" class="mono" type="text" readonly value="${input.password}" spellcheck="false" autocomplete="off">
    <button type="button" class="button primary" data-copy-target="new-password" data-copy-status="copy-status">Copy</button>
  </div>
  <p id="copy-status" class="copy-status" role="status" aria-live="polite"></p>
  <p><a class="button secondary" href="/admin/users">Back to users</a></p>
</section>`,
  })
}
