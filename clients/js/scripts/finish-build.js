// The package is ESM ("type": "module"): mark the CommonJS build as such so that Node loads it with require().
import { writeFileSync } from 'node:fs'

writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n')
