// Validates CSL-JSON documents against the CSL schema file named in
// argv[3] with Ajv, installed under argv[2]. Stdin holds a JSON array of
// documents (each an array of items, as csl-data.json describes); stdout
// gets one {"valid":bool,"errors":[…]} per document, in order.
const { createRequire } = require('node:module')
const fs = require('node:fs')
const req = createRequire(process.argv[2] + '/')
const Ajv = req('ajv')
const schema = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'))
const docs = JSON.parse(fs.readFileSync(0, 'utf8'))
// csl-data.json uses union types ("type": ["string", "number"]) and
// anyOf branches without "type": valid JSON Schema draft-07 that Ajv's
// strict mode only warns about; allow them so the warnings stay quiet.
const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strictTypes: false })
const validate = ajv.compile(schema)
const results = docs.map(doc => {
  const valid = validate(doc)
  return { valid, errors: validate.errors || [] }
})
process.stdout.write(JSON.stringify(results))
