import { html, type SafeHtml, type SafeUrl } from '../../html.js'
import { MIN_PASSWORD_LENGTH } from '../../services/users.js'
import { csrfField, errorSummary, textField } from './components.js'
import { layout } from './layout.js'

export function setupPage(input: { csrf: string; email?: string; problems?: string[] }): SafeHtml {
  return layout({
    title: 'Set up Lectern',
    session: null,
    body: html`<section class="panel narrow">
  <h1>Set up Lectern</h1>
  <p>No one can sign in yet. Create the first <strong>global admin</strong>: the account that manages
  users, API keys and content. This form is offered only once, while no user exists.</p>
  ${errorSummary(input.problems ?? [])}
  <form method="post" action="/admin/setup" class="stack">
    ${csrfField(input.csrf)}
    ${textField({ name: 'email', label: 'Email', type: 'email', value: input.email, required: true, autocomplete: 'username', autofocus: true })}
    ${textField({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'new-password', hint: `At least ${MIN_PASSWORD_LENGTH} characters. A passphrase of several words is easy to type and hard to guess.` })}
    ${textField({ name: 'confirm', label: 'Password again', type: 'password', required: true, autocomplete: 'new-password' })}
    <button type="submit" class="button primary">Create admin account</button>
  </form>
</section>`,
  })
}

export function loginPage(input: {
  csrf: string
  email?: string
  next?: SafeUrl
  problems?: string[]
  notice?: string
}): SafeHtml {
  return layout({
    title: 'Sign in',
    session: null,
    body: html`<section class="panel narrow">
  <h1>Sign in</h1>
  ${input.notice ? html`<div class="alert success" role="status">${input.notice}</div>` : ''}
  ${errorSummary(input.problems ?? [])}
  <form method="post" action="/admin/login" class="stack">
    ${csrfField(input.csrf)}
    ${input.next ? html`<input type="hidden" name="next" value="${input.next}">` : ''}
    ${textField({ name: 'email', label: 'Email', type: 'email', value: input.email, required: true, autocomplete: 'username', autofocus: !input.email })}
    ${textField({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password', autofocus: Boolean(input.email) })}
    <button type="submit" class="button primary">Sign in</button>
  </form>
</section>`,
  })
}
