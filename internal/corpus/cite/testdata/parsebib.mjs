// Parses the BibTeX on stdin with @retorquere/bibtex-parser (installed
// under argv[2]) and prints its library (entries and errors) as JSON.
// The package is an ES module; its entry is found from its own
// package.json exports, as Node would resolve `import` from there.
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const dir = path.join(process.argv[2], 'node_modules', '@retorquere', 'bibtex-parser')
const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
let entry = pkg.exports['.'].import
if (typeof entry !== 'string') entry = entry.default
const { parse } = await import(pathToFileURL(path.join(dir, entry)).href)
const lib = parse(fs.readFileSync(0, 'utf8'))
process.stdout.write(JSON.stringify({ errors: lib.errors, entries: lib.entries }))
