import { setPasswordCostForTests } from '../src/services/passwords.js'

/**
 * Every test file starts hashing new passwords at scrypt's N=2^10 instead of the product's 2^17
 * (the same algorithm and format, about a hundredth of the work): the suite sets hundreds of
 * passwords through the dashboard, the CLI and the services to prove what follows from them, and at
 * full cost those hashes took about a fifth of its running time. The tests of hashing itself (its
 * limits under a burst, the cost every new password gets) set the full cost back, and processes the
 * tests start (`bin/lectern`) hash at full cost as in production.
 */
setPasswordCostForTests({ N: 2 ** 10, r: 8, p: 1 })
