// Prints warcio.js's SURT (getSurt) of every URL given, as a JSON object.
// usage: node surt.mjs <file URL of warcio dist/utils.js> <url>...
const [utilsURL, ...urls] = process.argv.slice(2);
const { getSurt } = await import(utilsURL);
console.log(JSON.stringify(Object.fromEntries(urls.map((u) => [u, getSurt(u)]))));
