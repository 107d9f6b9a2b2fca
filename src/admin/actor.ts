import type { FastifyRequest } from 'fastify'
import type { Actor } from '../services/audit.js'
import { signedIn } from './requests.js'

/** Who makes a dashboard change, for the audit log: the signed-in user. */
export function actorOf(request: FastifyRequest): Actor {
  return { email: signedIn(request).user.email }
}
