// Bundles the command line (`bin/lectern`) from what `tsc` wrote to dist/: the project's modules and
// the packages made of many small ES modules go into a few files in dist/bundle/, so that a command
// opens 34 module files instead of 759. Node.js resolves, reads and links each ES module file
// on its own, and at startup that was most of a command's time (bench/cli-startup.mjs measures both).
// Rolldown does the bundling: Vite's own bundler, already installed with the test runner.
import { rmSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'rolldown'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outDir = join(root, 'dist', 'bundle')

// The packages of many small ES modules. Everything else (Fastify and its plugins, the database
// drivers, the CommonJS packages, whose __dirname a bundle would lose) loads from node_modules as
// before, and only when a command needs it. Rolldown's own helpers come from its binary (it writes
// a tagged template that holds `</script>` through one).
const bundled = [
  'kysely',
  '@sinclair/typebox',
  'csv-parse',
  'csv-stringify',
  'luxon',
  'lru-cache',
  'nodemailer',
  '@oxc-project/runtime',
]
const isBundledPackage = (id) => bundled.some((name) => id === name || id.startsWith(`${name}/`))

rmSync(outDir, { recursive: true, force: true })
await build({
  input: { lectern: join(root, 'dist', 'cli', 'main.js') },
  platform: 'node',
  // The code as tsc wrote it: nothing to lower for the Node.js lines Lectern supports.
  transform: { target: 'esnext' },
  // Relative and absolute imports are the project's own modules (or a bundled package's files).
  external: (id) =>
    !(id.startsWith('\0') || id.startsWith('.') || id.startsWith('/')) && !isBundledPackage(id),
  plugins: [
    {
      // Each module keeps its own location: `new URL('./static/', import.meta.url)` in
      // dist/admin/index.js still names dist/admin/static/, and a `createRequire(import.meta.url)`
      // still finds what node_modules holds for that file.
      name: 'keep-each-module-location',
      transform(code, id) {
        if (id.startsWith('\0') || !code.includes('import.meta.url')) return null
        const own = JSON.stringify(relative(outDir, id).split(sep).join('/'))
        return code.replaceAll('import.meta.url', `new URL(${own}, import.meta.url).href`)
      },
    },
  ],
  output: { dir: outDir, format: 'esm', chunkFileNames: '[name]-[hash].js', minify: false },
  logLevel: 'warn',
})
