// Given to a process with `node --import`: appends the URL of every module the process loads, one
// per line, to the file named by LECTERN_LOAD_RECORD (test/cli/bundle.test.ts).
import { register } from 'node:module'

register('./load-record-hooks.mjs', import.meta.url)
