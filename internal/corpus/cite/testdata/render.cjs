// Renders the CSL-JSON items on stdin as a plain-text bibliography with
// citeproc-js (installed under argv[2]), the style file argv[3] and the
// en-US locale shipped by @citation-js/plugin-csl. Prints a JSON array of
// entries on stdout.
const { createRequire } = require('node:module')
const fs = require('node:fs')
const req = createRequire(process.argv[2] + '/')
const CSL = req('citeproc')
const locales = req('@citation-js/plugin-csl/lib/locales.json')
const style = fs.readFileSync(process.argv[3], 'utf8')
const items = JSON.parse(fs.readFileSync(0, 'utf8'))
const byID = Object.fromEntries(items.map(it => [it.id, it]))
const sys = {
  retrieveLocale: lang => locales[lang] || locales['en-US'],
  retrieveItem: id => byID[id],
}
const engine = new CSL.Engine(sys, style, 'en-US')
engine.setOutputFormat('text')
engine.updateItems(items.map(it => it.id))
const [meta, entries] = engine.makeBibliography()
if (meta.bibliography_errors && meta.bibliography_errors.length) {
  console.error(JSON.stringify(meta.bibliography_errors))
  process.exit(2)
}
process.stdout.write(JSON.stringify(entries.map(e => e.trim())))
